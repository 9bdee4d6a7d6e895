"""validate-persistence moves the database pod between nodes (issue 12), on the multi-node test
cluster (`tests/cluster/up --nodes 3`; the ``multinode`` fixture fails the test on fewer nodes).

* csi-hostpath-sc: one directory tree every node reaches, no topology (like network storage):
  the data follows the pod.
* local-path: a directory on one node, the PV pinned to it (like a local disk): the data cannot
  follow the pod, which is the finding (exit 1).

After every test no node is left cordoned, also after Ctrl-C in the middle of a move. Nodes
joined from elsewhere (the node lab's QEMU guest, tainted kubectl-storage.dev/nodelab) are never
used: the MySQL pod does not tolerate the taint.
"""

from __future__ import annotations

import json
import signal

import pytest

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import HOSTPATH_CLASS, PERSISTENCE_OBJECTS, managed

SHARED = HOSTPATH_CLASS
LOCAL = "local-path"
TIMEOUT = "180"


def _cordoned(cluster) -> list[str]:
    nodes = cluster.get_json("nodes")["items"]
    return sorted(n["metadata"]["name"] for n in nodes if n["spec"].get("unschedulable"))


@pytest.fixture
def no_cordon_left(multinode):
    """The nodes cordoned before the test are exactly those cordoned after it."""
    before = _cordoned(multinode)
    yield multinode
    assert _cordoned(multinode) == before, "a node was left cordoned"


def _persist(cluster, namespace: str, *args: str):
    return run_cli(
        "validate-persistence",
        "--image",
        cluster.mariadb_image,
        "--rows",
        "100",
        "--no-fsync-probe",
        "--timeout",
        TIMEOUT,
        "-n",
        namespace,
        "-o",
        "json",
        "-v",
        *args,
        timeout=900,
    )


def test_the_data_follows_the_pod_on_the_shared_class(no_cordon_left, namespace) -> None:
    cluster = no_cordon_left
    result = _persist(cluster, namespace, "-s", SHARED, "--disruptions", "reschedule,node-drain")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "pass"
    phases = {p["phase"]: p for p in report["phases"]}
    assert list(phases) == ["seed", "reschedule", "node-drain"]
    for name in ("reschedule", "node-drain"):
        phase = phases[name]
        assert phase["verdict"] == "pass", phase
        assert phase["node_before"] in cluster.nodes
        assert phase["node_after"] in cluster.nodes
        assert phase["node_after"] != phase["node_before"]
        assert phase["data_cannot_follow"] is False
        assert 0 < phase["time_to_running_s"] <= phase["time_to_ready_s"]
        assert (phase["rows_expected"], phase["rows_found"]) == (100, 100)
        assert phase["checksum_match"] is True
        assert isinstance(phase["volume_events"], list)
        # csi-hostpath's CSIDriver has attachRequired: false, read by the move.
        assert phase["attach_required"] is False
        assert f"cordoning node {phase['node_before']}" in result.stderr
        assert f"node {phase['node_before']} uncordoned" in result.stderr
    assert "evicting pod" in result.stderr  # node-drain went through the Eviction API
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_the_data_cannot_follow_the_pod_on_a_node_local_class(no_cordon_left, namespace) -> None:
    cluster = no_cordon_left
    result = _persist(cluster, namespace, "-s", LOCAL, "--disruptions", "reschedule,node-drain")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "fail"
    for phase in report["phases"][1:]:
        assert phase["verdict"] == "fail", phase
        assert phase["data_cannot_follow"] is True
        assert phase["note"].startswith("the data cannot follow the pod: PersistentVolume ")
        assert "kubernetes.io/hostname In" in phase["note"]
        assert "node affinity" in phase["note"]  # the scheduler's own words
        # It came back on its own node once that was uncordoned, every row intact.
        assert phase["node_after"] == phase["node_before"]
        assert (phase["rows_expected"], phase["rows_found"]) == (100, 100)
        assert phase["checksum_match"] is True
    assert "the data cannot follow the pod to another node: reschedule, node-drain" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_ctrl_c_during_the_move_uncordons_the_node(no_cordon_left, namespace) -> None:
    cluster = no_cordon_left
    proc = start_cli(
        "validate-persistence",
        "-s",
        SHARED,
        "--image",
        cluster.mariadb_image,
        "--rows",
        "20",
        "--no-fsync-probe",
        "--disruptions",
        "reschedule",
        "--timeout",
        TIMEOUT,
        "-n",
        namespace,
        "-v",
    )
    seen = wait_for_stderr(proc, "reschedule: deleting pod", timeout=300)
    node = seen.split("cordoning node ")[1].split()[0]
    assert node in _cordoned(cluster), "the node should be cordoned during the move"
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 300)
    assert proc.returncode == 130, seen + err
    # Uncordoned by the move's own cleanup, or by the run scope's undo if that was cut short.
    assert f"node {node} uncordoned" in err or f"undoing: uncordon node {node}" in err
    assert "Traceback" not in err
    assert node not in _cordoned(cluster)
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_the_empty_dir_control_shows_loss_in_each_move(no_cordon_left, namespace) -> None:
    cluster = no_cordon_left
    result = _persist(
        cluster,
        namespace,
        "--volume-type",
        "emptyDir",
        "--disruptions",
        "restart,crash,reschedule,node-drain",
    )
    # The control did what it exists to do, lose data in each move: it passes (exit 0).
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["verdict"], report["reasons"]) == ("pass", [])
    phases = {p["phase"]: p for p in report["phases"]}
    # Each disruption that recreates the pod proves, on its own fresh rows, that a pod-local
    # volume loses them.
    for name in ("restart", "reschedule", "node-drain"):
        assert phases[name]["verdict"] == "fail", phases[name]
        assert phases[name]["table_missing"] is True
        assert phases[name]["rows_found"] == 0
    assert phases["reschedule"]["node_after"] != phases["reschedule"]["node_before"]
    assert phases["crash"]["verdict"] == "skipped"
    assert report["control"]["judged"] == ["restart", "reschedule", "node-drain"]
    assert [c["disruption"] for c in report["control"]["cannot_judge"]] == ["crash"]
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []
