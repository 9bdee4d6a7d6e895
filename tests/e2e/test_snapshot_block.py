"""`snapshot check --volume-mode Block` on the real cluster: the test driver serves raw block
volumes (a loop device over a sparse file per volume, tests/cluster/csi/tk8s-hostpath), and the
check writes, changes and compares byte ranges of the device. The broken case corrupts the
restored device's backing file for real while the run is paused before the reader reads."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
import yaml

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import SNAPSHOT_OBJECTS, managed
from tests.e2e.test_block import _wait_until_no_orphan_loops
from tests.e2e.test_snapshot import CLASS, _ok

pytestmark = pytest.mark.cluster

BLOCK = ("--volume-mode", "Block", "-z", "64Mi")
STATE = Path("/var/lib/csi-hostpath-data")


def test_a_block_volume_restores_its_ranges(cluster, namespace) -> None:
    plan = list(yaml.safe_load_all(_ok(run_cli(
        "snapshot", "check", "-s", CLASS, *BLOCK, "--dry-run", "-n", namespace,
    ))))  # fmt: skip
    claims = [d for d in plan if d and d["kind"] == "PersistentVolumeClaim"]
    assert [c["spec"]["volumeMode"] for c in claims] == ["Block", "Block"]
    pods = [d for d in plan if d and d["kind"] == "Pod"]
    assert all(p["spec"]["containers"][0]["volumeDevices"] for p in pods)

    report = json.loads(_ok(run_cli(
        "snapshot", "check", "-s", CLASS, *BLOCK, "-n", namespace, "-o", "json",
    )))  # fmt: skip
    assert (report["verdict"], report["volumeMode"]) == ("pass", "Block")
    statuses = {f["path"]: f["status"] for f in report["files"]}
    assert statuses == dict.fromkeys(
        ["range@0", "range@16MiB", "range@1MiB", "range@40MiB", "range@8MiB+12345"], "ok"
    )
    changed = {f["path"] for f in report["files"] if f["changedAfterSnapshot"]}
    assert changed == {"range@0", "range@1MiB", "range@40MiB"}
    assert report["problems"] == []
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_corrupted_block_restore_fails_with_the_range(cluster, namespace) -> None:
    proc = start_cli("snapshot", "check", "-s", CLASS, *BLOCK, "-n", namespace, "-o", "json")
    wait_for_stderr(proc, "waiting for the restored volume", timeout=240)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        restore = next(
            p for p in cluster.get_json("pvc", "-n", namespace)["items"]
            if p["metadata"]["name"].endswith("-restore")
        )  # fmt: skip
        name = restore["metadata"]["name"]
        cluster.wait(namespace, f"pvc/{name}", "jsonpath={.status.phase}=Bound", timeout=120)
        volume = cluster.get_json("pvc", name, "-n", namespace)["spec"]["volumeName"]
        handle = cluster.get_json("pv", volume)["spec"]["csi"]["volumeHandle"]
        image = STATE / "volumes" / f"{handle}.img"
        assert image.exists(), image
        with image.open("r+b") as device:  # 16 bytes inside range@16MiB
            device.seek(16 * 1024 * 1024 + 100)
            device.write(b"corrupted-by-e2e")
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    stdout, stderr = finish_cli(proc, 300)
    assert proc.returncode == 1, stderr
    report = json.loads(stdout)
    statuses = {f["path"]: f["status"] for f in report["files"]}
    assert statuses.pop("range@16MiB") == "differs"
    assert set(statuses.values()) == {"ok"}
    assert report["problems"] == ["range@16MiB differs from the snapshot-time content"]
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_under_load_needs_a_filesystem(cluster, namespace) -> None:
    result = run_cli("snapshot", "check", "-s", CLASS, *BLOCK, "--under-load", "-n", namespace)
    assert result.exit_code == 2
    assert "--under-load writes a log file and needs --volume-mode Filesystem" in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


@pytest.mark.parametrize(
    "when",
    [
        "writing known ranges",
        "waiting for the snapshot",
        "changing the source",
        "waiting for the restored volume",
        "comparing checksums",
    ],
)
def test_sigint_leaves_no_object_and_no_loop_device(cluster, namespace, when: str) -> None:
    proc = start_cli("snapshot", "check", "-s", CLASS, *BLOCK, "-n", namespace, "-v")
    wait_for_stderr(proc, when, timeout=240)
    proc.send_signal(signal.SIGINT)
    _, stderr = finish_cli(proc, 240)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []
    assert cluster.get_json("volumesnapshots", "-n", namespace)["items"] == []
    # The kubelet tears the reader's device down after its pod object is gone: wait for that.
    _wait_until_no_orphan_loops()
