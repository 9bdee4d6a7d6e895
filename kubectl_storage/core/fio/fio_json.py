"""Reading ``fio --output-format=json`` output into the result types of ``fio/results.py``.

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

Separate from the result types so the knowledge of fio's JSON versions lives in one place.

This module is pure: text or dicts in, dataclasses out; no I/O.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.results import (
    FioDirectionResult,
    FioDiskUtil,
    FioJobResult,
    FioOutputError,
    FioResult,
    FioSyncResult,
)
from kubectl_storage.core.fio.steady_state import parse_steady_state

#: Directions fio reports per job (``sync`` is a different shape, see
#: :class:`~kubectl_storage.core.fio.results.FioSyncResult`).
DIRECTIONS: tuple[str, ...] = ("read", "write", "trim")

_NS_PER_US = 1000.0


def _document_spans(text: str) -> list[tuple[dict[str, Any], int, int]]:
    return json_object_spans(text, lambda value: isinstance(value.get("jobs"), list))


def json_object_spans(
    text: str, wanted: Callable[[dict[str, Any]], bool]
) -> list[tuple[dict[str, Any], int, int]]:
    """The JSON objects in ``text`` that ``wanted`` accepts, with where each starts and ends.

    fio's output can carry warnings (with braces) around its JSON; a brace that does not start
    valid JSON is skipped. An object that is not wanted is looked into: wrappers such as
    kubestr's ``-o json`` nest the whole fio document under ``Raw.result``."""
    decoder = json.JSONDecoder()
    spans: list[tuple[dict[str, Any], int, int]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and wanted(value):
            spans.append((value, position, end))
            position = text.find("{", end)
        else:
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
    global_options = _string_map(document.get("global options"))
    jobs = tuple(
        parse_fio_job(job, index=index, global_options=global_options)
        for index, job in enumerate(jobs_value)
    )
    disk_util = tuple(_parse_disk_util(entry) for entry in document.get("disk_util") or [])
    return FioResult(
        fio_version=str(document.get("fio version", "unknown")),
        jobs=jobs,
        disk_util=disk_util,
        global_options=global_options,
        raw=document,
    )


def parse_fio_job(
    job: Mapping[str, Any], *, index: int = 0, global_options: Mapping[str, str] | None = None
) -> FioJobResult:
    """Parse one entry of fio's ``jobs`` list.

    Args:
        job: the job's dict as fio printed it (or one merged the way fio merges clones).
        index: its position, for the fallback name ``job<index>`` and error messages.
        global_options: the run's ``global options``, under the job's own (for ``ss_ramp``).

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
    job_options = _string_map(job.get("job options"))
    return FioJobResult(
        name=str(job.get("jobname", f"job{index}")),
        error=_as_int(job.get("error")),
        read=directions["read"],
        write=directions["write"],
        trim=directions["trim"],
        job_options=job_options,
        raw=job,
        mixed=_parse_direction(mixed) if isinstance(mixed, dict) else None,
        sync=_parse_sync(job.get("sync")),
        group_id=_as_int(job.get("groupid")),
        steady_state=parse_steady_state(job, {**(global_options or {}), **job_options}),
    )


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


def fio_number(value: Any) -> float | None:
    """A number of fio's JSON as a float (fio writes some as strings); a missing one and a
    boolean count 0. None: not a number at all."""
    if value is None or isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def _as_float(value: Any) -> float:
    number = fio_number(value)
    if number is None:
        raise FioOutputError(f"fio JSON value {value!r} is not a number")
    return number


def _as_int(value: Any) -> int:
    return int(_as_float(value))
