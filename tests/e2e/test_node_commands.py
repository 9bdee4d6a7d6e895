"""`mount-audit` and `iscsi` against the real single-node test cluster.

Its kernel has no NFS or iSCSI, so these check what a node without them reports (the CSI
volume of a running pod mapped to its claim, "no iSCSI sessions, multipath not installed"),
that nothing is left behind, and that the command refuses before creating anything when the
node does not exist or the namespace's Pod Security level forbids the debug pod. The autouse
fixture of conftest.py also fails a test that leaves labelled objects behind.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

from tests.conftest import finish_cli, run_cli, start_cli
from tests.e2e.conftest import HOSTPATH_CLASS

pytestmark = pytest.mark.cluster

PVC = f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {HOSTPATH_CLASS}
  resources:
    requests:
      storage: 64Mi
"""

HOLDER = """
apiVersion: v1
kind: Pod
metadata:
  name: holder
spec:
  terminationGracePeriodSeconds: 1
  nodeSelector: {{kubernetes.io/hostname: {node}}}  # the node the audit below reads
  containers:
  - name: main
    image: {image}
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
    volumeMounts: [{{name: data, mountPath: /data}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data}}}}]
"""


def debug_pods(cluster, namespace: str | None = None) -> list[str]:
    where = ["-n", namespace] if namespace else ["--all-namespaces"]
    r = cluster.kubectl_run(
        "get", "pods", *where, "-l", "app.kubernetes.io/managed-by=kubectl-storage", "-o", "json"
    )
    return [item["metadata"]["name"] for item in json.loads(r.stdout)["items"]]


@pytest.mark.parametrize("index", [1, 2])
def test_mount_audit_maps_the_csi_volume_of_a_running_pod(cluster, namespace, index: int):
    # Node 2 of the test cluster runs its kubelet with --root-dir=/var/lib/tk8s-kubelet-2, as
    # a real cluster's kubelet may: its volumes must be mapped all the same.
    if index > len(cluster.nodes):
        pytest.fail(f"the test cluster has {len(cluster.nodes)} node(s); this test needs {index}")
    target = cluster.nodes[index - 1]
    root = "/var/lib/kubelet" if index == 1 else f"/var/lib/tk8s-kubelet-{index}"
    cluster.apply(PVC, namespace)
    cluster.apply(HOLDER.format(image=cluster.busybox_image, node=target), namespace)
    cluster.wait(namespace, "pod/holder", "condition=Ready", 180)
    pv = cluster.get_json("-n", namespace, "pvc/data")["spec"]["volumeName"]
    uid = cluster.get_json("-n", namespace, "pod/holder")["metadata"]["uid"]

    result = run_cli(
        "-n",
        namespace,
        "mount-audit",
        "--all-nodes",
        "--image",
        cluster.toolbox_image,
        "-o",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    report = result.json()
    assert list(report)[:2] == ["apiVersion", "kind"]
    assert report["kind"] == "MountAuditReport"
    node = next(n for n in report["nodes"] if n["node"] == target)
    assert node["error"] is None
    assert node["mounts"] == []  # no NFS on this node
    assert node["kernel"]
    # The host nodes share this machine's mount table, so another test's "holder" whose
    # namespace is still going away can show here too: ours is the one in our namespace.
    ours = [v for v in node["volumes"] if v["pod"] == "holder" and v["namespace"] == namespace]
    assert ours, f"holder's volume not listed: {node['volumes']}"
    volume = ours[0]
    assert volume["namespace"] == namespace
    assert volume["pvc"] == "data"
    assert volume["pv"] == pv
    assert volume["storage_class"] == HOSTPATH_CLASS
    assert volume["driver"] == "hostpath.csi.k8s.io"
    assert volume["kind"] == "pod-volume"
    assert volume["pod_uid"] == uid
    assert volume["mountpoint"] == f"{root}/pods/{uid}/volumes/kubernetes.io~csi/{pv}/mount"
    assert report["summary"]["nfs_mounts"] == 0
    assert debug_pods(cluster, namespace) == []

    table = run_cli("-n", namespace, "mount-audit", cluster.node, "--image", cluster.toolbox_image)
    assert table.exit_code == 0, table.stderr
    assert "no NFS mounts" in table.stdout
    assert namespace in table.stdout
    assert "holder" in table.stdout


def test_iscsi_reports_a_node_without_iscsi_cleanly(cluster, namespace):
    result = run_cli(
        "-n", namespace, "iscsi", "--all-nodes", "--image", cluster.toolbox_image, "-o", "json"
    )
    assert result.exit_code == 0, result.stderr
    report = result.json()
    assert report["kind"] == "IscsiReport"
    node = next(n for n in report["nodes"] if n["node"] == cluster.node)
    assert node["error"] is None
    assert node["status"] == "no iSCSI sessions, multipath not installed"
    assert node["sessions"] == []
    assert node["multipath_maps"] == []
    # The host kernel's log is shared by the harness's nodes and keeps what other tests did to
    # loop devices (test_kernel_log.py's ext4 error): information at most, never a warning.
    assert [f for f in node["findings"] if not f["id"].startswith("KLOG")] == []
    assert {f["severity"] for f in node["findings"]} <= {"info"}, node["findings"]
    assert node["kernel_log"]["source"] == "kmsg"  # privileged: /dev/kmsg
    assert node["tools"]["probed"] is True
    assert node["tools"]["multipath"] is None
    assert node["tools"]["multipathd"] is None
    assert debug_pods(cluster, namespace) == []

    table = run_cli("-n", namespace, "iscsi", cluster.node, "--image", cluster.toolbox_image)
    assert table.exit_code == 0, table.stderr
    assert "no iSCSI sessions, multipath not installed" in table.stdout


def test_unknown_node_exits_2_and_creates_nothing(cluster, namespace):
    result = run_cli("-n", namespace, "mount-audit", "no-such-node")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "node no-such-node does not exist" in result.stderr
    assert debug_pods(cluster, namespace) == []


def test_restricted_namespace_is_refused_before_anything_is_created(cluster, namespace):
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    for command in ("mount-audit", "iscsi"):
        result = run_cli("-n", namespace, command, "--all-nodes")
        assert result.exit_code == 2, result.stdout + result.stderr
        assert result.stdout == ""
        assert f'namespace "{namespace}" enforces the "restricted" Pod Security level' in (
            result.stderr
        )
        assert "pod-security.kubernetes.io/enforce=privileged" in result.stderr
    events = cluster.kubectl_run("-n", namespace, "get", "events", "-o", "json")
    assert json.loads(events.stdout)["items"] == []  # not even a rejected create
    assert debug_pods(cluster, namespace) == []


def test_sigint_during_collection_exits_130_and_leaves_nothing(cluster, namespace):
    proc = start_cli(
        "-n",
        namespace,
        "iscsi",
        "--all-nodes",
        "--image",
        cluster.toolbox_image,
        "--timeout",
        "300",
        "-o",
        "json",
    )
    try:
        deadline = time.monotonic() + 120
        seen: list[str] = []
        while time.monotonic() < deadline and proc.poll() is None:
            seen = debug_pods(cluster, namespace)
            if seen:
                break
            time.sleep(0.05)
        assert seen, f"no debug pod appeared (exit {proc.poll()})"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = finish_cli(proc, 180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    assert stdout == ""
    assert "interrupted" in stderr
    assert debug_pods(cluster, namespace) == []
