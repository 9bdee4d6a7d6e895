"""Evidence, in fio's own report, that memory and not a device completed a job's I/O.

A cache shows in what a device cannot do, not in a size: the guards
``fio.cache-write-latency`` (writes) and ``fio.dataset-small`` (reads) of
:mod:`kubectl_storage.core.fio.guards` fire on the evidence this module finds, at any queue depth.
Three kinds, each measured on this project's machine (fio-3.33, kernel 6.18, two vCPUs, a virtio
disk; the captures are in ``tests/fixtures/fio``, see their ``SOURCES.md``):

**A median below any round trip** (:data:`CACHE_LATENCY_FLOOR_US`, 5 µs)
    At queue depth 1 the completion latency of one I/O is the medium's: a 4 KiB write to the
    fastest flash takes about 10 µs seen from an application (Optane-class devices a little
    under that), a network round trip tens of µs over TCP and a few over RDMA. Below 5 µs the
    I/O cannot have left the host's memory. Direct 4k writes at depth 1: 9.3 µs median on ext4,
    0.13 µs on tmpfs. At a deeper queue a median this low is stronger evidence still.

**fio never waited** (:data:`WAITS_PER_IO_FLOOR` and :data:`CACHE_LATENCY_FLOOR_US` per I/O)
    At a deeper queue the completion latency is mostly time spent waiting behind the other I/Os
    of the queue, so it says little on its own: the ``quick`` profile (depth 16) has a median of
    13-44 µs on tmpfs and 34-70 µs on this machine's ext4. What differs is how the I/O is done.
    A device works asynchronously: fio submits, sleeps until the device interrupts, and wakes
    up (a context switch) many times a second. Memory (tmpfs, the page cache of a buffered
    job) completes the I/O inside the submitting call, so fio never sleeps and is switched out
    only when the scheduler preempts it. fio reports the job's context switches (``ctx``): per
    completed I/O, direct I/O on ext4 made 0.016-0.32 of them at depths 16 and 64 and about 1
    at depth 1, where every I/O waits (every built-in profile, a quiet and a loaded machine);
    tmpfs 0.0000-0.0063 (the larger ones with the ``kubestr`` profile's four jobs at once on
    two CPUs, or one job at load average 5.6: fio is then preempted more often). A job counts
    as memory-fast when it made fewer than :data:`WAITS_PER_IO_FLOOR` (0.01, between the two)
    switches per I/O **and** its queue's time per I/O (mean completion latency divided by the
    queue depth: Little's law) is below the 5 µs floor per 4 KiB of its I/O size
    (:func:`per_io_floor_us`): tmpfs 0.5-2.7 µs for 4k I/Os, ext4 at depth 64 here 13.5 µs,
    and a device at depth 1 spends its whole latency. The second condition keeps a polled
    device (``hipri``, no interrupt, so no switch) at depth 1 out of it. Without a latency
    (``gtod_reduce``) the switches decide alone.

**Buffered I/O** (``direct=0``, no ``sync``/``O_SYNC``)
    A buffered write is acknowledged when it is in the node's page cache, by construction: its
    latency is a memory copy (4k: under 5 µs; 128k: 24 µs here), and a job that runs ``fsync``
    every N writes still measures the cache for N - 1 of them. Buffered reads are served by the
    page cache when the data set fits in it, which kbench's rule of thumb
    (:data:`DATASET_BANDWIDTH_FACTOR`) approximates: a data set under 25 seconds of the
    measured bandwidth. Jobs that sync every write are judged by their sync (``fio.cache-sync-
    latency``), not here.

The thresholds are this project's heuristics, not vendor numbers. What none of them sees: a cache
that answers through something fio must wait for, at a device's speed: an array's or a storage
server's RAM behind a network round trip, or a loop device over a file in the node's page cache
(its kernel thread completes the I/O, so fio sleeps as for a disk: 0.10 switches per I/O and
3.9 µs per I/O at depth 16 in ``fio-3.33-quick-ext4-on-loop.json``). ``--compare-local``
compares with the node's own disk for those. What could be taken for memory: a device so fast
that one fio job never sleeps on it (polled I/O, ``hipri``, at a deep queue); none was measured
here, and the note says what to check.

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubectl_storage.core.fio.results import FioDirectionResult, FioJobResult
from kubectl_storage.core.flush.timing import FLUSH_FLOOR_US

#: Median completion latency below which no device or network round trip fits (µs): the one
#: floor of core/flush/timing.py (where its basis and the measured margins are), so the write
#: guards and the flush classification cannot disagree on what memory speed is.
CACHE_LATENCY_FLOOR_US = FLUSH_FLOOR_US
#: Context switches per completed I/O below which fio never waited for a device.
WAITS_PER_IO_FLOOR = 0.01
#: kbench's rule of thumb: a data set should be at least this many seconds of bandwidth.
DATASET_BANDWIDTH_FACTOR = 25
#: Engines that do one I/O at a time whatever ``iodepth`` says (fio ignores it for them).
SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap"})
#: Engines whose I/O goes through the page cache unless ``direct=1`` (the file engines).
PAGE_CACHE_ENGINES = SYNC_ENGINES | frozenset({"libaio", "io_uring", "posixaio", "splice"})


@dataclass(frozen=True)
class MemoryEvidence:
    """Why a direction of a job ran at memory speed.

    Attributes:
        detail: the numbers, for the note's message.
        short: a few words for the confidence line.
    """

    detail: str
    short: str


def queue_depth(options: Mapping[str, str]) -> int:
    """The I/Os a job keeps in flight: its ``iodepth``, 1 for a synchronous engine."""
    engine = (options.get("ioengine") or "psync").strip().lower()
    if engine in SYNC_ENGINES:
        return 1
    try:
        return max(1, int(str(options.get("iodepth") or "1").strip()))
    except ValueError:
        return 1


def flag(value: str | None) -> bool:
    """Whether a fio boolean option is on (a bare flag is given as ``""`` by fio: on)."""
    if value is None:
        return False
    return value.strip().lower() not in ("0", "false", "no", "none", "off")


def buffered(options: Mapping[str, str]) -> bool:
    """Whether the job's I/O goes through the page cache: a file engine without ``direct``,
    ``buffered=0`` or ``sync`` (O_SYNC)."""
    engine = (options.get("ioengine") or "psync").strip().lower()
    if engine not in PAGE_CACHE_ENGINES:
        return False
    if flag(options.get("direct")) or _off(options.get("buffered")):
        return False
    sync = (options.get("sync") or "").strip().lower()
    return sync in ("", "0", "false", "no", "none")


def waits_per_io(job: FioJobResult) -> float | None:
    """fio's context switches per completed I/O of the job, ``None`` when fio gave none."""
    raws = job.clone_raws or (job.raw,)
    switches = [raw.get("ctx") for raw in raws]
    if not switches or not all(isinstance(value, int | float) for value in switches):
        return None
    directions = [job.read, job.write, job.trim]
    if job.mixed is not None and not any(d.did_io for d in directions):
        directions = [job.mixed]
    ios = sum(_ios(direction) for direction in directions)
    if ios <= 0:
        return None
    return sum(float(value) for value in switches if value is not None) / ios


def memory_evidence(
    direction: FioDirectionResult, *, depth: int, waits: float | None, what: str
) -> MemoryEvidence | None:
    """The evidence that memory completed this direction's I/O, or ``None``.

    Args:
        direction: the job's read, write or mixed numbers.
        depth: the job's queue depth (:func:`queue_depth`).
        waits: its context switches per I/O (:func:`waits_per_io`).
        what: ``reads``, ``writes`` or ``I/Os``, for the words.
    """
    if not direction.did_io:
        return None
    median = direction.clat_p50_us if direction.clat_p50_us is not None else None
    median = median if median is not None else direction.clat_mean_us
    if median is not None and median < CACHE_LATENCY_FLOOR_US:
        return MemoryEvidence(
            f"the median of its {what} completes in {median:.2f} µs, below "
            f"{CACHE_LATENCY_FLOOR_US:g} µs, faster than any device or network round trip",
            f"median {median:.2f} µs",
        )
    if waits is None or waits >= WAITS_PER_IO_FLOOR:
        return None
    mean = direction.clat_mean_us
    per_io = mean / depth if mean is not None else None
    floor = per_io_floor_us(direction)
    if per_io is not None and per_io >= floor:
        return None
    timing = (
        f", and the queue spent {per_io:.2f} µs per I/O (mean {mean:.1f} µs at depth {depth}; "
        f"floor {floor:g} µs)"
        if per_io is not None and mean is not None
        else ""
    )
    return MemoryEvidence(
        f"fio never waited for them: {waits * 1000:.2f} context switches per 1000 I/Os (a "
        f"device makes fio sleep until it answers: 20 or more per 1000 measured with direct "
        f"I/O on a disk, at depths 1 to 64){timing}; memory completes an I/O inside the call "
        "that submits it",
        f"no waits at depth {depth}",
    )


def per_io_floor_us(direction: FioDirectionResult) -> float:
    """The queue's time per I/O below which a job that never waited is memory:
    :data:`CACHE_LATENCY_FLOOR_US` per 4 KiB of its mean I/O size (a 128 KiB I/O is a longer
    copy in memory too: 24 µs for a buffered 128k write here), and never below 5 µs."""
    ios = _ios(direction)
    size = direction.io_bytes / ios if ios > 0 else 4096.0
    return CACHE_LATENCY_FLOOR_US * max(1.0, size / 4096)


def job_bandwidth_bytes(job: FioJobResult) -> float:
    """The job's bandwidth in bytes/s, each byte counted once: fio's ``mixed`` block when it
    did I/O (``unified_rw_reporting`` 1 or ``both``, where ``both`` also reports reads and
    writes apart), else reads plus writes plus trims."""
    if job.mixed is not None and job.mixed.did_io:
        return job.mixed.bw_kib_s * 1024
    return (job.read.bw_kib_s + job.write.bw_kib_s + job.trim.bw_kib_s) * 1024


def _ios(direction: FioDirectionResult) -> float:
    if direction.total_ios is not None:
        return float(direction.total_ios)
    return direction.iops * direction.runtime_ms / 1000


def _off(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("0", "false", "no", "off")
