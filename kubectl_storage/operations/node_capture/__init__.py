"""What node commands read besides the node itself: captures grouped by node, and the volumes,
claims and classes behind kubelet's mount paths. Shared by mount-audit and iscsi.

Offline (``--from-file``), the files given together are one node's, named by ``--node-name`` or
else :data:`DEFAULT_NODE`; ``--from-file NODE=FILE`` puts a file on a named node, so one run can
hold several nodes. ``kubectl get … -o json`` (or ``-o yaml``) captures among them are not node
files: they are read as the cluster's objects, as the live path reads them, for every node.

The package: :mod:`.captures` (node texts, files to nodes), :mod:`.kubectl_files` (object
captures read offline) and :mod:`.objects` (the volumes behind kubelet's paths).
"""

from kubectl_storage.operations.node_capture.captures import (
    DEFAULT_NODE,
    CaptureFiles,
    NodeCapture,
    first_line,
    line_warnings,
    read_capture_files,
    split_node_assignment,
)
from kubectl_storage.operations.node_capture.kubectl_files import (
    kubernetes_items,
    volume_objects_from_items,
)
from kubectl_storage.operations.node_capture.objects import (
    KUBELET_ROOTS,
    VolumeObjects,
    read_volume_objects,
)

__all__ = [
    "DEFAULT_NODE",
    "KUBELET_ROOTS",
    "CaptureFiles",
    "NodeCapture",
    "VolumeObjects",
    "first_line",
    "kubernetes_items",
    "line_warnings",
    "read_capture_files",
    "read_volume_objects",
    "split_node_assignment",
    "volume_objects_from_items",
]
