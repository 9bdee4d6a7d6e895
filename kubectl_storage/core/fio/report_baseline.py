"""The baseline section of a FioReport: each metric's move against a saved report, and the verdict.

Separate from the comparison that fills it (:mod:`kubectl_storage.core.fio.baseline`) so the
report can read a saved one back without the comparison code.

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.fio.report_jobs import number


@dataclass(frozen=True)
class MetricDelta:
    """How one metric moved against the baseline.

    Attributes:
        storage_class: class in the current report.
        job: job name.
        metric: metric key.
        baseline: baseline value.
        current: current value, ``None`` when no longer measured.
        change_percent: signed change, ``(current - baseline) / baseline * 100``.
        regression_percent: how much worse, in percent (negative means better).
        regressed: whether ``regression_percent`` exceeds the threshold.
    """

    storage_class: str
    job: str
    metric: str
    baseline: float
    current: float | None
    change_percent: float | None
    regression_percent: float | None
    regressed: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "storage_class": self.storage_class,
            "job": self.job,
            "metric": self.metric,
            "baseline": self.baseline,
            "current": self.current,
            "change_percent": self.change_percent,
            "regression_percent": self.regression_percent,
            "regressed": self.regressed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricDelta:
        """Read a delta back from a saved report."""
        return cls(
            storage_class=str(data.get("storage_class", "")),
            job=str(data.get("job", "")),
            metric=str(data.get("metric", "")),
            baseline=number(data.get("baseline")) or 0.0,
            current=number(data.get("current")),
            change_percent=number(data.get("change_percent")),
            regression_percent=number(data.get("regression_percent")),
            regressed=bool(data.get("regressed")),
        )


VERDICT_PASS = "pass"
VERDICT_REGRESSED = "regressed"
VERDICT_NOTHING_COMPARED = "nothing-compared"


@dataclass(frozen=True)
class BaselineComparison:
    """The outcome of comparing a report with a saved baseline.

    Attributes:
        max_regression_percent: the threshold used.
        deltas: every compared metric, in report order.
        missing: ``"class/job"`` entries in the baseline that the current report lacks.
        setup_differences: per class of the current report, what differs in its setup
            (provisioner, parameters, file system, mount options, node kernel…) from the
            baseline's, when both reports say.
        verdict: ``pass``, ``regressed`` (at least one metric past the threshold, or a job
            that vanished), or ``nothing-compared`` (no job in common).
    """

    max_regression_percent: float
    deltas: tuple[MetricDelta, ...]
    missing: tuple[str, ...]
    verdict: str
    setup_differences: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def regressions(self) -> tuple[MetricDelta, ...]:
        """The deltas past the threshold."""
        return tuple(delta for delta in self.deltas if delta.regressed)

    @property
    def failed(self) -> bool:
        """Whether the comparison should make the command exit 1."""
        return self.verdict != VERDICT_PASS

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "verdict": self.verdict,
            "max_regression_percent": self.max_regression_percent,
            "regressions": len(self.regressions),
            "missing": list(self.missing),
            "deltas": [delta.to_dict() for delta in self.deltas],
            **(
                {"setup_differences": {k: list(v) for k, v in self.setup_differences.items()}}
                if self.setup_differences
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaselineComparison:
        """Read a comparison back from a saved report."""
        return cls(
            max_regression_percent=number(data.get("max_regression_percent")) or 0.0,
            deltas=tuple(MetricDelta.from_dict(d) for d in data.get("deltas") or ()),
            missing=tuple(str(m) for m in data.get("missing") or ()),
            verdict=str(data.get("verdict", "")),
            setup_differences={
                str(k): tuple(str(line) for line in v)
                for k, v in (data.get("setup_differences") or {}).items()
            },
        )
