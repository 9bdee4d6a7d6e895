"""Reading Kubernetes objects given as plain JSON dicts: one set of helpers for every feature.

Objects from the API, from ``kubectl get -o json`` captures and from our own manifests are all
plain dicts whose fields may be missing; these helpers read them without ``(x.get(k) or {})``
chains and never raise on a missing or mistyped field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: A Kubernetes object, or a part of one, as the API's JSON has it: the one name for it, in every
#: layer (a manifest we create, an object we read, a fixture).
JsonDict = dict[str, Any]

#: The annotations that make a StorageClass, or a VolumeSnapshotClass, the cluster's default.
DEFAULT_SC_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
DEFAULT_VSC_ANNOTATION = "snapshot.storage.kubernetes.io/is-default-class"

#: OpenShift assigns pod UIDs from this namespace range and rejects pods that pick their own.
OPENSHIFT_UID_RANGE_ANNOTATION = "openshift.io/sa.scc.uid-range"

_EMPTY: Mapping[str, Any] = {}


def dig(obj: Any, *keys: str) -> Any:
    """``obj[k1][k2]…``, or None as soon as a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def section(obj: Any, *keys: str) -> Mapping[str, Any]:
    """Like :func:`dig`, but a missing or non-mapping result is an empty mapping."""
    found = dig(obj, *keys)
    return found if isinstance(found, Mapping) else _EMPTY


def name_of(obj: Any) -> str:
    """``metadata.name``, or ``""``."""
    return str(dig(obj, "metadata", "name") or "")


def annotations_of(obj: Any) -> Mapping[str, Any]:
    """``metadata.annotations``, or an empty mapping."""
    return section(obj, "metadata", "annotations")


def labels_of(obj: Any) -> Mapping[str, Any]:
    """``metadata.labels``, or an empty mapping."""
    return section(obj, "metadata", "labels")


def annotation_true(obj: Any, *keys: str) -> bool:
    """Whether any of the annotations is the string ``true`` (any case)."""
    annotations = annotations_of(obj)
    return any(str(annotations.get(key, "")).lower() == "true" for key in keys)


def pvc_capacity(pvc: Any) -> str | None:
    """The bound capacity of a claim (``status.capacity.storage``), else what it requested."""
    found = dig(pvc, "status", "capacity", "storage") or dig(
        pvc, "spec", "resources", "requests", "storage"
    )
    return str(found) if found else None


def is_default_storage_class(storage_class: Any) -> bool:
    """Whether the StorageClass is annotated as the default."""
    return annotation_true(storage_class, *DEFAULT_SC_ANNOTATIONS)


def is_default_snapshot_class(snapshot_class: Any) -> bool:
    """Whether the VolumeSnapshotClass is annotated as the default."""
    return annotation_true(snapshot_class, DEFAULT_VSC_ANNOTATION)


#: The snapshot controller's finalizer on a VolumeSnapshot that a PVC is being restored from.
SNAPSHOT_AS_SOURCE_FINALIZER = "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection"


def deletion_waits_for_resync(obj: Any) -> bool:
    """Whether a terminating object may be stuck until its controller's next periodic resync.

    The external-snapshotter keeps SNAPSHOT_AS_SOURCE_FINALIZER on a deleted VolumeSnapshot while
    its informer still shows a PVC restoring from it, and then only looks again on the next change
    to the snapshot or at the resync (15 minutes by default). Seen on the test cluster: the PVC was
    deleted and gone, the snapshot's delete was handled a moment before the controller saw that,
    and the snapshot stayed for 11 minutes. Any change to the object makes the controller look
    again (see kube.waits.nudge).
    """
    finalizers = dig(obj, "metadata", "finalizers") or ()
    return bool(dig(obj, "metadata", "deletionTimestamp")) and (
        SNAPSHOT_AS_SOURCE_FINALIZER in finalizers
    )
