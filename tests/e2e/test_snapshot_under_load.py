"""`snapshot check --under-load` on the real cluster: the snapshot is cut while the log writer
appends fsynced records alternately to two files in two directories; the restore must hold one
instant across them (judge_cut), with every record acknowledged before the request and none from
after readyToUse. csi-hostpath-sc cuts atomically (btrfs) and passes as crash-consistent; a class
with `tk8s.io/snapshot-mode: copy` copies file by file with a second's pause after each
(tests/cluster/README.md) and must fail as not point-in-time. The torn case breaks the restored
volume for real: the run is paused
(SIGSTOP) once the restored claim and its reader exist, the restored log is cut short in the driver's own
directory on this machine, and the run continues to read it."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from tests.conftest import finish_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import HOSTPATH_CLASS, SNAPSHOT_OBJECTS, managed

CLASS = HOSTPATH_CLASS
LOG_FILE = ".kubectl-storage-log/a/records.log"  # the writer's first file


def _finish(proc) -> tuple[int, dict, str]:
    stdout, stderr = finish_cli(proc, 300)
    return proc.returncode, json.loads(stdout) if stdout.strip() else {}, stderr


def test_under_load_passes_and_reports_the_log(cluster, namespace) -> None:
    proc = start_cli(
        "snapshot", "check", "-s", CLASS, "--under-load", "-n", namespace, "-o", "json"
    )
    code, report, stderr = _finish(proc)

    assert code == 0, stderr
    under_load = report["underLoad"]
    print("atomic:", {k: v for k, v in under_load.items() if k != "files"})
    assert (under_load["verdict"], under_load["reasons"]) == ("pass", [])
    assert under_load["crashConsistent"] is True
    assert under_load["pointInTime"] is True
    assert under_load["recordsAcknowledged"] >= 10
    # The count read before the request: at least the ten the writer waits for.
    assert under_load["acknowledgedAtRequest"] >= 10
    assert under_load["acknowledgedAtReady"] >= under_load["acknowledgedAtRequest"]
    assert under_load["requiredRecords"] >= under_load["acknowledgedAtRequest"]
    assert under_load["cleanPrefix"] >= under_load["requiredRecords"]
    # The upper bound means something: records were written after readyToUse, none restored.
    assert under_load["writtenAfterReady"] >= 3
    assert under_load["cleanPrefix"] <= under_load["acknowledgedAtReady"] + 1
    first, second = (f["cleanPrefix"] for f in under_load["files"])
    assert first - 1 <= second <= first
    assert under_load["problems"] == []
    assert report["verdict"] == "pass"
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_file_by_file_copy_is_not_point_in_time(cluster, namespace, make_storage_class) -> None:
    copy_class = make_storage_class("copy", parameters={"tk8s.io/snapshot-mode": "copy"})
    proc = start_cli(
        "snapshot", "check", "-s", copy_class, "--under-load", "-n", namespace, "-o", "json"
    )
    code, report, stderr = _finish(proc)

    assert code == 1, stderr
    under_load = report["underLoad"]
    print("copy:", {k: v for k, v in under_load.items() if k != "files"})
    assert under_load["verdict"] == "fail"
    assert under_load["crashConsistent"] is False
    assert under_load["pointInTime"] is False
    # a/records.log copied first, b/records.log a second later: b holds more than a.
    first, second = (f["cleanPrefix"] for f in under_load["files"])
    assert second > first
    assert any(p.startswith("not point-in-time") for p in under_load["problems"])
    assert report["verdict"] == "fail"
    assert "under-load" in report["reasons"]
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_restored_log_cut_short_is_a_torn_record_and_a_failure(cluster, namespace) -> None:
    proc = start_cli(
        "snapshot", "check", "-s", CLASS, "--under-load", "-n", namespace, "-o", "json"
    )
    # Printed once the restored PVC and its reader pod exist, before the reader reads.
    wait_for_stderr(proc, "waiting for the restored volume", timeout=240)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        restore_pvc = next(
            p for p in cluster.get_json("pvc", "-n", namespace)["items"]
            if p["metadata"]["name"].endswith("-restore")
        )  # fmt: skip
        name = restore_pvc["metadata"]["name"]
        cluster.wait(namespace, f"pvc/{name}", "jsonpath={.status.phase}=Bound", timeout=120)
        volume = cluster.get_json("pvc", name, "-n", namespace)["spec"]["volumeName"]
        handle = cluster.get_json("pv", volume)["spec"]["csi"]["volumeHandle"]
        log = Path("/var/lib/csi-hostpath-data/volumes") / handle / LOG_FILE
        deadline = time.monotonic() + 60
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        # Two records and most of the third: well short of what was acknowledged.
        os.truncate(log, 2 * 4096 + 1000)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    code, report, stderr = _finish(proc)

    assert code == 1, stderr
    under_load = report["underLoad"]
    assert under_load["files"][0]["cleanPrefix"] == 2
    assert under_load["files"][0]["tornRecord"] == {
        "offset": 8192,
        "length": 1000,
        "seq": 3,
        "reason": "short write",
        "inFlight": True,
    }
    assert any(p.startswith("lost acknowledged record") for p in under_load["problems"])
    assert under_load["crashConsistent"] is False
    assert report["verdict"] == "fail"
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_sigint_while_the_writer_runs_leaves_nothing(cluster, namespace) -> None:
    proc = start_cli("snapshot", "check", "-s", CLASS, "--under-load", "-n", namespace)
    wait_for_stderr(proc, "starting the log writer", timeout=240)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, stderr = finish_cli(proc, 180)

    assert proc.returncode == 130, stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []
