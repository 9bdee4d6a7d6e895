"""`snapshot check --restore-node` on the real 3-node cluster: the restore is read on another node
than the source, as the report says and the kept pods show; a cluster with no other node for the
reader is refused before the restore. The shared class restores anywhere."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.e2e.test_snapshot import CLASS, _managed, _ok

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
    assert _managed(cluster, namespace) == []


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
    assert _managed(cluster, namespace) == []


def test_the_source_node_as_restore_node_is_a_usage_error(cluster, namespace) -> None:
    result = run_cli(
        "snapshot", "check", "-s", CLASS, "--node", "tk8s-node", "--restore-node", "tk8s-node",
        "-n", namespace,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--restore-node tk8s-node is the node the source runs on" in result.stderr
    assert _managed(cluster, namespace) == []
