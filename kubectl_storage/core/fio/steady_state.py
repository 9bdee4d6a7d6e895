"""fio's steady-state detection: what a job asked for and whether fio found it steady.

A job file asks with ``steadystate=<criterion>:<limit>`` (``ss=``), ``ss_dur`` and ``ss_ramp``
(fio's HOWTO, "Steady state"; the fio(1) man page of fio-3.33). After ``ss_ramp``, fio collects
the job's IOPS and bandwidth once per second in a rolling window of ``ss_dur`` seconds, and
**stops the job** as soon as the criterion holds over the window:

* ``iops`` / ``bw``: every second's value is within ``limit`` of the window's mean;
* ``iops_slope`` / ``bw_slope``: the least-squares slope of the window is below ``limit``.

The limit is absolute, or a percentage of the window's mean when written with ``%``. There is
no mode that checks without stopping: a job that attains steady state ends early, one that does
not runs to its ``runtime``. fio's JSON then carries, per job, a ``steadystate`` object (seen in
fio-3.33's output, tests/fixtures/fio/SOURCES.md): ``ss`` (the request, e.g.
``"iops_slope:5.000000%"``), ``duration`` (``ss_dur`` in seconds), ``attained`` (0 or 1),
``criterion`` (the window's measured value, in the limit's unit: ``"0.139916%"`` for a
deviation of 2.8 IOPS around a mean of 2001), ``max_deviation``, ``slope``, and ``data`` (the
window's per-second ``iops`` and ``bw``, bytes/s, with their means). ``ss_ramp`` is not in that
object; fio echoes it among the options as ``steadystate_ramp_time``.

Pure module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: fio's criteria (fio(1), ``steadystate``).
CRITERIA: tuple[str, ...] = ("iops", "iops_slope", "bw", "bw_slope")

_REQUEST = re.compile(r"^\s*(?P<criterion>[a-z_]+)\s*:\s*(?P<limit>[0-9.eE+-]+)\s*(?P<pct>%?)\s*$")
_TIME = re.compile(r"^\s*(?P<number>[0-9.]+)\s*(?P<unit>us|ms|s|m|h|d)?\s*$")
_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


@dataclass(frozen=True)
class FioSteadyState:
    """One job's steady-state request and fio's answer.

    Attributes:
        criterion: ``iops``, ``iops_slope``, ``bw`` or ``bw_slope``.
        limit: the threshold asked for.
        limit_percent: whether the limit is a percentage of the window's mean.
        duration_s: the rolling window, ``ss_dur``, in seconds.
        ramp_s: ``ss_ramp`` in seconds, ``None`` when fio's options do not give it.
        attained: whether fio found the job steady (and so stopped it early).
        runtime_ms: the job's measured runtime (fio's ``job_runtime``, ``ramp_time``
            excluded): how long it took to become steady, or the runtime it ran to.
        value: the window's measured criterion, in the limit's unit (fio's ``criterion``).
        max_deviation: the largest distance of one second's value from the window's mean.
        slope: the window's least-squares slope (per second).
    """

    criterion: str
    limit: float
    limit_percent: bool
    duration_s: int
    ramp_s: float | None
    attained: bool
    runtime_ms: int
    value: float | None
    max_deviation: float | None
    slope: float | None

    @property
    def request(self) -> str:
        """The request as a job file writes it: ``iops_slope:5%``."""
        return f"{self.criterion}:{self.limit:g}{'%' if self.limit_percent else ''}"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape, fixed key order."""
        return {
            "criterion": self.criterion,
            "limit": self.limit,
            "limit_unit": "%" if self.limit_percent else "absolute",
            "duration_s": self.duration_s,
            "ramp_s": self.ramp_s,
            "attained": self.attained,
            "runtime_s": self.runtime_ms / 1000.0,
            "value": self.value,
            "max_deviation": self.max_deviation,
            "slope": self.slope,
        }


def parse_steady_state(
    job: Mapping[str, Any], options: Mapping[str, str] | None = None
) -> FioSteadyState | None:
    """The ``steadystate`` object of one job of fio's JSON, ``None`` when the job did not ask.

    Args:
        job: the job's dict as fio printed it.
        options: the job's options merged over the global ones (for ``ss_ramp``).

    Returns:
        The request and fio's answer; ``None`` without a readable ``steadystate`` object.
    """
    block = job.get("steadystate")
    if not isinstance(block, dict):
        return None
    match = _REQUEST.match(str(block.get("ss", "")))
    if match is None or match["criterion"] not in CRITERIA:
        return None
    limit = _number(match["limit"])
    if limit is None:
        return None
    ramp = None
    for key in ("steadystate_ramp_time", "ss_ramp"):
        if options and key in options:
            ramp = fio_seconds(options[key])
            break
    else:
        ramp = 0.0 if options is not None else None
    return FioSteadyState(
        criterion=match["criterion"],
        limit=limit,
        limit_percent=bool(match["pct"]),
        duration_s=int(_number(block.get("duration")) or 0),
        ramp_s=ramp,
        attained=bool(_number(block.get("attained"))),
        runtime_ms=int(_number(job.get("job_runtime")) or 0),
        value=_number(str(block.get("criterion", "")).rstrip("%")),
        max_deviation=_number(block.get("max_deviation")),
        slope=_number(block.get("slope")),
    )


def combine_steady_states(
    states: Sequence[FioSteadyState | None],
) -> FioSteadyState | None:
    """One answer for ``numjobs`` clones reported apart: steady only if every clone was.

    The request is the first clone's (clones share their section's options); the runtime is
    the longest clone's and the value, deviation and slope the largest (the least steady).
    ``None`` when no clone asked.
    """
    asked = [state for state in states if state is not None]
    if not asked:
        return None
    first = asked[0]
    return FioSteadyState(
        criterion=first.criterion,
        limit=first.limit,
        limit_percent=first.limit_percent,
        duration_s=first.duration_s,
        ramp_s=first.ramp_s,
        attained=len(asked) == len(states) and all(state.attained for state in asked),
        runtime_ms=max(state.runtime_ms for state in asked),
        value=_largest(state.value for state in asked),
        max_deviation=_largest(state.max_deviation for state in asked),
        slope=_largest(None if s.slope is None else abs(s.slope) for s in asked),
    )


def fio_seconds(text: str) -> float | None:
    """A fio time value (``2s``, ``500ms``, ``1m``; seconds without a unit) in seconds."""
    match = _TIME.match(text.lower())
    if match is None:
        return None
    number = _number(match["number"])
    if number is None:
        return None
    return number * _SECONDS[match["unit"] or "s"]


def _largest(values: Any) -> float | None:
    present = [value for value in values if value is not None]
    return max(present) if present else None


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def merge_steady_dicts(entries: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The ``steady_state`` of a job over ``--repeat`` runs (each a :meth:`FioSteadyState.to_dict`
    or ``None``): the first run's request; ``attained`` only when every run attained it; the
    longest ``runtime_s`` and the largest ``value``; ``runs`` and ``runs_attained`` counted.
    ``None`` when no run asked."""
    asked = [entry for entry in entries if entry]
    if not asked:
        return None
    merged = dict(asked[0])
    attained = sum(1 for entry in asked if entry.get("attained"))
    merged["attained"] = attained == len(entries)
    merged["runtime_s"] = _largest(_number(entry.get("runtime_s")) for entry in asked)
    merged["value"] = _largest(_number(entry.get("value")) for entry in asked)
    merged["runs"] = len(entries)
    merged["runs_attained"] = attained
    return merged
