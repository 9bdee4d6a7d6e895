"""Repeats, comparisons across StorageClasses and baseline verdicts, on real fio results."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.baseline import compare_with_baseline
from kubectl_storage.core.fio.class_comparison import compare_classes
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.metrics import higher_is_better
from kubectl_storage.core.fio.report import FioReport, FioReportError
from kubectl_storage.core.fio.report_baseline import (
    VERDICT_NOTHING_COMPARED,
    VERDICT_PASS,
    VERDICT_REGRESSED,
)
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.stats import build_fio_report, merge_repeats, metric_stats

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def parsed(name: str) -> FioResult:
    return parse_fio_output((FIXTURES / name).read_text(encoding="utf-8"))


QUICK = "fio-3.33-quick-profile-ext4.json"
KUBESTR = "fio-3.20-kubestr-gtod-reduce.json"


def report_for(**class_runs: list[FioResult]) -> dict[str, Any]:
    """The report's JSON form, which the tests edit the way a saved file could be."""
    return build_fio_report(class_runs, profile="quick").to_dict()


def typed(report: dict[str, Any]) -> FioReport:
    return FioReport.from_dict(report)


def scaled(report: dict[str, Any], metric: str, factor: float) -> dict[str, Any]:
    """A copy of the report with one metric of every job multiplied by ``factor``."""
    changed = copy.deepcopy(report)
    for result in changed["results"]:
        for job in result["jobs"]:
            if job.get(metric):
                job[metric] *= factor
    return changed


# --- mean and stddev ------------------------------------------------------------------------


def test_metric_stats_uses_sample_standard_deviation() -> None:
    stats = metric_stats([1.0, 2.0, 3.0, 4.0])

    assert stats.mean == pytest.approx(2.5)
    assert stats.stddev == pytest.approx(1.2909944487)  # n - 1, not n
    assert stats.samples == 4


def test_metric_stats_skips_missing_values_and_needs_two_for_spread() -> None:
    assert metric_stats([None, 5.0, None]) == metric_stats([5.0])
    assert metric_stats([5.0]).stddev is None
    assert metric_stats([]).mean is None


def test_merge_repeats_means_stddevs_and_raw_per_run() -> None:
    first = parsed(QUICK)
    report = report_for(local=[first])
    second_jobs = scaled(report, "read_iops", 1.1)["results"][0]["jobs"]
    first_jobs = report["results"][0]["jobs"]

    merged = merge_repeats([first_jobs, second_jobs])

    read = merged[0]
    base = first.job("read_iops").read.iops
    assert read["name"] == "read_iops"
    assert read["repeats"] == 2
    assert read["read_iops"] == pytest.approx(base * 1.05)
    assert read["read_iops_stddev"] == pytest.approx(base * 0.1 / 2**0.5)
    assert read["read_clat_p99_us"] == pytest.approx(10420.224)
    assert read["read_clat_p99_us_stddev"] == pytest.approx(0.0)
    assert read["write_clat_p99_us"] is None  # never measured in a read job
    assert len(read["raw"]) == 2
    keys = list(read)
    assert keys[:3] == ["name", "error", "repeats"]
    assert keys.index("read_iops_stddev") == keys.index("read_iops") + 1
    assert keys[-2:] == ["raw", "steady_state"]  # steady_state appended (issue 23 item 2)


def test_merge_repeats_keeps_the_first_error() -> None:
    failing = parsed("fio-3.33-dev-full-error-stderr-merged.txt")
    report = report_for(local=[failing])
    jobs = report["results"][0]["jobs"]
    healthy = copy.deepcopy(jobs)
    for job in healthy:
        job["error"] = 0

    merged = merge_repeats([healthy, jobs])

    assert [(job["name"], job["error"]) for job in merged] == [
        ("write_to_dev_full", 28),
        ("read_ok", 0),
    ]


# --- the report -----------------------------------------------------------------------------


def test_build_fio_report_envelope_and_classes() -> None:
    report = build_fio_report(
        {"local": [parsed(QUICK), parsed(QUICK)], "ceph": [parsed(KUBESTR)]},
        profile="quick",
        context={"size": "10Gi"},
    ).to_dict()

    assert list(report)[:4] == ["apiVersion", "kind", "verdict", "reasons"]
    assert report["kind"] == "FioReport"
    assert list(report)[4:] == [
        "profile",
        "size",
        "fio_version",
        "repeats",
        "latency_measured",
        "notes",
        "results",
    ]
    assert report["fio_version"] == ["fio-3.20", "fio-3.33"]
    assert report["repeats"] == 2
    assert report["latency_measured"] is True  # local measured it; ceph ran with gtod_reduce
    assert report["notes"] == []
    assert [result["storage_class"] for result in report["results"]] == ["local", "ceph"]
    assert [list(result) for result in report["results"]] == [
        ["storage_class", "confidence", "notes", "jobs"]
    ] * 2
    assert json.loads(json.dumps(report)) == report


# --- comparison across classes --------------------------------------------------------------


def test_compare_classes_picks_the_best_class_per_metric() -> None:
    report = report_for(local=[parsed(QUICK)], ceph=[parsed(KUBESTR)])

    rows = {(row.job, row.metric): row for row in compare_classes(typed(report))}

    iops = rows[("read_iops", "read_iops")]
    assert iops.higher_is_better
    assert [value.storage_class for value in iops.values] == ["local", "ceph"]
    assert [value.mean for value in iops.values] == pytest.approx([23363.127375, 982.05078])
    assert iops.best_class == "local"
    # Only local measured latency (ceph ran with gtod_reduce): a row, but no "best".
    latency = rows[("read_iops", "read_clat_p99_us")]
    assert latency.best_class is None
    assert not latency.higher_is_better
    # The write side of a read job is not a row.
    assert ("read_iops", "write_iops") not in rows


def test_lower_latency_wins() -> None:
    report = report_for(slow=[parsed(QUICK)])
    fast = scaled(report, "read_clat_p99_us", 0.5)["results"][0]
    fast["storage_class"] = "fast"
    report["results"].append(fast)

    rows = {(row.job, row.metric): row for row in compare_classes(typed(report))}

    assert rows[("read_iops", "read_clat_p99_us")].best_class == "fast"


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("read_iops", True),
        ("write_bw_kib_s", True),
        ("read_clat_p99_9_us", False),
        ("write_lat_mean_us", False),
    ],
)
def test_direction_of_better(metric: str, expected: bool) -> None:
    assert higher_is_better(metric) is expected


# --- baseline -------------------------------------------------------------------------------


def test_same_report_passes_with_zero_regression() -> None:
    report = report_for(local=[parsed(QUICK)])
    saved = json.loads(json.dumps(report))  # as read back from --baseline old.json

    comparison = compare_with_baseline(typed(report), typed(saved))

    assert comparison.verdict == VERDICT_PASS
    assert not comparison.failed
    assert comparison.deltas
    assert all(delta.regression_percent == 0 for delta in comparison.deltas)
    # Nothing compared on the unmeasured side of each job.
    assert {(d.job, d.metric.split("_")[0]) for d in comparison.deltas} == {
        ("read_iops", "read"),
        ("write_iops", "write"),
    }


@pytest.mark.parametrize(
    ("metric", "factor", "threshold", "verdict"),
    [
        ("read_iops", 0.80, 10.0, VERDICT_REGRESSED),  # 20% fewer IOPS
        ("read_iops", 0.80, 25.0, VERDICT_PASS),
        ("read_iops", 1.50, 10.0, VERDICT_PASS),  # faster is never a regression
        ("write_bw_kib_s", 0.85, 10.0, VERDICT_REGRESSED),
        ("read_clat_p99_us", 1.05, 10.0, VERDICT_PASS),
        ("read_clat_p99_us", 1.15, 10.0, VERDICT_REGRESSED),  # 15% slower p99
        ("write_clat_p99_9_us", 0.50, 10.0, VERDICT_PASS),
    ],
)
def test_regression_threshold_by_metric_direction(
    metric: str, factor: float, threshold: float, verdict: str
) -> None:
    baseline = report_for(local=[parsed(QUICK)])
    current = scaled(baseline, metric, factor)

    comparison = compare_with_baseline(
        typed(current), typed(baseline), max_regression_percent=threshold
    )

    assert comparison.verdict == verdict
    moved = [delta for delta in comparison.deltas if delta.metric == metric]
    assert len(moved) == 1
    assert moved[0].change_percent == pytest.approx((factor - 1) * 100)
    sign = -1 if higher_is_better(metric) else 1
    assert moved[0].regression_percent == pytest.approx(sign * (factor - 1) * 100)


def test_a_vanished_job_is_a_regression() -> None:
    baseline = report_for(local=[parsed(QUICK)])
    current = copy.deepcopy(baseline)
    current["results"][0]["jobs"].pop()

    comparison = compare_with_baseline(typed(current), typed(baseline))

    assert comparison.verdict == VERDICT_REGRESSED
    assert comparison.missing == ("local/write_iops",)


def test_single_classes_are_compared_even_when_names_differ() -> None:
    baseline = report_for(old_class=[parsed(QUICK)])
    current = scaled(report_for(new_class=[parsed(QUICK)]), "read_iops", 0.5)

    comparison = compare_with_baseline(typed(current), typed(baseline))

    assert comparison.verdict == VERDICT_REGRESSED
    assert [d.metric for d in comparison.regressions] == ["read_iops"]
    assert comparison.regressions[0].storage_class == "new_class"


def test_no_common_jobs_is_not_a_pass() -> None:
    baseline = report_for(local=[parsed(QUICK)])
    current = report_for(local=[parsed("fio-3.1-fio-plot-randread-sdb.json")])

    comparison = compare_with_baseline(typed(current), typed(baseline))

    assert comparison.verdict == VERDICT_NOTHING_COMPARED
    assert comparison.failed


def test_latency_missing_now_is_reported_not_failed() -> None:
    baseline = report_for(local=[parsed(QUICK)])
    current = copy.deepcopy(baseline)
    current["results"][0]["jobs"][0]["read_clat_p99_us"] = None

    comparison = compare_with_baseline(typed(current), typed(baseline))

    gone = [d for d in comparison.deltas if d.metric == "read_clat_p99_us"]
    assert gone[0].current is None
    assert gone[0].regressed is False
    assert comparison.verdict == VERDICT_PASS


def test_comparison_to_dict_is_json() -> None:
    baseline = report_for(local=[parsed(QUICK)])
    comparison = compare_with_baseline(typed(scaled(baseline, "read_iops", 0.5)), typed(baseline))

    as_dict = json.loads(json.dumps(comparison.to_dict()))

    assert as_dict["verdict"] == "regressed"
    assert as_dict["regressions"] == 1
    assert list(as_dict["deltas"][0]) == [
        "storage_class",
        "job",
        "metric",
        "baseline",
        "current",
        "change_percent",
        "regression_percent",
        "regressed",
    ]


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ({"kind": "MountAuditReport", "apiVersion": "kubectl-storage/v1alpha1"}, "not a FioReport"),
        ({"kind": "FioReport", "apiVersion": "kubectl-storage/v0"}, "apiVersion"),
        ([{"TestName": "FIO test results"}][0], "not a FioReport"),  # a kubestr -o json entry
    ],
)
def test_baseline_must_be_a_fio_report(baseline: dict[str, Any], message: str) -> None:
    with pytest.raises(FioReportError, match=message):
        FioReport.from_dict(baseline)


@pytest.mark.parametrize(
    ("profile", "fixture"),
    [("quick", QUICK), ("etcd", "fio-3.33-etcd-profile-ext4.json"), ("kubestr", KUBESTR)],
)
def test_a_saved_report_reads_back_to_the_same_report(profile: str, fixture: str) -> None:
    report = build_fio_report(
        {"local": [parsed(fixture), parsed(fixture)], "ceph": [parsed(KUBESTR)]},
        profile=profile,
        context={"size": "10Gi", "namespace": "team-a"},
    )
    compared = report.with_baseline(compare_with_baseline(report, report))
    saved = json.loads(json.dumps(compared.to_dict()))

    read_back = FioReport.from_dict(saved)

    assert read_back.to_dict() == saved
    assert read_back.baseline == compared.baseline
    assert read_back.context == {"size": "10Gi", "namespace": "team-a"}


def test_negative_threshold_is_refused() -> None:
    report = report_for(local=[parsed(QUICK)])

    with pytest.raises(ValueError, match="negative"):
        compare_with_baseline(typed(report), typed(report), max_regression_percent=-1)
