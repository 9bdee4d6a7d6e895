"""The VolumeSnapshot list model: what `snapshot list` reports about each snapshot.

Pure: takes VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass and PVC objects as the
API returns them (dicts) and describes them; :func:`build_snapshot_list` assembles the
SnapshotList report. The readers of a snapshot's status (its restore size, whether it settled,
its content) live here too, since choosing a restore
(:mod:`kubectl_storage.core.snapshot.class_choice`) and cleanup read the same fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_storage.core.k8s.objects import JsonDict, dig, name_of, section
from kubectl_storage.core.k8s.quantities import QuantityError, parse_quantity
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import PASSED


def _meta(obj: JsonDict | None) -> Mapping[str, Any]:
    return section(obj, "metadata")


def _spec(obj: JsonDict | None) -> Mapping[str, Any]:
    return section(obj, "spec")


def _status(obj: JsonDict | None) -> Mapping[str, Any]:
    return section(obj, "status")


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


@dataclass(frozen=True)
class SnapshotInfo:
    """One VolumeSnapshot as a person needs to see it."""

    namespace: str
    name: str
    ready: bool | None
    source_pvc: str | None  # dynamic snapshot: the PVC it was taken of
    source_pvc_present: bool | None  # None when not looked up
    source_content: str | None  # pre-provisioned snapshot: the content it binds to
    snapshot_class: str | None
    driver: str | None
    restore_size: str | None
    bound_content: str | None
    snapshot_handle: str | None
    created: datetime | None
    age_s: int | None
    error: str | None
    deleting: bool = False

    @property
    def source_text(self) -> str:
        """``pvc/NAME`` (``(gone)`` when deleted) or ``content/NAME`` for pre-provisioned."""
        if self.source_pvc:
            gone = " (gone)" if self.source_pvc_present is False else ""
            return f"pvc/{self.source_pvc}{gone}"
        if self.source_content:
            return f"content/{self.source_content}"
        return "-"

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        restore_bytes = quantity_bytes(self.restore_size) if self.restore_size else None
        return {
            "namespace": self.namespace,
            "name": self.name,
            "readyToUse": self.ready,
            "sourcePvc": self.source_pvc,
            "sourcePvcPresent": self.source_pvc_present,
            "sourceContent": self.source_content,
            "snapshotClass": self.snapshot_class,
            "driver": self.driver,
            "restoreSize": self.restore_size,
            "restoreSizeBytes": restore_bytes,
            "boundContent": self.bound_content,
            "snapshotHandle": self.snapshot_handle,
            "created": _iso(self.created),
            "ageSeconds": self.age_s,
            "error": self.error,
            "deleting": self.deleting,
        }


def quantity_bytes(text: str) -> int | None:
    """Bytes of a size the API reports ("17842333", "1Gi"); None when it is not a quantity."""
    try:
        return int(parse_quantity(text).to_integral_value(rounding="ROUND_CEILING"))
    except QuantityError:
        return None


def restore_size_of(snapshot: JsonDict, content: JsonDict | None) -> str | None:
    """The size a restore of the snapshot needs, from it or its content; None when unknown."""
    size = _status(snapshot).get("restoreSize")
    if size not in (None, "", 0, "0"):
        return str(size)
    content_size = _status(content).get("restoreSize")
    if isinstance(content_size, int) and content_size > 0:
        return str(content_size)
    return None


def _error_of(snapshot: JsonDict, content: JsonDict | None) -> str | None:
    for obj in (snapshot, content):
        error = _status(obj).get("error") or {}
        if error.get("message"):
            return str(error["message"]).strip()
    return None


def snapshot_settled(snapshot: JsonDict) -> bool:
    """Whether a VolumeSnapshot may be deleted without racing its creation: it is ready, it has
    failed, or it is already being deleted.

    Deleting one while the snapshot controller and the CSI sidecar are still cutting it can leave
    it, its VolumeSnapshotContent and its source PVC's finalizer stuck (external-snapshotter
    races), so cleanup waits for this first.
    """
    if _meta(snapshot).get("deletionTimestamp"):
        return True
    status = _status(snapshot)
    return status.get("readyToUse") is True or bool(dig(status, "error", "message"))


def content_name_of(snapshot: JsonDict) -> str | None:
    """The VolumeSnapshotContent a snapshot is (or will be) bound to."""
    bound = _status(snapshot).get("boundVolumeSnapshotContentName")
    if bound:
        return str(bound)
    source = dig(snapshot, "spec", "source", "volumeSnapshotContentName")
    return str(source) if source else None


def snapshot_info(
    snapshot: JsonDict,
    content: JsonDict | None,
    class_drivers: dict[str, str],
    *,
    present_pvcs: set[tuple[str, str]] | None,
    now: datetime,
) -> SnapshotInfo:
    """Describe one VolumeSnapshot, with its content (None when unbound or unreadable)."""
    meta = _meta(snapshot)
    namespace = str(meta.get("namespace") or "")
    source = _spec(snapshot).get("source") or {}
    source_pvc = source.get("persistentVolumeClaimName")
    snapshot_class = _spec(snapshot).get("volumeSnapshotClassName") or _spec(content).get(
        "volumeSnapshotClassName"
    )
    driver = _spec(content).get("driver") or (
        class_drivers.get(str(snapshot_class)) if snapshot_class else None
    )
    created = _parse_time(_status(snapshot).get("creationTime")) or _parse_time(
        meta.get("creationTimestamp")
    )
    ready = _status(snapshot).get("readyToUse")
    present: bool | None = None
    if source_pvc and present_pvcs is not None:
        present = (namespace, str(source_pvc)) in present_pvcs
    return SnapshotInfo(
        namespace=namespace,
        name=name_of(snapshot),
        ready=bool(ready) if ready is not None else None,
        source_pvc=str(source_pvc) if source_pvc else None,
        source_pvc_present=present,
        source_content=source.get("volumeSnapshotContentName"),
        snapshot_class=str(snapshot_class) if snapshot_class else None,
        driver=str(driver) if driver else None,
        restore_size=restore_size_of(snapshot, content),
        bound_content=_status(snapshot).get("boundVolumeSnapshotContentName"),
        snapshot_handle=_status(content).get("snapshotHandle")
        or dig(content, "spec", "source", "snapshotHandle"),
        created=created,
        age_s=max(0, int((now - created).total_seconds())) if created else None,
        error=_error_of(snapshot, content),
        deleting=bool(meta.get("deletionTimestamp")),
    )


@dataclass(frozen=True)
class SnapshotList:
    """The SnapshotList report."""

    snapshots: tuple[SnapshotInfo, ...]
    namespace: str | None  # None: all namespaces

    def to_dict(self) -> dict[str, Any]:
        """The report with apiVersion and kind."""
        return report_envelope(
            "SnapshotList",
            PASSED,  # it lists what is there; nothing to judge
            {
                "namespace": self.namespace,
                "allNamespaces": self.namespace is None,
                "snapshots": [s.to_dict() for s in self.snapshots],
            },
        )


def build_snapshot_list(
    snapshots: list[JsonDict],
    contents: list[JsonDict],
    snapshot_classes: list[JsonDict],
    *,
    now: datetime,
    namespace: str | None,
    pvcs: list[JsonDict] | None = None,
) -> SnapshotList:
    """Assemble the list; ``pvcs`` (when given) tells whether each source PVC still exists."""
    by_content = {name_of(c): c for c in contents}
    drivers = {name_of(v): str(v.get("driver") or "") for v in snapshot_classes}
    present = (
        {(str(_meta(p).get("namespace") or ""), name_of(p)) for p in pvcs}
        if pvcs is not None
        else None
    )
    infos = [
        snapshot_info(
            s,
            by_content.get(content_name_of(s) or ""),
            drivers,
            present_pvcs=present,
            now=now,
        )
        for s in snapshots
    ]
    infos.sort(key=lambda i: (i.namespace, i.name))
    return SnapshotList(tuple(infos), namespace)


def format_age(seconds: int | None) -> str:
    """kubectl's age: 45s, 12m, 5h, 3d (two units below a few units of the larger)."""
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        rest = seconds % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if days < 8:
        rest = hours % 24
        return f"{days}d{rest}h" if rest else f"{days}d"
    return f"{days}d"
