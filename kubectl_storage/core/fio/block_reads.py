"""Guards for Block volumes: reads of device ranges nobody wrote, and the prefill's own note.

Separate from the per-job guards (:mod:`kubectl_storage.core.fio.guards`) because these judge a
run as a sequence: whether an earlier job (the prefill, or the job file's own write) covered
the range a read job reads. See ``fio.block-unwritten-read`` and ``fio.block-prefill`` there.

Pure module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_storage.core.fio.env_errors import error_note
from kubectl_storage.core.fio.job_sizes import FioJobError, parse_fio_size
from kubectl_storage.core.fio.notes import NOTE_PREFILL, NOTE_UNWRITTEN_READ, FioNote, dedupe
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME, READ_RW_VALUES
from kubectl_storage.core.fio.profiles import BLOCK_DEVICE_PATH
from kubectl_storage.core.fio.results import FioJobResult, FioResult
from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.report.findings import Severity


def prefill_notes(result: FioResult) -> list[FioNote]:
    """The ``fio.block-prefill`` note of a run's prefill job (its error's note if it failed).

    Args:
        result: the parsed run.

    Returns:
        One note, or none when the run had no prefill job.
    """
    prefill = [job for job in result.jobs if job.name == PREFILL_JOB_NAME]
    if not prefill:
        return []
    job = prefill[0]
    options = {**result.global_options, **job.job_options}
    if job.error:
        return [error_note(job.error, job=job.name, ioengine=options.get("ioengine", ""))]
    written = sum(part.write.io_bytes for part in prefill)
    seconds = max(part.write.runtime_ms for part in prefill) / 1000
    rate = f" ({format_bytes(written / seconds)}/s)" if seconds > 0 else ""
    took = f"{seconds:.1f} s" if seconds >= 1 else f"{seconds * 1000:.0f} ms"
    device = options.get("filename", "the device")
    return [
        FioNote(
            NOTE_PREFILL,
            Severity.INFO,
            f"prefill: before the read jobs, fio wrote {format_bytes(written)} of {device} "
            f"sequentially from offset {options.get('offset', '0')} (the range they read) in "
            f"{took}{rate}, so they read written blocks, not a thin or sparse "
            "device's zeros",
            "--no-prefill skips it (the read jobs are then marked suspect)",
            job.name,
        )
    ]


@dataclass(frozen=True)
class _Written:
    """A sequential write an earlier job made: on which file, from where, how many bytes."""

    filename: str
    offset: str
    offset_bytes: int | None
    io_bytes: int
    whole: bool  # no size: the whole device
    group_id: int


def unwritten_read_notes(result: FioResult, *, device: str = BLOCK_DEVICE_PATH) -> list[FioNote]:
    """``fio.block-unwritten-read`` for each job reading a device range nobody wrote first.

    A read job on ``filename=<device>`` is covered when a ``rw=write`` job of an earlier group
    (a stonewall between them), without error, on the same device, wrote from at or before the
    read range's start at least up to its end (``io_bytes`` from its offset). A read job
    without ``size`` reads the whole device, so only a write job without ``size`` covers it.

    Args:
        result: the parsed run (every job, the prefill included, in fio's order).
        device: the Block volume's device path in the benchmark pod; reads of other files and
            devices are not judged.

    Returns:
        The notes, one per read job name.
    """
    written: list[_Written] = []
    notes: list[FioNote] = []
    for job in result.jobs:
        options = {**result.global_options, **job.job_options}
        filename = options.get("filename", "")
        rw = (options.get("rw", options.get("readwrite")) or "read").split(":", 1)[0]
        rw = rw.strip().lower()
        try:
            offset = options.get("offset", "0").strip() or "0"
            offset_bytes = parse_fio_size(offset)
            size = parse_fio_size(options["size"]) if options.get("size") else None
        except FioJobError:
            continue
        if filename != device:
            continue
        if rw in READ_RW_VALUES and not _covered(written, job, filename, offset, size):
            notes.append(_unwritten_note(job.name, filename, offset_bytes, size))
        if rw == "write" and not job.error:
            written.append(
                _Written(
                    filename,
                    offset,
                    offset_bytes,
                    job.write.io_bytes,
                    "size" not in options,
                    job.group_id,
                )
            )
    return dedupe(notes)


def _covered(
    written: Sequence[_Written], job: FioJobResult, filename: str, offset: str, size: int | None
) -> bool:
    start = parse_fio_size(offset)
    for write in written:
        if write.filename != filename or write.group_id >= job.group_id:
            continue
        if size is None:
            if write.whole:
                return True
            continue
        if start is None or write.offset_bytes is None:
            if write.offset == offset and write.io_bytes >= size:
                return True
            continue
        if write.offset_bytes <= start and write.offset_bytes + write.io_bytes >= start + size:
            return True
    return False


def _unwritten_note(name: str, filename: str, offset: int | None, size: int | None) -> FioNote:
    if size is None:
        where = "the whole device"
    elif not offset:
        where = f"its first {format_bytes(size)}"
    else:
        where = f"{format_bytes(offset)} to {format_bytes(offset + size)}"
    return FioNote(
        NOTE_UNWRITTEN_READ,
        Severity.WARN,
        f"job {name}: it reads {filename} ({where}), but no job before it wrote that range: "
        "a thin-provisioned or sparse device returns zeros for unwritten blocks without "
        "reading its media, at memory speed, so the read numbers may not be the storage's",
        "drop --no-prefill (the run then writes the range before the read jobs), or write the "
        "range in the job file first (rw=write, not time_based, then stonewall)",
        name,
        f"{name}: read unwritten blocks",
    )
