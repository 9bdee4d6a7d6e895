"""Guards on fio results: named notes that say when a number should not be trusted, and why.

Each note is a :class:`FioNote` with a stable ``id``. The ones that make a class's numbers
*suspect* (:data:`SUSPECT_NOTES`) feed :func:`confidence`, a one-line summary per class:
``"trusted"``, or ``"suspect: <reason>; <reason>"``.

The rules and their thresholds:

``fio.dataset-small``
    The job's data set is smaller than :data:`DATASET_BANDWIDTH_FACTOR` (25) times the bandwidth
    it measured per second — longhorn/kbench's rule of thumb ("the size should be at least 25
    times the read/write bandwidth to avoid the caching impacting the result"). A small data
    set fits in some cache on the way (the node's page cache for buffered I/O, an array's or a
    storage server's cache). Jobs that sync every write and read nothing (etcd, WAL commits)
    are exempt: what they measure is the sync, which no cache may absorb (``fio.cache-sync-
    latency`` watches that).
``fio.cache-write-latency`` / ``fio.cache-sync-latency``
    The median write completion latency (or the median fsync/fdatasync latency) is below
    :data:`CACHE_LATENCY_FLOOR_US` (5 µs). Why 5 µs: a 4 KiB write to the fastest flash seen
    from an application takes roughly 10 µs (Optane-class devices a little under that), and a
    network round trip inside a data centre alone is tens of µs over TCP and a few µs over RDMA;
    below 5 µs the I/O cannot have left the host's memory. Measured here (fio-3.33, kernel 6.18,
    a virtio disk): direct 4k writes at iodepth 1 have a median of 9.3 µs on ext4 and 0.13 µs
    on tmpfs; etcd-style fdatasync 68 µs on ext4 and 0.09 µs on tmpfs. The threshold is this
    project's heuristic, not a vendor number. Jobs that sync every write are judged by their
    sync latency only (their writes go to the page cache by design).
``fio.env-aio-max-nr`` / ``fio.env-no-space`` / ``fio.env-read-only``
    fio failed because of the environment, not the storage's speed: libaio's ``io_queue_init``
    got EAGAIN (the node's ``fs.aio-max-nr`` is used up or smaller than the queue asked for;
    kastenhq/kubestr#309), ENOSPC (errno 28) or EROFS (errno 30). Recognised from the jobs'
    ``error`` numbers in the JSON and from fio's own error lines (``fio: pid=…, err=11/file:
    engines/libaio.c:485, func=io_queue_init, error=Resource temporarily unavailable``), which
    fio-3.33 prints on stderr for ENOSPC/EROFS but on **stdout**, before the JSON, for EAGAIN.
``fio.job-error``
    Any other error number fio reported for a job.
``fio.no-io``
    A job without error that reported no I/O in any direction.
``fio.mixed-directions`` (info)
    fio reported reads and writes together under ``mixed`` (``unified_rw_reporting``): the
    numbers are in ``mixed_*``, and ``read_*``/``write_*`` are empty on purpose.
``fio.latency-off`` (info)
    ``gtod_reduce`` switched latency measurement off (kubestr's default job does).
``fio.percentiles-upper-bound`` (info)
    ``numjobs`` clones were merged without fio's histograms (plain ``json``, not ``json+``), so
    their percentiles are upper bounds (see :mod:`kubectl_storage.core.fio.clones`).
``fio.block-unwritten-read``
    A job reads the benchmark pod's Block volume (``filename=`` the pod's device path,
    :data:`~kubectl_storage.core.fio.profiles.BLOCK_DEVICE_PATH`; a fresh PVC unless ``--pvc``) in
    a range that no job before it (in an earlier stonewall group, without error) wrote
    sequentially. Other devices in a saved fio output (``--from-json``) are not judged: whether
    their blocks were ever written is not known. fio lays out a file
    before reading it, but nothing writes a raw device first, and a thin-provisioned or sparse
    device returns zeros for unwritten blocks without touching its media, at memory speed
    (measured here, a loop device on a sparse file: 304k 4k-read IOPS at 50 µs unwritten,
    18k at 900 µs after a write pass). Judged from fio's own report: the earlier ``rw=write``
    job's written bytes (``io_bytes``, a lower bound: a ramp is not counted) from its offset
    must reach the end of the read range. ``--no-prefill`` gets this note; so does a job file
    that reads the Block volume without writing it first.
``fio.block-prefill`` (info)
    The prefill job (:data:`~kubectl_storage.core.fio.profile_render.PREFILL_JOB_NAME`) wrote
    the read jobs' range before them: how much, and how long it took. The prefill is not a
    measurement, so it is taken out of the reported jobs (:func:`measured_jobs`); a prefill that
    failed gets the error's note (and its read jobs ``fio.block-unwritten-read``).

``fio.clients-packed`` (warn, not suspect)
    With ``--clients``: the clients ran on fewer nodes (zones) than could take them (see
    :func:`kubectl_storage.core.fio.clients.packing_note`).
``fio.faster-than-local-disk`` / ``fio.local-disk`` (info)
    With ``--compare-local``: the volume beat the same job on the node's own disk by a wide
    margin (see :mod:`kubectl_storage.core.fio.local_disk`).

Pure module: parsed results and text in, notes and dicts out.
"""

from __future__ import annotations

import errno
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.clones import combine_clones
from kubectl_storage.core.fio.job_sizes import FioJobError, job_data_bytes, parse_fio_size
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME, READ_RW_VALUES
from kubectl_storage.core.fio.profiles import BLOCK_DEVICE_PATH, ETCD_FDATASYNC_P99_LIMIT_US
from kubectl_storage.core.fio.results import (
    PERCENTILES_UPPER_BOUND,
    FioDirectionResult,
    FioJobResult,
    FioResult,
)
from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.report.findings import Severity

#: kbench's rule of thumb: the data set should be at least this many seconds of bandwidth.
DATASET_BANDWIDTH_FACTOR = 25
#: Median write or sync latency below which no device or network round trip fits (µs).
CACHE_LATENCY_FLOOR_US = 5.0

NOTE_DATASET_SMALL = "fio.dataset-small"
NOTE_CACHE_WRITE = "fio.cache-write-latency"
NOTE_CACHE_SYNC = "fio.cache-sync-latency"
NOTE_AIO_LIMIT = "fio.env-aio-max-nr"
NOTE_NO_SPACE = "fio.env-no-space"
NOTE_READ_ONLY = "fio.env-read-only"
NOTE_JOB_ERROR = "fio.job-error"
NOTE_NO_IO = "fio.no-io"
NOTE_MIXED = "fio.mixed-directions"
NOTE_LATENCY_OFF = "fio.latency-off"
NOTE_UPPER_BOUND = "fio.percentiles-upper-bound"
NOTE_KUBESTR_MODE = "fio.kubestr-mode"
NOTE_ETCD = "fio.etcd-fdatasync"
NOTE_UNWRITTEN_READ = "fio.block-unwritten-read"
NOTE_PREFILL = "fio.block-prefill"
NOTE_FASTER_THAN_LOCAL = "fio.faster-than-local-disk"
NOTE_LOCAL_DISK = "fio.local-disk"
NOTE_CLIENTS_PACKED = "fio.clients-packed"

#: Notes that make a class's numbers suspect.
SUSPECT_NOTES = frozenset(
    {
        NOTE_DATASET_SMALL,
        NOTE_CACHE_WRITE,
        NOTE_CACHE_SYNC,
        NOTE_AIO_LIMIT,
        NOTE_NO_SPACE,
        NOTE_READ_ONLY,
        NOTE_JOB_ERROR,
        NOTE_NO_IO,
        NOTE_UNWRITTEN_READ,
        NOTE_FASTER_THAN_LOCAL,
    }
)

#: Notes that say fio reported an error number for the job they name.
JOB_ERROR_NOTES = frozenset({NOTE_AIO_LIMIT, NOTE_NO_SPACE, NOTE_READ_ONLY, NOTE_JOB_ERROR})

CONFIDENCE_TRUSTED = "trusted"
ETCD_PASS = "pass"
ETCD_FAIL = "fail"
ETCD_UNKNOWN = "unknown"


@dataclass(frozen=True)
class FioNote:
    """One guard's verdict on a job (or a whole run when ``job`` is ``None``).

    Attributes:
        id: stable name of the rule, e.g. ``fio.dataset-small``.
        severity: info, warn or error.
        message: what was seen, with the numbers.
        fix: what to do about it.
        job: the job's name, ``None`` for what concerns the run or the class.
        reason: a few words for the confidence summary.
    """

    id: str
    severity: Severity
    message: str
    fix: str
    job: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order (the ``id``/``severity``/``message``/``fix`` keys a
        rendered findings list uses, plus ``job``)."""
        return {
            "id": self.id,
            "severity": self.severity.value,
            "job": self.job,
            "message": self.message,
            "fix": self.fix,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioNote:
        """Read a note back from a saved report (an unknown severity reads as info)."""
        try:
            severity = Severity(str(data.get("severity", "info")))
        except ValueError:
            severity = Severity.INFO
        job = data.get("job")
        return cls(
            id=str(data.get("id", "")),
            severity=severity,
            message=str(data.get("message", "")),
            fix=str(data.get("fix") or ""),
            job=str(job) if job is not None else None,
        )


@dataclass(frozen=True)
class EtcdVerdict:
    """etcd's storage check on one class: fdatasync p99 against etcd's guidance.

    Attributes:
        job: the etcd job's name, ``None`` when the class ran none.
        fdatasync_p99_us: the worst run's p99, ``None`` when not measured.
        limit_us: the limit it was judged against.
        verdict: ``pass``, ``fail`` or ``unknown``.
        runs: how many runs were judged.
    """

    job: str | None
    fdatasync_p99_us: float | None
    limit_us: float
    verdict: str
    runs: int

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "job": self.job,
            "fdatasync_p99_us": self.fdatasync_p99_us,
            "limit_us": self.limit_us,
            "verdict": self.verdict,
            "runs": self.runs,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EtcdVerdict:
        """Read a verdict back from a saved report."""
        p99, limit, job = data.get("fdatasync_p99_us"), data.get("limit_us"), data.get("job")
        return cls(
            job=str(job) if job is not None else None,
            fdatasync_p99_us=float(p99) if isinstance(p99, int | float) else None,
            limit_us=float(limit) if isinstance(limit, int | float) else 0.0,
            verdict=str(data.get("verdict", ETCD_UNKNOWN)),
            runs=int(data.get("runs") or 0),
        )


# --------------------------------------------------------------------------------------------
# Per run


def run_notes(result: FioResult, jobs: Sequence[FioJobResult] | None = None) -> list[FioNote]:
    """Every note for one fio run: per job, then what fio printed around its JSON.

    Args:
        result: the parsed run.
        jobs: its jobs as reported (clones added up); :func:`combine_clones` when omitted.

    Returns:
        The notes, job by job in fio's order, without duplicates.
    """
    counted = measured_jobs(combine_clones(result) if jobs is None else jobs)
    notes: list[FioNote] = []
    notes.extend(prefill_notes(result))
    for job in counted:
        options = {**result.global_options, **job.job_options}
        notes.extend(_job_notes(job, options))
    notes.extend(unwritten_read_notes(result))
    notes.extend(text_notes(result.surrounding_text))
    return dedupe(notes)


def measured_jobs(jobs: Iterable[FioJobResult]) -> tuple[FioJobResult, ...]:
    """The jobs that measured something: all but the prefill of a Block volume's read range."""
    return tuple(job for job in jobs if job.name != PREFILL_JOB_NAME)


# --------------------------------------------------------------------------------------------
# Block volumes: reads of written blocks only


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


def _job_notes(job: FioJobResult, options: Mapping[str, str]) -> list[FioNote]:
    notes: list[FioNote] = []
    if job.error:
        notes.append(error_note(job.error, job=job.name, ioengine=options.get("ioengine", "")))
    elif not _did_any_io(job):
        notes.append(
            FioNote(
                NOTE_NO_IO,
                Severity.WARN,
                f"job {job.name}: fio reported no I/O in any direction",
                "check the job's rw= and size=, and fio's own messages",
                job.name,
                f"{job.name}: no I/O",
            )
        )
    if job.mixed is not None and job.mixed.did_io:
        notes.append(
            FioNote(
                NOTE_MIXED,
                Severity.INFO,
                f"job {job.name}: fio reported reads and writes together as 'mixed' "
                "(unified_rw_reporting): the numbers are in mixed_*, read_* and write_* are empty",
                "drop unified_rw_reporting (or set it to 'both') to get reads and writes apart",
                job.name,
            )
        )
    if _flag(options.get("gtod_reduce")):
        notes.append(
            FioNote(
                NOTE_LATENCY_OFF,
                Severity.INFO,
                f"job {job.name}: gtod_reduce=1 switches latency measurement off, so there is "
                "no latency and no percentile for it",
                "drop gtod_reduce to measure latency",
                job.name,
            )
        )
    if job.percentile_merge == PERCENTILES_UPPER_BOUND:
        notes.append(
            FioNote(
                NOTE_UPPER_BOUND,
                Severity.INFO,
                f"job {job.name}: its {job.clones} numjobs clones were added up without fio's "
                "histograms, so each percentile is the largest clone's, an upper bound",
                "run fio with --output-format=json+ for exact percentiles, or use group_reporting",
                job.name,
            )
        )
    if not job.error:
        notes.extend(_dataset_notes(job, options))
        notes.extend(_cache_notes(job, options))
    return notes


def _dataset_notes(job: FioJobResult, options: Mapping[str, str]) -> list[FioNote]:
    syncs_every_write = _syncs(options)
    if syncs_every_write and not job.read.did_io:
        return []
    try:
        data_bytes = job_data_bytes(options)
    except FioJobError:
        return []
    if data_bytes is None:
        return []
    directions = [job.read, job.write] + ([job.mixed] if job.mixed is not None else [])
    bandwidth = sum(direction.bw_kib_s for direction in directions) * 1024
    needed = bandwidth * DATASET_BANDWIDTH_FACTOR
    if bandwidth <= 0 or data_bytes >= needed:
        return []
    return [
        FioNote(
            NOTE_DATASET_SMALL,
            Severity.WARN,
            f"job {job.name}: its data set ({format_bytes(data_bytes)}) is smaller than "
            f"{DATASET_BANDWIDTH_FACTOR} times the bandwidth it measured "
            f"({format_bytes(bandwidth)}/s for {DATASET_BANDWIDTH_FACTOR} s = "
            f"{format_bytes(needed)}); a cache on the way (page cache, array or server "
            "cache) may have served it",
            f"give the job size={_fio_size_at_least(needed)} or more, on a volume that holds it "
            "(kbench: at least 25 times the bandwidth)",
            job.name,
            f"{job.name}: data set under {DATASET_BANDWIDTH_FACTOR} s of its bandwidth",
        )
    ]


def _cache_notes(job: FioJobResult, options: Mapping[str, str]) -> list[FioNote]:
    notes: list[FioNote] = []
    write_us = _typical(job.write)
    cached = write_us is not None and write_us < CACHE_LATENCY_FLOOR_US
    if job.write.did_io and not _syncs(options) and cached:
        buffered = not _flag(options.get("direct")) and not _flag(options.get("sync"))
        where = "the page cache (direct=0)" if buffered else "a cache"
        notes.append(
            FioNote(
                NOTE_CACHE_WRITE,
                Severity.WARN,
                f"job {job.name}: the median write completes in {write_us:.2f} µs, below "
                f"{CACHE_LATENCY_FLOOR_US:g} µs, faster than any device or network round "
                f"trip: {where} acknowledged the writes, so they show memory speed, not "
                "the storage's",
                "write with direct=1, and check that the class is not memory-backed "
                "(tmpfs, emptyDir medium: Memory) or behind a volatile write cache",
                job.name,
                f"{job.name}: write latency {write_us:.2f} µs (cache)",
            )
        )
    sync = job.sync
    if sync is not None:
        sync_us = sync.lat_p50_us if sync.lat_p50_us is not None else sync.lat_mean_us
        if sync_us is not None and sync_us < CACHE_LATENCY_FLOOR_US:
            notes.append(
                FioNote(
                    NOTE_CACHE_SYNC,
                    Severity.WARN,
                    f"job {job.name}: the median fsync/fdatasync returns in {sync_us:.2f} µs, "
                    f"below {CACHE_LATENCY_FLOOR_US:g} µs, faster than a flush to stable "
                    "storage can be: the data reached no durable medium",
                    "do not trust this class with databases or etcd until a flush is shown to "
                    "reach stable storage: check for memory-backed storage (tmpfs), nobarrier "
                    "mounts, or a volatile write cache",
                    job.name,
                    f"{job.name}: fdatasync {sync_us:.2f} µs (cache)",
                )
            )
    return notes


# --------------------------------------------------------------------------------------------
# Errors from the environment


_AIO_FIX = (
    "on the node, compare /proc/sys/fs/aio-nr with /proc/sys/fs/aio-max-nr and raise the limit "
    "(sysctl -w fs.aio-max-nr=1048576, kept in /etc/sysctl.d/), or lower iodepth times numjobs, "
    "or use ioengine=psync"
)
_NO_SPACE_FIX = (
    "give the volume more room (-z/--size) or the job a smaller size=: each job without "
    "filename= lays out its own file (numjobs clones too), and ext4 keeps 5% for root"
)
_READ_ONLY_FIX = (
    "check that the PVC is not mounted readOnly and that its access mode allows writes; a "
    "filesystem that hit errors is remounted read-only, so read the node's kernel log (dmesg)"
)


def error_note(number: int, *, job: str | None = None, ioengine: str = "") -> FioNote:
    """The note for an error number fio reported (a job's ``error`` in the JSON).

    errno 11 (EAGAIN) is read as libaio's ``io_queue_init`` failing only when the job used
    ``ioengine=libaio``, the one place fio gets EAGAIN before doing any I/O.

    Args:
        number: the errno (Linux numbering, as fio in the pod reports it).
        job: the job's name.
        ioengine: the job's ``ioengine``.

    Returns:
        The environment note for EAGAIN/libaio, ENOSPC and EROFS, else ``fio.job-error``.
    """
    who = f"job {job}: " if job else ""
    if number == errno.EAGAIN and ioengine.strip() == "libaio":
        return _aio_note(job, f"{who}libaio could not set up its I/O queue (error 11, EAGAIN)")
    if number == errno.ENOSPC:
        return _no_space_note(job, f"{who}the volume ran out of space (error 28, ENOSPC)")
    if number == errno.EROFS:
        return _read_only_note(job, f"{who}the volume is read-only (error 30, EROFS)")
    name = errno.errorcode.get(number, "unknown")
    return FioNote(
        NOTE_JOB_ERROR,
        Severity.ERROR,
        f"{who}fio reported error {number} ({name}: {os.strerror(number)})",
        "run with --keep and read fio's output in the pod",
        job,
        f"{job or 'fio'}: error {number} ({name})",
    )


def _aio_note(job: str | None, what: str) -> FioNote:
    return FioNote(
        NOTE_AIO_LIMIT,
        Severity.ERROR,
        f"{what}: io_queue_init got EAGAIN because the node's AIO event limit fs.aio-max-nr "
        "is used up or smaller than the queue asked for (kastenhq/kubestr#309); the storage "
        "was not measured",
        _AIO_FIX,
        job,
        "fs.aio-max-nr exhausted on the node (io_queue_init EAGAIN)",
    )


def _no_space_note(job: str | None, what: str) -> FioNote:
    return FioNote(NOTE_NO_SPACE, Severity.ERROR, what, _NO_SPACE_FIX, job, "volume full (ENOSPC)")


def _read_only_note(job: str | None, what: str) -> FioNote:
    return FioNote(
        NOTE_READ_ONLY, Severity.ERROR, what, _READ_ONLY_FIX, job, "volume read-only (EROFS)"
    )


# fio-3.33: "fio: pid=11254, err=11/file:engines/libaio.c:485, func=io_queue_init,
# error=Resource temporarily unavailable"
_VERROR = re.compile(r"err=\s*(?P<number>\d+)/[^,]*,\s*func=(?P<func>[^,]+),\s*error=(?P<text>.*)")


def text_notes(text: str) -> list[FioNote]:
    """Environment notes from fio's own messages (its stderr, or text around its JSON).

    Recognised: ``func=io_queue_init`` with ``err=11`` (and fio 2.x's ``fio: check
    /proc/sys/fs/aio-max-nr``), ``No space left on device`` / ``err=28``, and
    ``Read-only file system`` / ``err=30``. fio's lines name a pid, not a job, so these notes
    have no ``job``.

    Args:
        text: fio's stderr, or :attr:`FioResult.surrounding_text`.

    Returns:
        At most one note per kind, in the order first seen.
    """
    notes: list[FioNote] = []
    for line in text.splitlines():
        match = _VERROR.search(line)
        number = int(match["number"]) if match else None
        func = match["func"].strip() if match else ""
        if (number == errno.EAGAIN and func == "io_queue_init") or "aio-max-nr" in line:
            notes.append(_aio_note(None, f"libaio could not set up its I/O queue: {line.strip()}"))
        elif number == errno.ENOSPC or "No space left on device" in line:
            notes.append(_no_space_note(None, f"the volume ran out of space: {line.strip()}"))
        elif number == errno.EROFS or "Read-only file system" in line:
            notes.append(_read_only_note(None, f"the volume is read-only: {line.strip()}"))
    return dedupe(notes)


def dedupe(notes: Iterable[FioNote]) -> list[FioNote]:
    """Keep the first note of each ``(id, job)``; drop a job-less note when a job's note of the
    same id says it already (fio's error line repeats the JSON's error number)."""
    kept: list[FioNote] = []
    seen: set[tuple[str, str | None]] = set()
    for note in notes:
        key = (note.id, note.job)
        if key not in seen:
            seen.add(key)
            kept.append(note)
    with_job = {note.id for note in kept if note.job is not None}
    return [note for note in kept if note.job is not None or note.id not in with_job]


# --------------------------------------------------------------------------------------------
# Summaries


def confidence(notes: Iterable[FioNote]) -> str:
    """``"trusted"``, or ``"suspect: "`` and the reasons of every suspect note, in order."""
    reasons: list[str] = []
    for note in notes:
        if note.id in SUSPECT_NOTES and note.reason not in reasons:
            reasons.append(note.reason or note.id)
    return CONFIDENCE_TRUSTED if not reasons else "suspect: " + "; ".join(reasons)


def etcd_verdict(
    runs: Sequence[FioJobResult], *, limit_us: float = ETCD_FDATASYNC_P99_LIMIT_US
) -> EtcdVerdict:
    """etcd's storage check: the p99 of the fdatasync latency against its 10 ms guidance.

    With repeats the worst run decides.

    Args:
        runs: the etcd job of each run.
        limit_us: the p99 limit in microseconds.

    Returns:
        The verdict: ``pass`` (below the limit), ``fail``, or ``unknown`` when a run has no
        fdatasync percentile (the job failed, or latency was switched off).
    """
    p99s = [job.sync.lat_p99_us if job.sync is not None else None for job in runs]
    measured = [value for value in p99s if value is not None]
    if not runs or len(measured) != len(p99s):
        verdict, worst = ETCD_UNKNOWN, (max(measured) if measured else None)
    else:
        worst = max(measured)
        verdict = ETCD_PASS if worst < limit_us else ETCD_FAIL
    return EtcdVerdict(
        job=runs[0].name if runs else None,
        fdatasync_p99_us=worst,
        limit_us=limit_us,
        verdict=verdict,
        runs=len(runs),
    )


def etcd_note(verdict: EtcdVerdict) -> FioNote:
    """The note stating an :func:`etcd_verdict` in words."""
    p99 = verdict.fdatasync_p99_us
    limit_ms = verdict.limit_us / 1000
    job = verdict.job
    if verdict.verdict == ETCD_UNKNOWN or p99 is None:
        return FioNote(
            NOTE_ETCD,
            Severity.WARN,
            "etcd check: no fdatasync latency was measured, so the class cannot be judged",
            "see the job's error; the etcd profile needs latency measurement on",
            job,
        )
    shown = f"{p99 / 1000:.2f} ms"
    if verdict.verdict == ETCD_PASS:
        return FioNote(
            NOTE_ETCD,
            Severity.INFO,
            f"etcd check passed: fdatasync p99 {shown} is below etcd's {limit_ms:g} ms",
            "",
            job,
        )
    return FioNote(
        NOTE_ETCD,
        Severity.WARN,
        f"etcd check failed: fdatasync p99 {shown} is above etcd's {limit_ms:g} ms guidance; "
        "etcd on this class risks slow WAL writes and leader elections",
        "use a class with lower write-flush latency (local SSD, provisioned IOPS) for etcd",
        job,
    )


def kubestr_mode_note() -> FioNote:
    """The report-wide note of the ``kubestr`` profile."""
    return FioNote(
        NOTE_KUBESTR_MODE,
        Severity.INFO,
        "kubestr's default run, reproduced: gtod_reduce=1 switches latency off (no latency, "
        "no percentiles), and the four jobs run at the same time on one volume, so each number "
        "is a share of it, comparable with kubestr's and not with the default profile's",
        "use the default profile to judge a class",
    )


# --------------------------------------------------------------------------------------------
# Helpers


def _did_any_io(job: FioJobResult) -> bool:
    directions = [job.read, job.write, job.trim] + ([job.mixed] if job.mixed is not None else [])
    return any(direction.did_io for direction in directions) or job.sync is not None


def _typical(direction: FioDirectionResult) -> float | None:
    return direction.clat_p50_us if direction.clat_p50_us is not None else direction.clat_mean_us


def _flag(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "none")


def _syncs(options: Mapping[str, str]) -> bool:
    return _flag(options.get("fsync")) or _flag(options.get("fdatasync"))


def _fio_size_at_least(count: float) -> str:
    gib = 2**30
    if count >= gib:
        return f"{math.ceil(count / gib)}G"
    return f"{math.ceil(count / 2**20)}M"
