"""Every plan is pure: built here from objects recorded on the local test cluster (the gather
stage's results) with no cluster at all, and checked for the decisions it makes from them.

Recorded with kubectl from the three-node test cluster (tests/cluster) on 2026-12-02; see
tests/fixtures/kubernetes/SOURCES.md."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

import pytest

from kubectl_storage.core.k8s.pod_defaults import TOOLBOX_IMAGE
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.iscsi import ISCSI_INSPECTION
from kubectl_storage.operations.node_inspection import plan_inspection
from kubectl_storage.operations.preflight import ClusterFacts
from kubectl_storage.operations.snapshot import SNAPSHOT_CHECK_COMMAND, CheckRequest, PodSettings
from kubectl_storage.operations.snapshot.browse import SNAPSHOT_BROWSE_COMMAND, BrowseRequest
from kubectl_storage.operations.snapshot.common import SnapshotSource
from kubectl_storage.operations.snapshot.restore import RestoreInputs
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


def _recorded_snapshot() -> RestoreInputs:
    """What the restore's gather stage reads for the recorded VolumeSnapshot ``data-snap``: the
    snapshot, its content and the PVC it was taken of (tests/fixtures/kubernetes/SOURCES.md)."""
    by_kind = {item["kind"]: item for item in _items("testcluster-snapshot.json")}
    return RestoreInputs(
        storage_classes=_items("testcluster-storageclasses.json"),
        snapshot=by_kind["VolumeSnapshot"],
        content=by_kind["VolumeSnapshotContent"],
        source_pvc=by_kind["PersistentVolumeClaim"],
    )


def _browse_request() -> BrowseRequest:
    return BrowseRequest(
        source=SnapshotSource(namespace="bench", snapshot="data-snap"),
        pods=PodSettings(image=TOOLBOX_IMAGE),
    )


def test_a_restore_plans_from_the_recorded_snapshot_its_class_and_size() -> None:
    plan = SNAPSHOT_BROWSE_COMMAND.plan(_browse_request(), _facts(), _recorded_snapshot(), "r1")
    restore = plan.restore
    assert restore.restore_class.name == "csi-hostpath-sc"
    assert restore.restore_class.reason == "the class of source PVC data"
    assert (restore.size, restore.size_reason) == ("1Gi", "the snapshot's restoreSize")
    pvc, pod = plan.manifests()  # a recorded snapshot is restored, not taken again
    assert pvc["spec"]["dataSource"]["name"] == "data-snap"
    assert pvc["spec"]["storageClassName"] == "csi-hostpath-sc"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1Gi"
    claims = [
        v["persistentVolumeClaim"] for v in pod["spec"]["volumes"] if "persistentVolumeClaim" in v
    ]
    assert claims == [{"claimName": pvc["metadata"]["name"], "readOnly": True}]


def test_a_restore_whose_source_pvc_is_gone_takes_the_class_of_the_contents_driver() -> None:
    # The recorded snapshot after its PVC was deleted: the gather stage then finds no PVC.
    inputs = replace(_recorded_snapshot(), source_pvc=None)
    plan = SNAPSHOT_BROWSE_COMMAND.plan(_browse_request(), _facts(), inputs, "r1")
    assert plan.restore.restore_class.name == "csi-hostpath-sc"
    assert (
        plan.restore.restore_class.reason == "the only StorageClass of driver hostpath.csi.k8s.io"
    )
