"""Table form of the PersistenceReport: one row per phase, then the server's durability settings,
the fsync probe, the volume's events of a move, what the control cannot judge, and a verdict
line."""

from __future__ import annotations

from typing import TextIO

from kubectl_storage.core.flush.timing import FlushClass
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import VolumeType
from kubectl_storage.core.validate_persistence.report import (
    PersistenceReport,
    PhaseResult,
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
    """One sentence a person can quote: the report's verdict, why, and what it proved."""
    outcome = report.outcome
    verdict = outcome.verdict
    phases = report.phases
    passed = report.disruptions_passed
    skipped = [p.phase for p in phases if p.verdict is Verdict.SKIPPED]
    control = report.volume_type is VolumeType.EMPTY_DIR
    where = "the emptyDir volume" if control else f"StorageClass {report.storage_class}"
    failed = [p for p in phases if p.lost_data]
    stuck = [p for p in phases if p.cannot_follow and not p.lost_data]
    unavailable = [p for p in phases if p.verdict is Verdict.INCONCLUSIVE]
    check = report.durability
    if control:
        if verdict is Verdict.PASS:
            lost = ", ".join(p.phase for p in failed)
            text = (
                f"PASS (control): committed data was lost on {where} in {lost}, as a pod-local "
                "volume must lose it: the check sees a loss"
            )
        elif any(r.startswith("control-invalid:") for r in outcome.reasons):
            kept = ", ".join(r.split(":", 1)[1] for r in outcome.reasons if ":" in r)
            text = (
                f"INCONCLUSIVE: the emptyDir control kept its data in {kept}: the check cannot "
                "be trusted to see a loss"
            )
        elif unavailable:
            text = _unavailable(unavailable, where)
        else:
            text = f"INCONCLUSIVE: no disruption the control can judge ran on {where}"
    elif failed:
        first = failed[0]
        text = f"FAIL: committed data was lost on {where} in {first.phase}"
        if first.note:
            text += f" ({first.note})"
    elif stuck:
        text = (
            f"FAIL: the data cannot follow the pod to another node on {where} "
            f"({', '.join(p.phase for p in stuck)}: the volume is pinned to its node)"
        )
        if passed:
            text += f"; it survived {', '.join(passed)}"
    elif check is not None and check.settings.reasons:
        settings = "; ".join(r.split(":")[0] for r in check.settings.reasons)
        text = f"FAIL: the server is not configured to make a commit durable ({settings})"
        if check.allowed_non_durable and passed:
            text += (
                f"; with --allow-non-durable-config the disruptions ran and committed data "
                f"survived {', '.join(passed)}, which a power loss need not leave so; "
                f"{report.tested}"
            )
    elif unavailable:
        text = _unavailable(unavailable, where)
    elif verdict is Verdict.INCONCLUSIVE:
        text = f"INCONCLUSIVE: no disruption could run on {where}, so nothing was tested"
    elif verdict is Verdict.WARN:
        text = (
            f"WARN: committed data survived {', '.join(passed)} on {where}, but "
            f"{'; and '.join(report.warning_texts())}; {report.tested}"
        )
    else:
        text = f"PASS: committed data survived {', '.join(passed)} on {where}; {report.tested}"
        flush = report.fsync_probe.flush if report.fsync_probe else None
        if flush is not None and flush.kind is FlushClass.NO_FLUSH:
            text += f"; fsync probe: {flush.label}"
    if skipped and verdict in (Verdict.PASS, Verdict.WARN):
        text += f"; skipped: {', '.join(skipped)}"
    return text


def _unavailable(phases: list[PhaseResult], where: str) -> str:
    names = ", ".join(p.phase for p in phases)
    return (
        f"INCONCLUSIVE: MySQL did not answer within --timeout after {names} on {where}; "
        "nothing could be read back, so nothing was proven either way"
    )


def _durability_lines(report: PersistenceReport) -> list[str]:
    check = report.durability
    if check is None:
        return []
    settings = check.settings
    values = ", ".join(f"{k}={'-' if v is None else v}" for k, v in settings.values().items())
    if settings.durable:
        state = "durable"
    elif not settings.reasons:
        state = "UNKNOWN (not reported: " + ", ".join(settings.unknown) + ")"
    elif check.allowed_non_durable:
        state = "NOT durable (accepted with --allow-non-durable-config)"
    else:
        state = "NOT durable"
    extra = {
        "Innodb_redo_log_enabled": settings.innodb_redo_log_enabled,
        "table engine": settings.table_engine,
    }
    values += "".join(f", {k}={v}" for k, v in extra.items() if v is not None)
    lines = [f"Server durability settings: {values}: {state}"]
    if check.server_args:
        lines.append("  server started with: " + " ".join(check.server_args))
    lines += [f"  - {reason}" for reason in settings.reasons]
    lines += [f"  note: {note}" for note in settings.notes]
    return lines


def _probe_lines(report: PersistenceReport) -> list[str]:
    probe = report.fsync_probe
    if probe is None:
        return []
    if probe.error:
        return [f"fsync probe: not measured: {probe.error}"]
    lines = [
        f"fsync probe (same volume; 2300-byte writes, fdatasync each, {probe.syncs:,} syncs): "
        f"p50 {_micros(probe.p50_us)}, p99 {_micros(probe.p99_us)}, max {_micros(probe.max_us)} "
        "(etcd wants p99 under 10ms)"
    ]
    flush = probe.flush
    if flush is not None and not flush.warns:
        direct = (
            f"direct 4k writes p50 {_micros(probe.direct_write_p50_us)}, fdatasync p50 "
            f"{_micros(probe.direct_fdatasync_p50_us)}: "
            if probe.direct_fdatasync_p50_us is not None
            else f"(etcd's buffered job alone; the direct job: {probe.direct_error}) "
        )
        lines.append(f"  flush: {direct}{flush.explanation()}")
    lines += [f"  WARNING: {warning}" for warning in probe.warnings]
    return lines


def _micros(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f}ms" if value >= 1000 else f"{value:g}µs"


def _move_lines(report: PersistenceReport) -> list[str]:
    lines = []
    for phase in report.phases:
        if phase.time_to_running_s is not None:
            where = (
                f"stayed on {phase.node_after} (the volume cannot leave it)"
                if phase.cannot_follow
                else f"{phase.node_before} → {phase.node_after}"
            )
            lines.append(
                f"{phase.phase}: {where}, running after {phase.time_to_running_s:.1f}s, "
                f"MySQL answering after {_seconds(phase.time_to_ready_s)}"
            )
            if phase.attach_required is False:
                lines.append(
                    f"  {phase.phase}: no attach or detach: the volume's CSI driver attaches "
                    "nothing (attachRequired: false)"
                )
            elif not phase.volume_events and report.volume_type is VolumeType.PVC:
                lines.append(f"  {phase.phase}: no attach or detach events reported")
        lines += [f"  {phase.phase} event: {event}" for event in phase.volume_events]
    return lines


def _control_lines(report: PersistenceReport) -> list[str]:
    control = report.control
    if control is None:
        return []
    lines = []
    if control.judged:
        lines.append(
            "Control: each disruption it ran must show the loss of a pod-local volume: "
            + ", ".join(control.judged)
        )
    lines += [
        f"Control cannot judge {disruption}: {reason}"
        for disruption, reason in control.cannot_judge
    ]
    return lines


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
    for line in (
        _durability_lines(report)
        + _probe_lines(report)
        + _move_lines(report)
        + _control_lines(report)
    ):
        out.write(line + "\n")
    out.write(verdict_line(report) + "\n")
