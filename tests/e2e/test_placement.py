"""`--node`, `--node-selector` and `--toleration` on the multi-node test cluster (issue 12, item 3).

The second harness node gets a NoSchedule taint and the third a label for the whole module
(both removed afterwards, also when a test fails). Each run goes to one node through one of the
flags; where its pods ran is read from the namespace's events after the run (the scheduler's
"Successfully assigned ... to NODE", or the kubelet's events, whose source is the node), and the
run must leave no pod behind.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

import pytest

from tests.conftest import CliResult, run_cli
from tests.e2e.conftest import HOSTPATH_CLASS

pytestmark = pytest.mark.cluster

KEY = "kubectl-storage.test/placement"
TAINT_VALUE = "only-with-toleration"
LABEL_VALUE = "target"
CLASS = HOSTPATH_CLASS
SNAPSHOT_CLASS = "csi-hostpath-snapclass"
MANAGED = "app.kubernetes.io/managed-by=kubectl-storage"


@dataclass(frozen=True)
class Nodes:
    first: str
    tainted: str
    labelled: str


@pytest.fixture(scope="module")
def nodes(multinode):
    c = multinode
    first, tainted, labelled = c.nodes[:3]
    try:
        c.kubectl_run("taint", "node", tainted, f"{KEY}={TAINT_VALUE}:NoSchedule", "--overwrite")
        c.kubectl_run("label", "node", labelled, f"{KEY}={LABEL_VALUE}", "--overwrite")
        yield Nodes(first, tainted, labelled)
    finally:
        c.kubectl_run("taint", "node", tainted, f"{KEY}:NoSchedule-", check=False)
        c.kubectl_run("label", "node", labelled, f"{KEY}-", check=False)
        left = c.get_json("nodes")["items"]
        assert not [
            n["metadata"]["name"]
            for n in left
            if KEY in n["metadata"].get("labels", {})
            or any(t["key"] == KEY for t in n["spec"].get("taints") or [])
        ], "placement taint or label not removed"


def pod_nodes(cluster, namespace: str, ignore: tuple[str, ...] = ()) -> dict[str, str]:
    """Pod name -> the node it ran on, from the namespace's events."""
    placed: dict[str, str] = {}
    for event in cluster.get_json("events", "-n", namespace)["items"]:
        obj = event.get("involvedObject") or {}
        if obj.get("kind") != "Pod" or obj.get("name") in ignore:
            continue
        source = event.get("source") or {}
        if event.get("reason") == "Scheduled":
            m = re.search(r" to (\S+)$", event.get("message", ""))
            if m:
                placed[obj["name"]] = m.group(1)
        elif source.get("component") == "kubelet" and source.get("host"):
            placed.setdefault(obj["name"], source["host"])
    return placed


def managed_pods(cluster, namespace: str) -> list[str]:
    items = cluster.get_json("pods", "-n", namespace, "-l", MANAGED)["items"]
    return [p["metadata"]["name"] for p in items]


def assert_ran_on(cluster, namespace: str, node: str, result: CliResult, ignore=()) -> None:
    assert result.exit_code == 0, result.stdout + result.stderr
    placed = pod_nodes(cluster, namespace, ignore)
    assert placed, "no pod of the run was seen in the events"
    assert set(placed.values()) == {node}, placed
    assert managed_pods(cluster, namespace) == []


def fio(namespace: str, *flags: str, timeout: str = "180") -> CliResult:
    return run_cli(
        "fio",
        "-s",
        CLASS,
        "-z",
        "1Gi",
        "--profile",
        "quick",
        "--runtime",
        "2",
        "--ramp-time",
        "0",
        "--timeout",
        timeout,
        "-n",
        namespace,
        "-o",
        "json",
        *flags,
    )


def test_fio_node_runs_on_that_node(cluster, nodes, namespace) -> None:
    assert_ran_on(cluster, namespace, nodes.first, fio(namespace, "--node", nodes.first))


def test_fio_node_with_a_wait_for_first_consumer_class(cluster, nodes, namespace) -> None:
    # local-path binds its claims when the scheduler places the pod: a pod bound by
    # spec.nodeName skips the scheduler, and its claim stayed Pending until the timeout
    result = run_cli(
        "fio", "-s", "local-path", "-z", "1Gi", "--profile", "quick", "--runtime", "2",
        "--ramp-time", "0", "--timeout", "90", "--node", nodes.labelled, "-n", namespace,
        "-o", "json",
    )  # fmt: skip
    assert_ran_on(cluster, namespace, nodes.labelled, result)

    def volumes() -> list[str]:
        return [
            pv["metadata"]["name"]
            for pv in cluster.get_json("pv")["items"]
            if (pv["spec"].get("claimRef") or {}).get("namespace") == namespace
        ]

    deadline = time.monotonic() + 120  # local-path deletes a released volume in a helper pod
    while volumes() and time.monotonic() < deadline:
        time.sleep(2)
    assert volumes() == []


def test_fio_node_selector_picks_the_labelled_node(cluster, nodes, namespace) -> None:
    result = fio(namespace, "--node-selector", f"{KEY}={LABEL_VALUE}")
    assert_ran_on(cluster, namespace, nodes.labelled, result)


def test_fio_toleration_admits_the_tainted_node(cluster, nodes, namespace) -> None:
    result = fio(
        namespace,
        "--node-selector",
        f"kubernetes.io/hostname={nodes.tainted}",
        "--toleration",
        f"{KEY}={TAINT_VALUE}:NoSchedule",
    )
    assert_ran_on(cluster, namespace, nodes.tainted, result)


def test_fio_without_the_toleration_cannot_schedule_and_leaves_nothing(
    cluster, nodes, namespace
) -> None:
    result = fio(
        namespace, "--node-selector", f"kubernetes.io/hostname={nodes.tainted}", timeout="30"
    )
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    # The scheduler refused it, and nothing ran anywhere. Its last message may still be the
    # first attempt's ("pod has unbound immediate PersistentVolumeClaims": the pod was tried
    # before the claim bound and not again within the timeout, seen in CI), so the user is told
    # the taint from the nodes themselves, and what to pass.
    events = cluster.get_json("events", "-n", namespace)["items"]
    assert [e for e in events if e.get("reason") == "FailedScheduling"], events
    assert (
        f"every node it may go to has an untolerated taint ({nodes.tainted}: "
        f"{KEY}={TAINT_VALUE}:NoSchedule)"
    ) in result.stderr
    assert "--toleration" in result.stderr
    assert pod_nodes(cluster, namespace) == {}
    assert managed_pods(cluster, namespace) == []


def test_snapshot_check_node_selector(cluster, nodes, namespace) -> None:
    result = run_cli(
        "snapshot",
        "check",
        "-s",
        CLASS,
        "--node-selector",
        f"{KEY}={LABEL_VALUE}",
        "-n",
        namespace,
        "-o",
        "json",
    )
    assert_ran_on(cluster, namespace, nodes.labelled, result)
    assert json.loads(result.stdout)["verdict"] == "pass"


def test_snapshot_browse_node_on_a_tainted_node(cluster, nodes, namespace) -> None:
    # --node tolerates the named node's NoSchedule taints, so the taint does not stop it
    cluster.apply(
        f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: data}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {CLASS}
  resources: {{requests: {{storage: 64Mi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: writer}}
spec:
  restartPolicy: Never
  nodeSelector: {{kubernetes.io/hostname: {nodes.first}}}
  containers:
  - name: w
    image: {cluster.toolbox_image}
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "echo placed > /data/placed.txt && sync"]
    volumeMounts: [{{name: d, mountPath: /data}}]
  volumes:
  - {{name: d, persistentVolumeClaim: {{claimName: data}}}}
""",
        namespace,
    )
    cluster.wait(namespace, "pod/writer", "jsonpath={.status.phase}=Succeeded", 180)
    result = run_cli(
        "snapshot",
        "browse",
        "--pvc",
        "data",
        "--snapshot-class",
        SNAPSHOT_CLASS,
        "--tree",
        "--node",
        nodes.tainted,
        "-n",
        namespace,
    )
    assert "placed.txt" in result.stdout, result.stderr
    assert_ran_on(cluster, namespace, nodes.tainted, result, ignore=("writer",))
    assert cluster.get_json("volumesnapshots", "-n", namespace)["items"] == []


def test_validate_persistence_node_selector_and_toleration(cluster, nodes, namespace) -> None:
    result = run_cli(
        "validate-persistence",
        "-s",
        CLASS,
        "--image",
        cluster.mariadb_image,
        "--rows",
        "100",
        "--disruptions",
        "restart",
        "--node-selector",
        f"kubernetes.io/hostname={nodes.tainted}",
        "--toleration",
        f"{KEY}:NoSchedule",
        "--timeout",
        "240",
        "-n",
        namespace,
        "-o",
        "json",
        timeout=900,
    )
    assert_ran_on(cluster, namespace, nodes.tainted, result)
    assert json.loads(result.stdout)["verdict"] == "pass"
