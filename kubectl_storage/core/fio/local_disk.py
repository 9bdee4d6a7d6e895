"""The node's own disk as a yardstick (``fio --compare-local``).

A volume that answers faster than the disk of the node it is used on has, most of the time,
not measured its storage: a cache on the way served the I/O (the node's page cache under a
loop device or a FUSE mount, a memory-backed volume, an array's or a server's cache), or the
reads found nothing written. So with ``--compare-local`` the benchmark pod also has an
emptyDir at :data:`LOCAL_DIRECTORY` (the kubelet's directory, on the node's own disk), and once
the volume's runs are done the same jobs run there, in the same pod, on the same node.

``fio.faster-than-local-disk``
    A job's IOPS in a direction (read, write, or fio's ``mixed``) on the volume is at least
    :data:`LOCAL_DISK_FACTOR` (3) times the same job's on the node's disk, or its median
    fsync/fdatasync at least 3 times shorter. Why 3: the same job on the same disk varies
    (measured here, the ``quick`` profile four times on one ext4: reads 164k-218k IOPS, writes
    109k-161k, up to 1.47 times apart), so the factor stays twice that noise away; and every
    path a volume takes (a network, a replica, a device-mapper layer) adds work to the node's
    own. Memory is far past it (a tmpfs here: 6 times the ext4's IOPS, an fdatasync 700 times
    shorter); a loop device's page cache was not (1.3-1.6 times). It makes the class's numbers
    suspect. It can be wrong in one case, which the note names: a class whose storage really is
    faster than the node's disk (a provisioned-IOPS or NVMe-backed volume against a
    general-purpose boot disk). The factor is this project's heuristic, not a vendor number.
``fio.local-disk`` (info)
    What the comparison found (the largest ratio, or why there was none): the emptyDir is
    memory-backed (tmpfs or ramfs, kubelet's root on a RAM disk), or the run there failed.

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

from kubectl_storage.core.fio.guards import NOTE_FASTER_THAN_LOCAL, NOTE_LOCAL_DISK, FioNote
from kubectl_storage.core.fio.jobs import DEFAULT_DIRECTORY, FioJobError, estimate_job_space
from kubectl_storage.core.fio.paths import absolute_paths
from kubectl_storage.core.fio.report import FioJobSummary, LocalDiskResult
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.setup import VolumeSetup
from kubectl_storage.core.k8s.quantities import format_count
from kubectl_storage.core.report.findings import Severity

#: Where the benchmark pod mounts the emptyDir on the node's disk.
LOCAL_DIRECTORY = "/local"
#: The ConfigMap key of the job file that runs there.
LOCAL_JOB_FILE_NAME = "local.fio"
#: How many times the node's disk a volume may be before its numbers are suspect.
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
    """

    node: str | None
    volume: VolumeSetup | None
    result: FioResult | None = None
    skipped: str | None = None


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


def with_local_disk(pod: Mapping[str, Any], job_text: str) -> dict[str, Any]:
    """The benchmark pod with an emptyDir on the node's disk at LOCAL_DIRECTORY.

    Its size limit is the job's data set and a tenth more (the kubelet evicts a pod whose
    emptyDir outgrows it, so a job cannot fill the node's disk). No ephemeral-storage request:
    the pod goes where it would go without the comparison, beside the volume it measures.
    """
    out = copy.deepcopy(dict(pod))
    needed = estimate_job_space(job_text).total_bytes
    limit = int(needed * 1.1) + (64 << 20)
    spec = out["spec"]
    spec["volumes"].append({"name": "local-disk", "emptyDir": {"sizeLimit": str(limit)}})
    spec["containers"][0]["volumeMounts"].append(
        {"name": "local-disk", "mountPath": LOCAL_DIRECTORY}
    )
    return out


def local_disk_notes(volume_jobs: Sequence[FioJobSummary], local: LocalDiskResult) -> list[FioNote]:
    """Compare the volume's jobs with the same jobs on the node's disk.

    Returns a ``fio.faster-than-local-disk`` note per job that beat the node's disk by
    :data:`LOCAL_DISK_FACTOR` or more in some direction (naming each), and one
    ``fio.local-disk`` note that says what was compared (or why nothing was).
    """
    where = _where(local)
    if local.skipped:
        return [_info(f"no comparison with the node's own disk: {local.skipped}")]
    by_name = {job.name: job for job in local.jobs if not job.error}
    notes: list[FioNote] = []
    largest: tuple[float, str, str] | None = None
    for job in volume_jobs:
        theirs = by_name.get(job.name)
        if job.error or theirs is None:
            continue
        beaten = []
        for comparison in _ratios(job, theirs):
            if largest is None or comparison.ratio > largest[0]:
                largest = (comparison.ratio, job.name, comparison.direction)
            if comparison.ratio >= LOCAL_DISK_FACTOR:
                beaten.append(comparison)
        if beaten:
            notes.append(_faster_note(job.name, beaten, where))
    if largest is None:
        return [_info(f"no job ran without error on both the volume and {where}")]
    ratio, name, direction = largest
    notes.append(
        _info(
            f"the same jobs ran on {where}: the volume did at most {ratio:.2f} times its figure "
            f"(job {name}, {direction})"
        )
    )
    return notes


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


def _faster_note(job: str, beaten: Sequence[_Ratio], where: str) -> FioNote:
    said = "; ".join(
        f"{r.direction} {r.volume}, {r.ratio:.1f} times the same job on the disk ({r.disk})"
        for r in beaten
    )
    return FioNote(
        NOTE_FASTER_THAN_LOCAL,
        Severity.WARN,
        f"job {job} on the volume beat {where}: {said}. A cache on the volume's path most "
        "likely served it (the node's page cache under a loop device or FUSE mount, a "
        "memory-backed volume, an array's or server's cache), unless the class's storage "
        "really is faster than the node's disk",
        "find out what backs the class and make the data set larger than its caches (size=); "
        "if the storage is known to be faster than the node's disk (a provisioned-IOPS or "
        "NVMe-backed volume against a general-purpose boot disk), the numbers stand",
        job,
        f"{job}: "
        + ", ".join(f"{r.direction} {r.ratio:.1f} times the node's disk" for r in beaten),
    )


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
