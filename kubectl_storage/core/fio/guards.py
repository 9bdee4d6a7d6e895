"""Guards on fio results: named notes that say when a number should not be trusted, and why.

Each note is a :class:`~kubectl_storage.core.fio.notes.FioNote` with a stable ``id``. The ones
that make a class's numbers *suspect* (:data:`~kubectl_storage.core.fio.notes.SUSPECT_NOTES`)
feed :func:`~kubectl_storage.core.fio.notes.confidence`, a one-line summary per class:
``"suspect: <reason>; <reason>"``, ``"not checked: <guard> (<job>: <why>)"`` when a guard could not
run, or ``"trusted"`` when every guard ran and none fired.

This module runs the guards on each job (:func:`run_notes`); the Block-volume guards are in
:mod:`kubectl_storage.core.fio.block_reads`, the environment errors in
:mod:`kubectl_storage.core.fio.env_errors`, and the etcd and kubestr notes in
:mod:`kubectl_storage.core.fio.profile_notes`.

The rules and their thresholds:

``fio.dataset-small`` (reads) / ``fio.cache-write-latency`` (writes)
    A cache served the job's reads, or acknowledged its writes, **as fio's own report shows**
    (:mod:`kubectl_storage.core.fio.cache_evidence`): a median completion latency below
    :data:`CACHE_LATENCY_FLOOR_US` (5 µs) at any queue depth; or fio never waited for a device
    (fewer than :data:`~kubectl_storage.core.fio.cache_evidence.WAITS_PER_IO_FLOOR` context
    switches per I/O) while its queue spent under 5 µs per 4 KiB per I/O, which catches memory
    at queue depth 16 or 64, where the latency is queueing; or buffered I/O (``direct=0``): writes
    always (the page cache acknowledges them, also with ``fsync`` every N writes), reads when
    the data set is under :data:`DATASET_BANDWIDTH_FACTOR` (25) seconds of the bandwidth
    (kbench's rule of thumb: the page cache then holds it). The data-set size alone decides
    nothing for direct I/O: a 2G file at 82 MiB/s or more is "small" by kbench's rule, but
    direct I/O bypasses the page cache, and an honest local disk showed no evidence of a cache
    at any profile; why the profiles are not sized to the rule instead is in
    ``docs/commands/fio.md``. Bandwidth is counted once with ``unified_rw_reporting=both``
    (fio's ``mixed`` block, not ``mixed`` plus reads plus writes). Jobs that sync after every
    write (``fsync=1``/``fdatasync=1``: etcd, WAL commits) are judged by their sync latency,
    not their writes, and need no data-set check unless they read.
``fio.cache-sync-latency``
    The median fsync/fdatasync latency is below :data:`CACHE_LATENCY_FLOOR_US` (5 µs), and what
    that flush measured is classified in :mod:`kubectl_storage.core.flush.timing` (shared with
    validate-persistence's fsync probe): this note is its "memory-backed" class only (the writes
    are memory-fast too, or buffered so that the fdatasync had to write them out).
``fio.not-checked`` (info)
    A guard could not run on a job (buffered reads of a data set of unknown size; writes with
    neither a latency nor fio's context switches): the confidence line then says
    ``not checked: <guard> (<job>: <why>)`` instead of ``trusted``.
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
``fio.verify-failed``
    fio's verify read back other data than was written: fio reports it as error 84 (EILSEQ,
    whose C library text is about multibyte characters); the note names it data corruption,
    with the file and offset fio printed (:mod:`kubectl_storage.core.fio.verify_failure`).
``fio.job-error``
    Any other error number fio reported for a job.
``fio.no-io``
    A job without error that reported no I/O in any direction.
``fio.not-steady`` / ``fio.steady`` (info)
    A job asked fio for steady state (``steadystate=``) and ran to its runtime without fio
    finding it steady (suspect), or attained it (info, with the time it took); nothing for a
    job that did not ask (:mod:`kubectl_storage.core.fio.steady_notes`).
``fio.mixed-directions`` (info)
    fio reported reads and writes together under ``mixed`` (``unified_rw_reporting``): the
    numbers are in ``mixed_*`` (the table's MIXED columns), and ``read_*``/``write_*`` are
    empty on purpose.
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
from kubectl_storage.core.fio.cache_evidence import (
    CACHE_LATENCY_FLOOR_US,
    DATASET_BANDWIDTH_FACTOR,
    MemoryEvidence,
    buffered,
    job_bandwidth_bytes,
    memory_evidence,
    queue_depth,
    waits_per_io,
)
from kubectl_storage.core.fio.clones import combine_clones
from kubectl_storage.core.fio.env_errors import job_error_note, text_notes
from kubectl_storage.core.fio.job_sizes import FioJobError, job_data_bytes
from kubectl_storage.core.fio.notes import (
    NOTE_CACHE_SYNC,
    NOTE_CACHE_WRITE,
    NOTE_DATASET_SMALL,
    NOTE_LATENCY_OFF,
    NOTE_MIXED,
    NOTE_NO_IO,
    NOTE_NOT_CHECKED,
    NOTE_SYNC_NO_FLUSH,
    NOTE_UPPER_BOUND,
    FioNote,
    dedupe,
)
from kubectl_storage.core.fio.profile_render import (
    PREFILL_JOB_NAME,
    READ_RW_VALUES,
    WRITE_RW_VALUES,
)
from kubectl_storage.core.fio.results import (
    PERCENTILES_UPPER_BOUND,
    FioDirectionResult,
    FioJobResult,
    FioResult,
)
from kubectl_storage.core.fio.steady_notes import steady_notes
from kubectl_storage.core.flush.timing import FlushClass, classify_flush
from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.report.findings import Severity

__all__ = ["CACHE_LATENCY_FLOOR_US", "DATASET_BANDWIDTH_FACTOR", "measured_jobs", "run_notes"]


def run_notes(
    result: FioResult, jobs: Sequence[FioJobResult] | None = None, *, fio_text: str = ""
) -> list[FioNote]:
    """Every note for one fio run: per job, then what fio printed around its JSON.

    Args:
        result: the parsed run.
        jobs: its jobs as reported (clones added up); :func:`combine_clones` when omitted.
        fio_text: what fio wrote on stderr, read with the text around its JSON for what a
            job's error number does not say (where a verify failed).

    Returns:
        The notes, job by job in fio's order, without duplicates.
    """
    counted = measured_jobs(combine_clones(result) if jobs is None else jobs)
    notes: list[FioNote] = []
    notes.extend(prefill_notes(result))
    text = "\n".join(part for part in (result.surrounding_text, fio_text) if part)
    for job in counted:
        options = {**result.global_options, **job.job_options}
        notes.extend(_job_notes(job, options, text))
        notes.extend(steady_notes(job))
    notes.extend(unwritten_read_notes(result))
    notes.extend(text_notes(result.surrounding_text))
    return dedupe(notes)


def measured_jobs(jobs: Iterable[FioJobResult]) -> tuple[FioJobResult, ...]:
    """The jobs that measured something: all but the prefill of a Block volume's read range."""
    return tuple(job for job in jobs if job.name != PREFILL_JOB_NAME)


def _job_notes(job: FioJobResult, options: Mapping[str, str], fio_text: str) -> list[FioNote]:
    notes: list[FioNote] = []
    if job.error:
        notes.append(job_error_note(job, options, fio_text))
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
    if job.mixed is not None and job.mixed.did_io and not (job.read.did_io or job.write.did_io):
        # unified_rw_reporting=1; with "both" fio reports reads and writes apart as well
        notes.append(
            FioNote(
                NOTE_MIXED,
                Severity.INFO,
                f"job {job.name}: fio reported reads and writes together as 'mixed' "
                "(unified_rw_reporting=1): the table shows them in its MIXED columns (mixed_* "
                "in -o json); reads and writes apart were not reported",
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
    """``fio.dataset-small``: the job's reads came from a cache (see the module docstring)."""
    if _syncs(options) and not _reads(job, options):
        return []
    reads = _read_direction(job, options)
    if reads is None:
        return []
    bandwidth = job_bandwidth_bytes(job)
    try:
        data_bytes = job_data_bytes(options)
    except FioJobError:
        data_bytes = None
    needed = bandwidth * DATASET_BANDWIDTH_FACTOR
    small = data_bytes is not None and bandwidth > 0 and data_bytes < needed
    evidence = memory_evidence(
        reads, depth=queue_depth(options), waits=waits_per_io(job), what="reads"
    )
    if evidence is None and buffered(options):
        if data_bytes is None:
            return [_not_checked(job, NOTE_DATASET_SMALL, "buffered reads, data set size unknown")]
        if small:
            evidence = MemoryEvidence(
                "they are buffered (direct=0), so the node's page cache serves what it holds",
                "buffered, page cache",
            )
    if evidence is None:
        return []
    if data_bytes is not None and bandwidth > 0:
        size = (
            f"its data set ({format_bytes(data_bytes)}) is "
            + ("smaller" if small else "not smaller")
            + f" than {DATASET_BANDWIDTH_FACTOR} s of the bandwidth it measured "
            f"({format_bytes(bandwidth)}/s for {DATASET_BANDWIDTH_FACTOR} s = "
            f"{format_bytes(needed)})"
        )
        fix = (
            f"give the job size={_fio_size_at_least(needed)} or more, on a volume that holds it"
            if small
            else "find out which cache answered (the data set is not what let it)"
        )
    else:
        size = "its data set size is unknown"
        fix = "give the job a size= larger than the caches on the way"
    return [
        FioNote(
            NOTE_DATASET_SMALL,
            Severity.WARN,
            f"job {job.name}: a cache served its reads: {evidence.detail}; {size}. The numbers "
            "are the cache's (the page cache, a memory-backed volume, an array's or server's "
            "cache), not the storage's",
            f"{fix}, read with direct=1, and check that the class is not memory-backed "
            "(tmpfs, emptyDir medium: Memory)",
            job.name,
            f"{job.name}: reads from a cache ({evidence.short})",
        )
    ]


def _cache_notes(job: FioJobResult, options: Mapping[str, str]) -> list[FioNote]:
    notes: list[FioNote] = []
    writes = _write_direction(job, options)
    if writes is not None and not _syncs(options):
        evidence = memory_evidence(
            writes, depth=queue_depth(options), waits=waits_per_io(job), what="writes"
        )
        where = "a cache"
        if buffered(options):
            where = "the node's page cache (direct=0)"
            if evidence is None:
                evidence = MemoryEvidence(
                    "they are buffered (direct=0, no sync=1, no fsync after each write), and a "
                    "buffered write returns once it is in memory",
                    "buffered, page cache",
                )
        unmeasured = writes.clat_p50_us is None and writes.clat_mean_us is None
        if evidence is None and unmeasured and waits_per_io(job) is None:
            notes.append(
                _not_checked(job, NOTE_CACHE_WRITE, "no write latency and no context switches")
            )
        if evidence is not None:
            notes.append(
                FioNote(
                    NOTE_CACHE_WRITE,
                    Severity.WARN,
                    f"job {job.name}: {where} acknowledged its writes: {evidence.detail}; "
                    "so the numbers show memory speed, not the storage's",
                    "write with direct=1, and check that the class is not memory-backed "
                    "(tmpfs, emptyDir medium: Memory) or behind a volatile write cache",
                    job.name,
                    f"{job.name}: writes from a cache ({evidence.short})",
                )
            )
    notes.extend(_sync_notes(job, options, _typical(job.write)))
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


def _rw(options: Mapping[str, str]) -> str:
    return (options.get("rw") or options.get("readwrite") or "read").split(":", 1)[0].lower()


def _read_direction(job: FioJobResult, options: Mapping[str, str]) -> FioDirectionResult | None:
    if job.read.did_io:
        return job.read
    mixed = job.mixed
    if mixed is not None and mixed.did_io and _rw(options) in READ_RW_VALUES:
        return mixed
    return None


def _write_direction(job: FioJobResult, options: Mapping[str, str]) -> FioDirectionResult | None:
    if job.write.did_io:
        return job.write
    mixed = job.mixed
    if mixed is not None and mixed.did_io and _rw(options) in WRITE_RW_VALUES:
        return mixed
    return None


def _reads(job: FioJobResult, options: Mapping[str, str]) -> bool:
    return _read_direction(job, options) is not None


def _not_checked(job: FioJobResult, guard: str, why: str) -> FioNote:
    return FioNote(
        NOTE_NOT_CHECKED,
        Severity.INFO,
        f"job {job.name}: {guard} could not run: {why}",
        "give the job what the guard needs (a size=, latency measurement), or judge it yourself",
        job.name,
        f"{guard} ({job.name}: {why})",
    )


def _syncs(options: Mapping[str, str]) -> bool:
    """Whether the job syncs after every write (``fsync=1``/``fdatasync=1``; ``fsync=256``
    syncs once in 256 writes, so its writes are judged as writes)."""
    return _every_write(options.get("fsync")) or _every_write(options.get("fdatasync"))


def _every_write(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "yes", "on")


def _fio_size_at_least(count: float) -> str:
    gib = 2**30
    if count >= gib:
        return f"{math.ceil(count / gib)}G"
    return f"{math.ceil(count / 2**20)}M"
