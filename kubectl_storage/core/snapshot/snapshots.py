"""VolumeSnapshots: the list model, which classes to snapshot and restore with, and the check.

Pure: takes VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass, StorageClass and PVC
objects as the API returns them (dicts) and decides. Nothing here talks to a cluster:

* :func:`build_snapshot_list` — the SnapshotList report (`snapshot list`);
* :func:`choose_snapshot_class` / :func:`check_snapshot_class` — the VolumeSnapshotClass for a
  StorageClass (the default annotation wins among several for one driver);
* :func:`choose_restore_class` and :func:`choose_restore_size` — what a restore PVC asks for, also
  when the snapshot's source PVC is gone or the snapshot was pre-provisioned;
* the check's plan: known files of several sizes, the change made after the snapshot, the shell
  scripts that write and checksum them, and :func:`compare_restore`, which says whether a
  restore holds exactly the snapshot-time content;
* :class:`SnapshotCheckReport`, manifests for VolumeSnapshots, and paths inside a snapshot
  (listings of a mounted snapshot are in :mod:`kubectl_storage.core.snapshot.listing`).
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from kubectl_storage.core.k8s.objects import (
    DEFAULT_VSC_ANNOTATION,
    dig,
    is_default_snapshot_class,
    is_default_storage_class,
    name_of,
    pvc_capacity,
    section,
)
from kubectl_storage.core.k8s.quantities import (
    QuantityError,
    format_bytes,
    parse_quantity,
    parse_size_bytes,
)
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import PASSED, Outcome, judge
from kubectl_storage.core.snapshot.freeze import FreezeResult
from kubectl_storage.core.snapshot.log_writer import LOG_DIR
from kubectl_storage.core.snapshot.restore_node import RestorePlacement
from kubectl_storage.core.snapshot.under_load import UnderLoadResult

SNAPSHOT_API_GROUP = "snapshot.storage.k8s.io"
#: Where browse and cp pods mount the restored snapshot (read-only).
SNAPSHOT_MOUNT = "/snapshot"
#: Where the check's writer pod mounts the source volume.
SOURCE_MOUNT = "/data"

Obj = dict[str, Any]


class SnapshotChoiceError(ValueError):
    """No class or size can be chosen; carries what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        """Keep the message and the hint (the flag that settles it)."""
        super().__init__(message)
        self.message = message
        self.hint = hint


# -- small accessors --------------------------------------------------------------------------


def _meta(obj: Obj | None) -> Mapping[str, Any]:
    return section(obj, "metadata")


def _spec(obj: Obj | None) -> Mapping[str, Any]:
    return section(obj, "spec")


def _status(obj: Obj | None) -> Mapping[str, Any]:
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


# -- the list ---------------------------------------------------------------------------------


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


def _restore_size_of(snapshot: Obj, content: Obj | None) -> str | None:
    size = _status(snapshot).get("restoreSize")
    if size not in (None, "", 0, "0"):
        return str(size)
    content_size = _status(content).get("restoreSize")
    if isinstance(content_size, int) and content_size > 0:
        return str(content_size)
    return None


def _error_of(snapshot: Obj, content: Obj | None) -> str | None:
    for obj in (snapshot, content):
        error = _status(obj).get("error") or {}
        if error.get("message"):
            return str(error["message"]).strip()
    return None


def snapshot_settled(snapshot: Obj) -> bool:
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


def content_name_of(snapshot: Obj) -> str | None:
    """The VolumeSnapshotContent a snapshot is (or will be) bound to."""
    bound = _status(snapshot).get("boundVolumeSnapshotContentName")
    if bound:
        return str(bound)
    source = dig(snapshot, "spec", "source", "volumeSnapshotContentName")
    return str(source) if source else None


def snapshot_info(
    snapshot: Obj,
    content: Obj | None,
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
        restore_size=_restore_size_of(snapshot, content),
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
    snapshots: list[Obj],
    contents: list[Obj],
    snapshot_classes: list[Obj],
    *,
    now: datetime,
    namespace: str | None,
    pvcs: list[Obj] | None = None,
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


# -- which classes ----------------------------------------------------------------------------


def _is_default_vsc(vsc: Obj) -> bool:
    return is_default_snapshot_class(vsc)


def _is_default_sc(sc: Obj) -> bool:
    return is_default_storage_class(sc)


def choose_snapshot_class(storage_class: Obj, snapshot_classes: list[Obj]) -> str:
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


def check_snapshot_class(name: str, storage_class: Obj, snapshot_classes: list[Obj]) -> None:
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
    source_pvc: Obj | None,
    storage_classes: list[Obj],
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
        pvc_class = _spec(source_pvc).get("storageClassName")
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


def _classes_of_driver_hint(driver: str, storage_classes: list[Obj]) -> str:
    names = sorted(name_of(sc) for sc in storage_classes if sc.get("provisioner") == driver)
    if names:
        return f"classes of {driver}: {', '.join(names)}."
    return f"no StorageClass in the cluster uses {driver}."


def choose_restore_size(
    *,
    snapshot: Obj,
    content: Obj | None,
    source_pvc: Obj | None,
    given: str | None = None,
) -> tuple[str, str]:
    """(size, reason) for the restore PVC: --size, else restoreSize, else the source's capacity.

    Raises:
        SnapshotChoiceError: no size can be told, or --size is below the snapshot's restoreSize.
    """
    name = name_of(snapshot)
    restore = _restore_size_of(snapshot, content)
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


# -- paths inside a snapshot ------------------------------------------------------------------


def snapshot_path(path: str, root: str = SNAPSHOT_MOUNT) -> str:
    """The absolute path in the pod for ``path`` inside the snapshot ("" and "/" are the root).

    Raises:
        ValueError: when the path leaves the snapshot (``../..``).
    """
    joined = posixpath.normpath(posixpath.join(root, path.lstrip("/")))
    if joined != root and not joined.startswith(root + "/"):
        raise ValueError(f"path {path!r} leads outside the snapshot")
    return joined


def parse_snapshot_ref(text: str) -> tuple[str, str]:
    """Split ``SNAP:PATH`` (as `snapshot cp` takes it) into the snapshot name and the path.

    Raises:
        ValueError: when there is no ``:`` or no snapshot name.
    """
    name, sep, path = text.partition(":")
    if not sep or not name:
        raise ValueError(f"{text!r} is not SNAPSHOT:PATH (example: data-snap:/var/log/app.log)")
    return name, path


# -- the check's plan -------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownFile:
    """A file the check writes before the snapshot: random bytes of a known size."""

    path: str
    size_bytes: int


#: Several sizes: empty, under a block, one block, not block-aligned, 1 MiB, 16 MiB nested.
CHECK_FILES = (
    KnownFile("empty.bin", 0),
    KnownFile("tiny.txt", 100),
    KnownFile("block-4k.bin", 4096),
    KnownFile("odd-12345.bin", 12345),
    KnownFile("medium-1m.bin", 1024 * 1024),
    KnownFile("dir/nested/large-16m.bin", 16 * 1024 * 1024),
)
#: What changes after the snapshot: one file modified in place, one appended to, one deleted,
#: one added. The restore must show none of it.
MODIFIED_IN_PLACE = "medium-1m.bin"
APPENDED = "odd-12345.bin"
DELETED = "block-4k.bin"
ADDED = KnownFile("dir/added-after-snapshot.bin", 64 * 1024)
#: Smallest volume the check accepts: the files plus filesystem overhead, with room to spare.
CHECK_MIN_BYTES = 64 * 1024 * 1024


def check_files_bytes() -> int:
    """Bytes the check writes before the snapshot."""
    return sum(f.size_bytes for f in CHECK_FILES)


def check_size_problem(size_bytes: int) -> str | None:
    """Why a volume of ``size_bytes`` is too small for the check, or None."""
    if size_bytes < CHECK_MIN_BYTES:
        return (
            f"the check writes {format_bytes(check_files_bytes() + ADDED.size_bytes)} and needs "
            f"a volume of at least {format_bytes(CHECK_MIN_BYTES)}"
        )
    return None


# The --under-load log has its own check (under_load.py); the file checksums leave it out.
CHECKSUM_SCRIPT = (
    f"find . \\( -path ./lost+found -o -path ./{LOG_DIR} \\) -prune -o -type f -print0 "
    "| LC_ALL=C sort -z | xargs -0 -r sha256sum"
)


def _dirs_of(paths: list[str]) -> list[str]:
    dirs = {"."}
    for path in paths:
        parent = posixpath.dirname(path)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(dirs)


def write_script(root: str = SOURCE_MOUNT) -> str:
    """Write the known files with random content, fsync files and directories, print checksums."""
    paths = [f.path for f in CHECK_FILES]
    lines = ["set -eu", f"cd {shlex.quote(root)}"]
    for directory in _dirs_of(paths):
        if directory != ".":
            lines.append(f"mkdir -p {shlex.quote(directory)}")
    for known in CHECK_FILES:
        lines.append(f"head -c {known.size_bytes} /dev/urandom > {shlex.quote(known.path)}")
    # sync(1) with arguments fsyncs each one; directories too, so the new entries are durable.
    lines.append("sync " + " ".join(shlex.quote(p) for p in [*paths, *_dirs_of(paths)]))
    lines.append(CHECKSUM_SCRIPT)
    return "\n".join(lines) + "\n"


def change_script(root: str = SOURCE_MOUNT) -> str:
    """Change the source after the snapshot (modify in place, append, delete, add); checksums."""
    added_dir = posixpath.dirname(ADDED.path) or "."
    q = shlex.quote
    lines = [
        "set -eu",
        f"cd {q(root)}",
        # 4 KiB overwritten in place at 40 KiB: a snapshot sharing blocks would show it.
        f"dd if=/dev/urandom of={q(MODIFIED_IN_PLACE)} bs=4096 count=1 seek=10 "
        "conv=notrunc,fsync status=none",
        f"printf 'appended after the snapshot\\n' >> {q(APPENDED)}",
        f"rm -f {q(DELETED)}",
        f"mkdir -p {q(added_dir)}",
        f"head -c {ADDED.size_bytes} /dev/urandom > {q(ADDED.path)}",
        f"sync {q(MODIFIED_IN_PLACE)} {q(APPENDED)} {q(ADDED.path)} {q(added_dir)} .",
        CHECKSUM_SCRIPT,
    ]
    return "\n".join(lines) + "\n"


def checksum_script(root: str) -> str:
    """Print the checksums of every regular file under ``root``."""
    return f"set -eu\ncd {shlex.quote(root)}\n{CHECKSUM_SCRIPT}\n"


def parse_checksums(text: str) -> dict[str, str]:
    """``sha256sum`` output (``HASH  ./path``) as {path: hash}, paths without the ``./``."""
    sums: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        escaped = line.startswith("\\")
        if escaped:
            line = line[1:]
        digest, sep, path = line.partition("  ")
        if not sep:
            digest, sep, path = line.partition(" *")
        if not sep or len(digest) != 64:
            continue
        if escaped:
            path = path.replace("\\n", "\n").replace("\\\\", "\\")
        if path.startswith("./"):
            path = path[2:]
        sums[path] = digest.lower()
    return sums


class FileStatus(StrEnum):
    """What the restore holds for one path."""

    OK = "ok"
    ABSENT = "absent"  # created after the snapshot and rightly not in the restore
    MISSING = "missing"
    LATER_CONTENT = "later-content"  # the content written after the snapshot
    DIFFERS = "differs"
    LATER_FILE = "later-file"  # a file created after the snapshot
    UNEXPECTED = "unexpected"


_STATUS_TEXT = {
    FileStatus.MISSING: "is missing from the restore",
    FileStatus.LATER_CONTENT: "holds the content written after the snapshot",
    FileStatus.DIFFERS: "differs from the snapshot-time content",
    FileStatus.LATER_FILE: "was created after the snapshot but is in the restore",
    FileStatus.UNEXPECTED: "is in the restore but was never written",
}


@dataclass(frozen=True)
class FileVerdict:
    """One path: its checksum at snapshot time, after the change, and in the restore."""

    path: str
    status: FileStatus
    size_bytes: int | None
    snapshot_sha256: str | None
    restored_sha256: str | None
    changed_after_snapshot: bool

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "path": self.path,
            "status": str(self.status),
            "sizeBytes": self.size_bytes,
            "snapshotSha256": self.snapshot_sha256,
            "restoredSha256": self.restored_sha256,
            "changedAfterSnapshot": self.changed_after_snapshot,
        }

    @property
    def problem(self) -> str | None:
        """A sentence when the path is wrong in the restore."""
        if self.status in (FileStatus.OK, FileStatus.ABSENT):
            return None
        return f"{self.path} {_STATUS_TEXT[self.status]}"


def compare_restore(
    at_snapshot: dict[str, str],
    after_change: dict[str, str],
    restored: dict[str, str],
    sizes: Mapping[str, int] | None = None,
) -> tuple[FileVerdict, ...]:
    """Judge every path: the restore must equal ``at_snapshot`` and hold none of the change.

    ``sizes`` are the paths' sizes for the report (default: the filesystem check's files)."""
    if sizes is None:
        sizes = {f.path: f.size_bytes for f in (*CHECK_FILES, ADDED)}
    verdicts = []
    for path in sorted(set(at_snapshot) | set(restored) | set(after_change)):
        expected = at_snapshot.get(path)
        got = restored.get(path)
        later = after_change.get(path)
        changed = later != expected
        if expected is None and got is None:
            status = FileStatus.ABSENT
        elif expected is None:
            status = FileStatus.LATER_FILE if later is not None else FileStatus.UNEXPECTED
        elif got is None:
            status = FileStatus.MISSING
        elif got == expected:
            status = FileStatus.OK
        elif later is not None and got == later:
            status = FileStatus.LATER_CONTENT
        else:
            status = FileStatus.DIFFERS
        verdicts.append(FileVerdict(path, status, sizes.get(path), expected, got, changed))
    return tuple(verdicts)


def plan_problems(at_snapshot: dict[str, str], after_change: dict[str, str]) -> list[str]:
    """Why the check itself is void: files not written, or the later change not made."""
    problems = []
    missing = [f.path for f in CHECK_FILES if f.path not in at_snapshot]
    if missing:
        problems.append("the writer pod did not write " + ", ".join(missing))
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    for path in (MODIFIED_IN_PLACE, APPENDED):
        if path in at_snapshot and after_change.get(path) in (None, at_snapshot[path]):
            problems.append(f"the change after the snapshot did not modify {path}")
    if DELETED in after_change:
        problems.append(f"the change after the snapshot did not delete {DELETED}")
    if ADDED.path not in after_change:
        problems.append(f"the change after the snapshot did not add {ADDED.path}")
    if at_snapshot.get("empty.bin") not in (None, empty):
        problems.append("empty.bin was not empty when written")
    return problems


def describe_change() -> list[str]:
    """The change made after the snapshot, in words (the report keeps it)."""
    return [
        f"modified 4KiB in place in {MODIFIED_IN_PLACE}",
        f"appended a line to {APPENDED}",
        f"deleted {DELETED}",
        f"added {ADDED.path} ({format_bytes(ADDED.size_bytes)})",
    ]


# -- the check's report -----------------------------------------------------------------------


@dataclass(frozen=True)
class StepTiming:
    """How long one step of the check took."""

    name: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {"name": self.name, "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class SnapshotCheckReport:
    """The result of `snapshot check`: did a restore hold exactly the snapshot-time content?"""

    storage_class: str
    snapshot_class: str
    driver: str
    namespace: str
    size: str
    snapshot: str
    restore_size: str
    restore_storage_class: str
    run_id: str
    steps: tuple[StepTiming, ...]
    files: tuple[FileVerdict, ...]
    changes: tuple[str, ...]
    setup_problems: tuple[str, ...] = field(default=())
    #: ``--under-load``: the log written while the snapshot was cut, as restored.
    under_load: UnderLoadResult | None = None
    #: ``--restore-node``: where the source and the restore were read.
    restore_placement: RestorePlacement | None = None
    #: ``--freeze``: what the freeze did around the cut.
    freeze: FreezeResult | None = None
    #: ``Block``: the "files" are byte ranges of the raw device (core/snapshot/block_ranges.py).
    volume_mode: str = "Filesystem"

    @property
    def problems(self) -> list[str]:
        """Every reason the check failed."""
        found = list(self.setup_problems)
        found += self.restore_placement.problems if self.restore_placement else []
        found += self.freeze.problems if self.freeze else []
        found += [f.problem for f in self.files if f.problem]
        return found + (self.under_load.problems if self.under_load else [])

    @property
    def outcome(self) -> Outcome:
        """fail when the restore did not hold the snapshot-time content (``file:<path>``), the
        restore node or the freeze went wrong (``restore-node``, ``freeze``), or the log written
        under load was not a clean cut (``under-load``); inconclusive when the writer's own plan
        went wrong (``setup``), since then the restore was compared with nothing certain."""
        fail = (
            ["restore-node"] if self.restore_placement and self.restore_placement.problems else []
        )
        fail += ["freeze"] if self.freeze and self.freeze.problems else []
        fail += [f"file:{f.path}" for f in self.files if f.problem]
        fail += ["under-load"] if self.under_load and self.under_load.problems else []
        return judge(fail=fail, inconclusive=["setup"] if self.setup_problems else [])

    @property
    def total_seconds(self) -> float:
        """Sum of the steps."""
        return sum(s.seconds for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        """The report with apiVersion and kind."""
        return report_envelope(
            "SnapshotCheckReport",
            self.outcome,
            {
                "storageClass": self.storage_class,
                "snapshotClass": self.snapshot_class,
                "driver": self.driver,
                "namespace": self.namespace,
                "size": self.size,
                "volumeMode": self.volume_mode,
                "snapshot": self.snapshot,
                "restoreSize": self.restore_size,
                "restoreStorageClass": self.restore_storage_class,
                "runId": self.run_id,
                "totalSeconds": round(self.total_seconds, 2),
                "steps": [s.to_dict() for s in self.steps],
                "changesAfterSnapshot": list(self.changes),
                "files": [f.to_dict() for f in self.files],
                **({"underLoad": self.under_load.to_dict()} if self.under_load else {}),
                **(
                    {"restorePlacement": self.restore_placement.to_dict()}
                    if self.restore_placement
                    else {}
                ),
                **({"freeze": self.freeze.to_dict()} if self.freeze else {}),
                "problems": self.problems,
            },
        )


# -- manifests --------------------------------------------------------------------------------


def build_volume_snapshot(name: str, namespace: str, *, pvc_name: str, snapshot_class: str) -> Obj:
    """A VolumeSnapshot of a PVC with an explicit class."""
    return {
        "apiVersion": f"{SNAPSHOT_API_GROUP}/v1",
        "kind": "VolumeSnapshot",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "volumeSnapshotClassName": snapshot_class,
            "source": {"persistentVolumeClaimName": pvc_name},
        },
    }


def snapshot_data_source(snapshot_name: str) -> Obj:
    """A PVC ``dataSource`` that restores ``snapshot_name``."""
    return {"apiGroup": SNAPSHOT_API_GROUP, "kind": "VolumeSnapshot", "name": snapshot_name}
