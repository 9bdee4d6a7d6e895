"""A lab phase's raw collection through the live code path, minus the pod.

The guest ran the same collection script a node inspection pod runs; here its output is split
with the live ``split_sections``, wrapped in the live ``NodeOutput`` (and its ``NodeCapture``), and
given to the live ``build_node_report`` of mount-audit or iscsi, together with the Kubernetes
objects a cluster would hold for the volumes the scenario mounted (pods, PVs, PVCs, built from
the phase's ``volumes.tsv``), so the kubelet-path join and the requested options are the live
ones too.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from kubectl_storage.core.iscsi import node_report as iscsi_nodes
from kubectl_storage.core.iscsi.report import IscsiReport
from kubectl_storage.core.mount_audit import node_report as mount_nodes
from kubectl_storage.core.mount_audit.report import MountAuditReport
from kubectl_storage.core.nodes.collect import split_sections
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.operations.node_inspection import NodeOutput

#: The node name the lab's captures carry (the guest's hostname).
NODE = "nodelab"
NAMESPACE = "nodelab"


def node_output(phase: Path, kind: str) -> NodeOutput:
    """What a debug pod's exec would have returned for this phase, split as the live path does."""
    raw = (phase / f"collect-{kind}.txt").read_text(encoding="utf-8", errors="replace")
    return NodeOutput(NODE, split_sections(raw))


def read_tsv(path: Path) -> list[list[str]]:
    """Tab-separated rows (empty fields kept)."""
    if not path.exists():
        return []
    return [line.split("\t") for line in path.read_text().splitlines() if line.strip()]


def _pod_uid(first_uid: str, index: int) -> str:
    return first_uid if index == 0 else f"{first_uid[:-4]}{index:04d}"


def _claim(pv: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{pv}-claim", "namespace": NAMESPACE},
        "spec": {"volumeName": pv, "storageClassName": "nodelab"},
    }


def _pod(name: str, uid: str, node: str, pv: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": uid},
        "spec": {
            "nodeName": node,
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"{pv}-claim"}}],
        },
        "status": {"phase": "Running"},
    }


def nfs_objects(phase: Path) -> VolumeObjects:
    """The pods, PVs and PVCs behind the phase's NFS mounts (``volumes.tsv``: pv, pod uid, server,
    export, mount point, options, nodes): one in-tree NFS PV per mount with the options as its
    ``mountOptions``, one pod per node that uses it read-write (the first on this node, at the
    UID of the kubelet path)."""
    pods, pvs, pvcs = [], [], []
    for pv, uid, server, export, _mountpoint, options, nodes in read_tsv(phase / "volumes.tsv"):
        pvs.append(
            {
                "metadata": {"name": pv},
                "spec": {
                    "nfs": {"server": server, "path": export},
                    "mountOptions": options.split(",") if options else [],
                    "accessModes": ["ReadWriteMany"],
                    "claimRef": {"namespace": NAMESPACE, "name": f"{pv}-claim"},
                    "storageClassName": "nodelab",
                },
            }
        )
        pvcs.append(_claim(pv))
        for index, node in enumerate(nodes.split(",")):
            pods.append(_pod(f"{pv}-{node}", _pod_uid(uid, index), node, pv))
    return VolumeObjects(pods=tuple(pods), pvs=tuple(pvs), pvcs=tuple(pvcs))


def iscsi_objects(phase: Path) -> VolumeObjects:
    """The pods, CSI PVs and PVCs behind the phase's iSCSI file systems (``volumes.tsv``: pv, pod
    uid, driver, volume handle, device, publish path)."""
    pods, pvs, pvcs = [], [], []
    for pv, uid, driver, handle, _device, _publish in read_tsv(phase / "volumes.tsv"):
        pvs.append(
            {
                "metadata": {"name": pv},
                "spec": {
                    "csi": {"driver": driver, "volumeHandle": handle},
                    "accessModes": ["ReadWriteOnce"],
                    "claimRef": {"namespace": NAMESPACE, "name": f"{pv}-claim"},
                    "storageClassName": "nodelab",
                },
            }
        )
        pvcs.append(_claim(pv))
        pods.append(_pod(f"{pv}-pod", uid, NODE, pv))
    return VolumeObjects(pods=tuple(pods), pvs=tuple(pvs), pvcs=tuple(pvcs))


def typed_mount_report(phase: Path, profile: str | None = None) -> MountAuditReport:
    """mount-audit's node report for an NFS phase, and the report around it."""
    capture = node_output(phase, "mount").capture()
    node = mount_nodes.build_node_report(capture, nfs_objects(phase), profile)
    return mount_nodes.build_report([node], source="cluster", profile=profile)


def typed_iscsi_report(phase: Path) -> IscsiReport:
    """iscsi's node report for an iSCSI phase, and the report around it."""
    capture = node_output(phase, "iscsi").capture()
    node = iscsi_nodes.build_node_report(capture, iscsi_objects(phase))
    return iscsi_nodes.build_report([node], source="cluster")


def typed_report_for(phase: Path, profile: str | None = None) -> MountAuditReport | IscsiReport:
    """The typed report of a phase directory, by what it collected (what render/ draws)."""
    if (phase / "collect-iscsi.txt").exists():
        return typed_iscsi_report(phase)
    return typed_mount_report(phase, profile)


def mount_report(phase: Path, profile: str | None = None) -> dict[str, Any]:
    """:func:`typed_mount_report` as its JSON document (what the tests read)."""
    return typed_mount_report(phase, profile).to_dict()


def iscsi_report(phase: Path) -> dict[str, Any]:
    """:func:`typed_iscsi_report` as its JSON document (what the tests read)."""
    return typed_iscsi_report(phase).to_dict()


def report_for(phase: Path, profile: str | None = None) -> dict[str, Any]:
    """The JSON document of a phase directory's report, by what it collected."""
    return typed_report_for(phase, profile).to_dict()


def volume_handle_sha256(handle: str) -> str:
    """kubelet's staging directory name for a CSI volume handle."""
    return hashlib.sha256(handle.encode()).hexdigest()


def rule_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The findings of the MP/ISCSI and NFS rules, without the kernel log's (KLOG...): the
    guest's kernel log keeps what every earlier phase did to it (paths dropped on purpose), so
    the phases that state the rules' findings do not judge it."""
    return [finding for finding in findings if not finding["id"].startswith("KLOG")]
