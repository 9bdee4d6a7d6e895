"""`kubectl storage classes`: read StorageClasses, snapshot classes and CSI drivers."""

from __future__ import annotations

from kubectl_storage.core.classes import ClassList, build_class_list
from kubectl_storage.core.k8s.kinds import CSI_DRIVER, STORAGE_CLASS, VOLUME_SNAPSHOT_CLASS
from kubectl_storage.errors import NotFoundError, UsageError
from kubectl_storage.kube.api import JsonDict, KubeApi


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


def default_storage_class(api: KubeApi) -> str:
    """The cluster's one default StorageClass, for commands run without -s.

    Raises:
        UsageError: there is none, or several.
    """
    defaults = [c.name for c in list_classes(api).storage_classes if c.is_default]
    if len(defaults) != 1:
        raise UsageError(
            "no StorageClass given and the cluster has "
            + ("no default class" if not defaults else f"{len(defaults)} default classes"),
            "Name one with -s (kubectl storage classes lists them).",
        )
    return defaults[0]
