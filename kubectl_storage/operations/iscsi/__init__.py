"""`kubectl storage iscsi`: iSCSI sessions and dm-multipath maps of nodes, and what uses them.

Live (:mod:`.live`): one privileged debug pod per node (it runs the host's own ``multipathd``,
``multipath`` and ``iscsiadm`` with ``chroot /host``) collects sysfs, the tools' output, the
configuration files (password lines removed on the node) and mountinfo; PVs and PVCs are read
once to name the claim behind each LUN. Offline (:mod:`.files`): the same steps on captured
files (``--from-file``), with ``kubectl get … -o json`` captures standing for the cluster's
objects; lines a paste broke are rejoined or skipped with a warning each.

Both end in :mod:`.node`: one node's texts parsed (:mod:`.parse`), its devices mapped to claims
with a sanlun-like view of each LUN (:mod:`.luns`), the MP/ISCSI rules run, and the typed
:class:`~kubectl_storage.core.iscsi.report.IscsiReport` built. A node without iSCSI is a normal
result, not an error.
"""

from kubectl_storage.operations.iscsi.files import classify_iscsi_file, iscsi_files
from kubectl_storage.operations.iscsi.live import (
    ISCSI_INSPECTION,
    SECTIONS,
    inspect_iscsi,
    iscsi_command,
)
from kubectl_storage.operations.iscsi.luns import TRIDENT_CSI_DRIVER, lun_view, path_role
from kubectl_storage.operations.iscsi.node import build_node_report, build_report
from kubectl_storage.operations.iscsi.parse import parse_block_devices, tool_facts

__all__ = [
    "ISCSI_INSPECTION",
    "SECTIONS",
    "TRIDENT_CSI_DRIVER",
    "build_node_report",
    "build_report",
    "classify_iscsi_file",
    "inspect_iscsi",
    "iscsi_command",
    "iscsi_files",
    "lun_view",
    "parse_block_devices",
    "path_role",
    "tool_facts",
]
