"""The fio table: per-class tables, the verdict line, the comparison and the baseline section."""

from __future__ import annotations

import io
from pathlib import Path

from kubectl_storage.core.fio.baseline import compare_with_baseline
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.render.fio import class_verdict, write_fio_table

FIO = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def _two_class_report() -> FioReport:
    quick = parse_fio_output((FIO / "fio-3.33-quick-profile-ext4.json").read_text())
    other = parse_fio_output((FIO / "fio-3.1-fio-plot-randread-sdb.json").read_text())
    return build_fio_report({"fast": [quick, quick], "slow": [other]}, profile="quick")


def test_verdict_names_peaks_and_tail_latency() -> None:
    report = _two_class_report()
    line = class_verdict("fast", report.results[0].jobs)
    assert line.startswith("fast: peak read 23,363 IOPS, 91.3 MiB/s; peak write 11,943 IOPS")
    assert "best read p99 10.42ms" in line
    assert line.endswith("no fio errors")


def test_golden_table(golden) -> None:
    out = io.StringIO()
    write_fio_table(_two_class_report(), out, False)
    text = out.getvalue()
    assert "Comparison" in text
    golden("fio-two-classes.txt", text)


def test_golden_wide_table_with_baseline(golden) -> None:
    report = _two_class_report()
    saved = build_fio_report(
        {"fast": [parse_fio_output((FIO / "fio-3.33-quick-profile-ext4.json").read_text())]},
        profile="quick",
    ).to_dict()
    saved["results"][0]["jobs"][0]["read_iops"] *= 3
    baseline = FioReport.from_dict(saved)
    report = report.with_baseline(
        compare_with_baseline(report, baseline, max_regression_percent=10)
    )
    out = io.StringIO()
    write_fio_table(report, out, True)
    text = out.getvalue()
    assert "Baseline: regressed" in text
    assert "read p99.9" in text.lower()
    golden("fio-wide-baseline.txt", text)
