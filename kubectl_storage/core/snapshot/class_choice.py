"""Which classes and size to snapshot and restore with, or why none can be chosen.

Pure: :func:`choose_snapshot_class` / :func:`check_snapshot_class` pick the VolumeSnapshotClass
for a StorageClass (the default annotation wins among several for one driver);
:func:`choose_restore_class` and :func:`choose_restore_size` say what a restore PVC asks for,
also when the snapshot's source PVC is gone or the snapshot was pre-provisioned. Separate from
the list model because these are decisions, each raising :class:`SnapshotChoiceError` with a
hint when it cannot be made.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_storage.core.k8s.objects import (
    DEFAULT_VSC_ANNOTATION,
    JsonDict,
    is_default_snapshot_class,
    is_default_storage_class,
    name_of,
    pvc_capacity,
    section,
)
from kubectl_storage.core.k8s.quantities import QuantityError, parse_size_bytes
from kubectl_storage.core.snapshot.snapshot_list import quantity_bytes, restore_size_of


class SnapshotChoiceError(ValueError):
    """No class or size can be chosen; carries what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        """Keep the message and the hint (the flag that settles it)."""
        super().__init__(message)
        self.message = message
        self.hint = hint


def _is_default_vsc(vsc: JsonDict) -> bool:
    return is_default_snapshot_class(vsc)


def _is_default_sc(sc: JsonDict) -> bool:
    return is_default_storage_class(sc)


def choose_snapshot_class(storage_class: JsonDict, snapshot_classes: list[JsonDict]) -> str:
    """The VolumeSnapshotClass for volumes of ``storage_class``: same driver as its provisioner.

    Among several for one driver, the one annotated as default wins.

    Raises:
        SnapshotChoiceError: none matches, or several match and not exactly one is default.
    """
    name, provisioner = name_of(storage_class), str(storage_class.get("provisioner") or "")
    matching = sorted((v for v in snapshot_classes if v.get("driver") == provisioner), key=name_of)
    if not matching:
        known = ", ".join(f"{name_of(v)} ({v.get('driver')})" for v in snapshot_classes) or "none"
        raise SnapshotChoiceError(
            f"StorageClass {name} cannot be snapshotted: no VolumeSnapshotClass uses its "
            f"provisioner {provisioner}",
            f"Snapshot classes in the cluster: {known}. Snapshots need a CSI driver with "
            "snapshot support and a VolumeSnapshotClass for it; `kubectl storage classes` "
            "shows which classes have one.",
        )
    if len(matching) == 1:
        return name_of(matching[0])
    defaults = [v for v in matching if _is_default_vsc(v)]
    if len(defaults) == 1:
        return name_of(defaults[0])
    names = ", ".join(name_of(v) for v in matching)
    which = "none is" if not defaults else f"{len(defaults)} are"
    raise SnapshotChoiceError(
        f"several VolumeSnapshotClasses use driver {provisioner} ({names}) and {which} "
        f"annotated {DEFAULT_VSC_ANNOTATION}=true",
        "Choose one with --snapshot-class.",
    )


def check_snapshot_class(
    name: str, storage_class: JsonDict, snapshot_classes: list[JsonDict]
) -> None:
    """A snapshot class given by the user must exist and belong to the class's driver.

    Raises:
        SnapshotChoiceError: it does not exist, or it is for another driver.
    """
    by_name = {name_of(v): v for v in snapshot_classes}
    vsc = by_name.get(name)
    if vsc is None:
        raise SnapshotChoiceError(
            f'VolumeSnapshotClass "{name}" does not exist',
            "Available: "
            + (", ".join(sorted(by_name)) or "none")
            + " (kubectl storage classes lists them).",
        )
    provisioner = str(storage_class.get("provisioner") or "")
    if vsc.get("driver") != provisioner:
        raise SnapshotChoiceError(
            f"VolumeSnapshotClass {name} is for driver {vsc.get('driver')}, but StorageClass "
            f"{name_of(storage_class)} provisions with {provisioner}",
            "A snapshot class only snapshots volumes of its own driver; pick one whose driver "
            "matches (kubectl storage classes shows them side by side).",
        )


@dataclass(frozen=True)
class RestoreClassChoice:
    """The StorageClass a restore PVC asks for, and why it was chosen."""

    name: str
    reason: str


def choose_restore_class(
    *,
    snapshot_name: str,
    driver: str | None,
    source_pvc: JsonDict | None,
    storage_classes: list[JsonDict],
    given: str | None = None,
) -> RestoreClassChoice:
    """Which StorageClass can restore the snapshot.

    Order: the class given with --storage-class; the source PVC's class (while the PVC exists
    and its class belongs to the snapshot's driver); the one StorageClass whose provisioner is
    the snapshot's driver (the default one among several).

    Raises:
        SnapshotChoiceError: when no class can be told, or the given one cannot work.
    """
    classes = {name_of(sc): sc for sc in storage_classes}
    if given:
        sc = classes.get(given)
        if sc is None:
            raise SnapshotChoiceError(
                f"StorageClass {given} does not exist",
                "Available: " + (", ".join(sorted(classes)) or "none") + ".",
            )
        if driver and sc.get("provisioner") != driver:
            raise SnapshotChoiceError(
                f"StorageClass {given} provisions with {sc.get('provisioner')}, but snapshot "
                f"{snapshot_name} was taken by driver {driver}",
                "A snapshot restores only into a class of its own driver; "
                + _classes_of_driver_hint(driver, storage_classes),
            )
        return RestoreClassChoice(given, "given with --storage-class")
    if source_pvc is not None:
        pvc_class = section(source_pvc, "spec").get("storageClassName")
        sc = classes.get(str(pvc_class)) if pvc_class else None
        if sc is not None and (not driver or sc.get("provisioner") == driver):
            return RestoreClassChoice(
                str(pvc_class), f"the class of source PVC {name_of(source_pvc)}"
            )
    if driver:
        matching = sorted(
            (sc for sc in storage_classes if sc.get("provisioner") == driver), key=name_of
        )
        if len(matching) == 1:
            return RestoreClassChoice(
                name_of(matching[0]), f"the only StorageClass of driver {driver}"
            )
        defaults = [sc for sc in matching if _is_default_sc(sc)]
        if len(defaults) == 1:
            return RestoreClassChoice(
                name_of(defaults[0]), f"the default StorageClass of driver {driver}"
            )
        if matching:
            raise SnapshotChoiceError(
                f"several StorageClasses can restore snapshot {snapshot_name} (driver {driver}: "
                + ", ".join(name_of(sc) for sc in matching)
                + ")",
                "Choose one with --storage-class.",
            )
        raise SnapshotChoiceError(
            f"no StorageClass provisions with driver {driver}, which took snapshot {snapshot_name}",
            "Create a StorageClass for that driver, or give one with --storage-class.",
        )
    raise SnapshotChoiceError(
        f"cannot tell which StorageClass can restore snapshot {snapshot_name}: its source PVC "
        "is gone and its driver is unknown",
        "Give the class with --storage-class.",
    )


def _classes_of_driver_hint(driver: str, storage_classes: list[JsonDict]) -> str:
    names = sorted(name_of(sc) for sc in storage_classes if sc.get("provisioner") == driver)
    if names:
        return f"classes of {driver}: {', '.join(names)}."
    return f"no StorageClass in the cluster uses {driver}."


def choose_restore_size(
    *,
    snapshot: JsonDict,
    content: JsonDict | None,
    source_pvc: JsonDict | None,
    given: str | None = None,
) -> tuple[str, str]:
    """(size, reason) for the restore PVC: --size, else restoreSize, else the source's capacity.

    Raises:
        SnapshotChoiceError: no size can be told, or --size is below the snapshot's restoreSize.
    """
    name = name_of(snapshot)
    restore = restore_size_of(snapshot, content)
    if given:
        try:
            given_bytes = parse_size_bytes(given, what="--size")
        except QuantityError as exc:
            raise SnapshotChoiceError(str(exc), "Example: --size 10Gi") from exc
        if restore:
            needed = quantity_bytes(restore) or 0
            if given_bytes < needed:
                raise SnapshotChoiceError(
                    f"--size {given} is smaller than snapshot {name}'s restoreSize {restore}",
                    f"A restored volume must be at least {restore}; give --size {restore} or more.",
                )
        return given, "given with --size"
    if restore:
        return restore, "the snapshot's restoreSize"
    if source_pvc is not None:
        capacity = pvc_capacity(source_pvc)
        if capacity:
            return str(capacity), f"the capacity of source PVC {name_of(source_pvc)}"
    raise SnapshotChoiceError(
        f"snapshot {name} reports no restoreSize and its source PVC is gone",
        "Give the size of the restored volume with --size (at least the source volume's size).",
    )
