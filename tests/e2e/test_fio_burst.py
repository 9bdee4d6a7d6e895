"""The burst guard on the real cluster (issue 23 item 3): a class of the test driver with a credit
bucket (``tk8s.io/burst``, tests/cluster/csi/tk8s-hostpath/burst.go) is flagged with its plateau
and drop, and the plain class under the same job stays quiet.

Both runs use the job file the unit tests' capture came from
(tests/fixtures/fio/timeline/burst-class.fio: one 4k randread job, 25 s after a 1 s ramp), so
the bucket (10 busy seconds) runs dry part-way through and fio logs both sides of the drop.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed

JOB = Path(__file__).resolve().parents[1] / "fixtures" / "fio" / "timeline" / "burst-class.fio"
PACED_IOPS = 200
BUCKET = {"tk8s.io/burst": f"iops={PACED_IOPS},credits-seconds=10"}


def _run(cluster, namespace: str, storage_class: str, *extra: str) -> dict:
    result = run_cli(
        "fio", "-s", storage_class, "-f", str(JOB), "-n", namespace, "-o", "json", *extra
    )
    assert result.exit_code == 0, result.stderr  # a suspect class is a warning: exit 0
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    return json.loads(result.stdout)


def test_a_class_that_spends_its_burst_credits_is_flagged_and_drawn(
    cluster, namespace, make_storage_class, tmp_path
) -> None:
    bursting = make_storage_class("burst", parameters=BUCKET)
    chart = tmp_path / "burst.svg"
    report = _run(cluster, namespace, bursting, "--chart", str(chart))

    assert report["verdict"] == "warn"
    assert report["reasons"] == ["fio.burst"]
    (entry,) = report["results"]
    assert entry["confidence"].startswith("suspect: randread: read burst for "), entry
    (note,) = [n for n in entry["notes"] if n["id"] == "fio.burst"]
    assert note["job"] == "randread"
    assert f"then {PACED_IOPS} IOPS" in note["message"]
    (timeline,) = entry["timeline"]
    burst = timeline["burst"]
    assert burst["after_iops"] == PACED_IOPS  # the bucket's pace, measured by fio
    assert burst["plateau_iops"] > 20 * PACED_IOPS
    assert 5 <= burst["drop_s"] <= 12  # 10 credit-seconds, some spent laying out the file
    assert "read burst" in chart.read_text()  # the timeline panel names the burst


def test_the_plain_class_under_the_same_job_raises_no_burst(cluster, namespace) -> None:
    report = _run(cluster, namespace, HOSTPATH_CLASS)

    (entry,) = report["results"]
    assert "fio.burst" not in {n["id"] for n in entry["notes"]}, entry["notes"]
    assert "burst" not in entry["confidence"]
    (timeline,) = entry["timeline"]  # the guard ran: the series is there, without a burst
    assert timeline["burst"] is None
    assert len(timeline["iops"]) >= 20
