"""Guards on fio results: named notes that say when a number should not be trusted, and why.

Each note is a :class:`~kubectl_storage.core.fio.notes.FioNote` with a stable ``id``. The ones
that make a class's numbers *suspect* (:data:`~kubectl_storage.core.fio.notes.SUSPECT_NOTES`)
feed :func:`~kubectl_storage.core.fio.notes.confidence`, a one-line summary per class:
``"trusted"``, or ``"suspect: <reason>; <reason>"``.

This module runs the guards on each job (:func:`run_notes`); the Block-volume guards are in
:mod:`kubectl_storage.core.fio.block_reads`, the environment errors in
:mod:`kubectl_storage.core.fio.env_errors`, and the etcd and kubestr notes in
:mod:`kubectl_storage.core.fio.profile_notes`.

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
    sync latency only (their writes go to the page cache by design). What a fast flush means is
    classified in :mod:`kubectl_storage.core.flush.timing` (shared with validate-persistence's
    fsync probe): ``fio.cache-sync-latency`` is its "memory-backed" class only (the writes are
    memory-fast too, or buffered so that the fdatasync had to write them out).
``fio.sync-without-flush`` (info, not suspect)
    Direct writes take device time but fdatasync returns below the floor: "acknowledged without
    a flush", a power-loss-protected cache or a cache that lies, which only a power-loss test
    can tell apart (unverified). Measured here: a loop device in write-through mode.
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

import math
from collections.abc import Iterable, Mapping, Sequence

from kubectl_storage.core.fio.block_reads import prefill_notes, unwritten_read_notes
from kubectl_storage.core.fio.clones import combine_clones
from kubectl_storage.core.fio.env_errors import error_note, text_notes
from kubectl_storage.core.fio.job_sizes import FioJobError, job_data_bytes
from kubectl_storage.core.fio.notes import (
    NOTE_CACHE_SYNC,
    NOTE_CACHE_WRITE,
    NOTE_DATASET_SMALL,
    NOTE_LATENCY_OFF,
    NOTE_MIXED,
    NOTE_NO_IO,
    NOTE_SYNC_NO_FLUSH,
    NOTE_UPPER_BOUND,
    FioNote,
    dedupe,
)
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME
from kubectl_storage.core.fio.results import (
    PERCENTILES_UPPER_BOUND,
    FioDirectionResult,
    FioJobResult,
    FioResult,
)
from kubectl_storage.core.flush.timing import FlushClass, classify_flush
from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.report.findings import Severity

#: kbench's rule of thumb: the data set should be at least this many seconds of bandwidth.
DATASET_BANDWIDTH_FACTOR = 25
#: Median write or sync latency below which no device or network round trip fits (µs).
CACHE_LATENCY_FLOOR_US = 5.0


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
    notes.extend(_sync_notes(job, options, write_us))
    return notes


def _sync_notes(
    job: FioJobResult, options: Mapping[str, str], write_us: float | None
) -> list[FioNote]:
    # What the flush measured is decided in core.flush (shared with validate-persistence's
    # fsync probe): memory-backed only when the writes are memory-fast (or buffered, so the
    # fdatasync had the write-out to do); direct writes at device time with an instant flush are
    # "acknowledged without a flush", unverified (info, not suspect: a power-loss-protected
    # device looks the same).
    sync = job.sync
    if sync is None:
        return []
    # Writes whose latency includes the device's: direct I/O, or O_SYNC/O_DSYNC (sync=).
    direct = (
        _flag(options.get("direct"))
        or (options.get("buffered") or "").strip() == "0"
        or _flag(options.get("sync"))
    )
    reading = classify_flush(
        sync_us=sync.lat_p50_us if sync.lat_p50_us is not None else sync.lat_mean_us,
        write_us=write_us if job.write.did_io else None,
        writes_direct=direct,
    )
    if reading is None or reading.kind is FlushClass.FLUSHED:
        return []
    memory = reading.kind is FlushClass.MEMORY
    return [
        FioNote(
            NOTE_CACHE_SYNC if memory else NOTE_SYNC_NO_FLUSH,
            Severity.WARN if memory else Severity.INFO,
            f"job {job.name}: {reading.explanation()}",
            "do not trust this class with databases or etcd: check for memory-backed storage "
            "(tmpfs, emptyDir medium: Memory), nobarrier mounts, or a library that makes fsync "
            "a no-op"
            if memory
            else "trust it with databases only if the device's cache is known to be "
            "power-loss protected, or a power-loss test showed no acknowledged write lost",
            job.name,
            f"{job.name}: fdatasync {reading.sync_us:.2f} µs ({reading.label})",
        )
    ]


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
