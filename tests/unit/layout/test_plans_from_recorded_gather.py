"""Every plan is pure: built here from objects recorded on the local test cluster (the gather
stage's results) with no cluster at all, and checked for the decisions it makes from them.

Recorded with kubectl from the three-node test cluster (tests/cluster) on 2026-12-02; see
tests/fixtures/kubernetes/SOURCES.md."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kubectl_storage.core.k8s.pod_defaults import TOOLBOX_IMAGE
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.iscsi import ISCSI_INSPECTION
from kubectl_storage.operations.node_inspection import plan_inspection
from kubectl_storage.operations.preflight import ClusterFacts
from kubectl_storage.operations.snapshot import SNAPSHOT_CHECK_COMMAND, CheckRequest, PodSettings
from tests.conftest import FIXTURES

RECORDED = FIXTURES / "kubernetes"


def _items(name: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads((RECORDED / name).read_text())["items"]
    return items


def _facts() -> ClusterFacts:
    classes = {sc["metadata"]["name"]: sc for sc in _items("testcluster-storageclasses.json")}
    return ClusterFacts(
        namespace="bench",
        pod_security="restricted",
        storage_classes=classes,
        default_storage_class="csi-hostpath-sc",
    )


def test_snapshot_check_plans_with_the_class_of_its_driver() -> None:
    request = CheckRequest(pods=PodSettings(image=TOOLBOX_IMAGE))
    plan = SNAPSHOT_CHECK_COMMAND.plan(
        request, _facts(), _items("testcluster-snapshotclasses.json"), "r1"
    )
    assert (plan.storage_class, plan.snapshot_class) == (
        "csi-hostpath-sc",
        "csi-hostpath-snapclass",
    )
    assert plan.provisioner == "hostpath.csi.k8s.io"
    snapshot = next(m for m in plan.manifests() if m["kind"] == "VolumeSnapshot")
    assert snapshot["spec"]["volumeSnapshotClassName"] == "csi-hostpath-snapclass"


def test_snapshot_check_refuses_a_class_whose_driver_has_no_snapshot_class() -> None:
    request = CheckRequest(pods=PodSettings(image=TOOLBOX_IMAGE), storage_class="local-path")
    with pytest.raises(UsageError, match=r"rancher\.io/local-path"):
        SNAPSHOT_CHECK_COMMAND.plan(
            request, _facts(), _items("testcluster-snapshotclasses.json"), "r1"
        )


def test_a_node_command_plans_a_pod_per_ready_node_of_the_recorded_cluster() -> None:
    nodes = _items("testcluster-nodes.json")
    request = ISCSI_INSPECTION.request(namespace="bench", image=TOOLBOX_IMAGE, all_nodes=True)
    plan = plan_inspection(request, _facts(), nodes, "r1")
    names = [n["metadata"]["name"] for n in nodes]
    assert [name for name, _reason in plan.nodes] == names
    assert sorted(plan.pods) == sorted(names)
    assert all(pod["spec"]["nodeName"] in names for pod in plan.manifests())


def test_a_not_ready_node_gets_no_pod_and_says_why() -> None:
    # The recorded nodes, with the last one's Ready condition turned False (derived, not
    # recorded: a real NotReady node is exercised by tests/e2e/test_multinode_nodes.py).
    nodes = copy.deepcopy(_items("testcluster-nodes.json"))
    ready = next(c for c in nodes[-1]["status"]["conditions"] if c["type"] == "Ready")
    ready.update(status="False", reason="KubeletNotReady", message="kubelet stopped posting")
    request = ISCSI_INSPECTION.request(namespace="bench", image=TOOLBOX_IMAGE, all_nodes=True)
    plan = plan_inspection(request, _facts(), nodes, "r1")
    reasons = dict(plan.nodes)
    assert reasons[nodes[-1]["metadata"]["name"]]
    assert nodes[-1]["metadata"]["name"] not in plan.pods
    assert len(plan.pods) == len(nodes) - 1
