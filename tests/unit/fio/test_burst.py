"""Burst-credit detection on fio's per-second logs, checked against real fio-3.33 logs.

The logs (tests/fixtures/fio/SOURCES.md, "issue 23 item 3"): 36 s of 4k randread on a loop
device, with a blkio throttle written into the job's cgroup part way (``burst``: 300 IOPS
11.05 s after fio started; ``burst-20k``: 20,000 IOPS after 15.00 s), unthrottled
(``steady``), throttled from the start (``throttled``), and unthrottled against a second fio
on the same device (``noisy``), on a machine a CI run shared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.fio.burst import (
    LogName,
    LogPoint,
    check_burst,
    detect_burst,
    parse_fio_log,
    parse_log_name,
    per_second,
    sum_series,
)

BURST = Path(__file__).resolve().parents[2] / "fixtures" / "fio" / "burst"
QUIET = ["steady-randread", "throttled-randread", "noisy-randread"]


def points(name: str) -> list[LogPoint]:
    return parse_fio_log((BURST / name).read_text(encoding="utf-8"))


def test_throttle_after_11_s_is_a_burst_then_300_iops() -> None:
    burst = detect_burst(points("burst-randread_iops.1.log"))

    assert burst is not None
    assert burst.direction == 0
    assert burst.unit == "IOPS"
    assert abs(burst.drop_s - 11) <= 2  # io.max written 11.05 s after fio started
    assert burst.plateau_s == burst.drop_s
    assert 300 * 0.8 <= burst.level_after <= 300 * 1.2
    # The unthrottled seconds 3-10 of the log: 132,012-207,260 IOPS.
    assert 132_012 <= burst.plateau <= 207_260
    assert burst.ratio == pytest.approx(burst.level_after / burst.plateau)
    assert burst.after_s == 36 - burst.drop_s
    assert burst.summary == (
        "read burst: 155k IOPS for 10 s, then 300 IOPS (0.19% of it) for the next 26 s"
    )


def test_bandwidth_log_of_the_same_run_gives_bytes_per_second() -> None:
    burst = detect_burst(points("burst-randread_bw.1.log"), kind="bw")

    assert burst is not None
    assert burst.unit == "bytes/s"
    assert abs(burst.drop_s - 11) <= 2
    # 300 IOPS of 4 KiB each; fio logs KiB/s (1200-1201 here).
    assert 300 * 4096 * 0.8 <= burst.level_after <= 300 * 4096 * 1.2
    assert burst.summary.startswith("read burst: ")
    assert "Mi/s for 10 s, then 1.2Mi/s" in burst.summary


def test_milder_drop_to_20k_after_15_s_is_a_burst() -> None:
    burst = detect_burst(points("burst-20k-randread_iops.1.log"))

    assert burst is not None
    assert abs(burst.drop_s - 15) <= 2  # the throttle was written 15.00 s after fio started
    assert 20_000 * 0.8 <= burst.level_after <= 20_000 * 1.2
    assert 0.05 < burst.ratio < 0.15  # about a tenth: the size of a real credit bucket's drop


@pytest.mark.parametrize("run", QUIET)
@pytest.mark.parametrize("kind", ["iops", "bw"])
def test_steady_runs_give_none(run: str, kind: str) -> None:
    log = points(f"{run}_{kind}.1.log")
    assert len(log) >= 35  # 36 s runs: the detector had a whole run to judge

    assert detect_burst(log, kind="iops" if kind == "iops" else "bw") is None
    assert check_burst(per_second(log, 0)).reason.startswith("no drop")


def test_a_single_slow_second_is_jitter() -> None:
    series = per_second(points("steady-randread_iops.1.log"), 0)
    values = [value for _, value in series]
    # The run's slowest second is its last: 104,249 IOPS against a median of 147,031.
    assert values[-1] == min(values) == 104_249

    assert check_burst(series).burst is None


def test_a_drop_only_3_s_old_is_not_sustained() -> None:
    # The real burst log as it stood 14 s into the run: the drop is 3-4 s old.
    early = [p for p in points("burst-randread_iops.1.log") if p.time_ms <= 14_500]
    assert max(p.time_ms for p in early) == 14_006

    check = check_burst(per_second(early, 0))
    assert check.burst is None
    assert check.reason.startswith("not sustained")


def test_a_run_too_short_gives_none_and_says_so() -> None:
    log = points("six-columns-randread_iops.1.log")  # 5 s at 2001 IOPS: four windows

    check = check_burst(per_second(log, 0))
    assert check.burst is None
    assert check.reason.startswith("too short to tell: 2 s of log")
    assert detect_burst(log) is None


def test_six_columns_with_a_hex_priority() -> None:
    # log_offset=1 and log_prio=1: "1000, 2001, 0, 0, 0, 0x0000".
    log = points("six-columns-randread_iops.1.log")

    assert log[0] == LogPoint(time_ms=1000, value=2001.0, direction=0, block_size=0)
    assert [p.time_ms for p in log] == [1000, 2000, 3000, 4000]
    assert {p.value for p in points("six-columns-randread_bw.1.log")} == {8004.0}


def test_blank_lines_and_crlf_are_tolerated() -> None:
    text = (BURST / "burst-randread_iops.1.log").read_text(encoding="utf-8")
    spaced = "\n\n" + text.replace("\n", "\r\n\r\n") + "   \n"

    assert parse_fio_log(spaced) == parse_fio_log(text)
    assert len(parse_fio_log(text)) == 36


@pytest.mark.parametrize(
    "line",
    [
        "1000, 30O, 0, 0, 0",  # a letter O in the value
        "1000, 300, 0, 0, zero",
        "1.5, 300, 0, 0, 0",
        "1000, 300, 0",
        "1000, 300, 0, 0, 0, 0, 0",
        "1000, 300, 3, 0, 0",
        "1000, -300, 0, 0, 0",
        "1000, nan, 0, 0, 0",
        "1000, , 0, 0, 0",
    ],
)
def test_malformed_rows_raise_with_the_line(line: str) -> None:
    text = "1000, 300, 0, 0, 0\n\n" + line + "\n"

    with pytest.raises(ValueError, match=r"^line 3: ") as caught:
        parse_fio_log(text)
    assert repr(line) in str(caught.value)


def test_a_per_io_log_is_refused_for_per_second_values() -> None:
    # What fio-3.33 writes without log_avg_msec: one row per I/O, its block size and offset.
    log = parse_fio_log("0, 1, 0, 4096, 64757760, 0\n0, 1, 0, 4096, 794877952, 0\n")

    with pytest.raises(ValueError, match="log_avg_msec"):
        per_second(log, 0)


def test_log_names_give_kind_and_job() -> None:
    assert parse_log_name("burst-randread_iops.1.log") == LogName("burst-randread", "iops", 1)
    assert parse_log_name("burst-20k-randread_bw.1.log") == LogName("burst-20k-randread", "bw", 1)
    assert parse_log_name("old_clat.log") == LogName("old", "clat", None)
    assert parse_log_name("burst-randread.json") is None
    names = sorted(p.name for p in BURST.glob("*.log"))
    assert len(names) == 12
    assert all(parse_log_name(name) is not None for name in names)


def test_jobs_add_up_second_by_second() -> None:
    one = per_second(points("burst-randread_iops.1.log"), 0)
    both = sum_series(one, one)  # as two numjobs clones of the same run would log

    assert [second for second, _ in both] == [second for second, _ in one]
    assert both[-1][1] == 600.0
    burst, single = check_burst(both).burst, check_burst(one).burst
    assert burst is not None
    assert single is not None
    assert burst.level_after == 600.0
    assert burst.drop_s == single.drop_s
    assert burst.plateau == 2 * single.plateau


def test_other_directions_are_not_mixed_in() -> None:
    log = points("burst-randread_iops.1.log")

    assert detect_burst(log, direction=1) is None
    assert per_second(log, 1) == []
    assert per_second(log, 0)[0] == (1, 233_711.0)
