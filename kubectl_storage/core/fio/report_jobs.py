"""One fio job of a FioReport (:class:`FioJobSummary`), and how the report reads JSON numbers.

Separate from the report (:mod:`kubectl_storage.core.fio.report`) because every part of it holds
jobs: a class's results, each ``--clients`` client and the ``--compare-local`` run.

Pure module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Keys of a job that are not metrics.
_JOB_KEYS = ("name", "error", "repeats", "clones", "percentile_merge", "raw", "steady_state")


def number(value: Any) -> float | None:
    """A JSON value as a float, ``None`` for what is not a number (``null``, NaN, text, bools)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    return None


@dataclass(frozen=True)
class FioJobSummary:
    """One fio job of one class, merged over the repeats.

    Attributes:
        name: the job's name (its ``[section]``).
        error: fio's error number, the first non-zero one of any run.
        repeats: runs that had the job.
        clones: ``numjobs`` clones added up inside each run (1 for a plain job).
        metrics: metric key -> mean over the runs, each followed by ``<key>_stddev``; in the
            order fio's contract lists them.
        percentile_merge: how clones' percentiles were merged (``exact``, ``upper-bound``),
            ``None`` without clones.
        raw: fio's own job dicts, one entry per run.
        steady_state: fio's steady-state answer over the runs
            (:func:`~kubectl_storage.core.fio.steady_state.merge_steady_dicts`), ``None`` when
            the job did not ask.
    """

    name: str
    error: int = 0
    repeats: int = 1
    clones: int = 1
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    percentile_merge: str | None = None
    raw: tuple[Any, ...] = ()
    steady_state: Mapping[str, Any] | None = None

    def value(self, metric: str) -> float | None:
        """The mean of ``metric`` (``read_iops``), ``None`` when not measured."""
        return number(self.metrics.get(metric))

    def stddev(self, metric: str) -> float | None:
        """The spread of ``metric`` over repeats, ``None`` below two runs."""
        return number(self.metrics.get(f"{metric}_stddev"))

    def did(self, direction: str) -> bool:
        """Whether the job did any I/O in ``direction`` (``read``, ``write``)."""
        return bool(self.value(f"{direction}_iops"))

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: name, error, repeats, clones, the metrics, percentile_merge, raw,
        steady_state."""
        entry: dict[str, Any] = {
            "name": self.name,
            "error": self.error,
            "repeats": self.repeats,
            "clones": self.clones,
        }
        entry.update(self.metrics)
        entry["percentile_merge"] = self.percentile_merge
        entry["raw"] = list(self.raw)
        entry["steady_state"] = None if self.steady_state is None else dict(self.steady_state)
        return entry

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioJobSummary:
        """Read a job back; every key that is not one of the fixed ones is a metric."""
        merge = data.get("percentile_merge")
        steady = data.get("steady_state")
        return cls(
            name=str(data.get("name", "")),
            error=int(number(data.get("error")) or 0),
            repeats=int(number(data.get("repeats")) or 1),
            clones=int(number(data.get("clones")) or 1),
            metrics={k: number(v) for k, v in data.items() if k not in _JOB_KEYS},
            percentile_merge=str(merge) if merge else None,
            raw=tuple(data.get("raw") or ()),
            steady_state=dict(steady) if isinstance(steady, Mapping) else None,
        )
