"""Parse ``fio --output-format=json`` output into frozen dataclasses with explicit units.

fio changed its JSON over the years, and this module hides the differences:

* before fio 3.0 latencies sit under ``slat``/``clat``/``lat`` in **microseconds** and ``io_bytes``
  is really KiB; from 3.0 they sit under ``slat_ns``/``clat_ns``/``lat_ns`` in **nanoseconds**,
  ``io_bytes`` is bytes and ``io_kbytes`` appears;
* percentiles are a map keyed by ``"%f"`` strings (``"99.900000"``), and old versions pad the map
  with junk ``"0.00"`` keys;
* ``bw`` is always KiB/s, ``runtime`` is milliseconds and excludes ``ramp_time``;
* with ``unified_rw_reporting=1`` (``mixed``) fio reports reads and writes together under one
  ``mixed`` key and prints no ``read``/``write`` at all; with ``unified_rw_reporting=both`` it
  prints all three. ``mixed`` is kept as its own direction: fio has already added the reads and
  writes up (one histogram, one runtime), so it cannot be split back into read and write;
* jobs that call ``fsync``/``fdatasync`` get a ``sync`` block: the number of syncs and the
  latency of each sync call (``lat_ns``), with percentiles.

Every latency here is reported in microseconds; a latency fio did not collect (``gtod_reduce=1``,
``disable_clat``, or a direction that did no I/O) is ``None``, never 0.

fio's stdout is often not pure JSON: warnings, ``fio: terminating on signal``, or a shell banner
can come before or after the document, so the JSON object is searched for rather than assumed.

This module is pure: text or dicts in, dataclasses and plain dicts out; no I/O.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Percentiles reported everywhere (fio's ``percentile_list`` must include them to get values).
REPORTED_PERCENTILES: tuple[float, ...] = (50.0, 95.0, 99.0, 99.9)

#: Directions fio reports per job (``sync`` is a different shape, see :class:`FioSyncResult`).
DIRECTIONS: tuple[str, ...] = ("read", "write", "trim")

#: Directions in the FioReport job contract, in output order. ``mixed`` is fio's
#: ``unified_rw_reporting`` total of reads and writes.
CONTRACT_DIRECTIONS: tuple[str, ...] = ("read", "write", "mixed")

_NS_PER_US = 1000.0

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


def extract_fio_documents(text: str) -> list[dict[str, Any]]:
    """Find every fio JSON document in ``text``, ignoring anything printed around them.

    A document is a JSON object with a ``jobs`` list. Several appear when fio runs with
    ``--status-interval``; text such as ``fio: terminating on signal 2`` may precede or follow.

    Args:
        text: fio's stdout, possibly mixed with other output.

    Returns:
        The documents in the order they appear (possibly empty).
    """
    return [document for document, _start, _end in _document_spans(text)]


def _document_spans(text: str) -> list[tuple[dict[str, Any], int, int]]:
    decoder = json.JSONDecoder()
    spans: list[tuple[dict[str, Any], int, int]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            # Not JSON from here (a brace inside a warning): try the next brace.
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and isinstance(value.get("jobs"), list):
            spans.append((value, position, end))
            position = text.find("{", end)
        else:
            # Some other JSON object. Look inside it too: wrappers such as kubestr's
            # ``-o json`` nest the whole fio document under ``Raw.result``.
            position = text.find("{", position + 1)
    return spans


def parse_fio_output(text: str) -> FioResult:
    """Parse fio's stdout (``--output-format=json``) into a :class:`FioResult`.

    When several documents are present (``--status-interval``), the last one is the final
    report and is the one returned.

    Args:
        text: fio's stdout, possibly with warnings or other text around the JSON.

    Returns:
        The parsed run.

    Raises:
        FioOutputError: when no fio JSON document is found or its shape is wrong.
    """
    spans = _document_spans(text)
    if not spans:
        snippet = text.strip()[:200]
        raise FioOutputError(
            "no fio JSON report found in the output (was fio run with --output-format=json?)"
            + (f"; output starts with: {snippet!r}" if snippet else "; the output is empty")
        )
    outside: list[str] = []
    previous_end = 0
    for _document, start, end in spans:
        outside.append(text[previous_end:start])
        previous_end = end
    outside.append(text[previous_end:])
    result = parse_fio_document(spans[-1][0])
    return dataclasses.replace(result, surrounding_text="".join(outside).strip())


def parse_fio_document(document: Mapping[str, Any]) -> FioResult:
    """Parse an already decoded fio JSON document.

    Args:
        document: the decoded JSON object (must have a ``jobs`` list).

    Returns:
        The parsed run.

    Raises:
        FioOutputError: when the document is not shaped like fio's JSON output.
    """
    jobs_value = document.get("jobs")
    if not isinstance(jobs_value, list):
        raise FioOutputError("fio JSON has no 'jobs' list")
    jobs = tuple(_parse_job(index, job) for index, job in enumerate(jobs_value))
    disk_util = tuple(_parse_disk_util(entry) for entry in document.get("disk_util") or [])
    return FioResult(
        fio_version=str(document.get("fio version", "unknown")),
        jobs=jobs,
        disk_util=disk_util,
        global_options=_string_map(document.get("global options")),
        raw=document,
    )


def job_contract(job: FioJobResult) -> dict[str, Any]:
    """The FioReport shape of one job: stable key order, units in key names, fio's dict as ``raw``.

    Keys: ``name``, ``error``, ``clones``, then for ``read``, ``write`` and ``mixed`` in that
    order ``<dir>_iops``, ``<dir>_bw_kib_s``, ``<dir>_io_bytes``, ``<dir>_runtime_ms``,
    ``<dir>_clat_mean_us``, ``<dir>_clat_p50_us``, ``<dir>_clat_p95_us``, ``<dir>_clat_p99_us``,
    ``<dir>_clat_p99_9_us``, ``<dir>_lat_mean_us``, then ``sync_total_ios``,
    ``sync_lat_mean_us``, ``sync_lat_p50_us``, ``sync_lat_p95_us``, ``sync_lat_p99_us``,
    ``sync_lat_p99_9_us``, ``percentile_merge``, then ``raw``. Latencies not collected are
    ``None`` (``null`` in JSON); every ``mixed_*`` value is ``None`` unless fio reported a
    ``mixed`` direction, every ``sync_*`` value unless the job made sync calls. ``raw`` is
    fio's dict for the job, or the list of the clones' dicts when ``clones`` > 1.

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
    return contract


def result_contract_jobs(result: FioResult) -> list[dict[str, Any]]:
    """:func:`job_contract` for every job of a run, in fio's order."""
    return [job_contract(job) for job in result.jobs]


def parse_fio_job(job: Mapping[str, Any], *, index: int = 0) -> FioJobResult:
    """Parse one entry of fio's ``jobs`` list.

    Args:
        job: the job's dict as fio printed it (or one merged the way fio merges clones).
        index: its position, for the fallback name ``job<index>`` and error messages.

    Returns:
        The parsed job.

    Raises:
        FioOutputError: when ``job`` is not an object or holds a non-number where fio
            writes numbers.
    """
    if not isinstance(job, dict):
        raise FioOutputError(f"fio JSON job #{index} is not an object")
    directions = {name: _parse_direction(job.get(name)) for name in DIRECTIONS}
    mixed = job.get("mixed")
    return FioJobResult(
        name=str(job.get("jobname", f"job{index}")),
        error=_as_int(job.get("error")),
        read=directions["read"],
        write=directions["write"],
        trim=directions["trim"],
        job_options=_string_map(job.get("job options")),
        raw=job,
        mixed=_parse_direction(mixed) if isinstance(mixed, dict) else None,
        sync=_parse_sync(job.get("sync")),
        group_id=_as_int(job.get("groupid")),
    )


def _parse_job(index: int, job: Any) -> FioJobResult:
    return parse_fio_job(job, index=index)


def _parse_sync(section: Any) -> FioSyncResult | None:
    # fio >= 3.x: {"total_ios": ..., "lat_ns": {..., "N": calls}}. fio-3.33 leaves total_ios at
    # 0 for the fdatasync=1 calls of a sync-engine job (etcd profile: 10029 calls, total_ios
    # 0), so the number of calls is the latency block's sample count when that is larger.
    if not isinstance(section, dict):
        return None
    block = section.get("lat_ns")
    samples = _as_int(block.get("N")) if isinstance(block, dict) else 0
    total = max(_as_int(section.get("total_ios")), samples)
    if total <= 0:
        return None
    lat = _latency_block(block, divisor=_NS_PER_US)
    return FioSyncResult(
        total_ios=total,
        lat_mean_us=lat.mean_us,
        lat_p50_us=lat.percentile_us(50.0),
        lat_p95_us=lat.percentile_us(95.0),
        lat_p99_us=lat.percentile_us(99.0),
        lat_p99_9_us=lat.percentile_us(99.9),
    )


def _parse_direction(section: Any) -> FioDirectionResult:
    if not isinstance(section, dict):
        section = {}
    # fio >= 3.0 writes *_ns keys in nanoseconds; older versions wrote microseconds.
    modern = "clat_ns" in section or "lat_ns" in section or "io_kbytes" in section
    if modern:
        clat = _latency_block(section.get("clat_ns"), divisor=_NS_PER_US)
        lat = _latency_block(section.get("lat_ns"), divisor=_NS_PER_US)
        io_bytes = _as_int(section.get("io_bytes"))
    else:
        clat = _latency_block(section.get("clat"), divisor=1.0)
        lat = _latency_block(section.get("lat"), divisor=1.0)
        # Before fio 3.0 "io_bytes" actually held KiB (e.g. fio-2.17: bw 129386 KiB/s for
        # 10.003 s and io_bytes 1294256).
        io_bytes = _as_int(section.get("io_bytes")) * 1024
    total_ios = section.get("total_ios")
    return FioDirectionResult(
        iops=_as_float(section.get("iops")),
        bw_kib_s=_as_float(section.get("bw")),
        io_bytes=io_bytes,
        runtime_ms=_as_int(section.get("runtime")),
        total_ios=None if total_ios is None else _as_int(total_ios),
        clat_mean_us=clat.mean_us,
        clat_p50_us=clat.percentile_us(50.0),
        clat_p95_us=clat.percentile_us(95.0),
        clat_p99_us=clat.percentile_us(99.0),
        clat_p99_9_us=clat.percentile_us(99.9),
        lat_mean_us=lat.mean_us,
    )


@dataclass(frozen=True)
class _LatencyBlock:
    """A clat/lat block converted to microseconds; empty when fio collected nothing."""

    mean_us: float | None
    percentiles_us: Mapping[float, float]

    def percentile_us(self, wanted: float) -> float | None:
        for key, value in self.percentiles_us.items():
            if math.isclose(key, wanted, abs_tol=1e-6):
                return value
        return None


_EMPTY_LATENCY = _LatencyBlock(mean_us=None, percentiles_us={})


def _latency_block(block: Any, *, divisor: float) -> _LatencyBlock:
    if not isinstance(block, dict) or not _latency_was_collected(block):
        return _EMPTY_LATENCY
    percentiles: dict[float, float] = {}
    raw_percentiles = block.get("percentile")
    if isinstance(raw_percentiles, dict):
        for key, value in raw_percentiles.items():
            try:
                level = float(key)
            except ValueError:
                continue
            # Old fio pads the map with "0.00": 0 entries; they are not percentiles.
            if level <= 0:
                continue
            percentiles[level] = _as_float(value) / divisor
    return _LatencyBlock(mean_us=_as_float(block.get("mean")) / divisor, percentiles_us=percentiles)


def _latency_was_collected(block: Mapping[str, Any]) -> bool:
    # fio >= 3.x prints "N" (sample count); older versions only min/max/mean, all zero when the
    # direction did no I/O or gtod_reduce/disable_clat switched latency off.
    if "N" in block:
        return _as_int(block.get("N")) > 0
    return any(_as_float(block.get(key)) > 0 for key in ("min", "max", "mean"))


def _parse_disk_util(entry: Any) -> FioDiskUtil:
    if not isinstance(entry, dict):
        raise FioOutputError("fio JSON disk_util entry is not an object")
    return FioDiskUtil(
        name=str(entry.get("name", "")),
        read_ios=_as_int(entry.get("read_ios")),
        write_ios=_as_int(entry.get("write_ios")),
        util_percent=_as_float(entry.get("util")),
    )


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(key): str(item) for key, item in value.items()}


def _as_float(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError as exc:
        raise FioOutputError(f"fio JSON value {value!r} is not a number") from exc


def _as_int(value: Any) -> int:
    return int(_as_float(value))
