"""Comparing a FioReport with a saved baseline, and deciding whether performance regressed.

A baseline comparison turns each metric into a *regression percentage* (positive is worse) and
fails the verdict when any exceeds the threshold. Separate from building the report
(:mod:`kubectl_storage.core.fio.stats`): it takes two finished reports (``--baseline``).

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubectl_storage.core.fio.metrics import COMPARED_METRICS, higher_is_better
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.report_baseline import (
    VERDICT_NOTHING_COMPARED,
    VERDICT_PASS,
    VERDICT_REGRESSED,
    BaselineComparison,
    MetricDelta,
)
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.setup import setup_differences

#: Default ``--max-regression`` in percent.
DEFAULT_MAX_REGRESSION_PERCENT = 10.0


def compare_with_baseline(
    current: FioReport,
    baseline: FioReport,
    *,
    max_regression_percent: float = DEFAULT_MAX_REGRESSION_PERCENT,
    metrics: Sequence[str] = COMPARED_METRICS,
) -> BaselineComparison:
    """Compare a FioReport with a saved one and decide whether performance regressed.

    Classes are matched by name; when both reports hold exactly one class, they are compared
    even if the names differ (a new StorageClass against the old one's saved report). Jobs are
    matched by name. A metric is compared only when the baseline measured it (non-zero), so
    the empty write side of a read job is ignored. IOPS and bandwidth regress when they drop,
    latencies when they rise, by more than ``max_regression_percent``.

    Args:
        current: the new report.
        baseline: the saved report (e.g. read from ``--baseline old.json``).
        max_regression_percent: allowed worsening per metric, in percent.
        metrics: metric keys to compare.

    Returns:
        The comparison with its verdict.

    Raises:
        ValueError: when ``max_regression_percent`` is negative.
    """
    if max_regression_percent < 0:
        raise ValueError("max_regression_percent cannot be negative")
    current_classes = _jobs_by_class(current)
    baseline_classes = _jobs_by_class(baseline)
    pairs = _pair_classes(current_classes, baseline_classes)

    deltas: list[MetricDelta] = []
    missing: list[str] = []
    setups = _setup_differences(current, baseline, pairs)
    for current_class, baseline_class in pairs:
        current_jobs = current_classes[current_class]
        for job_name, baseline_job in baseline_classes[baseline_class].items():
            current_job = current_jobs.get(job_name)
            if current_job is None:
                missing.append(f"{baseline_class}/{job_name}")
                continue
            for metric in metrics:
                delta = _delta(
                    current_class,
                    job_name,
                    metric,
                    baseline_job,
                    current_job,
                    max_regression_percent,
                )
                if delta is not None:
                    deltas.append(delta)
    for baseline_class in baseline_classes:
        if baseline_class not in {pair[1] for pair in pairs}:
            missing.extend(f"{baseline_class}/{job}" for job in baseline_classes[baseline_class])

    if not deltas:
        verdict = VERDICT_NOTHING_COMPARED
    elif missing or any(delta.regressed for delta in deltas):
        verdict = VERDICT_REGRESSED
    else:
        verdict = VERDICT_PASS
    return BaselineComparison(
        max_regression_percent=max_regression_percent,
        deltas=tuple(deltas),
        missing=tuple(missing),
        verdict=verdict,
        setup_differences=setups,
    )


def _setup_differences(
    current: FioReport, baseline: FioReport, pairs: Sequence[tuple[str, str]]
) -> dict[str, tuple[str, ...]]:
    """Per compared class, what differs in the setup (only where both reports say)."""
    now = {result.storage_class: result.setup for result in current.results}
    then = {result.storage_class: result.setup for result in baseline.results}
    found: dict[str, tuple[str, ...]] = {}
    for current_class, baseline_class in pairs:
        new, old = now.get(current_class), then.get(baseline_class)
        if new is not None and old is not None:
            lines = setup_differences(new, old)
            if lines:
                found[current_class] = lines
    return found


def _jobs_by_class(report: FioReport) -> dict[str, dict[str, FioJobSummary]]:
    classes: dict[str, dict[str, FioJobSummary]] = {}
    for storage_class, job in report.jobs():
        classes.setdefault(storage_class, {})[job.name] = job
    return classes


def _pair_classes(
    current: Mapping[str, object], baseline: Mapping[str, object]
) -> list[tuple[str, str]]:
    if len(current) == 1 and len(baseline) == 1:
        return [(next(iter(current)), next(iter(baseline)))]
    return [(name, name) for name in current if name in baseline]


def _delta(
    storage_class: str,
    job: str,
    metric: str,
    baseline_job: FioJobSummary,
    current_job: FioJobSummary,
    threshold: float,
) -> MetricDelta | None:
    old = baseline_job.value(metric)
    if not old:
        return None  # not measured in the baseline: nothing to compare against
    new = current_job.value(metric)
    if new is None:
        # A metric that disappeared (latency switched off) cannot be judged; report, not fail.
        return MetricDelta(storage_class, job, metric, old, None, None, None, regressed=False)
    change = (new - old) / old * 100.0
    regression = -change if higher_is_better(metric) else change
    return MetricDelta(
        storage_class=storage_class,
        job=job,
        metric=metric,
        baseline=old,
        current=new,
        change_percent=change,
        regression_percent=regression,
        regressed=regression > threshold,
    )
