"""Comparing the StorageClasses of one FioReport, job by job and metric by metric.

Separate from building the report (:mod:`kubectl_storage.core.fio.stats`): it works on a report,
fresh or read back from a saved file, and only the table renderer asks for it.

Pure module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_storage.core.fio.metrics import COMPARED_METRICS, higher_is_better
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.report_jobs import FioJobSummary


@dataclass(frozen=True)
class ClassValue:
    """One class's value for one metric of one job.

    Attributes:
        storage_class: the StorageClass.
        mean: the value (mean over repeats), ``None`` if not measured.
        stddev: its sample standard deviation, ``None`` without repeats.
    """

    storage_class: str
    mean: float | None
    stddev: float | None


@dataclass(frozen=True)
class ClassComparisonRow:
    """One job and metric across every StorageClass of a report.

    Attributes:
        job: job name.
        metric: metric key, e.g. ``read_iops`` or ``write_clat_p99_us``.
        higher_is_better: direction of "better" for this metric.
        values: one entry per class, in report order.
        best_class: the class with the best value, ``None`` when fewer than two classes
            measured it.
    """

    job: str
    metric: str
    higher_is_better: bool
    values: tuple[ClassValue, ...]
    best_class: str | None


def compare_classes(
    report: FioReport, *, metrics: Sequence[str] = COMPARED_METRICS
) -> list[ClassComparisonRow]:
    """Rows comparing every StorageClass of a report, job by job and metric by metric.

    Metrics that no class measured for a job (the write side of a read job, latency under
    ``gtod_reduce``) produce no row.

    Args:
        report: the report.
        metrics: metric keys to compare.

    Returns:
        Rows ordered by job (first appearance) then by ``metrics`` order.
    """
    classes: list[str] = []
    jobs_by_class: dict[str, dict[str, FioJobSummary]] = {}
    job_order: list[str] = []
    for storage_class, job in report.jobs():
        if storage_class not in jobs_by_class:
            classes.append(storage_class)
            jobs_by_class[storage_class] = {}
        jobs_by_class[storage_class][job.name] = job
        if job.name not in job_order:
            job_order.append(job.name)
    missing = FioJobSummary(name="")
    rows: list[ClassComparisonRow] = []
    for name in job_order:
        for metric in metrics:
            values = tuple(
                ClassValue(
                    storage_class=storage_class,
                    mean=jobs_by_class[storage_class].get(name, missing).value(metric),
                    stddev=jobs_by_class[storage_class].get(name, missing).stddev(metric),
                )
                for storage_class in classes
            )
            measured = [value for value in values if value.mean]
            if not measured:
                continue
            better_high = higher_is_better(metric)
            best = None
            if len(measured) > 1:
                pick = max if better_high else min
                best = pick(measured, key=lambda value: value.mean or 0.0).storage_class
            rows.append(ClassComparisonRow(name, metric, better_high, values, best))
    return rows
