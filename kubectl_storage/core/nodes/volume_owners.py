"""Kubelet mount paths mapped back to Kubernetes objects (rules.md C.1, C.4).

:func:`resolve_volume` joins a parsed kubelet path
(:mod:`kubectl_storage.core.nodes.kubelet_paths`) with pods, PVs, PVCs and StorageClasses given
as plain Kubernetes JSON dicts, giving the :class:`VolumeOwner` and the :class:`VolumeContext`
the mount rules read. Separate from reading the path because this is a join over cluster
objects, not string parsing.

Pure: strings and dicts in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.nodes.kubelet_paths import (
    DEFAULT_KUBELET_ROOT,
    KIND_POD_VOLUME,
    KubeletPath,
    parse_kubelet_path,
    volume_handle_sha256,
)

#: StorageClass parameters that name Trident's backend driver: ``backendType`` (a Trident storage
#: class attribute, NetAppDocs/trident ``trident-reference/objects.adoc``), the same key with
#: Trident's ``trident.netapp.io/`` prefix, and ``storageDriverName`` (classes from which Trident
#: creates the backend itself, e.g. FSx for NetApp ONTAP).
BACKEND_TYPE_PARAMETERS = ("backendType", "trident.netapp.io/backendType", "storageDriverName")
LEGACY_MOUNT_OPTIONS_ANNOTATION = "volume.beta.kubernetes.io/mount-options"


@dataclass(frozen=True)
class VolumeContext:
    """What Kubernetes knows about the volume behind a mount (all optional).

    Attributes:
        pv_name: the PersistentVolume.
        requested_options: ``PV.spec.mountOptions`` (plus the legacy annotation and the CSI
            ``mountOptions`` volume attribute); None when unknown, ``()`` when the PV has none.
        storage_class_options: ``StorageClass.mountOptions`` of the PV's class, None if unknown.
        csi_driver: the PV's CSI driver or the class provisioner.
        backend_type: Trident backend type (``azure-netapp-files``, ``ontap-nas``...), if known
            (:meth:`VolumeOwner.volume_context` takes it from the class's ``backendType``).
        access_modes: PV access modes (``ReadWriteMany``...).
        rw_node_count: how many nodes mount this PV read-write, if known.
        legacy_annotation: the PV carries ``volume.beta.kubernetes.io/mount-options``.
        mount_events: messages of recent FailedMount events for pods using the PV.
        storage_class_parameters: ``StorageClass.parameters`` as ``(key, value)`` pairs (the
            Filestore ``tier``, Trident ``backendType``...); empty when unknown.
        volume_attributes: the PV's ``spec.csi.volumeAttributes`` as pairs (EFS
            ``encryptInTransit``...); empty when unknown.
    """

    pv_name: str | None = None
    requested_options: tuple[str, ...] | None = None
    storage_class_options: tuple[str, ...] | None = None
    csi_driver: str | None = None
    backend_type: str | None = None
    access_modes: tuple[str, ...] = ()
    rw_node_count: int | None = None
    legacy_annotation: bool = False
    mount_events: tuple[str, ...] = ()
    storage_class_parameters: tuple[tuple[str, str], ...] = ()
    volume_attributes: tuple[tuple[str, str], ...] = ()

    def class_parameter(self, key: str) -> str | None:
        """One StorageClass parameter (key compared case-insensitively), or None."""
        return _lookup(self.storage_class_parameters, key)

    def volume_attribute(self, key: str) -> str | None:
        """One CSI volume attribute (key compared case-insensitively, as CSI drivers do)."""
        return _lookup(self.volume_attributes, key)


def _lookup(pairs: Iterable[tuple[str, str]], key: str) -> str | None:
    wanted = key.lower()
    for name, value in pairs:
        if name.lower() == wanted:
            return value
    return None


def _string_pairs(mapping: Any) -> tuple[tuple[str, str], ...]:
    """A JSON object's string-valued entries as sorted pairs (non-objects give ``()``)."""
    if not isinstance(mapping, Mapping):
        return ()
    return tuple(
        sorted((str(key), str(value)) for key, value in mapping.items() if value is not None)
    )


@dataclass(frozen=True)
class VolumeOwner:
    """The Kubernetes objects behind a kubelet path (fields None when not found)."""

    kubelet_path: KubeletPath
    namespace: str | None = None
    pod_name: str | None = None
    pod_uid: str | None = None
    pod_volume_name: str | None = None
    pvc_name: str | None = None
    pv_name: str | None = None
    storage_class: str | None = None
    csi_driver: str | None = None
    volume_handle: str | None = None
    access_modes: tuple[str, ...] = ()
    mount_options: tuple[str, ...] | None = None
    storage_class_mount_options: tuple[str, ...] | None = None
    legacy_annotation: bool = False
    storage_class_provisioner: str | None = None
    storage_class_parameters: tuple[tuple[str, str], ...] = ()
    volume_attributes: tuple[tuple[str, str], ...] = ()

    def volume_context(
        self, *, rw_node_count: int | None = None, mount_events: Sequence[str] = ()
    ) -> VolumeContext:
        """The facts the NFS rules need about this volume (see :class:`VolumeContext`).

        The driver is the PV's CSI driver, else the class's provisioner; the backend type is
        what the class's parameters say (Trident ``backendType``, ``storageDriverName``).
        """
        parameters = dict(self.storage_class_parameters)
        backend_type = next(
            (
                parameters[key].strip()
                for key in BACKEND_TYPE_PARAMETERS
                if parameters.get(key, "").strip()
            ),
            None,
        )
        return VolumeContext(
            pv_name=self.pv_name,
            requested_options=self.mount_options,
            storage_class_options=self.storage_class_mount_options,
            csi_driver=self.csi_driver or self.storage_class_provisioner,
            backend_type=backend_type,
            access_modes=self.access_modes,
            rw_node_count=rw_node_count,
            legacy_annotation=self.legacy_annotation,
            mount_events=tuple(mount_events),
            storage_class_parameters=self.storage_class_parameters,
            volume_attributes=self.volume_attributes,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "namespace": self.namespace,
            "pod": self.pod_name,
            "pod_uid": self.pod_uid,
            "pod_volume": self.pod_volume_name,
            "pvc": self.pvc_name,
            "pv": self.pv_name,
            "storage_class": self.storage_class,
            "csi_driver": self.csi_driver,
            "volume_handle": self.volume_handle,
            "access_modes": list(self.access_modes),
            "mount_options": None if self.mount_options is None else list(self.mount_options),
            "storage_class_mount_options": (
                None
                if self.storage_class_mount_options is None
                else list(self.storage_class_mount_options)
            ),
            "legacy_annotation": self.legacy_annotation,
            "kubelet_path": self.kubelet_path.to_dict(),
        }


def resolve_volume(
    kubelet_path: KubeletPath,
    *,
    pods: Iterable[JsonDict] = (),
    pvs: Iterable[JsonDict] = (),
    pvcs: Iterable[JsonDict] = (),
    storage_classes: Iterable[JsonDict] = (),
) -> VolumeOwner:
    """Join a kubelet path with the cluster's objects (plain ``kubectl get -o json`` items).

    Returns a :class:`VolumeOwner` with what could be found: namespace and pod name from the pod
    UID, the PV from the path (by name, or by CSI driver plus hashed volume handle), the PVC from
    the PV's ``claimRef`` or the pod's volume, the StorageClass and the requested mount options
    (PV ``spec.mountOptions`` + the legacy annotation + the CSI ``mountOptions`` attribute).
    """
    pod_list, pv_list, pvc_list = list(pods), list(pvs), list(pvcs)
    pod = _find(pod_list, lambda item: dig(item, "metadata", "uid") == kubelet_path.pod_uid)
    pod_volume = _pod_volume(pod, kubelet_path.volume_name)
    pv = _find_pv(kubelet_path, pv_list, pod_volume, pvc_list, pod)
    if pod_volume is None and pv is not None and pod is not None:
        pod_volume = _pod_volume_for_pv(pod, pv)
    pvc = _find_pvc(pv, pod, pod_volume, pvc_list)
    class_name = dig(pv, "spec", "storageClassName") or dig(pvc, "spec", "storageClassName")
    storage_class = _find(
        list(storage_classes), lambda item: dig(item, "metadata", "name") == class_name
    )
    legacy = dig(pv, "metadata", "annotations", LEGACY_MOUNT_OPTIONS_ANNOTATION)
    return VolumeOwner(
        kubelet_path=kubelet_path,
        namespace=dig(pod, "metadata", "namespace") or dig(pvc, "metadata", "namespace"),
        pod_name=dig(pod, "metadata", "name"),
        pod_uid=kubelet_path.pod_uid,
        pod_volume_name=dig(pod_volume, "name"),
        pvc_name=dig(pvc, "metadata", "name"),
        pv_name=dig(pv, "metadata", "name") or kubelet_path.pv_name,
        storage_class=class_name,
        csi_driver=dig(pv, "spec", "csi", "driver") or kubelet_path.csi_driver,
        volume_handle=dig(pv, "spec", "csi", "volumeHandle"),
        access_modes=tuple(dig(pv, "spec", "accessModes") or ()),
        mount_options=_requested_mount_options(pv) if pv is not None else None,
        storage_class_mount_options=(
            tuple(dig(storage_class, "mountOptions") or ()) if storage_class is not None else None
        ),
        legacy_annotation=bool(legacy),
        storage_class_provisioner=dig(storage_class, "provisioner"),
        storage_class_parameters=_string_pairs(dig(storage_class, "parameters")),
        volume_attributes=_string_pairs(dig(pv, "spec", "csi", "volumeAttributes")),
    )


def resolve_mountpoints(
    mountpoints: Iterable[str],
    *,
    pods: Iterable[JsonDict] = (),
    pvs: Iterable[JsonDict] = (),
    pvcs: Iterable[JsonDict] = (),
    storage_classes: Iterable[JsonDict] = (),
    kubelet_root: str | Sequence[str] = DEFAULT_KUBELET_ROOT,
) -> dict[str, VolumeOwner]:
    """Resolve every kubelet-managed mount point; others are left out of the result."""
    pod_list, pv_list, pvc_list = list(pods), list(pvs), list(pvcs)
    class_list = list(storage_classes)
    owners: dict[str, VolumeOwner] = {}
    for mountpoint in mountpoints:
        parsed = parse_kubelet_path(mountpoint, kubelet_root=kubelet_root)
        if parsed is not None:
            owners[mountpoint] = resolve_volume(
                parsed, pods=pod_list, pvs=pv_list, pvcs=pvc_list, storage_classes=class_list
            )
    return owners


def _requested_mount_options(pv: JsonDict) -> tuple[str, ...]:
    options = list(dig(pv, "spec", "mountOptions") or ())
    legacy = dig(pv, "metadata", "annotations", LEGACY_MOUNT_OPTIONS_ANNOTATION)
    if isinstance(legacy, str) and legacy:
        options.extend(item.strip() for item in legacy.split(",") if item.strip())
    attribute = dig(pv, "spec", "csi", "volumeAttributes", "mountOptions")
    if isinstance(attribute, str) and attribute:
        # csi-driver-nfs appends this volume attribute to the mount options (rules.md S42).
        options.extend(item.strip() for item in attribute.split(",") if item.strip())
    return tuple(options)


def _find_pv(
    kubelet_path: KubeletPath,
    pvs: list[JsonDict],
    pod_volume: JsonDict | None,
    pvcs: list[JsonDict],
    pod: JsonDict | None,
) -> JsonDict | None:
    def named(name: str | None) -> JsonDict | None:
        return _find(pvs, lambda item: name is not None and dig(item, "metadata", "name") == name)

    if kubelet_path.volume_handle_sha256 is not None:
        return _find(
            pvs,
            lambda item: (
                dig(item, "spec", "csi", "driver") == kubelet_path.csi_driver
                and isinstance(handle := dig(item, "spec", "csi", "volumeHandle"), str)
                and volume_handle_sha256(handle) == kubelet_path.volume_handle_sha256
            ),
        )
    if kubelet_path.pv_name is not None:
        return named(kubelet_path.pv_name)
    if kubelet_path.kind == KIND_POD_VOLUME:
        # PV-backed volumes are named after the PV; inline ones after the pod's volume.
        pv = named(kubelet_path.volume_name) if pod_volume is None else None
        if pv is not None:
            return pv
    claim = dig(pod_volume, "persistentVolumeClaim", "claimName")
    namespace = dig(pod, "metadata", "namespace")
    pvc = _find(
        pvcs,
        lambda item: (
            dig(item, "metadata", "name") == claim
            and dig(item, "metadata", "namespace") == namespace
        ),
    )
    return named(dig(pvc, "spec", "volumeName"))


def _find_pvc(
    pv: JsonDict | None, pod: JsonDict | None, pod_volume: JsonDict | None, pvcs: list[JsonDict]
) -> JsonDict | None:
    claim_namespace = dig(pv, "spec", "claimRef", "namespace")
    claim_name = dig(pv, "spec", "claimRef", "name")
    if claim_name is None:
        claim_name = dig(pod_volume, "persistentVolumeClaim", "claimName")
        claim_namespace = dig(pod, "metadata", "namespace")
    if claim_name is None:
        return None
    found = _find(
        pvcs,
        lambda item: (
            dig(item, "metadata", "name") == claim_name
            and dig(item, "metadata", "namespace") == claim_namespace
        ),
    )
    if found is None:  # not listed: still report the claim the PV is bound to
        return {"metadata": {"name": claim_name, "namespace": claim_namespace}}
    return found


def _pod_volume(pod: JsonDict | None, name: str | None) -> JsonDict | None:
    volumes = dig(pod, "spec", "volumes") or []
    return _find(volumes, lambda item: item.get("name") == name)


def _pod_volume_for_pv(pod: JsonDict, pv: JsonDict) -> JsonDict | None:
    claim = dig(pv, "spec", "claimRef", "name")
    volumes = dig(pod, "spec", "volumes") or []
    return _find(volumes, lambda item: dig(item, "persistentVolumeClaim", "claimName") == claim)


def _find(items: Iterable[Any], predicate: Callable[[JsonDict], bool]) -> JsonDict | None:
    for item in items:
        if isinstance(item, dict) and predicate(item):
            return item
    return None
