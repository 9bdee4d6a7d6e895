"""`kubectl storage classes`: read StorageClasses, snapshot classes and CSI drivers."""

from __future__ import annotations

from kubectl_storage.core.classes import ClassList, build_class_list
from kubectl_storage.core.k8s.kinds import CSI_DRIVER, STORAGE_CLASS, VOLUME_SNAPSHOT_CLASS
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.errors import NotFoundError
from kubectl_storage.kube.api import KubeApi


def list_classes(api: KubeApi) -> ClassList:
    """Read the cluster's storage classes and build the report."""
    storage_classes = api.list(STORAGE_CLASS)
    snapshot_classes: list[JsonDict] | None
    try:
        snapshot_classes = api.list(VOLUME_SNAPSHOT_CLASS)
    except NotFoundError:
        # The snapshot CRDs are optional; their absence is a note, not an error.
        snapshot_classes = None
    return build_class_list(storage_classes, snapshot_classes, api.list(CSI_DRIVER))
