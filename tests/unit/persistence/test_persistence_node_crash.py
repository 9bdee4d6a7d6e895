"""node-crash's decisions: which node may be crashed, the crash pod's script, the request's
refusals and what a passed node crash says it proved.

Sources: issue 26 item 2 (the node named twice; never a node whose kernel other nodes or this
machine share: a sysrq there reboots the machine); the kernel's
Documentation/admin-guide/sysrq.rst for ``b`` ("immediately reboot the system without syncing
or unmounting your disks"). The node list is the real three-node test cluster's
(tests/fixtures/kubernetes/testcluster-nodes.json: three kubelets of one machine, one boot ID).

The crash script is never run as written here: the tests point it at a file instead of
/proc/sysrq-trigger and at a file of their own instead of the kernel's boot ID.
"""

from __future__ import annotations

import copy
import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from kubectl_storage.core.k8s.manifests import PodPlacement
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import Disruption, VolumeType
from kubectl_storage.core.validate_persistence.node_crash import (
    BOOT_ID_PATH,
    boot_id,
    build_crash_pod,
    crash_refusal,
    crash_script,
    node_ready,
)
from kubectl_storage.core.validate_persistence.report import (
    NODE_CRASH_TESTED,
    PersistenceReport,
    PhaseResult,
)
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.validate_persistence.request import (
    CrashFacts,
    PersistenceRequest,
    check_crash_target,
    validate_request,
)

NODES = Path(__file__).resolve().parents[2] / "fixtures" / "kubernetes" / "testcluster-nodes.json"
SHARED = "56552b26-d235-4596-ba79-ab750493c3e9"  # the three host nodes' one boot ID
OTHER_MACHINE = "0e3c9a55-7a31-4a3e-9d0c-6f1b2a4c8e71"


def _nodes() -> list[dict]:
    return json.loads(NODES.read_text())["items"]


def _with_own_kernel(nodes: list[dict], name: str) -> list[dict]:
    """The same list with ``name`` on a machine of its own (as the node lab's guest is)."""
    changed = copy.deepcopy(nodes)
    for node in changed:
        if node["metadata"]["name"] == name:
            node["status"]["nodeInfo"]["bootID"] = OTHER_MACHINE
    return changed


def test_the_recorded_host_nodes_share_one_boot_id() -> None:
    assert {boot_id(n) for n in _nodes()} == {SHARED}
    assert all(node_ready(n) for n in _nodes())


def test_a_node_sharing_its_kernel_with_other_nodes_is_refused() -> None:
    why = crash_refusal("tk8s-node-2", _nodes(), None)
    assert why is not None
    assert "shares its kernel with tk8s-node, tk8s-node-3" in why


def test_the_machine_running_the_command_is_refused_first() -> None:
    why = crash_refusal("tk8s-node", _nodes(), SHARED)
    assert why is not None
    assert "kernel of the machine this command runs on" in why


def test_a_node_on_a_machine_of_its_own_may_be_crashed() -> None:
    nodes = _with_own_kernel(_nodes(), "tk8s-node-3")
    assert crash_refusal("tk8s-node-3", nodes, SHARED) is None
    assert crash_refusal("tk8s-node-3", nodes, None) is None
    # the other two still share theirs
    assert crash_refusal("tk8s-node", nodes, None) is not None


def test_a_node_without_a_boot_id_or_unknown_is_refused() -> None:
    nodes = _with_own_kernel(_nodes(), "tk8s-node-3")
    del nodes[2]["status"]["nodeInfo"]["bootID"]
    assert "reports no boot ID" in (crash_refusal("tk8s-node-3", nodes, None) or "")
    assert "does not exist" in (crash_refusal("nope", nodes, None) or "")


def _request(**changes) -> PersistenceRequest:
    base = PersistenceRequest(
        storage_class="fast",
        namespace="db",
        disruptions=(Disruption.NODE_CRASH,),
        placement=PodPlacement(node_name="tk8s-node-3"),
        crash_node="tk8s-node-3",
    )
    return replace(base, **changes)


def test_the_node_must_be_named_twice() -> None:
    validate_request(_request())  # both given, the same: accepted
    with pytest.raises(UsageError, match="needs --crash-node"):
        validate_request(_request(crash_node=None))
    with pytest.raises(UsageError, match="is not the node the database runs on"):
        validate_request(_request(crash_node="tk8s-node"))
    with pytest.raises(UsageError, match="not the node the database runs on"):
        validate_request(_request(placement=PodPlacement()))
    with pytest.raises(UsageError, match="only for --disruptions node-crash"):
        validate_request(_request(disruptions=(Disruption.CRASH,)))


def test_node_crash_is_never_in_the_default_set() -> None:
    assert Disruption.NODE_CRASH not in PersistenceRequest(None, "db").chosen


def test_the_plan_refuses_a_shared_kernel_and_accepts_a_machine_of_its_own() -> None:
    with pytest.raises(UsageError, match="node-crash refused: node tk8s-node-3 shares"):
        check_crash_target(_request(), CrashFacts(tuple(_nodes()), None))
    own = CrashFacts(tuple(_with_own_kernel(_nodes(), "tk8s-node-3")), SHARED)
    check_crash_target(_request(), own)
    # without node-crash the nodes are not even looked at
    check_crash_target(_request(disruptions=(Disruption.CRASH,), crash_node=None), None)


def _run_script(tmp_path: Path, planned: str, current: str) -> tuple[str, bool]:
    """The crash script with the kernel's files replaced by the test's own."""
    trigger, boot = tmp_path / "sysrq-trigger", tmp_path / "boot_id"
    boot.write_text(current + "\n")
    script = crash_script(planned)
    assert "/proc/sysrq-trigger" in script
    assert BOOT_ID_PATH in script
    safe = script.replace("/proc/sysrq-trigger", str(trigger)).replace(BOOT_ID_PATH, str(boot))
    assert "/proc/" not in safe  # nothing of the real kernel is left
    out = subprocess.run(["sh", "-c", safe], capture_output=True, text=True, check=True).stdout
    return out, trigger.exists() and trigger.read_text() == "b\n"


def test_the_crash_script_fires_on_the_planned_boot_only(tmp_path: Path) -> None:
    out, fired = _run_script(tmp_path, OTHER_MACHINE, OTHER_MACHINE)
    assert fired
    assert out == ""
    (tmp_path / "sysrq-trigger").unlink()
    out, fired = _run_script(tmp_path, OTHER_MACHINE, SHARED)  # the node rebooted since
    assert not fired
    assert "not again" in out


def test_the_crash_script_takes_only_a_boot_id() -> None:
    with pytest.raises(ValueError, match="not a boot ID"):
        crash_script('x"; reboot; "')
    with pytest.raises(ValueError, match="not a boot ID"):
        crash_script("")


def test_the_crash_pod_is_privileged_pinned_and_never_restarted() -> None:
    pod = build_crash_pod("persist-abc-crash", "db", "n3", "toolbox:1", OTHER_MACHINE)
    spec = pod["spec"]
    assert spec["nodeName"] == "n3"
    assert spec["restartPolicy"] == "Never"
    assert spec["tolerations"] == [{"operator": "Exists"}]
    (container,) = spec["containers"]
    assert container["securityContext"]["privileged"] is True
    assert container["command"] == ["sh", "-c", crash_script(OTHER_MACHINE)]
    assert "volumes" not in spec  # nothing of the host is mounted
    assert spec["automountServiceAccountToken"] is False


def _report(*phases: PhaseResult) -> PersistenceReport:
    return PersistenceReport("fast", VolumeType.PVC, "1Gi", "db", "mariadb:test", 100, "r", phases)


def test_a_passed_node_crash_says_the_node_lost_power_not_the_storage() -> None:
    report = _report(PhaseResult("node-crash", Verdict.PASS))
    assert report.tested.startswith("tested: node crash (sysrq b: the node's page cache lost)")
    assert report.tested.endswith(NODE_CRASH_TESTED)
    failed = _report(PhaseResult("node-crash", Verdict.FAIL))
    assert NODE_CRASH_TESTED not in failed.tested
