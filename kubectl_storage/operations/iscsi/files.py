"""The offline path: ``--from-file`` captures, each classified as the live section it stands
for, grouped by node, then one report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kubectl_storage.core.iscsi.iscsid_conf import looks_like_iscsid_conf
from kubectl_storage.core.iscsi.report import IscsiReport
from kubectl_storage.core.iscsi.sessions import IscsiInputFormat, detect_iscsi_format
from kubectl_storage.core.nodes.capture import first_line
from kubectl_storage.core.nodes.mount_model import FORMAT_MOUNTINFO
from kubectl_storage.core.nodes.mounts import detect_mount_format
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.iscsi.node import build_node_report, build_report
from kubectl_storage.operations.node_capture import read_capture_files

# --from-file formats → the live section they stand for.
_FILE_KINDS = {
    IscsiInputFormat.MULTIPATH_LL: "multipath-ll",
    IscsiInputFormat.MULTIPATHD_JSON: "multipathd-json",
    IscsiInputFormat.MULTIPATH_CONF: "multipath-conf",
    IscsiInputFormat.ISCSIADM_SESSION: "iscsiadm-session",
    IscsiInputFormat.ISCSIADM_SESSION_DETAIL: "iscsiadm-session",
    IscsiInputFormat.ISCSIADM_NODE: "iscsiadm-node",
    IscsiInputFormat.ISCSI_SYSFS: "iscsi-sysfs",
    IscsiInputFormat.SANLUN: "sanlun",
}


def iscsi_files(paths: Sequence[str | Path], node_name: str | None) -> IscsiReport:
    """Report on captured files: ``multipath -ll``, multipathd JSON, ``iscsiadm``, sysfs dumps,
    ``sanlun lun show -p``, multipath.conf and mountinfo (to map devices to kubelet volumes),
    and ``kubectl get … -o json|yaml`` captures of pods, PVs and PVCs (to name the claims).

    The files are one node's unless ``NODE=FILE`` says otherwise
    (:func:`~kubectl_storage.operations.node_capture.read_capture_files`).

    Raises:
        UsageError: a file is unreadable or in no format we know.
    """
    files = read_capture_files(paths, node_name, classify_iscsi_file)
    nodes = [build_node_report(capture, files.objects) for capture in files.nodes]
    return build_report(nodes, source="files")


def classify_iscsi_file(path: Path, text: str) -> str:
    """The section a ``--from-file`` input stands for (``multipath-ll``, ``iscsi-sysfs``...)."""
    fmt = detect_iscsi_format(text)
    if fmt in _FILE_KINDS:
        return _FILE_KINDS[fmt]
    if "No active sessions" in text:
        return "iscsiadm-session"
    if detect_mount_format(text) == FORMAT_MOUNTINFO:
        return "mountinfo"
    if looks_like_iscsid_conf(text):
        return "iscsid-conf"
    raise UsageError(
        f"--from-file {path}: not iSCSI or multipath output"
        + (f" (it starts with {first_line(text)!r})" if text.strip() else " (it is empty)"),
        "Give `multipath -ll`, `multipathd show maps json`, `iscsiadm -m session [-P 3]`, "
        "`iscsiadm -m node`, `sanlun lun show -p`, /etc/multipath.conf, /etc/iscsi/iscsid.conf "
        "or /proc/1/mountinfo.",
    )
