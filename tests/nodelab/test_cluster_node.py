"""``mount-audit`` and ``iscsi`` end to end on a real node: the node lab's guest joined to the test
cluster (``cluster_node``), a real NFS PV (the guest's nfsd, in-tree ``nfs`` volume) and a real
iSCSI PV (the guest's LIO through two portals, in-tree ``iscsi`` volume, dm-multipath) bound to
their claims and mounted by a pod pinned to the guest, then the real CLI, through its own debug
pods on that node.

What the audit must report (generic profile):

* the NFS mount (PV ``mountOptions`` nfsvers=4.1, hard, nconnect=4, rsize/wsize=2097152,
  lookupcache=positive): the kernel caps rsize/wsize at nfsd's 1 MiB, so ``NFSK8S001 warn``
  (requested not in effect, for rsize and wsize only: ``nfsvers`` and ``lookupcache=positive``
  are in effect, spelled ``vers`` and ``pos``) and ``NFS022 info``; ``NFS054 info``
  (lookupcache=pos) and ``NFS100 info`` (sec=sys); 4 transports;
* both pod volumes mapped to the pod, claim and PV;
* iSCSI: two sessions up (``ISCSI007 warn`` each: no CHAP), one multipath map with both paths
  active, ``MP003 info`` (find_multipaths yes), and the claim → LUN → dm → paths chain.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.validate_persistence.node_crash import (
    BOOT_ID_PATH,
    boot_id,
    build_crash_pod,
    crash_refusal,
    node_ready,
)
from tests.conftest import CliResult, run_cli
from tests.e2e import conftest as e2e
from tests.e2e.conftest import Cluster
from tests.nodelab import node as nodeguest
from tests.nodelab.reports import rule_findings

pytestmark = [pytest.mark.cluster, pytest.mark.nodelab]

IQN = "iqn.2003-01.org.nodelab:node-lun"
PORTALS = ("10.20.0.1:3260", "10.20.0.2:3260")
NFS_SERVER, NFS_EXPORT = "10.10.0.1", "/srv/nfs/vol1"
NFS_OPTIONS = [
    "nfsvers=4.1",
    "hard",
    "nconnect=4",
    "rsize=2097152",
    "wsize=2097152",
    "lookupcache=positive",
]
POD = "app"
#: The image the crash pod runs (baked into the node image).
TOOLBOX = nodeguest.images.toolbox_image()
#: The label kubectl-storage puts on everything one run creates.
RUN_ID_LABEL = "kubectl-storage/run-id"

CLAIMS = """
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {nfs_pv}}}
spec:
  capacity: {{storage: 32Mi}}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  mountOptions: {options}
  nfs: {{server: {server}, path: {export}}}
  claimRef: {{namespace: {ns}, name: nfs-data}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {iscsi_pv}}}
spec:
  capacity: {{storage: 64Mi}}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  iscsi: {{targetPortal: "{portal}", portals: ["{portal2}"], iqn: "{iqn}", lun: 0, fsType: ext4}}
  claimRef: {{namespace: {ns}, name: iscsi-data}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: nfs-data, namespace: {ns}}}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: ""
  volumeName: {nfs_pv}
  resources: {{requests: {{storage: 32Mi}}}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: iscsi-data, namespace: {ns}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: {iscsi_pv}
  resources: {{requests: {{storage: 64Mi}}}}
"""

WORKLOAD = """
apiVersion: v1
kind: Pod
metadata: {{name: {pod}, namespace: {ns}}}
spec:
  nodeName: {node}
  tolerations: [{{key: {taint_key}, operator: Exists, effect: NoSchedule}}]
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: {image}
    imagePullPolicy: IfNotPresent
    command: [sh, -c, "cat /nfs/hello.txt && exec sleep infinity"]
    volumeMounts: [{{name: nfs, mountPath: /nfs}}, {{name: lun, mountPath: /lun}}]
  volumes:
  - {{name: nfs, persistentVolumeClaim: {{claimName: nfs-data}}}}
  - {{name: lun, persistentVolumeClaim: {{claimName: iscsi-data}}}}
"""


class Workload:
    """The namespace, PVs, claims and pod of the run, and what the cluster says about them."""

    def __init__(self, cluster: Cluster, guest: nodeguest.NodeGuest) -> None:
        suffix = uuid.uuid4().hex[:6]
        self.cluster = cluster
        self.guest = guest
        self.namespace = f"nodelab-{suffix}"
        self.nfs_pv = f"nodelab-{suffix}-nfs"
        self.iscsi_pv = f"nodelab-{suffix}-iscsi"
        self.pod_uid = ""
        self.managed_before: set[str] = set()

    def create(self) -> None:
        c = self.cluster
        c.kubectl_run("create", "namespace", self.namespace)
        c.kubectl_run("label", "namespace", self.namespace, e2e.E2E_NAMESPACE_LABEL)
        t0 = time.monotonic()
        c.apply(
            CLAIMS.format(
                ns=self.namespace,
                nfs_pv=self.nfs_pv,
                iscsi_pv=self.iscsi_pv,
                options=json.dumps(NFS_OPTIONS),
                server=NFS_SERVER,
                export=NFS_EXPORT,
                portal=PORTALS[0],
                portal2=PORTALS[1],
                iqn=IQN,
            )
        )
        # The pod comes after the binding: a pod whose claim is not bound yet gets a FailedMount
        # event, which mount-audit reads.
        for claim in ("nfs-data", "iscsi-data"):
            c.wait(self.namespace, f"pvc/{claim}", "jsonpath={.status.phase}=Bound", 60)
        c.apply(
            WORKLOAD.format(
                ns=self.namespace,
                pod=POD,
                node=nodeguest.NODE_NAME,
                taint_key=nodeguest.TAINT_KEY,
                image=c.toolbox_image,
            )
        )
        c.wait(self.namespace, f"pod/{POD}", "condition=Ready", 180)
        self.guest.timings["pod_running_s"] = round(time.monotonic() - t0, 1)
        self.pod_uid = c.get_json("-n", self.namespace, f"pod/{POD}")["metadata"]["uid"]

    def delete(self) -> None:
        c = self.cluster
        r = c.kubectl_run(
            "delete", "namespace", self.namespace, "--ignore-not-found", "--timeout=120s",
            check=False, timeout=150,
        )  # fmt: skip
        if r.returncode != 0:  # a kubelet that went away leaves the pod: force it out
            c.kubectl_run(
                "-n", self.namespace, "delete", "pod", "--all", "--grace-period=0", "--force",
                check=False,
            )  # fmt: skip
        c.kubectl_run("delete", "pv", self.nfs_pv, self.iscsi_pv, "--ignore-not-found", check=False)

    def cli(self, command: str) -> CliResult:
        """``kubectl storage COMMAND <node> -o json`` as a user runs it; wall time recorded, and
        the labelled objects that existed before it (not its leftovers) remembered."""
        self.managed_before = _managed_uids(self.cluster)
        t0 = time.monotonic()
        result = run_cli(
            "-n", self.namespace, command, nodeguest.NODE_NAME, "-o", "json", timeout=300
        )
        self.guest.timings[f"{command}_s"] = round(time.monotonic() - t0, 1)
        return result


@pytest.fixture(scope="module")
def workload(cluster: Cluster, cluster_node: nodeguest.NodeGuest) -> Iterator[Workload]:
    run = Workload(cluster, cluster_node)
    try:
        run.create()
        yield run
    finally:
        run.delete()


def _node_report(result: CliResult, kind: str) -> dict[str, Any]:
    report = result.json()
    assert report["kind"] == kind
    assert [n["node"] for n in report["nodes"]] == [nodeguest.NODE_NAME]
    node: dict[str, Any] = report["nodes"][0]
    assert node["error"] is None, node["error"]
    assert node["kernel"].startswith("6.1.0-"), node["kernel"]
    return node


def _managed_uids(cluster: Cluster) -> set[str]:
    items = cluster.get_json(e2e.LEFTOVER_KINDS, "--all-namespaces", "-l", e2e.MANAGED_BY)
    return {item["metadata"]["uid"] for item in items["items"]}


def _no_debug_pods_left(cluster: Cluster, workload: Workload) -> None:
    """The CLI's own objects (labelled managed-by, with its run id) are gone, here and anywhere."""
    e2e.check_no_managed_leftovers(cluster, workload.managed_before, workload.namespace)
    pods = cluster.get_json(
        "pods", "--all-namespaces", "--field-selector", f"spec.nodeName={nodeguest.NODE_NAME}"
    )["items"]
    left = [
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in pods
        if RUN_ID_LABEL in (p["metadata"].get("labels") or {})
        and p["metadata"]["uid"] not in workload.managed_before
    ]
    assert left == [], f"debug pods left on {nodeguest.NODE_NAME}: {left}"


def test_the_guest_is_a_tainted_labelled_node(
    cluster: Cluster, cluster_node: nodeguest.NodeGuest
) -> None:
    node = cluster.get_json("node", nodeguest.NODE_NAME)
    assert node["metadata"]["labels"][nodeguest.TAINT_KEY] == "true"
    # Other taints can be there too, some without a value: node.kubernetes.io/not-ready while the
    # node controller has not yet seen the node Ready (seen in a cold CI run).
    assert {"key": nodeguest.TAINT_KEY, "value": "true", "effect": "NoSchedule"} in [
        {k: t.get(k) for k in ("key", "value", "effect")} for t in node["spec"]["taints"]
    ]
    assert {"type": "InternalIP", "address": nodeguest.NODE_IP} in node["status"]["addresses"]
    info = node["status"]["nodeInfo"]
    assert info["kernelVersion"].startswith("6.1.0-"), info
    assert info["containerRuntimeVersion"] == "containerd://1.6.20", info
    # Nothing else of the cluster landed there; only kubectl-storage's own node inspection pods
    # (they tolerate every taint, so another session's --all-nodes run may pass by) could.
    pods = cluster.get_json(
        "pods", "--all-namespaces", "--field-selector", f"spec.nodeName={nodeguest.NODE_NAME}"
    )["items"]
    others = [
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in pods
        if RUN_ID_LABEL not in (p["metadata"].get("labels") or {})
    ]
    assert others == [], "pods on the lab node before the test"


def test_mount_audit_on_the_real_node(cluster: Cluster, workload: Workload) -> None:
    result = workload.cli("mount-audit")
    assert result.exit_code == 0, result.stderr
    node = _node_report(result, "MountAuditReport")
    # Not privileged: the kernel log comes through dmesg and CAP_SYSLOG (Debian sets
    # kernel.dmesg_restrict=1), on a real node's kernel.
    assert node["kernel_log"]["source"] == "dmesg", node["kernel_log"]
    # The mounts' findings, plus whatever the guest's own kernel log holds (its boot and the
    # lab's earlier work; judged in test_nfs.py/test_iscsi.py, counted here as they are).
    kernel = Counter(
        finding["severity"]
        for group in (*node["kernel_events"], *node["nfs_servers"])
        for finding in group["findings"]
    )
    assert result.json()["summary"] == {
        "nodes": 1,
        "nodes_failed": 0,
        "nfs_mounts": 1,
        "volumes": 2,
        "findings": {
            "error": kernel["error"],
            "warn": 1 + kernel["warn"],
            "info": 3 + kernel["info"],
        },
        "unread_lines": 0,  # a live capture: every line of it read (issue 22 item 3)
    }
    (mount,) = node["mounts"]
    pod_dir = f"/var/lib/kubelet/pods/{workload.pod_uid}/volumes"
    assert {k: mount[k] for k in ("server", "export", "fstype", "mountpoint", "kind")} == {
        "server": NFS_SERVER,
        "export": NFS_EXPORT,
        "fstype": "nfs4",
        "mountpoint": f"{pod_dir}/kubernetes.io~nfs/{workload.nfs_pv}",
        "kind": "pod-volume",
    }
    # The owners: the pod, its claim and the PV behind the kubelet path.
    assert (mount["namespace"], mount["pod"], mount["pvc"], mount["pv"], mount["driver"]) == (
        workload.namespace,
        POD,
        "nfs-data",
        workload.nfs_pv,
        "kubernetes.io/nfs",
    )
    # Requested (the PV's mountOptions) against effective (the kernel's mountinfo).
    assert mount["requested_options"] == NFS_OPTIONS
    effective = mount["options"]
    assert (effective["vers"], effective["nconnect"], effective["lookupcache"]) == (
        "4.1",
        "4",
        "pos",
    )
    assert (effective["rsize"], effective["wsize"], effective["hard"]) == (
        "1048576",
        "1048576",
        True,
    )
    assert mount["xprt_count"] == 4
    findings = [(f["id"], f["severity"]) for f in mount["findings"]]
    assert sorted(findings) == [
        ("NFS022", "info"),
        ("NFS054", "info"),
        ("NFS100", "info"),
        ("NFSK8S001", "warn"),
    ]
    (not_in_effect,) = [f["message"] for f in mount["findings"] if f["id"] == "NFSK8S001"]
    assert not_in_effect == (
        "requested options not in effect: rsize: requested 2097152, effective 1048576; "
        "wsize: requested 2097152, effective 1048576"
    )
    volumes = {
        v["pv"]: (v["namespace"], v["pod"], v["pvc"], v["driver"], v["fstype"], v["mountpoint"])
        for v in node["volumes"]
    }
    assert volumes == {
        workload.nfs_pv: (
            workload.namespace,
            POD,
            "nfs-data",
            "kubernetes.io/nfs",
            "nfs4",
            f"{pod_dir}/kubernetes.io~nfs/{workload.nfs_pv}",
        ),
        workload.iscsi_pv: (
            workload.namespace,
            POD,
            "iscsi-data",
            "kubernetes.io/iscsi",
            "ext4",
            f"{pod_dir}/kubernetes.io~iscsi/{workload.iscsi_pv}",
        ),
    }
    (lun_volume,) = [v for v in node["volumes"] if v["pv"] == workload.iscsi_pv]
    # The multipath map, not one of its paths (the kubelet names it either way).
    assert re.fullmatch(r"/dev/(mapper/mpath[a-z]+|dm-\d+)", lun_volume["source"]), lun_volume
    _no_debug_pods_left(cluster, workload)


def test_iscsi_on_the_real_node(cluster: Cluster, workload: Workload) -> None:
    result = workload.cli("iscsi")
    node = _node_report(result, "IscsiReport")
    sessions = {
        s["current_portal"]: (
            s["target"],
            s["session_state"],
            s["connection_state"],
            s["internal_session_state"],
            [d["state"] for d in s["disks"]],
        )
        for s in node["sessions"]
    }
    # From a pod's own network namespace iscsiadm cannot reach iscsid (an abstract unix socket,
    # which belongs to a network namespace) and prints "Unknown" for both states: the debug pod
    # must share the host's network (tests/nodelab/README.md, "What the real node showed").
    assert sessions == {
        portal: (IQN, "LOGGED_IN", "LOGGED IN", "NO CHANGE", ["running"]) for portal in PORTALS
    }, "iscsiadm in the debug pod did not reach iscsid (is the pod on the host network?)"
    # The privileged pod reads the guest's kernel log itself (what is in it is the lab phases').
    assert node["kernel_log"]["source"] == "kmsg", node["kernel_log"]
    findings = sorted(
        (f["id"], f["severity"], f["message"]) for f in rule_findings(node["findings"])
    )
    assert [(i, s) for i, s, _m in findings] == [
        ("ISCSI007", "warn"),
        ("ISCSI007", "warn"),
        ("MP003", "info"),
    ], findings
    assert result.exit_code == 0, result.stderr
    # multipathd answered (its socket is abstract too), so the maps are its JSON view.
    assert node["maps_source"] == "multipathd-json"
    (mpath,) = node["multipath_maps"]
    assert (mpath["vendor"], mpath["product"], mpath["size"]) == ("LIO-ORG", "FILEIO", "64M")
    paths = [p for group in mpath["path_groups"] for p in group["paths"]]
    assert [(p["dm_state"], p["path_state"], p["online_state"]) for p in paths] == [
        ("active", "ready", "running")
    ] * 2
    (lun,) = node["luns"]
    assert (lun["namespace"], lun["pvc"], lun["pv"], lun["pods"]) == (
        workload.namespace,
        "iscsi-data",
        workload.iscsi_pv,
        [POD],
    )
    assert (lun["target"], lun["lun"], lun["dm"], lun["alias"]) == (
        IQN,
        0,
        mpath["dm"],
        mpath["alias"],
    )
    assert sorted(p["portal"] for p in lun["paths"]) == list(PORTALS)
    assert {p["role"] for p in lun["paths"]} == {"active"}
    _no_debug_pods_left(cluster, workload)


# -- node-crash on a real kernel (issue 26 item 2): last in this module, it reboots the guest --

#: How long the rebooted guest must stay up with the crash pod's object still there: the
#: kubelet that comes back may start a ``restartPolicy: Never`` pod it never saw running.
STAYS_UP_S = 30


def test_node_crash_reboots_the_real_node_once(
    cluster: Cluster, cluster_node: nodeguest.NodeGuest, workload: Workload
) -> None:
    """The product's refusal, plan and crash pod against the guest, a machine of its own: the
    host nodes are refused and the guest is not; the crash pod node-crash creates reboots the
    guest's kernel (QEMU ends: ``-no-reboot``); booted again, the node comes back with a new
    boot ID, and the same pod does not crash it a second time."""
    nodes = cluster.get_json("nodes")["items"]
    local = Path(BOOT_ID_PATH).read_text().strip()
    assert crash_refusal(nodeguest.NODE_NAME, nodes, local) is None
    hosts = [n["metadata"]["name"] for n in nodes if n["metadata"]["name"] != nodeguest.NODE_NAME]
    assert hosts
    for host in hosts:
        assert "this command runs on" in (crash_refusal(host, nodes, local) or ""), host

    guest = nodeguest.NODE_NAME
    planned = run_cli(
        "validate-persistence", "-s", e2e.HOSTPATH_CLASS, "-n", workload.namespace,
        "--disruptions", "node-crash", "--node", guest, "--crash-node", guest, "--dry-run",
    )  # fmt: skip
    assert planned.exit_code == 0, planned.stderr
    assert f"node-crash (node {guest} rebooted at once without sync)" in planned.stderr

    before = boot_id(cluster.get_json("node", guest))
    assert before is not None
    pod = build_crash_pod("node-crash", workload.namespace, guest, TOOLBOX, before)
    crashed_at = time.monotonic()
    cluster.apply(json.dumps(pod), workload.namespace)
    code = cluster_node.wait_exit(180)
    assert code is not None, "the guest did not reboot within 180 s of the crash pod"
    gone_s = time.monotonic() - crashed_at

    cluster_node.boot()
    deadline = time.monotonic() + 300
    node = cluster.get_json("node", guest)
    while not (boot_id(node) not in (None, before) and node_ready(node)):
        assert time.monotonic() < deadline, f"no new boot ID and Ready: {boot_id(node)}"
        assert cluster_node.proc is not None
        assert cluster_node.proc.poll() is None, "the guest ended again" + cluster_node.tails()
        time.sleep(2)
        node = cluster.get_json("node", guest)
    back_s = time.monotonic() - crashed_at

    time.sleep(STAYS_UP_S)  # the pod's object is still there: it must not crash this boot
    assert cluster_node.proc is not None
    assert cluster_node.proc.poll() is None, "the crash pod crashed the new boot" + (
        cluster_node.tails()
    )
    cluster.kubectl_run(
        "-n", workload.namespace, "delete", "pod", "node-crash", "--ignore-not-found",
        "--grace-period=0", "--force",
    )  # fmt: skip
    cluster_node.timings["crash_qemu_ended_s"] = round(gone_s, 1)
    cluster_node.timings["crash_to_ready_s"] = round(back_s, 1)
