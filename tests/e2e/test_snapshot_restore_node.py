"""`snapshot check --restore-node` on the real 3-node cluster: the restore is read on another node
than the source, as the report says and the kept pods show; a cluster with no other node for the
reader is refused before the restore. The shared class restores anywhere."""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import run_cli
from tests.e2e.conftest import SNAPSHOT_OBJECTS, managed
from tests.e2e.test_snapshot import CLASS, _ok

pytestmark = pytest.mark.cluster

SMALL = ("-z", "64Mi")


def _kept_pods(cluster, namespace: str) -> dict[str, str]:
    """Role (writer, reader) to the node the kept pod ran on."""
    pods = cluster.get_json(
        "pods", "-n", namespace, "-l", "app.kubernetes.io/managed-by=kubectl-storage"
    )["items"]
    return {p["metadata"]["name"].rsplit("-", 1)[1]: p["spec"]["nodeName"] for p in pods}


def _cleanup(namespace: str, run_id: str) -> None:
    _ok(run_cli("cleanup", "--run-id", run_id, "--yes", "-n", namespace))


def test_other_reads_the_restore_on_a_different_node(cluster, namespace) -> None:
    result = run_cli(
        "snapshot", "check", "-s", CLASS, *SMALL, "--restore-node", "other", "--keep",
        "-n", namespace, "-o", "json",
    )  # fmt: skip
    report = json.loads(_ok(result))
    try:
        placement = report["restorePlacement"]
        assert report["verdict"] == "pass", report["problems"]
        assert placement["requested"] == "other"
        assert placement["nodeLocal"] is False
        assert placement["restoreNode"] != placement["sourceNode"]
        # The report's nodes are where the pods really ran.
        assert _kept_pods(cluster, namespace) == {
            "writer": placement["sourceNode"],
            "reader": placement["restoreNode"],
        }
        assert "on a node other than " + placement["sourceNode"] in result.stderr
    finally:
        _cleanup(namespace, report["runId"])
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_named_restore_node_takes_the_reader_and_not_the_writer(cluster, namespace) -> None:
    result = run_cli(
        "snapshot", "check", "-s", CLASS, *SMALL, "--restore-node", "tk8s-node-3", "--keep",
        "-n", namespace, "-o", "json",
    )  # fmt: skip
    report = json.loads(_ok(result))
    try:
        assert report["verdict"] == "pass", report["problems"]
        pods = _kept_pods(cluster, namespace)
        assert pods["reader"] == "tk8s-node-3"
        assert pods["writer"] != "tk8s-node-3"
        assert report["restorePlacement"]["restoreNode"] == "tk8s-node-3"
        assert report["restorePlacement"]["sourceNode"] == pods["writer"]
    finally:
        _cleanup(namespace, report["runId"])


def test_no_other_node_for_the_reader_is_refused_and_leaves_nothing(cluster, namespace) -> None:
    # Only node 1 carries this label value: the reader has nowhere else to go.
    result = run_cli(
        "snapshot", "check", "-s", CLASS, *SMALL, "--restore-node", "other",
        "--node-selector", "kubectl-storage.test/cluster-node=1", "-n", namespace,
    )  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert "no Ready, schedulable node other than tk8s-node" in result.stderr
    assert "Traceback" not in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_restore_node_that_does_not_exist_is_refused_before_anything(cluster, namespace) -> None:
    started = time.monotonic()
    result = run_cli(
        "snapshot", "check", "-s", CLASS, *SMALL, "--restore-node", "no-such-node",
        "--timeout", "120", "-n", namespace,
    )  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert time.monotonic() - started < 60  # preflight, not a reader pod waiting for it
    assert 'node "no-such-node" does not exist' in result.stderr
    assert cluster.node in result.stderr  # the nodes there are
    assert "Traceback" not in result.stderr
    assert cluster.get_json("events", "-n", namespace)["items"] == []
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_the_source_node_as_restore_node_is_a_usage_error(cluster, namespace) -> None:
    result = run_cli(
        "snapshot", "check", "-s", CLASS, "--node", "tk8s-node", "--restore-node", "tk8s-node",
        "-n", namespace,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--restore-node tk8s-node is the node the source runs on" in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


@pytest.fixture
def node_local_class(make_storage_class):
    """A class of the test driver whose volumes, and the restores of their snapshots, are
    usable on one node only (its tk8s.io/node-local parameter: CSI accessible topology)."""
    return make_storage_class("node-local", parameters={"tk8s.io/node-local": "true"})


def test_a_node_local_snapshot_is_reported_and_fails(cluster, namespace, node_local_class) -> None:
    # On its own node the class restores fine: the check without --restore-node passes.
    alone = run_cli("snapshot", "check", "-s", node_local_class, *SMALL, "-n", namespace)
    assert alone.exit_code == 0, alone.stderr

    result = run_cli(
        "snapshot", "check", "-s", node_local_class, *SMALL, "--restore-node", "other",
        "-n", namespace, "-o", "json",
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    placement = report["restorePlacement"]
    assert placement["nodeLocal"] is True
    assert placement["restoreNode"] is None
    assert f"topology.hostpath.tk8s/node In [{placement['sourceNode']}]" in placement["reason"]
    assert "didn't match PersistentVolume's node affinity" in placement["reason"]
    assert report["problems"] == [
        f"the snapshot cannot be used on another node than {placement['sourceNode']}: "
        + placement["reason"]
    ]
    assert report["files"] == []  # the restore was never read
    assert "restore only on the node that took them" in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


@pytest.fixture
def waiting_node_local_class(make_storage_class):
    """The node-local class, binding its volumes where the first pod is scheduled."""
    return make_storage_class("wffc", "WaitForFirstConsumer", {"tk8s.io/node-local": "true"})


def test_node_with_a_wait_for_first_consumer_class(
    cluster, namespace, waiting_node_local_class
) -> None:
    # --node used to bind the writer by spec.nodeName, which skips the scheduler that binds a
    # WaitForFirstConsumer claim: the source volume stayed Pending until the timeout
    result = run_cli(
        "snapshot", "check", "-s", waiting_node_local_class, *SMALL, "--node", "tk8s-node-3",
        "--keep", "--timeout", "90", "-n", namespace, "-o", "json",
    )  # fmt: skip
    report = json.loads(_ok(result))
    try:
        assert report["verdict"] == "pass", report["problems"]
        assert _kept_pods(cluster, namespace) == {"writer": "tk8s-node-3", "reader": "tk8s-node-3"}
    finally:
        _cleanup(namespace, report["runId"])
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []
