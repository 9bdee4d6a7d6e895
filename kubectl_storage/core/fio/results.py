"""Parse ``fio --output-format=json`` output into frozen dataclasses with explicit units.

fio changed its JSON over the years, and this module hides the differences:

* before fio 3.0 latencies sit under ``slat``/``clat``/``lat`` in **microseconds** and ``io_bytes``
  is really KiB; from 3.0 they sit under ``slat_ns``/``clat_ns``/``lat_ns`` in **nanoseconds**,
  ``io_bytes`` is bytes and ``io_kbytes`` appears;
* percentiles are a map keyed by ``"%f"`` strings (``"99.900000"``), and old versions pad the map
  with junk ``"0.00"`` keys;
* ``bw`` is always KiB/s, ``runtime`` is milliseconds and excludes ``ramp_time``.

Every latency here is reported in microseconds; a latency fio did not collect (``gtod_reduce=1``,
``disable_clat``, or a direction that did no I/O) is ``None``, never 0.

fio's stdout is often not pure JSON: warnings, ``fio: terminating on signal``, or a shell banner
can come before or after the document, so the JSON object is searched for rather than assumed.

This module is pure: text or dicts in, dataclasses and plain dicts out; no I/O.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: Percentiles reported everywhere (fio's ``percentile_list`` must include them to get values).
REPORTED_PERCENTILES: tuple[float, ...] = (50.0, 95.0, 99.0, 99.9)

#: Directions fio reports per job. ``sync`` is a different shape (fsync latency only) and skipped.
DIRECTIONS: tuple[str, ...] = ("read", "write", "trim")

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
class FioJobResult:
    """One fio job (one ``[section]``, or one group with ``group_reporting``).

    Attributes:
        name: the job name (``jobname``).
        error: fio's errno for the job; 0 means the job ran without error.
        read: read direction metrics.
        write: write direction metrics.
        trim: trim direction metrics.
        job_options: the job's own options as fio echoes them (``job options``), all strings.
        raw: the job's dict exactly as fio printed it.
    """

    name: str
    error: int
    read: FioDirectionResult
    write: FioDirectionResult
    trim: FioDirectionResult
    job_options: Mapping[str, str]
    raw: Mapping[str, Any]

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
    """

    fio_version: str
    jobs: tuple[FioJobResult, ...]
    disk_util: tuple[FioDiskUtil, ...]
    global_options: Mapping[str, str]
    raw: Mapping[str, Any]

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
    decoder = json.JSONDecoder()
    documents: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            # Not JSON from here (a brace inside a warning): try the next brace.
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and isinstance(value.get("jobs"), list):
            documents.append(value)
            position = text.find("{", end)
        else:
            # Some other JSON object. Look inside it too: wrappers such as kubestr's
            # ``-o json`` nest the whole fio document under ``Raw.result``.
            position = text.find("{", position + 1)
    return documents


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
    documents = extract_fio_documents(text)
    if not documents:
        snippet = text.strip()[:200]
        raise FioOutputError(
            "no fio JSON report found in the output (was fio run with --output-format=json?)"
            + (f"; output starts with: {snippet!r}" if snippet else "; the output is empty")
        )
    return parse_fio_document(documents[-1])


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

    Keys: ``name``, ``error``, then for ``read`` and ``write`` in that order ``<dir>_iops``,
    ``<dir>_bw_kib_s``, ``<dir>_io_bytes``, ``<dir>_runtime_ms``, ``<dir>_clat_mean_us``,
    ``<dir>_clat_p50_us``, ``<dir>_clat_p95_us``, ``<dir>_clat_p99_us``,
    ``<dir>_clat_p99_9_us``, ``<dir>_lat_mean_us``, then ``raw``. Latencies not collected are
    ``None`` (``null`` in JSON).

    Args:
        job: a parsed job.

    Returns:
        A new dict ready for JSON/YAML output.
    """
    contract: dict[str, Any] = {"name": job.name, "error": job.error}
    for direction_name in ("read", "write"):
        direction: FioDirectionResult = getattr(job, direction_name)
        for metric in DIRECTION_METRICS:
            contract[f"{direction_name}_{metric}"] = getattr(direction, metric)
    contract["raw"] = dict(job.raw)
    return contract


def result_contract_jobs(result: FioResult) -> list[dict[str, Any]]:
    """:func:`job_contract` for every job of a run, in fio's order."""
    return [job_contract(job) for job in result.jobs]


def _parse_job(index: int, job: Any) -> FioJobResult:
    if not isinstance(job, dict):
        raise FioOutputError(f"fio JSON job #{index} is not an object")
    directions = {name: _parse_direction(job.get(name)) for name in DIRECTIONS}
    return FioJobResult(
        name=str(job.get("jobname", f"job{index}")),
        error=_as_int(job.get("error")),
        read=directions["read"],
        write=directions["write"],
        trim=directions["trim"],
        job_options=_string_map(job.get("job options")),
        raw=job,
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
