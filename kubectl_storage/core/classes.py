"""What storage a cluster offers: StorageClasses, snapshot classes, CSI drivers, and what is odd.

Pure: takes the objects as the API returns them (dicts) and builds the ClassList report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.k8s.objects import (
    dig,
    is_default_snapshot_class,
    is_default_storage_class,
    name_of,
    section,
)
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.findings import Finding, Severity
from kubectl_storage.core.report.verdict import PASSED

#: Provisioners whose volumes are NFS mounts; their mount options decide behaviour on failure.
NFS_PROVISIONER_HINTS = (
    "nfs",
    "efs.csi.aws.com",
    "filestore.csi.storage.gke.io",
    "anf",
)


@dataclass(frozen=True)
class StorageClassInfo:
    """One StorageClass, as a person needs to see it."""

    name: str
    is_default: bool
    provisioner: str
    reclaim_policy: str
    volume_binding_mode: str
    allow_volume_expansion: bool
    mount_options: tuple[str, ...]
    parameters: dict[str, str]
    snapshot_classes: tuple[str, ...]
    has_csi_driver: bool

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "name": self.name,
            "default": self.is_default,
            "provisioner": self.provisioner,
            "reclaimPolicy": self.reclaim_policy,
            "volumeBindingMode": self.volume_binding_mode,
            "allowVolumeExpansion": self.allow_volume_expansion,
            "mountOptions": list(self.mount_options),
            "parameters": dict(self.parameters),
            "snapshotClasses": list(self.snapshot_classes),
            "csiDriver": self.has_csi_driver,
        }


@dataclass(frozen=True)
class SnapshotClassInfo:
    """One VolumeSnapshotClass."""

    name: str
    driver: str
    deletion_policy: str
    is_default: bool

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "name": self.name,
            "driver": self.driver,
            "deletionPolicy": self.deletion_policy,
            "default": self.is_default,
        }


@dataclass(frozen=True)
class CsiDriverInfo:
    """One CSIDriver object."""

    name: str
    attach_required: bool
    fs_group_policy: str
    lifecycle_modes: tuple[str, ...]
    pod_info_on_mount: bool

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "name": self.name,
            "attachRequired": self.attach_required,
            "fsGroupPolicy": self.fs_group_policy,
            "volumeLifecycleModes": list(self.lifecycle_modes),
            "podInfoOnMount": self.pod_info_on_mount,
        }


@dataclass(frozen=True)
class ClassList:
    """The ClassList report."""

    storage_classes: tuple[StorageClassInfo, ...]
    snapshot_classes: tuple[SnapshotClassInfo, ...]
    csi_drivers: tuple[CsiDriverInfo, ...]
    snapshot_api_available: bool
    notes: tuple[Finding, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """The report with apiVersion and kind."""
        return report_envelope(
            "ClassList",
            PASSED,  # it lists what is there; nothing to judge
            {
                "storageClasses": [c.to_dict() for c in self.storage_classes],
                "volumeSnapshotClasses": [c.to_dict() for c in self.snapshot_classes],
                "csiDrivers": [d.to_dict() for d in self.csi_drivers],
                "snapshotApiAvailable": self.snapshot_api_available,
                "notes": [n.to_dict() for n in self.notes],
            },
        )


def looks_like_nfs(provisioner: str, parameters: dict[str, str]) -> bool:
    """Whether a class most likely provisions NFS volumes (from its provisioner and parameters)."""
    lowered = provisioner.lower()
    if any(hint in lowered for hint in NFS_PROVISIONER_HINTS):
        return True
    values = " ".join(f"{k}={v}" for k, v in parameters.items()).lower()
    # Azure Files and Trident serve NFS only when asked: protocol=nfs / backendType=ontap-nas.
    return "protocol=nfs" in values or "ontap-nas" in values or "fstype=nfs" in values


def build_class_list(
    storage_classes: list[dict[str, Any]],
    snapshot_classes: list[dict[str, Any]] | None,
    csi_drivers: list[dict[str, Any]],
) -> ClassList:
    """Assemble the report; ``snapshot_classes`` is None when the snapshot API is not installed."""
    snapshot_api = snapshot_classes is not None
    vscs = tuple(
        sorted(
            (
                SnapshotClassInfo(
                    name=name_of(v),
                    driver=str(v.get("driver", "")),
                    deletion_policy=str(v.get("deletionPolicy", "")),
                    is_default=is_default_snapshot_class(v),
                )
                for v in snapshot_classes or []
            ),
            key=lambda v: v.name,
        )
    )
    drivers = tuple(
        sorted(
            (
                CsiDriverInfo(
                    name=name_of(d),
                    attach_required=bool(section(d, "spec").get("attachRequired", True)),
                    fs_group_policy=str(
                        section(d, "spec").get("fsGroupPolicy", "ReadWriteOnceWithFSType")
                    ),
                    lifecycle_modes=tuple(dig(d, "spec", "volumeLifecycleModes") or ["Persistent"]),
                    pod_info_on_mount=bool(section(d, "spec").get("podInfoOnMount", False)),
                )
                for d in csi_drivers
            ),
            key=lambda d: d.name,
        )
    )
    driver_names = {d.name for d in drivers}
    classes = []
    for sc in storage_classes:
        provisioner = str(sc.get("provisioner", ""))
        parameters = {str(k): str(v) for k, v in section(sc, "parameters").items()}
        classes.append(
            StorageClassInfo(
                name=name_of(sc),
                is_default=is_default_storage_class(sc),
                provisioner=provisioner,
                reclaim_policy=str(sc.get("reclaimPolicy", "Delete")),
                volume_binding_mode=str(sc.get("volumeBindingMode", "Immediate")),
                allow_volume_expansion=bool(sc.get("allowVolumeExpansion", False)),
                mount_options=tuple(str(o) for o in sc.get("mountOptions") or []),
                parameters=parameters,
                snapshot_classes=tuple(v.name for v in vscs if v.driver == provisioner),
                has_csi_driver=provisioner in driver_names,
            )
        )
    classes.sort(key=lambda c: c.name)
    return ClassList(
        storage_classes=tuple(classes),
        snapshot_classes=vscs,
        csi_drivers=drivers,
        snapshot_api_available=snapshot_api,
        notes=tuple(class_notes(classes, vscs, snapshot_api)),
    )


def class_notes(
    classes: list[StorageClassInfo],
    snapshot_classes: tuple[SnapshotClassInfo, ...],
    snapshot_api: bool,
) -> list[Finding]:
    """What a user should notice about the classes as a whole and one by one."""
    notes: list[Finding] = []
    defaults = [c.name for c in classes if c.is_default]
    if classes and not defaults:
        notes.append(
            Finding(
                "CLS001",
                Severity.WARN,
                "no default StorageClass: PVCs without storageClassName stay Pending",
                "kubectl annotate storageclass NAME "
                "storageclass.kubernetes.io/is-default-class=true",
            )
        )
    if len(defaults) > 1:
        notes.append(
            Finding(
                "CLS002",
                Severity.WARN,
                f"{len(defaults)} default StorageClasses ({', '.join(defaults)}): Kubernetes picks "
                "the newest, which is rarely what was meant",
                "Keep the default annotation on one class only.",
            )
        )
    for c in classes:
        if looks_like_nfs(c.provisioner, c.parameters) and not c.mount_options:
            notes.append(
                Finding(
                    "CLS003",
                    Severity.WARN,
                    f"StorageClass {c.name} provisions NFS volumes ({c.provisioner}) without "
                    "mountOptions: the node's defaults decide version, hard/soft and nconnect",
                    "Set mountOptions as the vendor recommends; `kubectl storage mount-audit` "
                    "shows what nodes actually use.",
                )
            )
        in_tree = c.provisioner.startswith("kubernetes.io/")
        if not c.has_csi_driver and not in_tree:
            notes.append(
                Finding(
                    "CLS004",
                    Severity.INFO,
                    f"StorageClass {c.name}: provisioner {c.provisioner} has no CSIDriver object; "
                    "it is not a CSI driver (or is not registered), so snapshots and CSI "
                    "features are unavailable for it",
                    "Expected for external provisioners such as local-path; otherwise check the "
                    "driver's installation.",
                )
            )
        if snapshot_api and c.has_csi_driver and not c.snapshot_classes:
            notes.append(
                Finding(
                    "CLS005",
                    Severity.INFO,
                    f"StorageClass {c.name}: no VolumeSnapshotClass for driver {c.provisioner}",
                    "Create a VolumeSnapshotClass for the driver if its volumes need snapshots.",
                )
            )
    if not snapshot_api:
        notes.append(
            Finding(
                "CLS006",
                Severity.INFO,
                "the VolumeSnapshot API (snapshot.storage.k8s.io) is not installed",
                "Install the snapshot CRDs and snapshot-controller from "
                "kubernetes-csi/external-snapshotter to use `kubectl storage snapshot`.",
            )
        )
    vsc_defaults: dict[str, list[str]] = {}
    for v in snapshot_classes:
        if v.is_default:
            vsc_defaults.setdefault(v.driver, []).append(v.name)
    for driver, names in vsc_defaults.items():
        if len(names) > 1:
            notes.append(
                Finding(
                    "CLS007",
                    Severity.WARN,
                    f"driver {driver} has {len(names)} default VolumeSnapshotClasses "
                    f"({', '.join(names)}): snapshots without a class fail",
                    "Keep the default annotation on one snapshot class per driver.",
                )
            )
    return notes
