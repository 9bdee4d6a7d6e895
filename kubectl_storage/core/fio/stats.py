"""Statistics over fio results: repeats, comparisons between StorageClasses, and baselines.

Works on the FioReport shape (plain dicts), so a report read back from a saved JSON file is as
good as a fresh one::

    {"apiVersion": ..., "kind": "FioReport", "profile": ..., "fio_version": ..., "repeats": N,
     "latency_measured": true, "notes": [<note>, ...],
     "results": [{"storage_class": "fast", "confidence": "trusted", "notes": [<note>, ...],
                  "etcd": {...},  # etcd profile only
                  "jobs": [<job dict>, ...]}, ...]}

A note is :meth:`kubectl_storage.core.fio.guards.FioNote.to_dict` output (``id``, ``severity``,
``job``, ``message``, ``fix``); ``confidence`` is ``"trusted"`` or ``"suspect: <reasons>"``
(:func:`kubectl_storage.core.fio.guards.confidence`).

A job dict is :func:`kubectl_storage.core.fio.results.job_contract` output; after
:func:`merge_repeats` each metric holds the mean over the repeats and is followed by
``<metric>_stddev`` (sample standard deviation, ``None`` below two samples).

Repeats are separate fio runs (``--repeat N``). The ``numjobs`` clones of one job inside one run
are not repeats: :func:`build_fio_report` first adds them up into one job
(:mod:`kubectl_storage.core.fio.clones`), and only then averages over runs.

Direction of "better": IOPS and bandwidth are better higher, latencies better lower. A baseline
comparison turns each metric into a *regression percentage* (positive is worse) and fails the
verdict when any exceeds the threshold.

Pure module: dicts in, dataclasses and dicts out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.clones import combine_clones
from kubectl_storage.core.fio.guards import (
    FioNote,
    confidence,
    dedupe,
    etcd_note,
    etcd_verdict,
    kubestr_mode_note,
    run_notes,
    text_notes,
)
from kubectl_storage.core.fio.jobs import ETCD_JOB_NAME
from kubectl_storage.core.fio.results import (
    CONTRACT_DIRECTIONS,
    DIRECTION_METRICS,
    PERCENTILES_UPPER_BOUND,
    SYNC_METRICS,
    FioJobResult,
    FioResult,
    job_contract,
)
from kubectl_storage.core.report.envelope import API_VERSION, report_envelope

REPORT_KIND = "FioReport"

#: Per-direction metrics that are measurements worth averaging and comparing (``io_bytes`` and
#: ``runtime_ms`` only describe how long the run was).
_MEASURED = tuple(m for m in DIRECTION_METRICS if m not in ("io_bytes", "runtime_ms"))
_HIGHER_IS_BETTER = frozenset({"iops", "bw_kib_s"})

#: Full metric keys (``read_iops`` …) compared across classes and against a baseline: every
#: measured per-direction value, then the sync (fsync/fdatasync) latencies.
COMPARED_METRICS: tuple[str, ...] = tuple(
    f"{direction}_{metric}" for direction in CONTRACT_DIRECTIONS for metric in _MEASURED
) + tuple(f"sync_{metric}" for metric in SYNC_METRICS if metric != "total_ios")

#: Metric keys averaged over repeats: every numeric per-direction and sync value.
_AVERAGED_METRICS: tuple[str, ...] = tuple(
    f"{direction}_{metric}" for direction in CONTRACT_DIRECTIONS for metric in DIRECTION_METRICS
) + tuple(f"sync_{metric}" for metric in SYNC_METRICS)

#: Default ``--max-regression`` in percent.
DEFAULT_MAX_REGRESSION_PERCENT = 10.0


class BaselineError(ValueError):
    """The baseline is not a FioReport this version can compare against."""


def higher_is_better(metric_key: str) -> bool:
    """Whether a bigger value of ``metric_key`` (``read_iops``, ``write_clat_p99_us``) is better."""
    return metric_key.split("_", 1)[1] in _HIGHER_IS_BETTER


@dataclass(frozen=True)
class MetricStats:
    """Mean and spread of one metric over repeated runs.

    Attributes:
        mean: arithmetic mean of the samples, ``None`` when there are none.
        stddev: sample standard deviation (n - 1), ``None`` below two samples.
        samples: number of runs that produced a value.
    """

    mean: float | None
    stddev: float | None
    samples: int


def metric_stats(values: Iterable[float | None]) -> MetricStats:
    """Mean and sample standard deviation, skipping runs that produced no value.

    Args:
        values: one value per run; ``None`` where the run did not measure it.

    Returns:
        The statistics.
    """
    present = [float(value) for value in values if value is not None]
    if not present:
        return MetricStats(mean=None, stddev=None, samples=0)
    stddev = statistics.stdev(present) if len(present) > 1 else None
    return MetricStats(mean=statistics.fmean(present), stddev=stddev, samples=len(present))


def merge_repeats(runs: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Combine the job dicts of N repeated runs into one job dict per job.

    Jobs are matched by ``name`` and kept in the order of the first run that has them; when a
    run holds several jobs of one name (sections in different stonewall groups), the k-th of
    each run are matched, never averaged together. Each metric becomes the mean over the runs,
    followed by ``<metric>_stddev``. ``error`` is the first non-zero error of any run,
    ``repeats`` the number of runs that had the job, ``clones`` the number of ``numjobs``
    clones added up inside each run (1 for a plain job), ``percentile_merge`` how the clones'
    percentiles were merged (``exact``, ``upper-bound`` if any run could only bound them, or
    ``None``), and ``raw`` the list of fio's job dicts, one per run (for clones, each entry is
    the list of the clones' dicts).

    Args:
        runs: for each run, its job dicts (:func:`job_contract` output).

    Returns:
        Merged job dicts with stable key order.
    """
    order: list[tuple[str, int]] = []
    by_key: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for run in runs:
        seen: dict[str, int] = {}
        for job in run:
            name = str(job["name"])
            key = (name, seen.get(name, 0))
            seen[name] = key[1] + 1
            if key not in by_key:
                order.append(key)
                by_key[key] = []
            by_key[key].append(job)
    merged: list[dict[str, Any]] = []
    for key in order:
        jobs = by_key[key]
        errors = [int(job.get("error", 0)) for job in jobs]
        methods = [job.get("percentile_merge") for job in jobs if job.get("percentile_merge")]
        entry: dict[str, Any] = {
            "name": key[0],
            "error": next((error for error in errors if error), 0),
            "repeats": len(jobs),
            "clones": max(int(job.get("clones", 1)) for job in jobs),
        }
        for metric in _AVERAGED_METRICS:
            stats = metric_stats(job.get(metric) for job in jobs)
            entry[metric] = stats.mean
            entry[f"{metric}_stddev"] = stats.stddev
        entry["percentile_merge"] = (
            PERCENTILES_UPPER_BOUND
            if PERCENTILES_UPPER_BOUND in methods
            else (methods[0] if methods else None)
        )
        entry["raw"] = [job.get("raw") for job in jobs]
        merged.append(entry)
    return merged


def build_fio_report(
    class_runs: Mapping[str, Sequence[FioResult]],
    *,
    profile: str,
    extra: Mapping[str, Any] | None = None,
    stderr: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Assemble a FioReport from parsed runs, one list of repeats per StorageClass.

    Per class: ``numjobs`` clones are added up inside each run, the guards of
    :mod:`kubectl_storage.core.fio.guards` give its ``notes`` and ``confidence``, and with the
    ``etcd`` profile its ``etcd`` verdict; then the repeats are merged.

    Args:
        class_runs: StorageClass name -> its runs (one :class:`FioResult` per repeat), in the
            order the classes should be shown.
        profile: profile name, or ``"custom"`` for a user's job file.
        extra: more top-level fields (sizes, namespace, node, job file text), placed after
            ``profile``.
        stderr: StorageClass name -> what fio wrote on stderr, read for environment errors
            (ENOSPC, EROFS, libaio EAGAIN) that fio's JSON only gives as a number.

    Returns:
        The report dict (``apiVersion`` and ``kind`` first).
    """
    versions = sorted({run.fio_version for runs in class_runs.values() for run in runs})
    repeats = max((len(runs) for runs in class_runs.values()), default=0)
    counted = {
        storage_class: [combine_clones(run) for run in runs]
        for storage_class, runs in class_runs.items()
    }
    body: dict[str, Any] = {"profile": profile}
    body.update(extra or {})
    body["fio_version"] = versions[0] if len(versions) == 1 else versions
    body["repeats"] = repeats
    body["latency_measured"] = any(
        _measured_latency(job) for runs in counted.values() for jobs in runs for job in jobs
    )
    body["notes"] = [kubestr_mode_note().to_dict()] if profile == "kubestr" else []
    body["results"] = [
        _class_result(
            storage_class,
            runs,
            counted[storage_class],
            profile=profile,
            stderr=(stderr or {}).get(storage_class, ""),
        )
        for storage_class, runs in class_runs.items()
    ]
    return report_envelope(REPORT_KIND, body)


def _class_result(
    storage_class: str,
    runs: Sequence[FioResult],
    counted: Sequence[Sequence[FioJobResult]],
    *,
    profile: str,
    stderr: str,
) -> dict[str, Any]:
    notes: list[FioNote] = []
    for run, jobs in zip(runs, counted, strict=True):
        notes.extend(run_notes(run, jobs))
    notes.extend(text_notes(stderr))
    etcd: dict[str, Any] | None = None
    if profile == "etcd":
        etcd = etcd_verdict([job for jobs in counted for job in jobs if job.name == ETCD_JOB_NAME])
        notes.append(etcd_note(etcd))
    kept = dedupe(notes)
    entry: dict[str, Any] = {
        "storage_class": storage_class,
        "confidence": confidence(kept),
        "notes": [note.to_dict() for note in kept],
    }
    if etcd is not None:
        entry["etcd"] = etcd
    entry["jobs"] = merge_repeats([[job_contract(job) for job in jobs] for jobs in counted])
    return entry


def _measured_latency(job: FioJobResult) -> bool:
    directions = [job.read, job.write, job.trim] + ([job.mixed] if job.mixed is not None else [])
    if any(d.clat_mean_us is not None or d.lat_mean_us is not None for d in directions):
        return True
    return job.sync is not None and job.sync.lat_mean_us is not None


def iter_report_jobs(report: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """Yield ``(storage_class, job dict)`` for every job of a FioReport, in report order."""
    for result in report.get("results") or []:
        storage_class = str(result.get("storage_class", ""))
        for job in result.get("jobs") or []:
            yield storage_class, job


# --------------------------------------------------------------------------------------------
# Comparison across classes


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
    report: Mapping[str, Any], *, metrics: Sequence[str] = COMPARED_METRICS
) -> list[ClassComparisonRow]:
    """Rows comparing every StorageClass of a report, job by job and metric by metric.

    Metrics that no class measured for a job (the write side of a read job, latency under
    ``gtod_reduce``) produce no row.

    Args:
        report: a FioReport dict.
        metrics: metric keys to compare.

    Returns:
        Rows ordered by job (first appearance) then by ``metrics`` order.
    """
    classes: list[str] = []
    jobs_by_class: dict[str, dict[str, Mapping[str, Any]]] = {}
    job_order: list[str] = []
    for storage_class, job in iter_report_jobs(report):
        if storage_class not in jobs_by_class:
            classes.append(storage_class)
            jobs_by_class[storage_class] = {}
        name = str(job.get("name"))
        jobs_by_class[storage_class][name] = job
        if name not in job_order:
            job_order.append(name)
    rows: list[ClassComparisonRow] = []
    for name in job_order:
        for metric in metrics:
            values = tuple(
                ClassValue(
                    storage_class=storage_class,
                    mean=_number(jobs_by_class[storage_class].get(name, {}).get(metric)),
                    stddev=_number(
                        jobs_by_class[storage_class].get(name, {}).get(f"{metric}_stddev")
                    ),
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


# --------------------------------------------------------------------------------------------
# Baseline


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
        verdict: ``pass``, ``regressed`` (at least one metric past the threshold, or a job
            that vanished), or ``nothing-compared`` (no job in common).
    """

    max_regression_percent: float
    deltas: tuple[MetricDelta, ...]
    missing: tuple[str, ...]
    verdict: str

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
        }


def compare_with_baseline(
    current: Mapping[str, Any],
    baseline: Mapping[str, Any],
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
        current: the new FioReport dict.
        baseline: the saved FioReport dict (e.g. loaded from ``--baseline old.json``).
        max_regression_percent: allowed worsening per metric, in percent.
        metrics: metric keys to compare.

    Returns:
        The comparison with its verdict.

    Raises:
        BaselineError: when ``baseline`` is not a FioReport of this API version.
        ValueError: when ``max_regression_percent`` is negative.
    """
    if max_regression_percent < 0:
        raise ValueError("max_regression_percent cannot be negative")
    _check_is_report(baseline)
    current_classes = _jobs_by_class(current)
    baseline_classes = _jobs_by_class(baseline)
    pairs = _pair_classes(current_classes, baseline_classes)

    deltas: list[MetricDelta] = []
    missing: list[str] = []
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
    )


def _check_is_report(report: Mapping[str, Any]) -> None:
    if report.get("kind") != REPORT_KIND:
        raise BaselineError(
            f"the baseline is not a {REPORT_KIND} (kind: {report.get('kind')!r}); save one with "
            "`kubectl storage fio -o json > baseline.json`"
        )
    if report.get("apiVersion") != API_VERSION:
        raise BaselineError(
            f"the baseline has apiVersion {report.get('apiVersion')!r}; this version reads "
            f"{API_VERSION}"
        )


def _jobs_by_class(report: Mapping[str, Any]) -> dict[str, dict[str, Mapping[str, Any]]]:
    classes: dict[str, dict[str, Mapping[str, Any]]] = {}
    for storage_class, job in iter_report_jobs(report):
        classes.setdefault(storage_class, {})[str(job.get("name"))] = job
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
    baseline_job: Mapping[str, Any],
    current_job: Mapping[str, Any],
    threshold: float,
) -> MetricDelta | None:
    old = _number(baseline_job.get(metric))
    if not old:
        return None  # not measured in the baseline: nothing to compare against
    new = _number(current_job.get(metric))
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


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    return None
