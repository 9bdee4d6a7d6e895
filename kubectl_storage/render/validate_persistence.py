"""Table form of the PersistenceReport: one row per phase and a verdict line."""

from __future__ import annotations

from typing import Any, TextIO

from kubectl_storage.render.tables import write_table


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _checksum(phase: dict[str, Any]) -> str:
    match = phase.get("checksum_match")
    if match is None:
        return "-"
    return "match" if match else "DIFFERS"


def _commits(phase: dict[str, Any]) -> str:
    commits = phase.get("commits")
    if not commits:
        return "-"
    return f"{commits.get('acknowledged_present')}/{commits.get('acknowledged')}"


def _target(report: dict[str, Any]) -> str:
    if report.get("volume_type") == "emptyDir":
        return "an emptyDir volume (control: pod-local, expected to lose data)"
    return f"StorageClass {report.get('storage_class')} ({report.get('size')} PVC)"


def verdict_line(report: dict[str, Any]) -> str:
    """One sentence a person can quote."""
    phases = report.get("phases") or []
    passed = [p["phase"] for p in phases if p.get("verdict") == "pass" and p["phase"] != "seed"]
    failed = [p for p in phases if p.get("verdict") == "fail"]
    skipped = [p["phase"] for p in phases if p.get("verdict") == "skipped"]
    where = (
        "the emptyDir volume"
        if report.get("volume_type") == "emptyDir"
        else f"StorageClass {report.get('storage_class')}"
    )
    if failed:
        first = failed[0]
        text = f"FAIL: committed data was lost on {where} in {first['phase']}"
        if first.get("note"):
            text += f" ({first['note']})"
    elif passed:
        text = f"PASS: committed data survived {', '.join(passed)} on {where}"
    else:
        text = f"SKIPPED: no disruption could run on {where}"
    if skipped and not failed:
        text += f"; skipped: {', '.join(skipped)}"
    return text


def write_persistence_table(report: dict[str, Any], out: TextIO, wide: bool = False) -> None:
    """Phases as rows; wide adds nodes, checksums and the counts of missing/changed rows."""
    rows = []
    for phase in report.get("phases") or []:
        row = [
            phase.get("phase"),
            phase.get("verdict"),
            _seconds(phase.get("time_to_ready_s")),
            _count(phase.get("rows_expected")),
            _count(phase.get("rows_found")),
            _checksum(phase),
            _commits(phase),
        ]
        if wide:
            row += [
                _count(phase.get("rows_missing")),
                _count(phase.get("rows_changed")),
                phase.get("node_before") or "-",
                phase.get("node_after") or "-",
                (phase.get("checksum_found") or "-")[:19],
            ]
        row.append(phase.get("note") or "")
        rows.append(row)
    headers = ["phase", "verdict", "ready after", "rows expected", "rows found", "checksum"]
    headers.append("acked present")
    if wide:
        headers += ["missing", "changed", "node before", "node after", "checksum found"]
    headers.append("note")
    title = (
        f"MySQL persistence on {_target(report)}: {report.get('rows'):,} rows, "
        f"image {report.get('image')}"
    )
    write_table(rows, headers, out, title=title)
    out.write(verdict_line(report) + "\n")
