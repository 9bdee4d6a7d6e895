"""Kernel-log events joined with the node's mount table now: which mounts each event's device
(or NFS server) has, whether a filesystem that went read-only is still read-only, and whether
each NFS server's last word was "not responding" or "OK".

The read-only check follows node-problem-detector's ``config/plugin/check_ro_filesystem.sh``:
the device named in the kernel's message is looked up among the mounted sources (``sdb``,
``/dev/sdb``; for ``dm-N`` the names udev gives it, here ``aliases``) and the filesystem is
read-only when a mount of it says ``ro``. Three differences, each because the mount table
allows more than ``/proc/mounts`` does:

- with mountinfo the superblock options decide, not a mount's own: a pod's ``readOnly`` bind
  of a read-write filesystem is not a filesystem remounted read-only;
- ext4 since Linux 6.12 (d3476f3dad4a, "ext4: don't set SB_RDONLY after filesystem errors")
  no longer sets ``ro`` after an error with ``errors=remount-ro``: it refuses writes with the
  superblock still ``rw`` and, since 6.15 (6b76715d5e41) and the stable kernels it went to,
  shows ``emergency_ro`` (or ``shutdown``) in the options instead. ``rw`` with neither, on a
  6.12-6.14 kernel, is therefore :data:`UNKNOWN`, not read-write (captured on 6.18:
  tests/fixtures/kernel_log/SOURCES.md);
- an XFS shutdown leaves the options as they were; it lasts until the filesystem is unmounted,
  so a filesystem still mounted is :data:`STILL_MOUNTED`.

The device → PV → PVC → pod step is :mod:`.volume_owners`' (by mount point); this module
gives each event its mounts. Pure: events and mount entries in, frozen dataclasses out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.nodes.kernel_log import (
    FS_REMOUNTED_RO,
    NFS_NOT_RESPONDING,
    NFS_OK,
    KernelEvent,
)
from kubectl_storage.core.nodes.mount_model import MountEntry

#: The filesystem is read-only now (``ro``, or ext4's ``emergency_ro`` / ``shutdown``).
STILL_READ_ONLY = "still-read-only"
#: The filesystem is mounted read-write now: remounted, or mounted again, since the event.
NO_LONGER_READ_ONLY = "no-longer-read-only"
#: No mount of the device is in the table (unmounted since, or never seen by this table).
NOT_MOUNTED = "not-mounted"
#: An XFS shutdown of a filesystem still mounted: it lasts until the unmount.
STILL_MOUNTED = "still-mounted"
#: The mount table cannot tell (see the module's notes).
UNKNOWN = "unknown"

#: How an event's device was found in the mount table.
VIA_SOURCE = "source"
VIA_ALIAS = "alias"
VIA_MAJOR_MINOR = "major:minor"
VIA_PARTITION = "partition"
VIA_SERVER = "server"

_EXT_FSTYPES = frozenset({"ext2", "ext3", "ext4"})
# ext4 shows these in the superblock options when it refuses writes without SB_RDONLY.
_EXT_READ_ONLY_FLAGS = ("emergency_ro", "shutdown")
_KERNEL = re.compile(r"^(\d+)\.(\d+)")
# ext4 without SB_RDONLY after errors (6.12) and before emergency_ro is shown (6.15).
_EXT_SILENT_FROM, _EXT_SILENT_UNTIL = (6, 12), (6, 15)


@dataclass(frozen=True)
class LocatedEvent:
    """A kernel-log event with the mounts of its device or NFS server.

    ``via`` says how the device was found (:data:`VIA_SOURCE`, ...; None when no mount was).
    ``state`` is, for the ``fs-remounted-ro`` family only, what the mount table says now
    (:data:`STILL_READ_ONLY`, :data:`NO_LONGER_READ_ONLY`, :data:`NOT_MOUNTED`,
    :data:`STILL_MOUNTED`, :data:`UNKNOWN`), with ``reason`` in words.
    """

    event: KernelEvent
    mounts: tuple[MountEntry, ...] = ()
    via: str | None = None
    state: str | None = None
    reason: str = ""

    @property
    def mountpoints(self) -> tuple[str, ...]:
        """The mount points of the device (or server), in table order, each once."""
        return tuple(dict.fromkeys(entry.mountpoint for entry in self.mounts))

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            **self.event.to_dict(),
            "mountpoints": list(self.mountpoints),
            "via": self.via,
            "state": self.state,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class NfsServerState:
    """What the kernel last said about one NFS server: ``not-responding`` or ``ok``.

    ``last`` is that message; ``not_responding`` counts the "not responding" messages seen;
    ``mounts`` are the NFS mounts of the server now.
    """

    server: str
    state: str
    last: KernelEvent
    not_responding: int
    mounts: tuple[MountEntry, ...] = ()

    @property
    def still_not_responding(self) -> bool:
        """Whether the last message about the server was "not responding"."""
        return self.state == "not-responding"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "server": self.server,
            "state": self.state,
            "not_responding": self.not_responding,
            "last": self.last.to_dict(),
            "mountpoints": list(dict.fromkeys(entry.mountpoint for entry in self.mounts)),
        }


def locate_events(
    events: Iterable[KernelEvent],
    mounts: Sequence[MountEntry],
    *,
    aliases: Mapping[str, Iterable[str]] | None = None,
    kernel_release: str | None = None,
) -> tuple[LocatedEvent, ...]:
    """Every event with the mounts of its device (or NFS server), and for the read-only family
    whether the filesystem is read-only now.

    Args:
        events: from :func:`~kubectl_storage.core.nodes.kernel_log.parse_kernel_log`.
        mounts: the node's mount table now (mountinfo preferred: it has superblock options).
        aliases: other names of a kernel device name, followed transitively: ``{"dm-3":
            ["mpatha"]}`` (its ``/dev/mapper`` name), ``{"connection1:0": ["sdb"]}`` (an iSCSI
            session's disks).
        kernel_release: the node's ``uname -r`` (ext4's read-only flag is not shown on
            6.12-6.14; without it ``rw`` is taken as read-write).
    """
    names = {name: tuple(values) for name, values in (aliases or {}).items()}
    located = []
    for event in events:
        if event.server is not None:
            found = _server_mounts(event.server, mounts)
            located.append(LocatedEvent(event, found, VIA_SERVER if found else None))
            continue
        found, via = _device_mounts(event, mounts, names)
        if event.kind != FS_REMOUNTED_RO:
            located.append(LocatedEvent(event, found, via))
            continue
        state, reason = _read_only_state(event, found, kernel_release)
        located.append(LocatedEvent(event, found, via, state, reason))
    return tuple(located)


def nfs_server_states(
    events: Iterable[KernelEvent], mounts: Sequence[MountEntry] = ()
) -> tuple[NfsServerState, ...]:
    """The last "not responding" or "OK" per NFS server, in order of first mention (the log's
    order is the kernel's: the last line about a server is its state when the log was read)."""
    last: dict[str, KernelEvent] = {}
    counts: dict[str, int] = {}
    for event in events:
        if event.kind not in (NFS_NOT_RESPONDING, NFS_OK) or event.server is None:
            continue
        key = server_key(event.server)
        last[key] = event
        counts[key] = counts.get(key, 0) + (event.kind == NFS_NOT_RESPONDING)
    return tuple(
        NfsServerState(
            server=event.server or key,
            state="not-responding" if event.kind == NFS_NOT_RESPONDING else "ok",
            last=event,
            not_responding=counts[key],
            mounts=_server_mounts(key, mounts),
        )
        for key, event in last.items()
    )


# ---------------------------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------------------------


def server_key(server: str) -> str:
    """How two names of one NFS server compare: ``[fd00::1]`` and ``fd00::1``, any case."""
    return server.strip("[]").lower()


def _server_mounts(server: str, mounts: Sequence[MountEntry]) -> tuple[MountEntry, ...]:
    key = server_key(server)
    return tuple(
        entry
        for entry in mounts
        if entry.is_nfs and entry.server is not None and server_key(entry.server) == key
    )


def _device_names(name: str) -> set[str]:
    """``/dev/mapper/x`` → ``{"mapper/x", "x"}``; ``sdb`` → ``{"sdb"}``; a source that is no
    device path (``tmpfs``, ``server:/export``) is only itself."""
    if not name.startswith("/dev/"):
        return {name}
    short = name.removeprefix("/dev/")
    return {short, short.rsplit("/", 1)[-1]}


def _alias_closure(device: str, aliases: Mapping[str, tuple[str, ...]]) -> set[str]:
    seen: set[str] = set()
    todo = [device]
    while todo:
        name = todo.pop()
        for form in _device_names(name):
            if form not in seen:
                seen.add(form)
                todo.extend(aliases.get(form, ()))
    return seen


def _device_mounts(
    event: KernelEvent, mounts: Sequence[MountEntry], aliases: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[MountEntry, ...], str | None]:
    device = event.device
    if device is None:
        return (), None
    own = _device_names(device)
    found = tuple(entry for entry in mounts if _device_names(entry.source) & own)
    if found:
        return found, VIA_SOURCE
    named = _alias_closure(device, aliases)
    found = tuple(entry for entry in mounts if _device_names(entry.source) & named)
    if found:
        return found, VIA_ALIAS
    numbers = event.record.property("DEVICE")  # kmsg: "b8:16" is block device 8:16
    if numbers and numbers.startswith("b"):
        found = tuple(entry for entry in mounts if entry.major_minor == numbers[1:])
        if found:
            return found, VIA_MAJOR_MINOR
    # A whole disk's error concerns its partitions: sdb → sdb1, nvme0n1 → nvme0n1p1.
    partition = re.compile(rf"^{re.escape(device)}{'p' if device[-1:].isdigit() else ''}\d+$")
    found = tuple(
        entry
        for entry in mounts
        if any(partition.match(name) for name in _device_names(entry.source))
    )
    return found, (VIA_PARTITION if found else None)


# ---------------------------------------------------------------------------------------------
# Read-only now
# ---------------------------------------------------------------------------------------------


def _read_only_state(
    event: KernelEvent, found: Sequence[MountEntry], kernel_release: str | None
) -> tuple[str, str]:
    if not found:
        return NOT_MOUNTED, "no mount of the device in the mount table"
    if event.cause == "xfs-shutdown":
        return STILL_MOUNTED, (
            "an XFS shutdown lasts until the filesystem is unmounted and the mount table "
            "does not show it; the filesystem is still mounted"
        )
    flags = [flag for entry in found if (flag := _read_only_flag(entry))]
    if flags:
        return STILL_READ_ONLY, f"mounted with {flags[0]} now"
    if any(entry.fstype in _EXT_FSTYPES for entry in found) and _ext4_silent(kernel_release):
        return UNKNOWN, (
            f"kernel {kernel_release}: ext4 of 6.12-6.14 refuses writes after an error "
            "without showing ro or emergency_ro in the mount table"
        )
    return NO_LONGER_READ_ONLY, "mounted read-write now"


def _read_only_flag(entry: MountEntry) -> str | None:
    """``ro`` (or ext4's flag) when the filesystem itself is read-only; a mount's own ``ro``
    counts only when the table has no superblock options (not mountinfo)."""
    options = entry.super_options if entry.super_options else entry.options
    if options.get("ro") is True:
        return "ro"
    return next((flag for flag in _EXT_READ_ONLY_FLAGS if options.get(flag) is True), None)


def _ext4_silent(kernel_release: str | None) -> bool:
    match = _KERNEL.match(kernel_release or "")
    if match is None:
        return False
    version = (int(match.group(1)), int(match.group(2)))
    return _EXT_SILENT_FROM <= version < _EXT_SILENT_UNTIL
