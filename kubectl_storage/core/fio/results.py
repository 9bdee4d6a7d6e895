"""Parsed fio results as frozen dataclasses with explicit units, and their FioReport job shape.

Every latency here is in microseconds; a latency fio did not collect (``gtod_reduce=1``,
``disable_clat``, or a direction that did no I/O) is ``None``, never 0. Reading fio's JSON into
these types, across fio's versions, is in :mod:`kubectl_storage.core.fio.fio_json`;
:func:`job_contract` gives a job the key order the FioReport contract fixes.

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.steady_state import FioSteadyState

#: Percentiles reported everywhere (fio's ``percentile_list`` must include them to get values).
REPORTED_PERCENTILES: tuple[float, ...] = (50.0, 95.0, 99.0, 99.9)

#: Directions in the FioReport job contract, in output order. ``mixed`` is fio's
#: ``unified_rw_reporting`` total of reads and writes.
CONTRACT_DIRECTIONS: tuple[str, ...] = ("read", "write", "mixed")

#: Per-direction metric names used in contract keys (``read_<metric>``), in output order.
DIRECTION_METRICS: tuple[str, ...] = (
    "iops",
    "bw_kib_s",
    "io_bytes",
    "runtime_ms",
    "clat_mean_us",
    "clat_p50_us",
    "clat_p95_us",
    "clat_p99_us",
    "clat_p99_9_us",
    "lat_mean_us",
)

#: ``sync_<metric>`` keys of the contract: the fsync/fdatasync calls of a job.
SYNC_METRICS: tuple[str, ...] = (
    "total_ios",
    "lat_mean_us",
    "lat_p50_us",
    "lat_p95_us",
    "lat_p99_us",
    "lat_p99_9_us",
)

#: How the percentiles of a job made of ``numjobs`` clones were obtained (``percentile_merge``).
PERCENTILES_EXACT = "exact"
PERCENTILES_UPPER_BOUND = "upper-bound"


class FioOutputError(ValueError):
    """The text holds no fio JSON document, or the document is not shaped like fio's."""


@dataclass(frozen=True)
class FioDirectionResult:
    """One direction (read, write or trim) of one fio job, in explicit units.

    Attributes:
        iops: I/O operations per second over the measured runtime.
        bw_kib_s: bandwidth in KiB/s (1024-byte units), as fio's ``bw``.
        io_bytes: bytes transferred during the measured runtime.
        runtime_ms: measured runtime in milliseconds (ramp time excluded).
        total_ios: number of I/Os completed, ``None`` on old fio that does not report it.
        clat_mean_us: mean completion latency in microseconds, ``None`` when not collected.
        clat_p50_us: median completion latency in microseconds.
        clat_p95_us: 95th percentile completion latency in microseconds.
        clat_p99_us: 99th percentile completion latency in microseconds.
        clat_p99_9_us: 99.9th percentile completion latency in microseconds.
        lat_mean_us: mean total latency (submission + completion) in microseconds.
    """

    iops: float
    bw_kib_s: float
    io_bytes: int
    runtime_ms: int
    total_ios: int | None
    clat_mean_us: float | None
    clat_p50_us: float | None
    clat_p95_us: float | None
    clat_p99_us: float | None
    clat_p99_9_us: float | None
    lat_mean_us: float | None

    @property
    def did_io(self) -> bool:
        """Whether this direction moved any data at all (a randread job has an empty write)."""
        return self.io_bytes > 0 or self.iops > 0


@dataclass(frozen=True)
class FioSyncResult:
    """The fsync/fdatasync calls of one job (fio's ``sync`` block), latencies in microseconds.

    fio times each sync call on its own (``lat_ns`` of the ``sync`` block), so for a job with
    ``fdatasync=1`` these are the fdatasync durations etcd's guidance talks about.

    Attributes:
        total_ios: number of sync calls (fio's ``total_ios``, or the latency sample count when
            fio left ``total_ios`` at 0, as fio-3.33 does for ``fdatasync=1``).
        lat_mean_us: mean sync latency, ``None`` when fio collected none.
        lat_p50_us: median sync latency.
        lat_p95_us: 95th percentile sync latency.
        lat_p99_us: 99th percentile sync latency.
        lat_p99_9_us: 99.9th percentile sync latency.
    """

    total_ios: int
    lat_mean_us: float | None
    lat_p50_us: float | None
    lat_p95_us: float | None
    lat_p99_us: float | None
    lat_p99_9_us: float | None


@dataclass(frozen=True)
class FioJobResult:
    """One fio job (one ``[section]``, or one group with ``group_reporting``).

    Attributes:
        name: the job name (``jobname``).
        error: fio's errno for the job; 0 means the job ran without error.
        read: read direction metrics.
        write: write direction metrics.
        trim: trim direction metrics.
        job_options: the job's own options as fio echoes them (``job options``), all strings.
        raw: the job's dict exactly as fio printed it; for clones merged by
            :func:`kubectl_storage.core.fio.clones.combine_clones`, the merged dict.
        mixed: reads and writes together when fio ran with ``unified_rw_reporting``, else
            ``None``.
        sync: the job's fsync/fdatasync calls, ``None`` when it made none.
        group_id: fio's ``groupid`` (jobs between two stonewalls share one).
        clones: how many fio jobs (``numjobs`` clones of one section) this result adds up.
        percentile_merge: for clones, how the percentiles were merged: ``"exact"`` (from fio's
            histograms, ``--output-format=json+``) or ``"upper-bound"`` (the largest clone's
            value); ``None`` for a single job.
        clone_raws: fio's own dicts of the clones, in fio's order; empty for a single job.
        steady_state: the job's ``steadystate=`` request and fio's answer, ``None`` when it did
            not ask (:mod:`kubectl_storage.core.fio.steady_state`).
    """

    name: str
    error: int
    read: FioDirectionResult
    write: FioDirectionResult
    trim: FioDirectionResult
    job_options: Mapping[str, str]
    raw: Mapping[str, Any]
    mixed: FioDirectionResult | None = None
    sync: FioSyncResult | None = None
    group_id: int = 0
    clones: int = 1
    percentile_merge: str | None = None
    clone_raws: tuple[Mapping[str, Any], ...] = ()
    steady_state: FioSteadyState | None = None

    @property
    def failed(self) -> bool:
        """Whether fio reported an error for this job."""
        return self.error != 0


@dataclass(frozen=True)
class FioDiskUtil:
    """One ``disk_util`` entry: what the kernel saw on a block device during the run.

    Attributes:
        name: device name as fio found it (``sda``, ``rbd4``, ``dm-0``).
        read_ios: read I/Os the device completed.
        write_ios: write I/Os the device completed.
        util_percent: percentage of time the device was busy.
    """

    name: str
    read_ios: int
    write_ios: int
    util_percent: float


@dataclass(frozen=True)
class FioResult:
    """A whole fio run.

    Attributes:
        fio_version: version string as fio prints it, e.g. ``fio-3.33``.
        jobs: the jobs in the order fio reported them.
        disk_util: block device statistics; empty when fio ran on a network filesystem or tmpfs.
        global_options: the ``[global]`` options fio echoes (fio >= 2.2 only), all strings.
        raw: the whole document as parsed.
        surrounding_text: what the output held outside the JSON document(s): fio's own error
            lines (fio-3.33 prints ``fio: pid=…, err=11/…, func=io_queue_init, …`` on stdout
            before the JSON), warnings, normal-format text; empty for a decoded document.
    """

    fio_version: str
    jobs: tuple[FioJobResult, ...]
    disk_util: tuple[FioDiskUtil, ...]
    global_options: Mapping[str, str]
    raw: Mapping[str, Any]
    surrounding_text: str = ""

    @property
    def failed_jobs(self) -> tuple[FioJobResult, ...]:
        """Jobs fio reported an error for."""
        return tuple(job for job in self.jobs if job.failed)

    def job(self, name: str) -> FioJobResult:
        """The job called ``name``.

        Raises:
            KeyError: when no job has that name.
        """
        for candidate in self.jobs:
            if candidate.name == name:
                return candidate
        raise KeyError(name)


def job_contract(job: FioJobResult) -> dict[str, Any]:
    """The FioReport shape of one job: stable key order, units in key names, fio's dict as ``raw``.

    Keys: ``name``, ``error``, ``clones``, then for ``read``, ``write`` and ``mixed`` in that
    order ``<dir>_iops``, ``<dir>_bw_kib_s``, ``<dir>_io_bytes``, ``<dir>_runtime_ms``,
    ``<dir>_clat_mean_us``, ``<dir>_clat_p50_us``, ``<dir>_clat_p95_us``, ``<dir>_clat_p99_us``,
    ``<dir>_clat_p99_9_us``, ``<dir>_lat_mean_us``, then ``sync_total_ios``,
    ``sync_lat_mean_us``, ``sync_lat_p50_us``, ``sync_lat_p95_us``, ``sync_lat_p99_us``,
    ``sync_lat_p99_9_us``, ``percentile_merge``, then ``raw``, then ``steady_state`` (``None``
    when the job did not ask fio for steady state, else :meth:`FioSteadyState.to_dict`).
    Latencies not collected are ``None`` (``null`` in JSON); every ``mixed_*`` value is
    ``None`` unless fio reported a ``mixed`` direction, every ``sync_*`` value unless the job
    made sync calls. ``raw`` is fio's dict for the job, or the list of the clones' dicts when
    ``clones`` > 1.

    Args:
        job: a parsed job.

    Returns:
        A new dict ready for JSON/YAML output.
    """
    contract: dict[str, Any] = {"name": job.name, "error": job.error, "clones": job.clones}
    for direction_name in CONTRACT_DIRECTIONS:
        direction: FioDirectionResult | None = getattr(job, direction_name)
        for metric in DIRECTION_METRICS:
            value = None if direction is None else getattr(direction, metric)
            contract[f"{direction_name}_{metric}"] = value
    for metric in SYNC_METRICS:
        contract[f"sync_{metric}"] = None if job.sync is None else getattr(job.sync, metric)
    contract["percentile_merge"] = job.percentile_merge
    if job.clone_raws:
        contract["raw"] = [dict(raw) for raw in job.clone_raws]
    else:
        contract["raw"] = dict(job.raw)
    contract["steady_state"] = None if job.steady_state is None else job.steady_state.to_dict()
    return contract
