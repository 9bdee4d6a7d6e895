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

Last, ``validate-persistence --disruptions node-crash`` on the guest (issue 26): the guest may be
crashed and the host nodes may not (one kernel with this machine); MariaDB on an iSCSI LUN that
the host serves with tgt (so the data outlives the guest), the guest's kernel crashed by the
product's own pod (sysrq b) and booted again by the test as firmware would (QEMU runs with
``-no-reboot``): a durable server passes, one that leaves its redo log in the page cache fails.
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import subprocess
import threading
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
    crash_refusal,
)
from kubectl_storage.core.validate_persistence.report import NODE_CRASH_TESTED
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


# -- node-crash on a real kernel (issue 26): last in this module, they reboot the guest ----------

#: The LUN the host serves the guest with tgt (a userspace iSCSI target), so that the database's
#: data lives outside the guest and outlives its crash.
HOST_IQN = "iqn.2003-01.org.nodelab:host-lun"
HOST_PORTAL = f"{nodeguest.HOST_IP}:3260"
TGT_CONTROL_PORT = "3261"


@contextlib.contextmanager
def _host_lun(directory: Path, size: str = "1200M") -> Iterator[None]:
    """tgtd on the host's end of the tap, serving one file-backed LUN; stopped by PID."""
    backing = directory / "host-lun.img"
    subprocess.run(["truncate", "-s", size, str(backing)], check=True)
    log = (directory / "tgtd.log").open("wb")
    tgtd = subprocess.Popen(
        ["tgtd", "-f", "-C", TGT_CONTROL_PORT, "--iscsi", f"portal={HOST_PORTAL}"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    adm = ["tgtadm", "-C", TGT_CONTROL_PORT, "--lld", "iscsi"]
    try:
        deadline = time.monotonic() + 20
        while subprocess.run(
            [*adm, "--mode", "sys", "--op", "show"], capture_output=True
        ).returncode:
            assert tgtd.poll() is None, (directory / "tgtd.log").read_text()
            assert time.monotonic() < deadline, "tgtd did not answer in 20 s"
            time.sleep(0.2)
        for step in (
            ["--mode", "target", "--op", "new", "--tid", "1", "--targetname", HOST_IQN],
            ["--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1",
             "--backing-store", str(backing)],
            ["--mode", "target", "--op", "bind", "--tid", "1", "--initiator-address", "ALL"],
        ):  # fmt: skip
            subprocess.run([*adm, *step], check=True, capture_output=True)
        yield
    finally:
        tgtd.send_signal(signal.SIGTERM)
        try:
            tgtd.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tgtd.kill()
            tgtd.wait()
        log.close()
        backing.unlink(missing_ok=True)


@contextlib.contextmanager
def _rebooting(guest: nodeguest.NodeGuest) -> Iterator[list[float]]:
    """Boot the guest again whenever QEMU ends (a reboot ends it: ``-no-reboot``), as a
    machine's firmware would; yields the list of times it did."""
    rebooted: list[float] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if guest.proc is not None and guest.proc.poll() is not None:
                rebooted.append(time.monotonic())
                guest.boot()
            stop.wait(0.5)

    thread = threading.Thread(target=watch, name="nodelab-reboot", daemon=True)
    thread.start()
    try:
        yield rebooted
    finally:
        stop.set()
        thread.join()


def _crash_objects(ns: str) -> tuple[str, str, str]:
    """A no-provisioner class and one static iSCSI PV of the host's LUN: (class, PV, YAML)."""
    cls, pv = f"{ns}-host-iscsi", f"{ns}-lun"
    return (
        cls,
        pv,
        f"""
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {{name: {cls}}}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolume
metadata: {{name: {pv}}}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: {cls}
  iscsi: {{targetPortal: "{HOST_PORTAL}", iqn: {HOST_IQN}, lun: 1, fsType: ext4}}
""",
    )


def _node_crash_run(
    cluster: Cluster, guest: nodeguest.NodeGuest, directory: Path, *flags: str
) -> dict[str, Any]:
    """One ``validate-persistence --disruptions node-crash`` on the guest, MariaDB on a fresh
    LUN of the host's; the guest booted again whenever it reboots. Its JSON report."""
    node = nodeguest.NODE_NAME
    ns = f"nodelab-crash-{uuid.uuid4().hex[:6]}"
    cls, pv, objects = _crash_objects(ns)
    with _host_lun(directory), contextlib.ExitStack() as cleanup:
        cluster.kubectl_run("create", "namespace", ns)
        cluster.kubectl_run("label", "namespace", ns, e2e.E2E_NAMESPACE_LABEL)
        cleanup.callback(cluster.kubectl_run, "delete", "namespace", ns, "--ignore-not-found")
        cluster.apply(objects)
        cleanup.callback(cluster.kubectl_run, "delete", "pv", pv, "--ignore-not-found")
        cleanup.callback(cluster.kubectl_run, "delete", "storageclass", cls, "--ignore-not-found")
        before = boot_id(cluster.get_json("node", node))
        with _rebooting(guest) as rebooted:
            result = run_cli(
                "validate-persistence", "-s", cls, "-z", "1Gi", "-n", ns,
                "--disruptions", "node-crash", "--node", node, "--crash-node", node,
                "--image", nodeguest.images.MARIADB_IMAGE, "--no-fsync-probe",
                "--rows", "200", "--timeout", "600", "-o", "json", *flags, timeout=1500,
            )  # fmt: skip
        assert len(rebooted) == 1, f"rebooted {len(rebooted)} times" + guest.tails()
        assert boot_id(cluster.get_json("node", node)) not in (None, before)
        assert result.stdout, result.stderr[-3000:]
        report: dict[str, Any] = json.loads(result.stdout)
        report["exit_code"] = result.exit_code
        assert e2e.managed(cluster, ns, e2e.PERSISTENCE_OBJECTS) == []
        return report


def test_node_crash_is_accepted_for_the_guest_and_refused_for_the_host_nodes(
    cluster: Cluster, cluster_node: nodeguest.NodeGuest
) -> None:
    """The product's rule on the real node list: the host nodes share this machine's kernel,
    the guest is a machine of its own."""
    nodes = cluster.get_json("nodes")["items"]
    local = Path(BOOT_ID_PATH).read_text().strip()
    assert crash_refusal(nodeguest.NODE_NAME, nodes, local) is None
    hosts = [n["metadata"]["name"] for n in nodes if n["metadata"]["name"] != nodeguest.NODE_NAME]
    assert hosts
    for host in hosts:
        assert "this command runs on" in (crash_refusal(host, nodes, local) or ""), host
    node = nodeguest.NODE_NAME
    planned = run_cli(
        "validate-persistence", "-s", e2e.HOSTPATH_CLASS,
        "--disruptions", "node-crash", "--node", node, "--crash-node", node, "--dry-run",
    )  # fmt: skip
    assert planned.exit_code == 0, planned.stderr
    assert f"node-crash (node {node} rebooted at once without sync)" in planned.stderr


def test_node_crash_keeps_every_commit_of_a_durable_server(
    cluster: Cluster, cluster_node: nodeguest.NodeGuest, tmp_path: Path
) -> None:
    """The guest's kernel crashed by the product while MariaDB commits on the host's LUN:
    every acknowledged commit back once it rebooted: pass, and the report says the node's
    power loss was tested."""
    report = _node_crash_run(cluster, cluster_node, tmp_path)
    assert report["exit_code"] == 0, report
    assert report["verdict"] == "pass", report
    (phase,) = [p for p in report["phases"] if p["phase"] == "node-crash"]
    assert phase["verdict"] == "pass", phase
    assert "node-rebooted" in phase["disruption_observed"], phase
    assert report["tested"].endswith(NODE_CRASH_TESTED), report["tested"]
    cluster_node.timings["node_crash_durable"] = phase.get("note", "")


def test_node_crash_loses_commits_a_server_left_in_the_page_cache(
    cluster: Cluster, cluster_node: nodeguest.NodeGuest, tmp_path: Path
) -> None:
    """The same crash against a server that writes its redo log at commit but flushes it
    only every 45 minutes (``innodb_flush_log_at_trx_commit=2``, the longest
    ``innodb_flush_log_at_timeout``): what the guest's page cache held is gone, so
    acknowledged commits are lost and the phase fails. (The same server passes ``crash``,
    a kill of mysqld: tests/e2e/test_persistence_power_off.py.)"""
    report = _node_crash_run(
        cluster, cluster_node, tmp_path, "--allow-non-durable-config",
        "--server-arg=--innodb-flush-log-at-trx-commit=2",
        "--server-arg=--innodb-flush-log-at-timeout=2700",
    )  # fmt: skip
    assert report["exit_code"] == 1, report
    assert report["verdict"] == "fail", report
    (phase,) = [p for p in report["phases"] if p["phase"] == "node-crash"]
    assert phase["verdict"] == "fail", phase
    # what the crash took: acknowledged commits of the writer, or seeded rows
    assert phase["commits"]["acknowledged_lost"] + len(phase.get("missing_ids") or []) > 0, phase
    cluster_node.timings["node_crash_non_durable"] = phase.get("note", "")
