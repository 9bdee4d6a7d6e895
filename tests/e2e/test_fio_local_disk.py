"""`kubectl storage fio --compare-local` on the real cluster: the node's own disk as a yardstick.

The test driver's memory medium (class parameter tk8s.io/medium: Memory) keeps a volume on a
tmpfs, as a RAM-disk-backed or write-back-cached class would: it must be flagged against the
emptyDir on the node's disk. local-path keeps its volumes on the same file system as the
kubelet's emptyDirs: the same jobs must stay within the factor.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

from kubectl_storage.core.fio.local_disk import LOCAL_DISK_FACTOR
from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr

QUICK = ("--profile", "quick", "-z", "1Gi", "--compare-local")


def _managed(cluster, namespace: str) -> list[str]:
    items = cluster.get_json(
        "pods,pvc,configmaps", "-n", namespace, "-l", "app.kubernetes.io/managed-by=kubectl-storage"
    )["items"]
    return [f"{i['kind']}/{i['metadata']['name']}" for i in items]


@pytest.fixture
def memory_class(cluster, namespace):
    """A class of the test driver whose volumes live on a tmpfs."""
    name = f"{namespace}-memory"[:63]
    cluster.apply(
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\n"
        f"metadata: {{name: {name}}}\nprovisioner: hostpath.csi.k8s.io\n"
        "volumeBindingMode: Immediate\nreclaimPolicy: Delete\n"
        "parameters: {tk8s.io/medium: Memory}\n"
    )
    yield name
    cluster.kubectl_run("delete", "storageclass", name, "--ignore-not-found")


def _ratios(result: dict) -> dict[tuple[str, str], float]:
    """(job, direction) -> the volume's IOPS over the node disk's, from the report's numbers."""
    disk = {job["name"]: job for job in result["local_disk"]["jobs"]}
    out = {}
    for job in result["jobs"]:
        for side in ("read", "write"):
            mine, theirs = job[f"{side}_iops"], disk[job["name"]][f"{side}_iops"]
            if mine and theirs:
                out[(job["name"], side)] = mine / theirs
    return out


def test_a_memory_backed_class_is_flagged(cluster, namespace, memory_class) -> None:
    result = run_cli("fio", "-s", memory_class, *QUICK, "-n", namespace, "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    (entry,) = report["results"]
    assert entry["setup"]["volume"]["fs_type"] == "tmpfs"  # the volume really is memory
    local = entry["local_disk"]
    assert local["skipped"] is None
    assert local["fs_type"] == "ext4"  # the kubelet's emptyDir, on this host's disk
    assert local["node"] == entry["setup"]["nodes"][0]["name"]
    ratios = _ratios(entry)
    assert set(ratios) == {("read_iops", "read"), ("write_iops", "write")}
    flagged = {n["job"] for n in entry["notes"] if n["id"] == "fio.faster-than-local-disk"}
    assert flagged == {job for (job, _), ratio in ratios.items() if ratio >= LOCAL_DISK_FACTOR}
    assert flagged, f"a tmpfs should beat the disk by {LOCAL_DISK_FACTOR}: {ratios}"
    assert "times the node's disk" in entry["confidence"]
    assert "the same jobs on the node's own disk" in result.stderr  # progress said it
    assert _managed(cluster, namespace) == []


def test_local_path_on_the_nodes_own_disk_stays_quiet(cluster, namespace) -> None:
    result = run_cli("fio", "-s", "local-path", *QUICK, "-n", namespace, "-o", "json")
    assert result.exit_code == 0, result.stderr
    (entry,) = json.loads(result.stdout)["results"]
    assert entry["setup"]["volume"]["fs_type"] == entry["local_disk"]["fs_type"] == "ext4"
    ratios = _ratios(entry)
    assert ratios
    assert max(ratios.values()) < LOCAL_DISK_FACTOR, ratios
    ids = [n["id"] for n in entry["notes"]]
    assert "fio.faster-than-local-disk" not in ids
    assert ids.count("fio.local-disk") == 1
    assert "the node's disk" not in entry["confidence"]
    assert _managed(cluster, namespace) == []


def test_the_table_shows_the_disk_beside_the_volume(cluster, namespace) -> None:
    table = run_cli("fio", "-s", "csi-hostpath-sc", *QUICK, "-n", namespace)
    assert table.exit_code == 0, table.stderr
    assert "The same jobs on the node's own disk of tk8s-node" in table.stdout
    assert "fio.local-disk" in table.stdout
    assert _managed(cluster, namespace) == []


def test_sigint_during_the_run_on_the_disk_leaves_nothing(cluster, namespace) -> None:
    proc = start_cli(
        "fio", "-s", "csi-hostpath-sc", *QUICK, "--runtime", "20", "-n", namespace, "-v"
    )
    wait_for_stderr(proc, "the same jobs on the node's own disk", timeout=240)
    time.sleep(2)  # inside fio's exec on the emptyDir
    assert _managed(cluster, namespace), "the run should have its objects now"
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 180)
    assert proc.returncode == 130, err
    assert "deleted what run" in err
    assert _managed(cluster, namespace) == []
