"""Add up ``numjobs`` clones the way fio's ``group_reporting`` does.

A job section with ``numjobs=N`` runs N copies of itself at the same time. Without
``group_reporting`` fio prints one entry per copy, all with the same ``jobname`` and ``groupid``.
They are parts of one run, not repeats: the job's IOPS and bandwidth are the sum of the copies',
and its latencies are those of all the copies' I/Os together.

:func:`merge_clone_dicts` rebuilds what fio itself prints for the group with
``group_reporting`` (``sum_thread_stats`` and ``show_thread_status_json`` in fio's ``stat.c``):

* ``io_bytes``, ``total_ios``, ``short_ios``, ``drop_ios`` are summed and ``runtime`` is the
  longest clone's; ``bw_bytes = 1000 * io_bytes / runtime``, ``bw = bw_bytes / 1024`` and
  ``iops = 1000 * total_ios / runtime``, in fio's integer and floating arithmetic;
* latency blocks (``clat_ns``, ``lat_ns``, ``slat_ns``, and the ``sync`` block's ``lat_ns``)
  add their sample counts, take the smallest ``min`` and largest ``max``, weight the means by
  sample count and pool the variances;
* percentiles: fio sums the clones' latency histograms bin by bin and reads the percentiles off
  the sum (``calc_clat_percentiles``). The histograms are in the JSON only with
  ``--output-format=json+`` (``bins``: bucket value in ns → count). With them the merge is
  **exact**: :func:`percentiles_from_bins` is fio's own algorithm, and gives fio's numbers to the
  nanosecond. Without them it cannot be done exactly, and each percentile of the whole is
  reported as the **largest** of the clones' values, which is an upper bound: if every clone
  has at least p % of its I/Os at or below its own p-th percentile, then at least p % of all
  the I/Os are at or below the largest of those. The result says which (``"exact"`` or
  ``"upper-bound"``).

fio 2.x latency blocks carry no sample count; their means are averaged without weights.

Pure module: dicts in, dicts and dataclasses out.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from kubectl_storage.core.fio.fio_json import fio_number, parse_fio_job
from kubectl_storage.core.fio.results import (
    PERCENTILES_EXACT,
    PERCENTILES_UPPER_BOUND,
    FioJobResult,
    FioResult,
)
from kubectl_storage.core.fio.steady_state import combine_steady_states

#: Per-direction blocks of a fio job dict that clones add up.
_DIRECTION_KEYS: tuple[str, ...] = ("read", "write", "trim", "mixed")
_LATENCY_KEYS_NS: tuple[str, ...] = ("slat_ns", "clat_ns", "lat_ns")
_LATENCY_KEYS_US: tuple[str, ...] = ("slat", "clat", "lat")
_COUNTERS: tuple[str, ...] = ("total_ios", "short_ios", "drop_ios")


def combine_clones(result: FioResult) -> tuple[FioJobResult, ...]:
    """The jobs of a run with every set of ``numjobs`` clones added up into one job.

    Clones are entries with the same ``jobname`` and ``groupid`` whose job (or ``[global]``)
    sets ``numjobs`` above 1 — with ``group_reporting`` fio has already merged them into one
    entry, which passes through unchanged. Other jobs pass through unchanged too, in fio's order;
    a merged job takes the place of its first clone.

    Args:
        result: a parsed fio run.

    Returns:
        The jobs as the report should count them.
    """
    order: list[tuple[str, int] | int] = []
    clone_sets: dict[tuple[str, int], list[FioJobResult]] = {}
    for index, job in enumerate(result.jobs):
        if _numjobs(job, result.global_options) > 1:
            key = (job.name, job.group_id)
            if key not in clone_sets:
                clone_sets[key] = []
                order.append(key)
            clone_sets[key].append(job)
        else:
            order.append(index)
    combined: list[FioJobResult] = []
    for entry in order:
        if isinstance(entry, int):
            combined.append(result.jobs[entry])
            continue
        members = clone_sets[entry]
        combined.append(members[0] if len(members) == 1 else merge_clones(members))
    return tuple(combined)


def merge_clones(clones: Sequence[FioJobResult]) -> FioJobResult:
    """One job result adding up ``clones`` (see :func:`merge_clone_dicts`).

    Args:
        clones: the clones of one job, at least one.

    Returns:
        The merged job, with ``clones``, ``percentile_merge`` and ``clone_raws`` set.
    """
    merged, method = merge_clone_dicts([clone.raw for clone in clones])
    parsed = parse_fio_job(merged)
    return dataclasses.replace(
        parsed,
        clones=len(clones),
        percentile_merge=method,
        clone_raws=tuple(clone.raw for clone in clones),
        steady_state=combine_steady_states([clone.steady_state for clone in clones]),
    )


def merge_clone_dicts(jobs: Sequence[Mapping[str, Any]]) -> tuple[dict[str, Any], str | None]:
    """Merge the fio job dicts of clones into the dict fio prints with ``group_reporting``.

    Only the fields this project reads are rebuilt: ``jobname``, ``groupid``, ``error`` (the
    first non-zero one), ``job options``, and each direction's and the ``sync`` block's counters
    and latency blocks.

    Args:
        jobs: fio's dicts of the clones, at least one.

    Returns:
        The merged dict, and how its percentiles were merged: ``"exact"`` (every latency block
        with percentiles had its histogram), ``"upper-bound"`` (at least one had none), or
        ``None`` when no block had percentiles.

    Raises:
        ValueError: when ``jobs`` is empty.
    """
    if not jobs:
        raise ValueError("no clones to merge")
    first = jobs[0]
    errors = [int(_number(job.get("error"))) for job in jobs]
    merged: dict[str, Any] = {
        "jobname": first.get("jobname"),
        "groupid": first.get("groupid", 0),
        "error": next((error for error in errors if error), 0),
        "job options": dict(first.get("job options") or {}),
    }
    methods: list[str] = []
    for key in _DIRECTION_KEYS:
        sections = [job[key] for job in jobs if isinstance(job.get(key), dict)]
        if sections:
            merged[key] = _merge_direction(sections, methods)
    syncs = [job["sync"] for job in jobs if isinstance(job.get("sync"), dict)]
    if syncs:
        sync: dict[str, Any] = {"total_ios": sum(int(_number(s.get("total_ios"))) for s in syncs)}
        blocks = [s["lat_ns"] for s in syncs if isinstance(s.get("lat_ns"), dict)]
        if blocks:
            sync["lat_ns"] = _merge_latency(blocks, methods, histograms=True)
        merged["sync"] = sync
    if not methods:
        return merged, None
    exact = all(method == PERCENTILES_EXACT for method in methods)
    return merged, PERCENTILES_EXACT if exact else PERCENTILES_UPPER_BOUND


def _merge_direction(sections: Sequence[Mapping[str, Any]], methods: list[str]) -> dict[str, Any]:
    modern = any("io_kbytes" in s or "clat_ns" in s or "lat_ns" in s for s in sections)
    io_bytes = sum(int(_number(s.get("io_bytes"))) for s in sections)
    runtime = max(int(_number(s.get("runtime"))) for s in sections)
    out: dict[str, Any] = {"io_bytes": io_bytes}
    for counter in _COUNTERS:
        if any(counter in s for s in sections):
            out[counter] = sum(int(_number(s.get(counter))) for s in sections)
    total_ios = out.get("total_ios", 0)
    if modern:
        bw_bytes = 1000 * io_bytes // runtime if runtime else 0
        out["io_kbytes"] = io_bytes >> 10
        out["bw_bytes"] = bw_bytes
        out["bw"] = bw_bytes // 1024
    else:
        # fio 2.x: io_bytes is KiB and bw is KiB/s.
        out["bw"] = 1000 * io_bytes // runtime if runtime else 0
    out["iops"] = 1000.0 * total_ios / runtime if runtime else 0.0
    out["runtime"] = runtime
    for key in _LATENCY_KEYS_NS if modern else _LATENCY_KEYS_US:
        blocks = [s[key] for s in sections if isinstance(s.get(key), dict)]
        if blocks:
            out[key] = _merge_latency(blocks, methods, histograms=modern)
    return out


def _merge_latency(
    blocks: Sequence[Mapping[str, Any]], methods: list[str], *, histograms: bool
) -> dict[str, Any]:
    with_samples = [b for b in blocks if _samples(b) > 0]
    out: dict[str, Any] = {}
    if not with_samples:
        # Nothing measured (gtod_reduce, or a direction without I/O): keep fio's empty shape.
        out.update(dict(blocks[0]))
        return out
    counts = [_samples(b) for b in with_samples]
    total = sum(counts)
    means = [_number(b.get("mean")) for b in with_samples]
    mean = sum(n * m for n, m in zip(counts, means, strict=True)) / total
    # Pooled variance from each clone's sample standard deviation (fio divides by n - 1).
    squares = sum(
        (n - 1) * _number(b.get("stddev")) ** 2 + n * (m - mean) ** 2
        for n, m, b in zip(counts, means, with_samples, strict=True)
    )
    out["min"] = min(int(_number(b.get("min"))) for b in with_samples)
    out["max"] = max(int(_number(b.get("max"))) for b in with_samples)
    out["mean"] = mean
    out["stddev"] = math.sqrt(squares / (total - 1)) if total > 1 else 0.0
    if any("N" in b for b in with_samples):
        out["N"] = total
    maps = [b.get("percentile") for b in with_samples]
    if not all(isinstance(m, dict) and m for m in maps):
        return out
    bins = [b.get("bins") for b in with_samples]
    if histograms and all(isinstance(b, dict) and b for b in bins):
        summed = merge_bins(b for b in bins if isinstance(b, dict))
        levels = _levels(m for m in maps if isinstance(m, dict))
        values = percentiles_from_bins(summed, levels, samples=total)
        out["percentile"] = {f"{level:f}": values[level] for level in levels if level in values}
        out["bins"] = {str(value): count for value, count in sorted(summed.items())}
        methods.append(PERCENTILES_EXACT)
    else:
        upper: dict[str, Any] = {}
        for percentile_map in maps:
            if not isinstance(percentile_map, dict):
                continue
            for key, value in percentile_map.items():
                if key not in upper or _number(value) > _number(upper[key]):
                    upper[key] = value
        out["percentile"] = upper
        methods.append(PERCENTILES_UPPER_BOUND)
    return out


def merge_bins(histograms: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """Sum fio ``json+`` latency histograms (``bins``: bucket value in ns → count) bin by bin.

    fio keys each bin by the value its bucket stands for, which is the same for the same bucket
    in every job, so summing by key is summing fio's ``io_u_plat`` arrays as ``group_reporting``
    does.
    """
    summed: dict[int, int] = {}
    for histogram in histograms:
        for key, count in histogram.items():
            value = int(key)
            summed[value] = summed.get(value, 0) + int(_number(count))
    return summed


def percentiles_from_bins(
    bins: Mapping[int, int], levels: Iterable[float], *, samples: int | None = None
) -> dict[float, int]:
    """Percentiles of a fio latency histogram, computed exactly as fio computes them.

    fio's ``calc_clat_percentiles`` walks the buckets in order, keeps a running count, and gives
    percentile p the value of the first bucket where the count reaches ``p / 100 * N``. fio
    evaluates ``(long double) p / 100.0 * N`` in x86-64 ``long double`` (64-bit mantissa); that
    rounding is reproduced here with exact fractions, so a bucket boundary that falls exactly on
    the threshold is decided as fio decides it on x86-64 (an aarch64 build uses a 113-bit
    ``long double`` and could, in that rare case, pick the next bucket).

    Args:
        bins: bucket value in ns → number of I/Os.
        levels: the percentiles wanted, e.g. ``(50.0, 99.0, 99.9)``.
        samples: fio's sample count ``N`` (defaults to the histogram's total).

    Returns:
        level → bucket value in ns, for every level the histogram reaches.
    """
    total = sum(bins.values()) if samples is None else samples
    wanted = sorted(levels)
    thresholds = [_x87(_x87(Fraction(level) / 100) * total) for level in wanted]
    out: dict[float, int] = {}
    running = 0
    position = 0
    for value in sorted(bins):
        running += bins[value]
        while position < len(wanted) and running >= thresholds[position]:
            out[wanted[position]] = value
            position += 1
        if position == len(wanted):
            break
    return out


def _x87(value: Fraction) -> Fraction:
    """Round a non-negative fraction to the nearest x86 ``long double`` (64-bit mantissa)."""
    if value == 0:
        return value
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    scale = Fraction(2) ** (63 - exponent)
    scaled = value * scale
    if scaled >= 2**64:
        scale /= 2
        scaled = value * scale
    elif scaled < 2**63:
        scale *= 2
        scaled = value * scale
    mantissa, remainder = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * remainder
    if twice > scaled.denominator or (twice == scaled.denominator and mantissa % 2):
        mantissa += 1
    return Fraction(mantissa) / scale


def _levels(maps: Iterable[Mapping[str, Any]]) -> list[float]:
    levels: set[float] = set()
    for percentile_map in maps:
        for key in percentile_map:
            try:
                level = float(key)
            except ValueError:
                continue
            if level > 0:
                levels.add(level)
    return sorted(levels)


def _numjobs(job: FioJobResult, global_options: Mapping[str, str]) -> int:
    text = job.job_options.get("numjobs", global_options.get("numjobs", "1"))
    try:
        return int(str(text).strip())
    except ValueError:
        return 1


def _samples(block: Mapping[str, Any]) -> int:
    if "N" in block:
        return int(_number(block.get("N")))
    # fio 2.x has no sample count: a block with any non-zero value measured something.
    return 1 if any(_number(block.get(key)) > 0 for key in ("min", "max", "mean")) else 0


def _number(value: Any) -> float:
    # What is no number counts 0 here: parse_fio_job refuses it once the merged job is parsed.
    return fio_number(value) or 0.0
