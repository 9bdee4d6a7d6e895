"""`kubectl storage mount-audit`: NFS mounts of nodes, judged against the NFS rules.

Live: collect mountinfo, mountstats, the NFS client parameters and the kernel release from each
node through a debug pod (not privileged) and read pods, PVs, PVCs and StorageClasses once.
Offline: read the captured files (``--from-file``); the Kubernetes side too when ``kubectl get
pv,pvc,sc,pods -o json`` captures are among them. Both end in
:func:`~kubectl_storage.core.mount_audit.node_report.audit_captures`, which maps kubelet mount
paths to the objects, runs the NFS rules and builds the report.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from kubectl_storage.core.mount_audit.node_report import audit_captures, mount_file_kind
from kubectl_storage.core.mount_audit.report import MountAuditReport
from kubectl_storage.core.nodes.collect import MOUNT_SECTIONS
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.operations.node_capture import (
    read_capture_files,
    read_volume_objects,
    unknown_format,
)
from kubectl_storage.operations.node_inspection import (
    InspectionCommand,
    InspectionKind,
    NodeOutput,
    inspection_command,
)

log = logging.getLogger(__name__)

# mount-audit reads mountinfo and mountstats, readable without privilege.
MOUNT_AUDIT_INSPECTION = InspectionKind("mount-audit", MOUNT_SECTIONS, privileged=False)


def mount_audit_command(profile: str | None) -> InspectionCommand[MountAuditReport]:
    """The pipeline command: debug pods on the chosen nodes, then :func:`audit_nodes`."""
    return inspection_command(
        MOUNT_AUDIT_INSPECTION, lambda api, outputs: audit_nodes(api, outputs, profile)
    )


def audit_nodes(api: KubeApi, outputs: list[NodeOutput], profile: str | None) -> MountAuditReport:
    """Read the cluster's volume objects, then audit the nodes' outputs against them."""
    log.info("reading pods, volumes, claims and classes")
    objects = read_volume_objects(api)
    captures = [output.capture() for output in outputs]
    return audit_captures(captures, objects, source="cluster", profile=profile)


def audit_files(
    paths: Sequence[str | Path], node_name: str | None, profile: str | None
) -> MountAuditReport:
    """Audit captured files: mountinfo, /proc/mounts, ``mount``, ``nfsstat -m``, mountstats,
    kernel logs (``dmesg``, ``journalctl -k``), and ``kubectl get … -o json|yaml`` captures of
    pods, PVs, PVCs and StorageClasses.

    The files are one node's unless ``NODE=FILE`` says otherwise
    (:func:`~kubectl_storage.operations.node_capture.read_capture_files`).

    Raises:
        UsageError: a file is unreadable or in no format we know.
    """
    files = read_capture_files(paths, node_name, classify_mount_file)
    return audit_captures(files.nodes, files.objects, source="files", profile=profile)


def classify_mount_file(path: Path, text: str) -> str:
    """The capture kind of one ``--from-file`` input (``mountinfo``, ``mountstats``, ...).

    Raises:
        UsageError: the file is no mount table, ``nfsstat -m``, mountstats output or kernel
            log.
    """
    kind = mount_file_kind(text)
    if kind is None:
        raise unknown_format(
            path,
            text,
            "not a mount table, nfsstat -m, mountstats output or kernel log",
            "Give /proc/<pid>/mountinfo, /proc/mounts, `mount` or `nfsstat -m` output, "
            "/proc/<pid>/mountstats, or the node's kernel log (`dmesg`, `journalctl -k`).",
        )
    return kind
