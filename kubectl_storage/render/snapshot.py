"""Table forms of the snapshot reports: SnapshotList, SnapshotCheckReport, listings and copies."""

from __future__ import annotations

from typing import Any, TextIO

from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.snapshot.check_report import SnapshotCheckReport
from kubectl_storage.core.snapshot.copy import SnapshotCopy
from kubectl_storage.core.snapshot.freeze import FreezeResult
from kubectl_storage.core.snapshot.listing import SnapshotListing
from kubectl_storage.core.snapshot.snapshot_list import (
    SnapshotInfo,
    SnapshotList,
    format_age,
    quantity_bytes,
)
from kubectl_storage.core.snapshot.under_load import UnderLoadResult
from kubectl_storage.render.tables import write_table


def _ready(value: bool | None) -> str:
    if value is None:
        return "-"
    return "true" if value else "false"


def _size(snapshot: SnapshotInfo) -> str:
    size_bytes = quantity_bytes(snapshot.restore_size) if snapshot.restore_size else None
    if size_bytes is not None:
        return format_bytes(size_bytes)
    return snapshot.restore_size or "-"


def write_snapshot_list_table(report: SnapshotList, out: TextIO, wide: bool = False) -> None:
    """One row per VolumeSnapshot, kubectl-style; errors on their own lines below."""
    snapshots = report.snapshots
    all_ns = report.namespace is None
    if not snapshots:
        where = "in any namespace" if all_ns else f"in namespace {report.namespace}"
        out.write(f"No VolumeSnapshots found {where}.\n")
        return
    headers = ["name", "ready", "source", "class", "driver", "restore size", "age"]
    if all_ns:
        headers.insert(0, "namespace")
    if wide:
        headers += ["content", "created", "handle"]
    rows = []
    for snap in snapshots:
        row = [
            snap.name + (" (deleting)" if snap.deleting else ""),
            _ready(snap.ready),
            snap.source_text,
            snap.snapshot_class or "-",
            snap.driver or "-",
            _size(snap),
            format_age(snap.age_s),
        ]
        if all_ns:
            row.insert(0, snap.namespace or "-")
        if wide:
            row += [
                snap.bound_content or "-",
                snap.to_dict()["created"] or "-",
                snap.snapshot_handle or "-",
            ]
        rows.append(row)
    write_table(rows, headers, out)
    errors = [s for s in snapshots if s.error]
    if errors:
        out.write("\nErrors:\n")
        for snap in errors:
            out.write(f"  {snap.name}: {snap.error}\n")


_STATUS_LABEL = {
    "ok": "ok",
    "absent": "absent (ok)",
    "missing": "MISSING",
    "later-content": "LATER CONTENT",
    "differs": "DIFFERS",
    "later-file": "LATER FILE",
    "unexpected": "UNEXPECTED",
}


def _quantity(value: Any) -> str:
    """A plain byte count also in binary units ("17842333 (17Mi)"); quantities as they are."""
    text = str(value or "-")
    return f"{text} ({format_bytes(int(text))})" if text.isdigit() else text


def write_check_table(report: SnapshotCheckReport, out: TextIO, wide: bool = False) -> None:
    """Verdict, times per step, every file's state, and the problems."""
    out.write(
        f"Snapshot check of StorageClass {report.storage_class}: "
        f"{report.outcome.verdict.value.upper()}\n"
        f"  snapshot class {report.snapshot_class} (driver {report.driver}), "
        f"volume {report.size}, restored as {_quantity(report.restore_size)}\n\n"
    )
    steps = [[s.name, f"{s.seconds:.1f}s"] for s in report.steps]
    steps.append(["total", f"{report.total_seconds:.1f}s"])
    write_table(steps, ["step", "time"], out)
    out.write("\n")
    placement = report.restore_placement
    if placement is not None:
        out.write(
            f"Source written on node {placement.source_node}; restore "
            + (
                f"read on node {placement.restore_node}.\n\n"
                if placement.restore_node
                else "not read: it cannot be used on another node.\n\n"
            )
        )
        if placement.node_local:
            out.write("Problems:\n")
            out.writelines(f"  {p}\n" for p in report.problems)
            return
    rows = []
    for f in report.files:
        row = [
            f.path,
            format_bytes(f.size_bytes) if f.size_bytes is not None else "-",
            "yes" if f.changed_after_snapshot else "no",
            _STATUS_LABEL.get(str(f.status), str(f.status)),
        ]
        if wide:
            row += [(f.snapshot_sha256 or "-")[:16], (f.restored_sha256 or "-")[:16]]
        rows.append(row)
    headers = ["file", "size", "changed after snapshot", "in restore"]
    if wide:
        headers += ["sha256 at snapshot", "sha256 restored"]
    write_table(rows, headers, out)
    if report.changes:
        out.write(
            "\nAfter the snapshot the source was changed: " + "; ".join(report.changes) + ".\n"
        )
    if report.under_load is not None:
        _write_under_load(report.under_load, out)
    if report.freeze is not None:
        _write_freeze(report.freeze, out)
    if report.problems:
        out.write("\nProblems:\n")
        out.writelines(f"  {p}\n" for p in report.problems)
    elif report.outcome.verdict.value != "pass":
        out.write(f"\n{report.outcome.verdict.value}: " + ", ".join(report.outcome.reasons) + "\n")
    else:
        out.write("The restore holds exactly the snapshot-time content and none of the change.\n")


def write_listing_table(report: SnapshotListing, out: TextIO, wide: bool = False) -> None:
    """``ls -l``-like rows for a SnapshotListing."""
    title = f"{report.snapshot}:{report.path}"
    if not report.entries:
        out.write(f"{title}\n  (empty)\n")
        return
    rows = []
    for entry in report.entries:
        name = entry.path + ("/" if entry.type == "directory" else "")
        if entry.link_target:
            name += f" -> {entry.link_target}"
        size = format_bytes(entry.size_bytes) if not wide else str(entry.size_bytes)
        rows.append([entry.mode_text, entry.user, entry.group, size, entry.modified_text, name])
    write_table(rows, ["mode", "user", "group", "size", "modified", "name"], out, title=title)


def _write_freeze(result: FreezeResult, out: TextIO) -> None:
    """How long the source was frozen, or why it was not."""
    if not result.frozen:
        out.write(f"\nNot frozen: {result.reason}.\n")
        return
    seconds = result.frozen_seconds
    line = f"\nFrozen for {seconds:.1f}s" if seconds is not None else "\nFrozen"
    line += f", thawed by the {result.thawed_by}" if result.thawed_by else ""
    line += (
        ", the snapshot cut while frozen"
        if result.cut_while_frozen
        else ", the snapshot not yet cut at the thaw"
    )
    if result.acknowledged_while_frozen is not None:
        line += f"; {result.acknowledged_while_frozen} records acknowledged while frozen"
    out.write(line + ".\n")


def _write_under_load(result: UnderLoadResult, out: TextIO) -> None:
    """What the writer acknowledged around the cut, what the restored logs hold, and the
    verdict of the cut (crash-consistent only when UnderLoadResult.crash_consistent says so)."""
    out.write(
        f"\nUnder load: the writer acknowledged {result.records_acknowledged} records "
        f"({result.record_size} bytes each, fsync each, alternating over "
        f"{len(result.logs)} files), {result.acknowledged_at_request} before the request, "
        f"{result.written_during_cut} while the snapshot was cut "
        f"({result.request_to_ready_s:.1f}s from request to readyToUse), "
        f"{result.written_after_ready} after readyToUse.\n"
    )
    prefixes = " + ".join(str(k) for k in result.cut.clean_prefixes)
    out.write(
        f"  restored logs: clean prefixes of {prefixes} records; "
        f"{result.cut.required} required ({result.cut.lower_bound})"
        + (
            f"; creationTime {result.creation_time}"
            if result.creation_time
            else "; the snapshot gave no creationTime"
        )
        + "\n"
    )
    for log in result.logs:
        out.writelines(f"  {note}\n" for note in log.notes)
    verdict = result.outcome.verdict.value
    if result.crash_consistent:
        out.write(f"  cut: {verdict}, one instant across both files: crash-consistent\n")
    else:
        out.write(f"  cut: {verdict}\n")
    out.writelines(f"  warning: {w}\n" for w in result.cut.warnings)
    out.writelines(f"  inconclusive: {w}\n" for w in result.cut.inconclusive)


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _bytes(n: int) -> str:
    return _count(n, "byte", "bytes") if n < 1024 else format_bytes(n)


def write_copy_table(report: SnapshotCopy, out: TextIO, wide: bool = False) -> None:
    """One line: what was copied where."""
    parts = [_count(report.files, "file", "files")]
    if report.directories:
        parts.append(_count(report.directories, "directory", "directories"))
    line = (
        f"copied {', '.join(parts)} ({_bytes(report.bytes)}) from "
        f"{report.snapshot}:{report.path} to {report.destination}"
    )
    if report.skipped:
        line += f"; skipped {len(report.skipped)}: " + ", ".join(report.skipped)
    out.write(line + "\n")
