"""The multi-node test cluster (issue 12): its two storage behaviours, and node fan-out.

The shared class (csi-hostpath-sc) must let pods on two nodes use one ReadWriteMany volume; the
node-local class (local-path) must pin its volume to the node it was created on.
`mount-audit --all-nodes` and `iscsi --all-nodes`: every harness node must be reported; then the last node's kubelet is stopped (the harness's
`node stop`), and once the node is NotReady both commands must report it with the reason while
the other nodes still succeed. The kubelet is started again after the test, also on failure.
Nodes that did not come from the harness (a QEMU guest joined for a while) may be in the
reports; only the harness's own nodes are judged.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import run_cli
from tests.e2e.conftest import HOSTPATH_CLASS

pytestmark = pytest.mark.cluster

MANAGED = "app.kubernetes.io/managed-by=kubectl-storage"
NOT_READY_WAIT_S = 180  # the node controller marks a silent node after its grace period (40-50 s)


def ready_status(cluster, node: str) -> str:
    conditions = cluster.get_json("node", node)["status"].get("conditions") or []
    return next((c["status"] for c in conditions if c["type"] == "Ready"), "Unknown")


def audit(cluster, namespace: str, command: str) -> tuple[int, dict, str]:
    result = run_cli(
        "-n",
        namespace,
        command,
        "--all-nodes",
        "--image",
        cluster.toolbox_image,
        "--timeout",
        "90",
        "-o",
        "json",
        timeout=600,
    )
    assert result.stdout, f"{command}: no report (exit {result.exit_code}):\n{result.stderr}"
    assert "Traceback" not in result.stderr
    return result.exit_code, result.json(), result.stderr


def by_node(report: dict) -> dict[str, dict]:
    return {n["node"]: n for n in report["nodes"]}


def managed_pods(cluster, namespace: str) -> list[str]:
    items = cluster.get_json("pods", "-n", namespace, "-l", MANAGED)["items"]
    return [p["metadata"]["name"] for p in items]


def claim(name: str, storage_class: str, mode: str = "ReadWriteOnce") -> str:
    return f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}}}
spec:
  accessModes: [{mode}]
  storageClassName: {storage_class}
  resources: {{requests: {{storage: 16Mi}}}}
"""


def pod_on(name: str, node: str, image: str, script: str, claim_name: str) -> str:
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  nodeSelector: {{kubernetes.io/hostname: {node}}}
  containers:
  - name: main
    image: {image}
    imagePullPolicy: IfNotPresent
    command: [sh, -c, {script!r}]
    volumeMounts: [{{name: d, mountPath: /data}}]
  volumes:
  - {{name: d, persistentVolumeClaim: {{claimName: {claim_name}}}}}
"""


def test_shared_class_serves_one_volume_to_pods_on_two_nodes(multinode, namespace) -> None:
    c = multinode
    a, b = c.nodes[1], c.nodes[2]
    c.apply(claim("shared", HOSTPATH_CLASS, "ReadWriteMany"), namespace)
    c.apply(
        pod_on("writer", a, c.busybox_image, "echo $HOSTNAME > /data/f; sleep 600", "shared"),
        namespace,
    )
    c.wait(namespace, "pod/writer", "condition=Ready", 180)
    # the reader runs while the writer still has the volume mounted on the other node
    c.apply(pod_on("reader", b, c.busybox_image, "cat /data/f", "shared"), namespace)
    c.wait(namespace, "pod/reader", "jsonpath={.status.phase}=Succeeded", 180)
    assert c.logs(namespace, "reader").strip() == "writer"
    pv = c.get_json("pv", c.get_json("-n", namespace, "pvc/shared")["spec"]["volumeName"])
    assert pv["spec"].get("nodeAffinity") is None  # no topology: like network storage
    assert c.get_json("-n", namespace, "pod/writer")["spec"]["nodeName"] == a


def test_node_local_class_pins_the_volume_to_its_node(multinode, namespace) -> None:
    c = multinode
    a, b = c.nodes[1], c.nodes[2]
    c.apply(claim("local", "local-path"), namespace)
    c.apply(pod_on("first", a, c.busybox_image, "echo here > /data/f", "local"), namespace)
    c.wait(namespace, "pod/first", "jsonpath={.status.phase}=Succeeded", 180)
    pv = c.get_json("pv", c.get_json("-n", namespace, "pvc/local")["spec"]["volumeName"])
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert [e["values"] for t in terms for e in t["matchExpressions"]] == [[a]]
    # a pod asked onto another node cannot have the data: it stays Pending
    c.apply(pod_on("moved", b, c.busybox_image, "cat /data/f", "local"), namespace)
    deadline = time.monotonic() + 60
    reasons: list[str] = []
    while time.monotonic() < deadline:
        events = c.get_json("events", "-n", namespace)["items"]
        reasons = [
            e.get("message", "")
            for e in events
            if e["involvedObject"].get("name") == "moved" and e.get("reason") == "FailedScheduling"
        ]
        if reasons:
            break
        time.sleep(2)
    assert any("didn't match PersistentVolume's node affinity" in m for m in reasons), reasons
    assert c.get_json("-n", namespace, "pod/moved")["status"]["phase"] == "Pending"


@pytest.mark.parametrize("command", ["mount-audit", "iscsi"])
def test_all_nodes_reports_every_node(multinode, namespace, command) -> None:
    code, report, stderr = audit(multinode, namespace, command)
    nodes = by_node(report)
    for name in multinode.nodes:
        assert name in nodes, f"{name} missing from {sorted(nodes)}"
        assert nodes[name]["error"] is None, nodes[name]
    assert code == 0 or set(nodes) - set(multinode.nodes), (code, stderr)
    assert managed_pods(multinode, namespace) == []


@pytest.fixture
def stopped_node(multinode):
    """The last harness node with its kubelet stopped until it is NotReady; started again after."""
    node = multinode.nodes[-1]
    multinode.kubelet("stop", node)
    try:
        deadline = time.monotonic() + NOT_READY_WAIT_S
        while ready_status(multinode, node) == "True":
            assert time.monotonic() < deadline, f"{node} still Ready {NOT_READY_WAIT_S}s after stop"
            time.sleep(2)
        yield node
    finally:
        multinode.kubelet("start", node)
    assert ready_status(multinode, node) == "True"


def test_a_not_ready_node_is_reported_with_the_reason(multinode, stopped_node, namespace) -> None:
    # one stopped kubelet for both commands: the node takes 40-50 s to turn NotReady
    for command in ("mount-audit", "iscsi"):
        code, report, stderr = audit(multinode, namespace, command)
        nodes = by_node(report)
        for name in multinode.nodes:
            assert name in nodes, f"{command}: {name} missing from {sorted(nodes)}"
        down = nodes[stopped_node]
        assert down["error"], (command, down)
        assert "NotReady" in down["error"], (command, down["error"])
        for name in multinode.nodes:
            if name != stopped_node:
                assert nodes[name]["error"] is None, (command, nodes[name])
        # documented: a node that cannot be inspected while others can does not change the
        # exit code (2 only when no node could be inspected)
        assert code == 0, (command, code, stderr)
        assert managed_pods(multinode, namespace) == [], command
