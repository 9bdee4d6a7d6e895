"""Table form of the PersistenceReport: one row per phase and a verdict line."""

from __future__ import annotations

from typing import TextIO

from kubectl_storage.core.validate_persistence.mysql import (
    PersistenceReport,
    PhaseResult,
    Verdict,
    VolumeType,
)
from kubectl_storage.render.tables import write_table


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def _count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _checksum(phase: PhaseResult) -> str:
    if phase.comparison is None:
        return "-"
    return "match" if phase.comparison.checksum_match else "DIFFERS"


def _commits(phase: PhaseResult) -> str:
    commits = phase.commits
    if commits is None:
        return "-"
    return f"{commits.acknowledged_present}/{commits.acknowledged}"


def _target(report: PersistenceReport) -> str:
    if report.volume_type is VolumeType.EMPTY_DIR:
        return "an emptyDir volume (control: pod-local, expected to lose data)"
    return f"StorageClass {report.storage_class} ({report.size} PVC)"


def verdict_line(report: PersistenceReport) -> str:
    """One sentence a person can quote."""
    phases = report.phases
    passed = [p.phase for p in phases if p.verdict is Verdict.PASS and p.phase != "seed"]
    failed = [p for p in phases if p.verdict is Verdict.FAIL]
    skipped = [p.phase for p in phases if p.verdict is Verdict.SKIPPED]
    where = (
        "the emptyDir volume"
        if report.volume_type is VolumeType.EMPTY_DIR
        else f"StorageClass {report.storage_class}"
    )
    if failed:
        first = failed[0]
        text = f"FAIL: committed data was lost on {where} in {first.phase}"
        if first.note:
            text += f" ({first.note})"
    elif passed:
        text = f"PASS: committed data survived {', '.join(passed)} on {where}"
    else:
        text = f"SKIPPED: no disruption could run on {where}"
    if skipped and not failed:
        text += f"; skipped: {', '.join(skipped)}"
    return text


def write_persistence_table(report: PersistenceReport, out: TextIO, wide: bool = False) -> None:
    """Phases as rows; wide adds nodes, checksums and the counts of missing/changed rows."""
    rows = []
    for phase in report.phases:
        found = phase.comparison
        row: list[object] = [
            phase.phase,
            phase.verdict.value,
            _seconds(phase.time_to_ready_s),
            _count(found.rows_expected if found else None),
            _count(found.rows_found if found else None),
            _checksum(phase),
            _commits(phase),
        ]
        if wide:
            row += [
                _count(len(found.missing_ids) if found else None),
                _count(len(found.changed_ids) if found else None),
                phase.node_before or "-",
                phase.node_after or "-",
                (found.checksum_found if found else "-")[:19],
            ]
        row.append(phase.note)
        rows.append(row)
    headers = ["phase", "verdict", "ready after", "rows expected", "rows found", "checksum"]
    headers.append("acked present")
    if wide:
        headers += ["missing", "changed", "node before", "node after", "checksum found"]
    headers.append("note")
    title = f"MySQL persistence on {_target(report)}: {report.rows:,} rows, image {report.image}"
    write_table(rows, headers, out, title=title)
    out.write(verdict_line(report) + "\n")
