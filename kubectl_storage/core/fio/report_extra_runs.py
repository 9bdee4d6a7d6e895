"""What the extra runs add to a class of a FioReport: ``--clients`` and ``--compare-local``.

Separate from the report (:mod:`kubectl_storage.core.fio.report`): each client's jobs and share
(:class:`FioClientSummary`), and the local-disk run with its latency probe
(:class:`LocalDiskResult`), are only there when those options ran.

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.report_jobs import FioJobSummary, number


@dataclass(frozen=True)
class FioClientJob:
    """One job as one client ran it (``--clients``), mean over the repeats.

    Attributes:
        name: the job's name.
        iops: reads and writes per second of this client.
        bw_kib_s: reads and writes in KiB/s.
        share_percent: this client's part of all clients' IOPS for the job.
        error: fio's error number for this client's job.
    """

    name: str
    iops: float | None
    bw_kib_s: float | None
    share_percent: float | None
    error: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "name": self.name,
            "iops": self.iops,
            "bw_kib_s": self.bw_kib_s,
            "share_percent": self.share_percent,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioClientJob:
        """Read one back from a saved report."""
        return cls(
            name=str(data.get("name", "")),
            iops=number(data.get("iops")),
            bw_kib_s=number(data.get("bw_kib_s")),
            share_percent=number(data.get("share_percent")),
            error=int(number(data.get("error")) or 0),
        )


@dataclass(frozen=True)
class FioClientSummary:
    """One client of a ``--clients`` run: its pod, node and jobs.

    Attributes:
        index: its number (0 runs ``fio --client``).
        pod: its pod.
        node: the node it ran on, ``None`` when never scheduled.
        address: its pod IP, ``None`` when it never ran.
        error: why it took no part, ``None`` when it did.
        jobs: its jobs, in the job file's order.
    """

    index: int
    pod: str
    node: str | None
    address: str | None
    error: str | None
    jobs: tuple[FioClientJob, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "index": self.index,
            "pod": self.pod,
            "node": self.node,
            "address": self.address,
            "error": self.error,
            "jobs": [job.to_dict() for job in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioClientSummary:
        """Read one back from a saved report."""
        node, address, error = data.get("node"), data.get("address"), data.get("error")
        return cls(
            index=int(number(data.get("index")) or 0),
            pod=str(data.get("pod", "")),
            node=str(node) if node else None,
            address=str(address) if address else None,
            error=str(error) if error else None,
            jobs=tuple(FioClientJob.from_dict(job) for job in data.get("jobs") or ()),
        )


@dataclass(frozen=True)
class LatencyProbe:
    """``--compare-local``'s latency probe: 4k I/O at queue depth 1 on each side.

    Each tuple holds the median completion latency (µs) of one round, in the order the rounds
    ran; the sides' rounds were interleaved (disk, volume, disk, ...).
    """

    volume_read_us: tuple[float, ...] = ()
    volume_write_us: tuple[float, ...] = ()
    disk_read_us: tuple[float, ...] = ()
    disk_write_us: tuple[float, ...] = ()

    def medians(self, side: str, direction: str) -> tuple[float, ...]:
        """The rounds' medians of ``side`` (``volume`` or ``disk``) in ``direction``."""
        value: tuple[float, ...] = getattr(self, f"{side}_{direction}_us")
        return value

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: per side, per direction, the rounds' medians."""
        return {
            side: {
                f"{direction}_p50_us": list(self.medians(side, direction))
                for direction in ("read", "write")
            }
            for side in ("volume", "disk")
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LatencyProbe:
        """Read one back from a saved report."""

        def rounds(side: str, direction: str) -> tuple[float, ...]:
            values = (data.get(side) or {}).get(f"{direction}_p50_us") or ()
            return tuple(float(v) for v in values)

        return cls(
            rounds("volume", "read"),
            rounds("volume", "write"),
            rounds("disk", "read"),
            rounds("disk", "write"),
        )


@dataclass(frozen=True)
class LocalDiskResult:
    """The same jobs on the node's own disk (``--compare-local``), beside the volume's.

    Attributes:
        node: the node the benchmark pod ran on.
        fs_type: the emptyDir's file system as the pod saw it (``ext4``, ``xfs``).
        source: the device it is on (``/dev/nvme0n1p1``).
        jobs: the jobs there, one run; empty when they did not run.
        skipped: why there is no comparison, ``None`` when there is one.
        probe: the latency probe on both sides, which decides the comparison.
    """

    node: str | None = None
    fs_type: str | None = None
    source: str | None = None
    jobs: tuple[FioJobSummary, ...] = ()
    skipped: str | None = None
    probe: LatencyProbe | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "node": self.node,
            "fs_type": self.fs_type,
            "source": self.source,
            "skipped": self.skipped,
            "latency_probe": self.probe.to_dict() if self.probe is not None else None,
            "jobs": [job.to_dict() for job in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LocalDiskResult:
        """Read one back from a saved report."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value else None

        probe = data.get("latency_probe")
        return cls(
            node=text("node"),
            fs_type=text("fs_type"),
            source=text("source"),
            jobs=tuple(FioJobSummary.from_dict(job) for job in data.get("jobs") or ()),
            skipped=text("skipped"),
            probe=LatencyProbe.from_dict(probe) if isinstance(probe, Mapping) else None,
        )
