"""Node reports of mount-audit and iscsi: built from a node's sections as the debug pod returns
them, mapped to pods/PVs/PVCs given as plain ``kubectl get -o json`` items, and rendered.

The cluster objects here are data, not a fake API: the code under test only reads their fields.
Mount tables written inline below are INVENTED (kubelet paths and devices no capture shows
together); every other input is a fixture from tests/fixtures (see the SOURCES.md files).
"""

from __future__ import annotations

import io
from typing import Any

from kubectl_storage.core.iscsi.node_parse import parse_block_devices
from kubectl_storage.core.iscsi.node_report import build_node_report as iscsi_node
from kubectl_storage.core.iscsi.node_report import build_report as iscsi_report
from kubectl_storage.core.mount_audit.node_report import (
    build_node_report,
    build_report,
    parse_nfs_params,
)
from kubectl_storage.core.nodes.capture import NodeCapture
from kubectl_storage.core.nodes.kubelet_paths import volume_handle_sha256
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.operations.iscsi import iscsi_files
from kubectl_storage.operations.mount_audit import audit_files
from kubectl_storage.render.iscsi import write_iscsi_table
from kubectl_storage.render.mount_audit import write_mount_audit_table
from tests.conftest import FIXTURES

POD_UID = "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
PV = "pvc-3c1d2e4f-1111-4222-8333-944455556666"
MOUNTINFO = FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo"
PATH_DOWN = "stockage_path_down_failed_faulty.txt"


def pod(
    name: str,
    uid: str,
    node: str,
    claim: str,
    namespace: str = "team-a",
    read_only: bool = False,
    image: str = "busybox",
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": uid},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "main", "image": image}],
            "volumes": [
                {
                    "name": "data",
                    "persistentVolumeClaim": {"claimName": claim, "readOnly": read_only},
                }
            ],
        },
        "status": {"phase": "Running"},
    }


def pv(name: str, claim: str, driver: str, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "claimRef": {"name": claim, "namespace": "team-a"},
            "csi": {"driver": driver, "volumeHandle": f"handle-{name}"},
            "storageClassName": "shared-nfs",
            "accessModes": ["ReadWriteMany"],
            **spec,
        },
    }


def pvc(name: str, volume: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {"volumeName": volume, "storageClassName": "shared-nfs"},
    }


def storage_class(options: list[str]) -> dict[str, Any]:
    return {"metadata": {"name": "shared-nfs"}, "mountOptions": options}


def capture(node: str = "w1", error: str | None = None, **sections: str) -> NodeCapture:
    """A node's output as inspect_nodes returns it (section names use dashes)."""
    named = {name.replace("_", "-"): text for name, text in sections.items()}
    return NodeCapture.from_sections(node, named, error)


# ---------------------------------------------------------------------------------------------
# mount-audit
# ---------------------------------------------------------------------------------------------


def test_mount_is_mapped_to_its_claim_and_requested_options_are_compared() -> None:
    objects = VolumeObjects(
        pods=(pod("web-0", POD_UID, "w1", "shared"),),
        pvs=(pv(PV, "shared", "file.csi.azure.com", mountOptions=["nfsvers=4.1", "nconnect=8"]),),
        pvcs=(pvc("shared", PV),),
        storage_classes=(storage_class(["nfsvers=4.1", "nconnect=8"]),),
    )
    node = build_node_report(capture(mountinfo=MOUNTINFO.read_text()), objects, None)
    (mount,) = [m for m in node.mounts if m.owner.pod]
    owner = mount.owner
    assert (owner.namespace, owner.pod, owner.pvc, owner.pv) == ("team-a", "web-0", "shared", PV)
    assert owner.storage_class == "shared-nfs"
    assert owner.driver == "file.csi.azure.com"
    assert mount.requested_options == ("nfsvers=4.1", "nconnect=8")
    (k8s001,) = [f for f in mount.findings if f.id == "NFSK8S001"]
    assert "nconnect" in k8s001.message  # asked for 8, the kernel runs 4
    (volume,) = [v.owner for v in node.volumes if v.owner.pod == "web-0"]
    assert (volume.namespace, volume.pvc, volume.storage_class) == (
        "team-a",
        "shared",
        "shared-nfs",
    )


def test_a_staged_volume_without_a_pod_on_the_node_is_still_mapped() -> None:
    # Staging paths name the driver and the SHA-256 of the volume handle; no pod on this node
    # uses the volume any more, so the lookup falls back from the node's objects to all of them.
    handle = "rg#acct01#share01"
    staging = (
        "/var/lib/kubelet/plugins/kubernetes.io/csi/file.csi.azure.com/"
        f"{volume_handle_sha256(handle)}/globalmount"
    )
    mountinfo = (
        f"100 25 0:52 / {staging} rw,relatime shared:60 - nfs4 "
        "acct01.file.core.windows.net:/acct01/share01 rw,vers=4.1,hard,proto=tcp,sec=sys\n"
    )
    volume = pv(PV, "shared", "file.csi.azure.com")
    volume["spec"]["csi"]["volumeHandle"] = handle
    objects = VolumeObjects(
        pods=(pod("web-0", POD_UID, "other-node", "shared"),),
        pvs=(volume,),
        pvcs=(pvc("shared", PV),),
    )
    (mount,) = build_node_report(capture(mountinfo=mountinfo), objects, None).mounts
    assert (mount.owner.pv, mount.owner.pvc, mount.owner.namespace) == (PV, "shared", "team-a")
    assert mount.owner.pod is None
    assert mount.owner.kind == "global-mount"


def test_without_objects_the_requested_options_are_unknown() -> None:
    node = build_node_report(capture(mountinfo=MOUNTINFO.read_text()), None, None)
    for mount in node.mounts:
        assert mount.requested_options is None
        assert "NFSK8S001" not in [f.id for f in mount.findings]


NOCTO_MOUNTINFO = (
    "25 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/root rw\n"
    f"101 25 0:52 / /var/lib/kubelet/pods/{POD_UID}/volumes/kubernetes.io~csi/{PV}/mount "
    "rw,relatime shared:60 - nfs4 10.0.0.5:/share rw,vers=4.1,rsize=1048576,wsize=1048576,"
    "hard,nocto,proto=tcp,timeo=600,retrans=2,sec=sys,addr=10.0.0.5\n"
)


def nocto_severity(pods: tuple[dict[str, Any], ...]) -> str:
    objects = VolumeObjects(
        pods=pods, pvs=(pv(PV, "shared", "nfs.csi.k8s.io"),), pvcs=(pvc("shared", PV),)
    )
    node = build_node_report(capture(mountinfo=NOCTO_MOUNTINFO), objects, None)
    (mount,) = node.mounts
    (nfs051,) = [f for f in mount.findings if f.id == "NFS051"]
    return nfs051.severity.value


def test_nocto_is_a_warning_only_when_several_nodes_write() -> None:
    one_node = (pod("a", POD_UID, "w1", "shared"),)
    two_nodes = (*one_node, pod("b", "uid-b", "w2", "shared"))
    reader_elsewhere = (*one_node, pod("c", "uid-c", "w2", "shared", read_only=True))
    assert nocto_severity(one_node) == "info"
    assert nocto_severity(two_nodes) == "warn"
    assert nocto_severity(reader_elsewhere) == "info"


def test_live_sections_kernel_params_and_unreadable_mountstats() -> None:
    node = build_node_report(
        capture(
            kernel="5.15.0-91-generic\n",
            mountinfo=NOCTO_MOUNTINFO,
            mountstats="cat: /proc/1/mountstats: Permission denied\n",
            nfs_params=(
                "/sys/module/nfs/parameters/max_session_slots: 64\n"
                "/sys/module/sunrpc/parameters/tcp_max_slot_table_entries: 2\n"
            ),
        ),
        None,
        None,
    )
    assert node.kernel == "5.15.0-91-generic"
    assert node.nfs_parameters == {
        "nfs.max_session_slots": "64",
        "sunrpc.tcp_max_slot_table_entries": "2",
    }
    assert node.mounts[0].stats is None
    assert list(node.warnings) == [
        "mountstats not readable (cat: /proc/1/mountstats: Permission denied): "
        "no per-mount counters or defaulted options"
    ]


def test_nfs_params_ignore_other_lines() -> None:
    assert parse_nfs_params("garbage\n/sys/module/nfs/parameters/nfs4_disable_idmapping: Y") == {
        "nfs.nfs4_disable_idmapping": "Y"
    }


def test_failed_node_keeps_its_reason_and_counts_in_the_summary() -> None:
    failed = build_node_report(capture("w2", error="node NotReady (KubeletNotReady)"), None, None)
    ok = build_node_report(capture("w1", mountinfo=NOCTO_MOUNTINFO), None, None)
    report = build_report([ok, failed], source="cluster", profile=None)
    assert failed.error == "node NotReady (KubeletNotReady)"
    assert failed.mounts == ()
    assert report.summary.nodes_failed == 1
    assert report.to_dict()["summary"]["nodes_failed"] == 1
    out = io.StringIO()
    write_mount_audit_table(report, out)
    assert "error: node NotReady (KubeletNotReady)" in out.getvalue()


def test_unreadable_mountinfo_is_a_node_error() -> None:
    node = build_node_report(
        capture(mountinfo="cat: /proc/1/mountinfo: Permission denied\n"), None, None
    )
    assert node.error is not None
    assert node.error.startswith("mount table unreadable")


def test_mount_audit_golden_table(golden: Any) -> None:
    stats = FIXTURES / "mountstats" / "invented-edge-cases.mountstats"
    # Two unrelated captures: each its own node (NODE=FILE), as in the golden since it was made.
    report = audit_files([f"{MOUNTINFO.name}={MOUNTINFO}", f"{stats.name}={stats}"], None, None)
    for wide, name in (
        (False, "mount-audit-fixtures.txt"),
        (True, "mount-audit-fixtures-wide.txt"),
    ):
        out = io.StringIO()
        write_mount_audit_table(report, out, wide)
        golden(name, out.getvalue())


# ---------------------------------------------------------------------------------------------
# iscsi
# ---------------------------------------------------------------------------------------------

NO_TOOLS = (
    "tool multipath: absent\ntool multipathd: absent\ntool iscsiadm: absent\n"
    "tool sanlun: absent\ndaemon multipathd: stopped\ndaemon iscsid: stopped\n"
)


def test_node_without_iscsi_reports_cleanly() -> None:
    node = iscsi_node(
        capture(
            kernel="6.1.0\n",
            tools=NO_TOOLS,
            iscsi_sysfs="",
            block_devices="sda holders= slaves=\nloop0 holders= slaves=\n",
            multipathd_json="",
            multipath_ll="",
            iscsiadm_session="",
            multipath_conf="",
            mountinfo=NOCTO_MOUNTINFO,
        ),
        VolumeObjects(),
    )
    assert node.error is None
    assert node.status == "no iSCSI sessions, multipath not installed"
    assert node.sessions == ()
    assert node.multipath_maps == ()
    assert node.findings == ()
    assert node.warnings == ()
    assert node.tools.multipath_installed is False
    assert node.tools.to_dict() == {
        "probed": True,
        "multipath": None,
        "multipathd": None,
        "iscsiadm": None,
        "sanlun": None,
        "multipathd_running": False,
        "iscsid_running": False,
    }


def test_sessions_without_multipathd_are_an_error() -> None:
    tools = NO_TOOLS.replace("tool iscsiadm: absent", "tool iscsiadm: /usr/sbin/iscsiadm")
    tools = tools.replace("daemon iscsid: stopped", "daemon iscsid: running")
    sysfs = (FIXTURES / "iscsiadm" / "invented_sysfs_dump.txt").read_text()
    node = iscsi_node(
        capture(tools=tools, iscsi_sysfs=sysfs, iscsiadm_session="iscsiadm: No active sessions.\n"),
        None,
    )
    ids = [f.id for f in node.findings]
    assert "MP000" in ids  # sessions exist, multipath is not installed
    assert "ISCSI008" in ids  # and so the disks are used without multipath
    assert node.status == "2 iSCSI session(s), multipath not installed"
    assert node.warnings == ()  # "No active sessions" is a normal answer


def test_multipathd_json_is_completed_from_multipath_ll() -> None:
    mpathj = (
        '{"major_version": 0, "minor_version": 1, "maps": [{"name": "mpathj", '
        '"uuid": "36005076306ffd69d0000000000001004", "sysfs": "dm-17", "queueing": "on", '
        '"vend": "IBM     ", "prod": "2145", "features": "0", "hwhandler": "0", '
        '"write_prot": "rw", "path_groups": [{"selector": "service-time 0", "pri": 0, '
        '"dm_st": "enabled", "paths": [{"dev": "sde", "dev_t": "8:64", "dm_st": "active", '
        '"dev_st": "running", "chk_st": "ready"}]}]}]}'
    )
    text = (FIXTURES / "multipath" / "ubiquity_ibm_apostrophe_tree_warnings.txt").read_text()
    node = iscsi_node(capture(multipathd_json=mpathj, multipath_ll=text), None)
    (mpath,) = node.multipath_maps
    assert node.maps_source == "multipathd-json"
    assert mpath.queueing == "on"  # from JSON
    assert mpath.size == "1.0G"  # from multipath -ll
    assert mpath.path_groups[0].paths[0].hctl == "39:0:0:1"  # from multipath -ll
    (mpath_json,) = node.to_dict()["multipath_maps"]
    assert (mpath_json["queueing"], mpath_json["size"]) == ("on", "1.0G")


def test_multipathd_not_answering_falls_back_to_multipath_ll() -> None:
    text = (FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt").read_text()
    node = iscsi_node(capture(multipathd_json="error receiving packet\n", multipath_ll=text), None)
    assert node.maps_source == "multipath-ll"
    assert len(node.multipath_maps) == 2
    assert node.warnings[0].startswith("multipathd did not answer with maps")


# A kubelet staging mount of an ext4 filesystem on /dev/mapper/mpatha, the pod's bind mount of
# it, and a raw block volume (a bind mount of /dev/dm-3 into the pod's volumeDevices).
BLOCK_MOUNTINFO = (
    "25 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/root rw\n"
    "200 25 253:2 / /var/lib/kubelet/plugins/kubernetes.io/csi/csi.trident.netapp.io/"
    "5c3b0aa9e1f6c0d2a1b4e9f8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8/globalmount rw,relatime "
    "shared:80 - ext4 /dev/mapper/mpatha rw\n"
    "201 25 253:2 / /var/lib/kubelet/pods/aaaa-1111/volumes/kubernetes.io~csi/pvc-db/mount "
    "rw,relatime shared:80 - ext4 /dev/mapper/mpatha rw\n"
    "202 25 0:5 /dm-3 /var/lib/kubelet/plugins/kubernetes.io/csi/volumeDevices/publish/"
    "pvc-raw/bbbb-2222 rw,nosuid shared:2 - devtmpfs udev rw,size=4000000k,mode=755\n"
)
BLOCK_DEVICES = (
    "sdb holders=dm-3, slaves=\nsdc holders=dm-3, slaves=\nsdd holders=dm-2, slaves=\n"
    "sde holders=dm-2, slaves=\n"
    "dm-2 holders= slaves=sdd,sde, dm_name=mpatha dm_uuid=mpath-3600140557c66dd047214999a651eb037\n"
    "dm-3 holders= slaves=sdb,sdc, dm_name=mpathb dm_uuid=mpath-3600140532c8eec0828442df8df844bb1\n"
)


def test_block_devices_lines() -> None:
    devices = parse_block_devices(BLOCK_DEVICES)
    assert devices[0] == {"name": "sdb", "holders": ["dm-3"], "slaves": []}
    assert devices[4]["dm_name"] == "mpatha"
    assert devices[4]["slaves"] == ["sdd", "sde"]


def test_luns_are_mapped_to_claims_through_the_kubelet_mounts() -> None:
    objects = VolumeObjects(
        pods=(
            pod("db-0", "aaaa-1111", "chunk1", "db", image="netapp/trident:24.06"),
            pod("raw-0", "bbbb-2222", "chunk1", "raw"),
        ),
        pvs=(
            pv("pvc-db", "db", "csi.trident.netapp.io"),
            pv("pvc-raw", "raw", "csi.trident.netapp.io"),
        ),
        pvcs=(pvc("db", "pvc-db"), pvc("raw", "pvc-raw")),
    )
    node = iscsi_node(
        capture(
            "chunk1",
            multipath_ll=(
                FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt"
            ).read_text(),
            iscsiadm_session=(
                FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt"
            ).read_text(),
            block_devices=BLOCK_DEVICES,
            mountinfo=BLOCK_MOUNTINFO,
            multipath_conf="defaults {\n    find_multipaths yes\n}\n",
        ),
        objects,
    )
    luns = {row.dm: row for row in node.luns}
    db = luns["dm-2"].owner
    assert (db.namespace, db.pvc, db.pv, db.pods) == ("team-a", "db", "pvc-db", ("db-0",))
    assert (luns["dm-3"].owner.pvc, luns["dm-3"].owner.pods) == ("raw", ("raw-0",))
    assert luns["dm-2"].lun == 0
    roles = [(p.dev, p.role) for p in luns["dm-3"].paths]
    assert roles == [("sdb", "failed"), ("sdc", "active")]
    (row,) = [row for row in node.to_dict()["luns"] if row["dm"] == "dm-2"]
    assert (row["namespace"], row["pvc"], row["pods"]) == ("team-a", "db", ["db-0"])
    # A Trident node plugin runs on this node: find_multipaths yes is a warning, not info.
    (mp003,) = [f for f in node.findings if f.id == "MP003"]
    assert mp003.severity is Severity.WARN
    report = iscsi_report([node], "cluster")
    out = io.StringIO()
    write_iscsi_table(report, out, wide=True)
    assert "team-a/db" in out.getvalue()


def test_iscsi_golden_tables(golden: Any) -> None:
    report = iscsi_files(
        [
            FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt",
            FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt",
            FIXTURES / "multipath" / "conf_stockage_rocky_duplicate_defaults.conf",
            FIXTURES / "sanlun" / "invented_two_luns_path_down.txt",
        ],
        "chunk1",
    )
    for wide, name in ((False, "iscsi-stockage.txt"), (True, "iscsi-stockage-wide.txt")):
        out = io.StringIO()
        write_iscsi_table(report, out, wide)
        golden(name, out.getvalue())


def test_iscsi_golden_no_iscsi(golden: Any) -> None:
    node = iscsi_node(capture("tk8s-node", kernel="6.1.0\n", tools=NO_TOOLS, iscsi_sysfs=""), None)
    out = io.StringIO()
    write_iscsi_table(iscsi_report([node], "cluster"), out)
    golden("iscsi-no-iscsi.txt", out.getvalue())
