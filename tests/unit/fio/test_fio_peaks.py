"""The summary's peaks: each with its job, over the jobs fio reported no error for."""

from __future__ import annotations

from pathlib import Path

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.peaks import ClassPeaks, JobValue, class_peaks
from kubectl_storage.core.fio.stats import build_fio_report

FIO = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def _peaks(*fixtures: str) -> ClassPeaks:
    runs = [parse_fio_output((FIO / name).read_text()) for name in fixtures]
    return class_peaks(build_fio_report({"c": runs}, profile="from-file").results[0].jobs)


def test_each_peak_keeps_its_job() -> None:
    # Real fio-3.33, the default profile on ext4 (fio's own numbers, read off the capture).
    peaks = _peaks("fio-3.33-default-profile-ext4-direct-json+.json")
    read, write = peaks.directions
    assert read.direction == "read"
    assert read.iops == JobValue(73334.221926, "read_iops")
    assert read.bw_kib_s is not None
    assert read.bw_kib_s.job == "read_bw"
    assert read.best_clat_p99_us == JobValue(93.696, "read_lat")
    assert write.iops.job == "write_iops"
    assert peaks.failed == ()


def test_jobs_with_an_error_feed_no_peak() -> None:
    peaks = _peaks("fio-3.33-enospc-tmpfs.json")
    assert peaks.directions == ()
    assert [(job.name, job.error, job.summary) for job in peaks.failed] == [
        ("write_too_big", 28, "error 28, ENOSPC")
    ]


def test_mixed_is_a_direction_of_its_own() -> None:
    peaks = _peaks("fio-3.33-unified-rw-mixed.json")
    assert [d.direction for d in peaks.directions] == ["mixed"]
    assert peaks.directions[0].iops.job == "randrw_mixed"
