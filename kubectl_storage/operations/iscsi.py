"""`kubectl storage iscsi`: iSCSI sessions and dm-multipath maps of nodes, and what uses them.

Live: one privileged debug pod per node (it runs the host's own ``multipathd``, ``multipath``
and ``iscsiadm`` with ``chroot /host``) collects sysfs, the tools' output, the configuration
files (password lines removed on the node) and mountinfo; PVs and PVCs are read once to name the
claim behind each LUN. Offline: the captured files (``--from-file``), each classified as the
live section it stands for, with ``kubectl get … -o json`` captures standing for the cluster's
objects. Both end in :func:`~kubectl_storage.core.iscsi.node_report.inspect_captures`, which
parses, maps, runs the MP/ISCSI rules and builds the report.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from kubectl_storage.core.iscsi.node_parse import iscsi_file_kind
from kubectl_storage.core.iscsi.node_report import inspect_captures
from kubectl_storage.core.iscsi.report import IscsiReport
from kubectl_storage.core.nodes.collect import ISCSI_SECTIONS
from kubectl_storage.core.nodes.kernel_health import SECTION as KERNEL_LOG
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

#: What the pod collects: the iSCSI sections plus mountinfo, to find which claim uses a device.
SECTIONS = (*ISCSI_SECTIONS, "mountinfo", KERNEL_LOG)

# iscsi runs the host's tools in the host root: privileged.
ISCSI_INSPECTION = InspectionKind("iscsi", SECTIONS, privileged=True)


def iscsi_command() -> InspectionCommand[IscsiReport]:
    """The pipeline command: privileged debug pods on the chosen nodes, then
    :func:`inspect_iscsi`."""
    return inspection_command(ISCSI_INSPECTION, inspect_iscsi)


def inspect_iscsi(api: KubeApi, outputs: list[NodeOutput]) -> IscsiReport:
    """Read the cluster's pods, volumes and claims, then report on the nodes' outputs."""
    log.info("reading pods, volumes and claims")
    objects = read_volume_objects(api)
    return inspect_captures([output.capture() for output in outputs], objects, source="cluster")


def iscsi_files(paths: Sequence[str | Path], node_name: str | None) -> IscsiReport:
    """Report on captured files: ``multipath -ll``, multipathd JSON, ``iscsiadm``, sysfs dumps,
    ``sanlun lun show -p``, multipath.conf and mountinfo (to map devices to kubelet volumes),
    kernel logs (``dmesg``, ``journalctl -k``), and ``kubectl get … -o json|yaml`` captures of
    pods, PVs and PVCs (to name the claims).

    The files are one node's unless ``NODE=FILE`` says otherwise
    (:func:`~kubectl_storage.operations.node_capture.read_capture_files`).

    Raises:
        UsageError: a file is unreadable or in no format we know.
    """
    files = read_capture_files(paths, node_name, classify_iscsi_file)
    return inspect_captures(files.nodes, files.objects, source="files")


def classify_iscsi_file(path: Path, text: str) -> str:
    """The section a ``--from-file`` input stands for (``multipath-ll``, ``iscsi-sysfs``...).

    Raises:
        UsageError: the file is no iSCSI or multipath output we read.
    """
    kind = iscsi_file_kind(text)
    if kind is None:
        raise unknown_format(
            path,
            text,
            "not iSCSI or multipath output",
            "Give `multipath -ll`, `multipathd show maps json`, `iscsiadm -m session [-P 3]`, "
            "`iscsiadm -m node`, `sanlun lun show -p`, /etc/multipath.conf, /etc/iscsi/iscsid.conf "
            "/proc/1/mountinfo, or the node's kernel log (`dmesg`, `journalctl -k`).",
        )
    return kind
