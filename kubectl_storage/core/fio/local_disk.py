"""The node's own disk as a yardstick (``fio --compare-local``).

A volume that answers faster than the disk of the node it is used on has, most of the time,
not measured its storage: a cache on the way served the I/O (the node's page cache under a
loop device or a FUSE mount, a memory-backed volume, an array's or a server's cache), or the
reads found nothing written. So with ``--compare-local`` the benchmark pod also has an
emptyDir at :data:`LOCAL_DIRECTORY` (the kubelet's directory, on the node's own disk), and once
the volume's runs are done the same jobs run there, in the same pod, on the same node.

How it decides: latency at queue depth 1, not the jobs' IOPS
    At queue depth 16 or 64 memory is bounded by the CPU, not by the medium, and a fast node
    disk comes close to it: on this project's machine (a VM whose disk the host caches) the
    ``quick`` profile did 340-360k IOPS on a tmpfs against 20-57k on ext4 when the host was
    busy and 164-218k when it was quiet, so the same tmpfs was 17 times the disk one day and 3.0
    times another. And one run of a job against one run on the disk is a single sample of a
    noisy disk: an honest class on the very same ext4 (local-path) once did 3.31 times the
    disk's write IOPS. So the jobs' ratios are reported, and the decision is taken on a
    **latency probe** (:func:`probe_job_text`): one 4k random read and one 4k random write at
    queue depth 1 (psync, direct, :data:`PROBE_SIZE` file), each for a few seconds, run
    :data:`PROBE_ROUNDS` times on each side, **interleaved** (disk, volume, disk, volume, ...),
    so that a change in the node's load falls on both sides. At queue depth 1 the time of one
    I/O is the medium's: memory answers in about a microsecond (a tmpfs here: 0.9-1.0 µs reads,
    1.1-1.3 µs writes: medians of six rounds at load average 1.8-7.2), a disk round trip in tens
    to hundreds (this machine's ext4 in the same rounds: 57-191 µs reads, 59-118 µs writes).

``fio.faster-than-local-disk``
    In some direction the disk's *fastest* round was at least :data:`LOCAL_DISK_FACTOR` (3)
    times the volume's *slowest* round (median latencies). Comparing extremes of the rounds
    rather than one ratio means noise has to push every round the same way to raise it: on
    one ext4 one round's ratio reached 2.8 (measured: 191 against 69 µs), while the ratio of
    the extremes stayed below 0.75. A tmpfs was 45 times or more past it (the disk's fastest
    round 57 µs for reads and 59 µs for writes, the tmpfs' slowest 1.0 and 1.3 µs). An ext4
    on a loop device over a file on the disk answered in 8-14 µs in some rounds and like the
    disk (43-82 µs) in others: its page cache does not serve every round, and the rule flags
    it only when it does. It makes the
    class's numbers suspect. It can be wrong in one case, which the note names: a class whose
    storage really answers faster than the node's disk (a local NVMe or a provisioned-IOPS
    volume against a network boot disk). The factor is this project's heuristic, not a
    vendor number.
``fio.local-disk`` (info)
    What the comparison found: the probe's medians on both sides and the ratio of the jobs'
    IOPS (the largest), or why there was none: the emptyDir is memory-backed (tmpfs or ramfs,
    kubelet's root on a RAM disk), or the run there failed.

Not every job file can run there: one that names a directory other than the volume's, or an
absolute file (a device), would not be the same job on the node's disk; :func:`local_job_text`
refuses it. Block volumes are refused by the command for the same reason (their jobs address
the device).

Pure module.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.job_sizes import FioJobError, estimate_job_space
from kubectl_storage.core.fio.notes import NOTE_FASTER_THAN_LOCAL, NOTE_LOCAL_DISK, FioNote
from kubectl_storage.core.fio.paths import absolute_paths
from kubectl_storage.core.fio.profiles import DEFAULT_DIRECTORY
from kubectl_storage.core.fio.report_extra_runs import LocalDiskResult
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.setup import VolumeSetup
from kubectl_storage.core.k8s.quantities import format_count
from kubectl_storage.core.report.findings import Severity

#: Where the benchmark pod mounts the emptyDir on the node's disk.
LOCAL_DIRECTORY = "/local"
#: The ConfigMap key of the job file that runs there.
LOCAL_JOB_FILE_NAME = "local.fio"
#: The ConfigMap key of the latency probe's job file (:func:`probe_job_text`).
PROBE_JOB_FILE_NAME = "probe.fio"
#: How many times the probe runs on each side, interleaved with the other side's runs.
PROBE_ROUNDS = 3
#: The probe's file: small, so that it costs little room on either side.
PROBE_SIZE = "32M"
PROBE_SIZE_BYTES = 32 << 20
#: The probe's jobs and the direction each measures.
PROBE_JOBS = (("probe_read", "read"), ("probe_write", "write"))
#: How many times faster than the node's disk (the disk's fastest round over the volume's
#: slowest, at queue depth 1) a volume may be before its numbers are suspect.
LOCAL_DISK_FACTOR = 3.0
#: File systems that are memory, not a disk: nothing to compare with.
MEMORY_FS_TYPES = frozenset({"tmpfs", "ramfs"})
#: Directions compared by IOPS (fio's ``mixed`` when unified_rw_reporting is on).
_DIRECTIONS = ("read", "write", "mixed")


@dataclass(frozen=True)
class LocalDiskRun:
    """What the run on the node's disk gave, before it is summarised.

    Attributes:
        node: the node the pod ran on.
        volume: the emptyDir's mount as the pod saw it (file system, source).
        result: fio's result there, ``None`` when it did not run.
        skipped: why it did not run or could not be read, ``None`` when it did.
        disk_probes / volume_probes: the latency probe's runs on each side, in the order they
            ran (interleaved, the disk first).
    """

    node: str | None
    volume: VolumeSetup | None
    result: FioResult | None = None
    skipped: str | None = None
    disk_probes: tuple[FioResult, ...] = ()
    volume_probes: tuple[FioResult, ...] = ()


def local_job_text(job_text: str, *, volume_directory: str = DEFAULT_DIRECTORY) -> str:
    """The job file that runs the same jobs in :data:`LOCAL_DIRECTORY`.

    ``directory=<volume_directory>`` lines point at the emptyDir instead; a job without
    ``directory=`` gets it from the command line (``--directory``) as on the volume.

    Raises:
        FioJobError: the job names a directory other than the volume's, or an absolute file
            (a device, or a file outside the volume), which would not be the same job there.
    """
    for path in absolute_paths(job_text):
        if path.option == "directory" and path.path.rstrip("/") == volume_directory:
            continue  # the volume itself: pointed at the emptyDir below
        raise FioJobError(
            f"{path.said()}, an absolute path other than the volume's {volume_directory}, so "
            "the same job cannot run on the node's disk"
        )
    pattern = rf"^(\s*directory\s*=\s*){re.escape(volume_directory)}/?[ \t]*$"
    local = re.sub(pattern, rf"\g<1>{LOCAL_DIRECTORY}", job_text, flags=re.M)
    # What the rewrite did not reach (directory=/dataset:/dataset) would run on the volume
    # again and compare the volume with itself.
    left = re.search(rf"^\s*directory\s*=.*{re.escape(volume_directory)}", local, flags=re.M)
    if left is not None:
        raise FioJobError(
            f"{left.group(0).strip()} names the volume in a way that cannot be pointed at the "
            "node's disk; write directory= once, with the volume's path alone"
        )
    return local


def probe_job_text() -> str:
    """The latency probe's job file (its directory is given on fio's command line).

    ``psync``, so that fio's completion latency is the whole system call (with libaio at depth 1
    an I/O can complete inside ``io_submit`` and its clat reads 1 µs on a disk); ``unlink`` so
    that nothing is left on a user's PVC.
    """
    lines = [
        "; kubectl-storage --compare-local latency probe: 4k at queue depth 1",
        "[global]",
        "ioengine=psync",
        "direct=1",
        "bs=4k",
        f"size={PROBE_SIZE}",
        "time_based",
        "runtime=3",
        "ramp_time=1",
        "randrepeat=0",
        "verify=0",
        "unlink=1",
        "percentile_list=50:90:99",
        "filename=kubectl-storage-probe.dat",
    ]
    for name, direction in PROBE_JOBS:
        lines += ["", f"[{name}]", f"rw=rand{direction}", "stonewall"]
    return "\n".join(lines) + "\n"


def probe_medians(results: Sequence[FioResult], direction: str) -> tuple[float, ...]:
    """The median completion latency (µs) of the probe's job in ``direction``, one per run that
    has it without error."""
    name = {d: n for n, d in PROBE_JOBS}[direction]
    found: list[float] = []
    for result in results:
        for job in result.jobs:
            if job.name != name or job.failed:
                continue
            value = getattr(job, direction).clat_p50_us
            if value:
                found.append(float(value))
    return tuple(found)


def with_local_disk(pod: Mapping[str, Any], job_text: str) -> dict[str, Any]:
    """The benchmark pod with an emptyDir on the node's disk at LOCAL_DIRECTORY.

    Its size limit is the job's data set and a tenth more (the kubelet evicts a pod whose
    emptyDir outgrows it, so a job cannot fill the node's disk). No ephemeral-storage request:
    the pod goes where it would go without the comparison, beside the volume it measures.
    """
    out = copy.deepcopy(dict(pod))
    needed = estimate_job_space(job_text).total_bytes + PROBE_SIZE_BYTES
    limit = int(needed * 1.1) + (64 << 20)
    spec = out["spec"]
    spec["volumes"].append({"name": "local-disk", "emptyDir": {"sizeLimit": str(limit)}})
    spec["containers"][0]["volumeMounts"].append(
        {"name": "local-disk", "mountPath": LOCAL_DIRECTORY}
    )
    return out


def local_disk_notes(volume_jobs: Sequence[FioJobSummary], local: LocalDiskResult) -> list[FioNote]:
    """Compare the volume with the node's disk: the probe decides, the jobs inform.

    Returns a ``fio.faster-than-local-disk`` note when, in some direction, the disk's fastest
    probe round was :data:`LOCAL_DISK_FACTOR` times the volume's slowest or more, and one
    ``fio.local-disk`` note that says what was measured (or why nothing was).
    """
    where = _where(local)
    if local.skipped:
        return [_info(f"no comparison with the node's own disk: {local.skipped}")]
    notes: list[FioNote] = []
    measured: list[str] = []
    faster: list[str] = []
    reasons: list[str] = []
    probe = local.probe
    incomplete: list[str] = []
    for direction in ("read", "write"):
        volume = probe.medians("volume", direction) if probe else ()
        disk = probe.medians("disk", direction) if probe else ()
        if not volume or not disk:
            continue
        if min(len(volume), len(disk)) < PROBE_ROUNDS:
            # a lost round is a lost chance for noise to show: judge only every round
            incomplete.append(
                f"{direction}: {len(volume)} round(s) on the volume and {len(disk)} on the disk "
                f"gave a result, of {PROBE_ROUNDS}"
            )
            continue
        # the disk at its fastest against the volume at its slowest: every round must agree
        low, high = min(disk) / max(volume), max(disk) / min(volume)
        measured.append(
            f"{direction} {_span(volume)} on the volume, {_span(disk)} on the disk "
            f"(disk/volume {_ratio_span(low, high)})"
        )
        if low >= LOCAL_DISK_FACTOR:
            faster.append(
                f"4k {direction}s took {_span(volume)} on the volume against {_span(disk)} on "
                f"the disk, {low:.1f} times faster or more in every round"
            )
            reasons.append(
                f"{direction} at queue depth 1 {low:.0f}+ times faster than the node's disk"
            )
    if faster:
        notes.append(
            FioNote(
                NOTE_FASTER_THAN_LOCAL,
                Severity.WARN,
                f"the volume answered faster than {where}: " + "; ".join(faster) + ". A cache "
                "on the volume's path most likely served it (the node's page cache under a "
                "loop device or FUSE mount, a memory-backed volume, an array's or server's "
                "cache), unless the class's storage really is faster than the node's disk",
                "find out what backs the class and make the data set larger than its caches "
                "(size=); if the storage is known to be faster than the node's disk (a local "
                "NVMe or provisioned-IOPS volume against a network boot disk), the numbers stand",
                None,
                "; ".join(reasons),
            )
        )
    rounds = max(len(probe.disk_read_us), len(probe.disk_write_us)) if probe else 0
    if measured:
        said = (
            f"4k at queue depth 1, {rounds} interleaved rounds on each side (median latency "
            "per round): " + "; ".join(measured)
        )
    elif incomplete:
        said = (
            "the latency probe was not judged, some rounds gave no result ("
            + "; ".join(incomplete)
            + ")"
        )
    else:
        said = (
            "the latency probe (4k at queue depth 1) gave no result on both sides, so nothing "
            "was judged"
        )
    largest = _largest_job_ratio(volume_jobs, local)
    if largest is not None:
        ratio, name, direction = largest
        said += f"; the same jobs: the volume did at most {ratio:.2f} times the disk's figure "
        said += f"(job {name}, {direction})"
    notes.append(_info(f"compared with {where}: {said}"))
    return notes


def _largest_job_ratio(
    volume_jobs: Sequence[FioJobSummary], local: LocalDiskResult
) -> tuple[float, str, str] | None:
    """The largest (volume / disk) ratio over the jobs that ran without error on both sides."""
    by_name = {job.name: job for job in local.jobs if not job.error}
    largest: tuple[float, str, str] | None = None
    for job in volume_jobs:
        theirs = by_name.get(job.name)
        if job.error or theirs is None:
            continue
        for comparison in _ratios(job, theirs):
            if largest is None or comparison.ratio > largest[0]:
                largest = (comparison.ratio, job.name, comparison.direction)
    return largest


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.1f} µs" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f} µs"


def _ratio_span(low: float, high: float) -> str:
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}-{high:.2f}"


@dataclass(frozen=True)
class _Ratio:
    direction: str
    ratio: float  # how many times the node's disk the volume did (or how much shorter a sync)
    volume: str  # the two figures, as the note says them
    disk: str


def _ratios(ours: FioJobSummary, theirs: FioJobSummary) -> list[_Ratio]:
    found: list[_Ratio] = []
    for direction in _DIRECTIONS:
        mine, local = ours.value(f"{direction}_iops"), theirs.value(f"{direction}_iops")
        if mine and local:
            found.append(
                _Ratio(
                    direction,
                    mine / local,
                    f"{format_count(mine)} IOPS",
                    f"{format_count(local)} IOPS",
                )
            )
    # a flush: shorter is faster, so the ratio is the node's time over the volume's
    mine, local = ours.value("sync_lat_p50_us"), theirs.value("sync_lat_p50_us")
    if mine and local:
        found.append(_Ratio("fsync", local / mine, f"median sync {mine:.1f} µs", f"{local:.1f} µs"))
    return found


def _info(message: str) -> FioNote:
    return FioNote(NOTE_LOCAL_DISK, Severity.INFO, message, "")


def _where(local: LocalDiskResult) -> str:
    what = "the node's own disk"
    if local.node:
        what += f" of {local.node}"
    details = " on ".join(x for x in (local.fs_type, local.source) if x)
    return f"{what} (an emptyDir, {details})" if details else f"{what} (an emptyDir)"


def memory_backed(volume: VolumeSetup | None) -> bool:
    """Whether the emptyDir is memory (tmpfs or ramfs), not the node's disk."""
    return volume is not None and volume.fs_type in MEMORY_FS_TYPES
