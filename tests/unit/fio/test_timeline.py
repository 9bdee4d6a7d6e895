"""The per-second IOPS logs matched to fio's jobs, and the burst guard on them
(kubectl_storage/core/fio/timeline.py).

Real captures: tests/fixtures/fio/timeline (benchmark pods on the test cluster, SOURCES.md
there) and tests/fixtures/fio/burst (fio-3.33 on a loop device under a blkio throttle).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.notes import NOTE_BURST, NOTE_NOT_CHECKED, SUSPECT_NOTES, confidence
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.fio.timeline import JobTimeline, burst_notes, job_timelines
from kubectl_storage.operations.fio.pod_commands import split_logs

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
TIMELINE = FIXTURES / "timeline"
BURST = FIXTURES / "burst"


def _capture(directory: Path, stem: str) -> tuple[FioResult, dict[str, str]]:
    """A capture's fio output and its IOPS logs, named as fio names them in the pod."""
    result = parse_fio_output((directory / f"{stem}.json").read_text())
    logs = {}
    for path in directory.glob(f"{stem}*_iops.*.log"):
        number = path.name.rsplit(".", 2)[-2]
        logs[f"log_iops.{number}.log"] = path.read_text()
    assert logs, f"no logs for {stem}"
    return result, logs


def test_the_burst_class_of_the_test_driver_is_found_with_its_plateau_and_drop() -> None:
    result, logs = _capture(TIMELINE, "burst-class")
    timelines, unmatched = job_timelines(logs, result)
    assert unmatched is None
    (timeline,) = timelines
    assert (timeline.job, timeline.direction) == ("randread", "read")
    burst = timeline.burst
    assert burst is not None
    assert 30_000 < burst.plateau < 50_000
    assert burst.level_after == 200  # the class's iops=200
    assert burst.drop_s == 8  # the window ending at 9 s was the first at 200
    notes = burst_notes(timelines, unmatched, result.jobs)
    assert [(n.id, n.job) for n in notes] == [(NOTE_BURST, "randread")]
    assert "read burst: " in notes[0].message
    assert "then 200 IOPS" in notes[0].message
    assert confidence(notes).startswith("suspect: randread: read burst for 8 s")


@pytest.mark.parametrize("stem", ["steady-randread", "noisy-randread", "six-columns-randread"])
def test_steady_and_noisy_runs_raise_no_burst(stem: str) -> None:
    result, logs = _capture(BURST, stem)
    timelines, unmatched = job_timelines(logs, result)
    assert unmatched is None
    assert timelines
    assert all(t.burst is None for t in timelines)
    assert burst_notes(timelines, unmatched, result.jobs) == []


@pytest.mark.parametrize("stem", ["burst-randread", "burst-20k-randread"])
def test_the_throttled_loop_device_runs_raise_a_burst(stem: str) -> None:
    result, logs = _capture(BURST, stem)
    timelines, unmatched = job_timelines(logs, result)
    notes = burst_notes(timelines, unmatched, result.jobs)
    assert [n.id for n in notes] == [NOTE_BURST]


def test_clones_reported_once_are_added_up_from_their_own_logs() -> None:
    # group_reporting: fio lists randwrite once but wrote a log per clone (files 2 and 3)
    result, logs = _capture(TIMELINE, "grouped")
    assert [job.name for job in result.jobs] == ["randread", "randwrite"]
    assert len(logs) == 3
    timelines, unmatched = job_timelines(logs, result)
    assert unmatched is None
    by_job = {t.job: t for t in timelines}
    assert set(by_job) == {"randread", "randwrite"}
    assert by_job["randwrite"].direction == "write"
    first_second = {number: int(logs[f"log_iops.{number}.log"].split(",")[1]) for number in (2, 3)}
    assert by_job["randwrite"].iops[0] == (1, first_second[2] + first_second[3])


def test_logs_that_do_not_match_the_jobs_say_not_checked_and_never_guess() -> None:
    result, logs = _capture(TIMELINE, "grouped")
    del logs["log_iops.2.log"]  # a log missing in the middle: the numbers have a gap
    timelines, unmatched = job_timelines(logs, result)
    assert timelines == ()
    assert unmatched is not None
    assert "2 per-second" in unmatched
    notes = burst_notes(timelines, unmatched, result.jobs)
    assert [n.id for n in notes] == [NOTE_NOT_CHECKED]
    assert confidence(notes) == "not checked: burst (no per-second log)"
    assert NOTE_NOT_CHECKED not in SUSPECT_NOTES


def test_a_job_that_failed_is_not_judged_for_a_burst() -> None:
    result, logs = _capture(TIMELINE, "burst-class")
    raw = json.loads((TIMELINE / "burst-class.json").read_text())
    raw["jobs"][0]["error"] = 28  # ENOSPC part-way: its fall is the error, not credits
    failed = parse_fio_output(json.dumps(raw))
    timelines, _ = job_timelines(logs, failed)
    assert timelines[0].burst is None
    assert job_timelines(logs, result)[0][0].burst is not None


def test_the_report_carries_the_timeline_and_reads_it_back() -> None:
    result, logs = _capture(TIMELINE, "burst-class")
    report = build_fio_report({"burst": [result]}, profile="custom", logs={"burst": logs})
    (klass,) = report.results
    assert klass.confidence.startswith("suspect: randread: read burst")
    saved = report.to_dict()["results"][0]["timeline"]
    assert saved[0]["burst"]["after_iops"] == 200
    again = type(report).from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.results[0].timeline == klass.timeline
    # without logs (an offline fio JSON, --clients) the guard does not run and says nothing
    offline = build_fio_report({"burst": [result]}, profile="custom")
    assert offline.results[0].timeline == ()
    assert offline.results[0].confidence == "trusted"


def test_a_saved_timeline_is_judged_again_from_its_series() -> None:
    saved = {"job": "j", "direction": "write", "iops": [[s, 900.0] for s in range(1, 20)]}
    assert JobTimeline.from_dict(saved).burst is None
    saved["iops"] = [[s, 900.0 if s < 10 else 90.0] for s in range(1, 20)]
    burst = JobTimeline.from_dict(saved).burst
    assert burst is not None
    assert burst.direction == 1


def test_the_collected_output_gives_back_the_logs_and_leaves_fios_output() -> None:
    stdout = (
        "@@kubectl-storage log log_iops.1.log\n1000, 5, 0, 0, 0\n"
        "@@kubectl-storage log log_iops.2.log\n1000, 7, 1, 0, 0\n"
        '@@kubectl-storage logs end\n{"fio version": "fio-3.33"}\n'
    )
    logs, rest = split_logs(stdout)
    assert logs == {"log_iops.1.log": "1000, 5, 0, 0, 0\n", "log_iops.2.log": "1000, 7, 1, 0, 0\n"}
    assert rest == '{"fio version": "fio-3.33"}\n'
    assert split_logs("@@kubectl-storage logs end\n{}\n") == ({}, "{}\n")
    assert split_logs("{}\n") == (None, "{}\n")  # a pod without the section: no guard
