"""`snapshot check --restore-node`: the affinities written into the pods, and the verdict drawn
from the pod and PV the cluster returned (captures of the test cluster, see
tests/fixtures/scheduling/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kubectl_storage.core.k8s.manifests import PodIdentity, PodPlacement
from kubectl_storage.core.snapshot.check_report import SnapshotCheckReport
from kubectl_storage.core.snapshot.restore_node import (
    OTHER,
    RestorePlacement,
    node_local_reason,
    reader_affinity,
    volume_topology_refusal,
    writer_affinity,
)
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.snapshot.check_plan import (
    WRITER_NODE,
    CheckRequest,
    check_manifests,
    validate_check,
)
from kubectl_storage.operations.snapshot.common import PodSettings

FIXTURES = Path(__file__).parents[2] / "fixtures" / "scheduling"
PINNED_POD = json.loads((FIXTURES / "pod-volume-pinned-elsewhere.json").read_text())
PINNED_PV = json.loads((FIXTURES / "pv-local-path-pinned.json").read_text())


def _names(affinity: dict) -> tuple[str, list[str]]:
    term = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchFields"][0]
    assert term["key"] == "metadata.name"
    return term["operator"], term["values"]


def test_a_named_restore_node_pins_the_reader_and_keeps_the_writer_away() -> None:
    assert _names(reader_affinity("node-b", "node-a")) == ("In", ["node-b"])
    writer = writer_affinity("node-b")
    assert writer is not None
    assert _names(writer) == ("NotIn", ["node-b"])


def test_other_keeps_the_reader_off_the_source_node_and_leaves_the_writer_free() -> None:
    assert _names(reader_affinity(OTHER, "node-a")) == ("NotIn", ["node-a"])
    assert writer_affinity(OTHER) is None
    assert writer_affinity(None) is None


def _manifests(restore_node: str | None, node: str | None = None, source: str | None = None):
    pods = PodSettings(image="toolbox", placement=PodPlacement(node_name=node))
    return check_manifests(
        "ns",
        "fast",
        "fast-snaps",
        "1Gi",
        pods,
        PodIdentity(),
        run_id="abcd1234",
        restore_node=restore_node,
        source_node=source,
    )


def test_manifests_place_the_reader_as_asked() -> None:
    plain = _manifests(None)
    assert "affinity" not in plain.reader_pod["spec"]
    assert "affinity" not in plain.writer_pod["spec"]
    # --dry-run with other: the writer's node is not known yet and says so
    dry = _manifests(OTHER)
    assert _names(dry.reader_pod["spec"]["affinity"]) == ("NotIn", [WRITER_NODE])
    # the run, once the writer runs on node-a
    live = _manifests(OTHER, source="node-a")
    assert _names(live.reader_pod["spec"]["affinity"]) == ("NotIn", ["node-a"])
    # --node puts the writer there (through the scheduler); the reader must not inherit it
    pinned = _manifests(OTHER, node="node-a")
    assert _names(pinned.writer_pod["spec"]["affinity"]) == ("In", ["node-a"])
    assert "nodeName" not in pinned.writer_pod["spec"]
    reader_terms = pinned.reader_pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert reader_terms == [
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["node-a"]}]}
    ]
    named = _manifests("node-b")
    assert _names(named.reader_pod["spec"]["affinity"]) == ("In", ["node-b"])
    assert _names(named.writer_pod["spec"]["affinity"]) == ("NotIn", ["node-b"])


def test_the_restore_node_may_not_be_the_source_node() -> None:
    pods = PodSettings(image="toolbox", placement=PodPlacement(node_name="node-a"))
    with pytest.raises(UsageError, match="--restore-node node-a is the node the source runs on"):
        validate_check(CheckRequest(pods=pods, restore_node="node-a"))
    validate_check(CheckRequest(pods=pods, restore_node="node-b"))
    validate_check(CheckRequest(pods=pods, restore_node=OTHER))


def test_a_volume_pinned_to_another_node_is_node_local() -> None:
    refusal = volume_topology_refusal(PINNED_POD)
    assert refusal is not None
    assert "didn't match PersistentVolume's node affinity" in refusal
    reason = node_local_reason(PINNED_POD, PINNED_PV)
    assert reason is not None
    assert "kubernetes.io/hostname In [tk8s-node]" in reason
    assert PINNED_PV["metadata"]["name"] in reason


def _unschedulable(message: str) -> dict:
    pod = copy.deepcopy(PINNED_POD)
    pod["status"]["conditions"][0]["message"] = message
    return pod


@pytest.mark.parametrize(
    "message",
    [
        # the same scheduler, other reasons: nothing to do with the volume
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) "
        "had untolerated taint {kubectl-storage.test/extra: }. preemption: 0/3 nodes are "
        "available: 3 Preemption is not helpful for scheduling.",
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available.",
    ],
)
def test_other_reasons_not_to_schedule_are_not_node_local(message: str) -> None:
    assert volume_topology_refusal(_unschedulable(message)) is None
    assert node_local_reason(_unschedulable(message), PINNED_PV) is None


def test_a_running_reader_is_not_node_local() -> None:
    running = copy.deepcopy(PINNED_POD)
    running["status"] = {
        "phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
    }
    assert node_local_reason(running, PINNED_PV) is None


def _report(placement: RestorePlacement) -> SnapshotCheckReport:
    return SnapshotCheckReport(
        storage_class="fast",
        snapshot_class="fast-snaps",
        driver="d",
        namespace="ns",
        size="1Gi",
        snapshot="s",
        restore_size="1Gi",
        restore_storage_class="fast",
        run_id="abcd1234",
        steps=(),
        files=(),
        changes=(),
        restore_placement=placement,
    )


def test_the_verdict_fails_on_a_node_local_restore_and_passes_elsewhere() -> None:
    local = _report(RestorePlacement(OTHER, "tk8s-node", None, node_local="pinned"))
    assert local.outcome.verdict.value == "fail"
    assert local.problems == ["the snapshot cannot be used on another node than tk8s-node: pinned"]
    body = local.to_dict()["restorePlacement"]
    assert body == {
        "requested": OTHER,
        "sourceNode": "tk8s-node",
        "restoreNode": None,
        "nodeLocal": True,
        "reason": "pinned",
    }
    elsewhere = _report(RestorePlacement(OTHER, "tk8s-node", "tk8s-node-2"))
    assert elsewhere.outcome.verdict.value == "pass"
    assert elsewhere.to_dict()["restorePlacement"]["nodeLocal"] is False
    same = _report(RestorePlacement("tk8s-node", "tk8s-node", "tk8s-node"))
    assert same.outcome.verdict.value == "fail"
