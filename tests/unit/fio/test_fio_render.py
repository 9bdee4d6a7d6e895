"""The fio table: per-class tables, the verdict line, the comparison and the baseline section."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

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
    assert line.startswith(
        "fast: peak read 23,363 IOPS, 91.3 MiB/s (read_iops); peak write 11,943 IOPS, "
        "46.7 MiB/s (write_iops)"
    )
    assert "best read clat p99 10.42ms (read_iops)" in line
    assert line.endswith("no fio errors")


def _verdict_of(fixture: str) -> str:
    run = parse_fio_output((FIO / fixture).read_text())
    report = build_fio_report({"fast": [run]}, profile="from-file")
    return class_verdict("fast", report.results[0].jobs)


def test_failed_job_is_named_and_never_the_peak() -> None:
    # Real fio-3.33: a 16M write on a 4m tmpfs ends with error 28 (ENOSPC) after reporting
    # 514,000 write IOPS; the old line called that "peak write 514,000 IOPS, 2,000.0 MiB/s".
    line = _verdict_of("fio-3.33-enospc-tmpfs.json")
    assert "514,000" not in line
    assert "peak" not in line.replace("no peak", "")
    assert line == (
        "fast: no peak (every job failed); job write_too_big failed (error 28, ENOSPC), "
        "its numbers left out"
    )


def test_failed_job_beside_one_that_ran() -> None:
    # Real fio-3.33: write_to_dev_full fails (ENOSPC), the stonewalled read_ok job runs.
    line = _verdict_of("fio-3.33-dev-full-error-stderr-merged.txt")
    assert line == (
        "fast: peak read 128,000 IOPS, 500.0 MiB/s (read_ok); best read clat p99 138µs "
        "(read_ok); job write_to_dev_full failed (error 28, ENOSPC), its numbers left out"
    )


def test_peaks_of_two_jobs_are_never_one_pair() -> None:
    # Real fio-3.33, the default profile on ext4: the 4k read_iops job has the read IOPS peak
    # (73,334), the 128k read_bw job the bandwidth peak (1,067.2 MiB/s at 8,517 IOPS); the
    # old line printed "peak read 73,334 IOPS, 1,067.2 MiB/s" as if one job did both.
    line = _verdict_of("fio-3.33-default-profile-ext4-direct-json+.json")
    assert "peak read 73,334 IOPS (read_iops), 1,067.2 MiB/s (read_bw)" in line
    assert "peak write 41,199 IOPS (write_iops), 1,949.1 MiB/s (write_bw)" in line
    assert "best read clat p99 94µs (read_lat)" in line
    assert "best write clat p99 121µs (write_lat)" in line


def _table_cells(text: str, header_line: int = 1) -> dict[str, list[str]]:
    """The table's columns by header, from the rendered text (columns split on 2+ spaces)."""
    lines = text.splitlines()
    headers = re.split(r"\s{2,}", lines[header_line].strip())
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[header_line + 1 :]]
    rows = [row for row in rows if len(row) == len(headers)]
    return {header: [row[i] for row in rows] for i, header in enumerate(headers)}


def test_latency_columns_say_completion_latency_and_hold_fio_clat() -> None:
    # Real fio-3.33 output of the quick profile: read_iops has clat mean 671.2 µs and total
    # latency (lat = slat + clat) mean 683.7 µs. The column is named for clat and holds clat.
    run = parse_fio_output((FIO / "fio-3.33-quick-profile-ext4.json").read_text())
    raw_read = run.job("read_iops").raw["read"]
    assert raw_read["clat_ns"]["mean"] / 1000 == pytest.approx(671.17, abs=0.01)
    assert raw_read["lat_ns"]["mean"] / 1000 == pytest.approx(683.68, abs=0.01)
    out = io.StringIO()
    write_fio_table(build_fio_report({"fast": [run]}, profile="quick"), out, True)
    columns = _table_cells(out.getvalue())
    assert "READ LAT MEAN" not in columns
    assert columns["READ CLAT MEAN"][0] == "671µs"  # clat, not lat's 684µs
    assert columns["READ CLAT P99"][0] == "10.42ms"  # fio's clat_ns percentile 99.000000
    assert columns["WRITE CLAT P99.9"][1] == "119.01ms"
    assert set(columns) >= {"READ CLAT P50", "READ CLAT P95", "WRITE CLAT MEAN"}


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
    assert "read clat p99.9" in text.lower()
    golden("fio-wide-baseline.txt", text)


def _table_of(fixture: str, wide: bool = False) -> str:
    run = parse_fio_output((FIO / fixture).read_text())
    out = io.StringIO()
    write_fio_table(build_fio_report({"fast": [run]}, profile="from-file"), out, wide)
    return out.getvalue()


def test_mixed_numbers_get_their_own_columns() -> None:
    # Real fio-3.33, unified_rw_reporting=1 on a 70/30 randrw: fio reports only "mixed"
    # (197,450 IOPS, bw 789,799 KiB/s, clat p99 46,336 ns, mean 37,382 ns). Before, every
    # cell of the row was a dash.
    text = _table_of("fio-3.33-unified-rw-mixed.json")
    columns = _table_cells(text)
    assert columns["JOB"] == ["randrw_mixed"]
    assert columns["READ IOPS"] == ["-"]
    assert columns["WRITE IOPS"] == ["-"]
    assert columns["MIXED IOPS"] == ["197,450"]
    assert columns["MIXED MIB/S"] == ["771.3"]
    assert columns["MIXED CLAT MEAN"] == ["37µs"]
    assert columns["MIXED CLAT P99"] == ["46µs"]
    assert "peak mixed 197,450 IOPS" in text


def test_unified_both_shows_reads_writes_and_their_sum() -> None:
    # Real fio-3.33, unified_rw_reporting=both: read 11,376, write 4,868 and mixed 16,244 IOPS.
    columns = _table_cells(_table_of("fio-3.33-unified-both-buffered-ext4-json+.json", wide=True))
    assert columns["READ IOPS"] == ["11,376"]
    assert columns["WRITE IOPS"] == ["4,868"]
    assert columns["MIXED IOPS"] == ["16,244"]
    assert columns["MIXED CLAT P99.9"] != ["-"]


def test_no_mixed_columns_without_mixed_numbers() -> None:
    # The quick profile's real run reports read and write only: the table stays as it was.
    text = _table_of("fio-3.33-quick-profile-ext4.json")
    assert "MIXED" not in text
    columns = _table_cells(text)
    assert columns["READ IOPS"][0] == "23,363"
    assert columns["WRITE IOPS"][1] == "11,943"
