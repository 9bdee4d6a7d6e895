"""Mount entries and the pieces every mount-table parser shares: fstypes, option lists, network
sources, the per-format "is this line complete" tests, and stacked mounts.

Pure: text in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

# Filesystems whose source names a remote server; only these get ``server``/``export``.
NFS_FSTYPES = frozenset({"nfs", "nfs4"})
NETWORK_FSTYPES = NFS_FSTYPES | frozenset(
    {"cifs", "smb3", "smbfs", "ceph", "glusterfs", "fuse.glusterfs", "lustre", "9p", "afs"}
)

FORMAT_MOUNTINFO = "mountinfo"
FORMAT_PROC_MOUNTS = "proc-mounts"
FORMAT_MOUNT_COMMAND = "mount"
FORMAT_NFSSTAT = "nfsstat"
FORMAT_MOUNTSTATS = "mountstats"
FORMAT_UNKNOWN = "unknown"

OptionValue = str | bool

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")
_MOUNT_COMMAND_LINE = re.compile(
    r"^(?P<source>.*?) on (?P<mountpoint>.*) type (?P<fstype>\S+) \((?P<options>.*)\)$"
)
# mountstats: ``device SRC mounted on DIR with fstype FS [statvers=V]`` starts each block.
_MOUNTSTATS_HEADER = re.compile(
    r"^(?:device (?P<device>\S+)|no device) mounted on (?P<mountpoint>\S+)"
    r" with fstype (?P<fstype>\S+)(?: statvers=(?P<statvers>\S+))?"
)
_MOUNTSTATS_BLOCK_START = re.compile(r"\n(?=[ \t]*(?:device |no device ))")
_NFSSTAT_HEADER = re.compile(r"^(?P<mountpoint>\S.*?) from (?P<source>\S+)\s*$")
_NFSSTAT_FLAGS = re.compile(r"^\s*Flags:\s*(?P<flags>.*)$")
_MAJOR_MINOR = re.compile(r"^\d+:\d+$")
_FSTYPE = re.compile(r"^[a-z0-9][\w.+-]*$")
# mountstats: a "key:" line of a block, the keys whose value is an option list or numbers.
_STATS_KEY = re.compile(r"^(?:[A-Za-z][\w ]*?:|per-op statistics)")
_STATS_OPTION_KEYS = frozenset({"opts", "caps", "sec", "nfsv4", "impl_id"})
_STATS_NUMBER_KEYS = frozenset({"events", "bytes", "xprt"})
_OP_ROW = re.compile(r"^[A-Z][A-Z0-9_]*:\s+\d")
_NUMBERS = re.compile(r"^\d+(?:\s+\d+)*$")


class MountParseError(ValueError):
    """A line that does not fit the format being parsed (raised only with ``strict=True``)."""


@dataclass(frozen=True)
class MountEntry:
    """One mount as the kernel (or a tool) reported it.

    ``options`` is the effective option list: for mountinfo the per-mount options followed by the
    super-options (``rw``/``ro`` reconciled), elsewhere the single option list printed. A flag maps
    to ``True``, ``key=value`` to the value exactly as printed, in printed order. ``visible`` is
    False for a mount hidden by a later mount on the same mount point (stacked mounts).
    """

    source: str
    mountpoint: str
    fstype: str
    options: dict[str, OptionValue] = field(default_factory=dict)
    server: str | None = None
    export: str | None = None
    mount_id: int | None = None
    parent_id: int | None = None
    major_minor: str | None = None
    root: str | None = None
    mount_options: dict[str, OptionValue] = field(default_factory=dict)
    super_options: dict[str, OptionValue] = field(default_factory=dict)
    optional_fields: tuple[str, ...] = ()
    visible: bool = True
    line_number: int = 0
    source_format: str = FORMAT_UNKNOWN

    @property
    def is_nfs(self) -> bool:
        """Whether the kernel NFS client owns this mount (fstype ``nfs`` or ``nfs4``)."""
        return self.fstype in NFS_FSTYPES

    @property
    def is_network(self) -> bool:
        """Whether this is a network filesystem (NFS, CIFS/SMB, Ceph, Gluster, ...)."""
        return self.fstype in NETWORK_FSTYPES

    @property
    def read_only(self) -> bool:
        """Whether the mount is read-only."""
        return self.options.get("ro") is True

    def option(self, name: str) -> OptionValue | None:
        """The value of one option: ``True`` for a flag, the string for ``key=value``, else None."""
        return self.options.get(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "server": self.server,
            "export": self.export,
            "source": self.source,
            "mountpoint": self.mountpoint,
            "fstype": self.fstype,
            "options": dict(self.options),
            "mount_id": self.mount_id,
            "parent_id": self.parent_id,
            "major_minor": self.major_minor,
            "root": self.root,
            "visible": self.visible,
        }


def unescape_octal(text: str) -> str:
    r"""Decode the kernel's octal escapes in paths (``\040`` space, ``\011`` tab, ``\134``)."""
    if "\\" not in text:
        return text
    return _OCTAL_ESCAPE.sub(lambda match: chr(int(match.group(1), 8)), text)


def parse_options(text: str) -> dict[str, OptionValue]:
    """Split a comma-separated option string into an ordered dict.

    Commas inside double quotes (SELinux ``context="a,b"``) do not split. A flag maps to True and
    ``key=value`` keeps the value as printed; a repeated key keeps its last value. Blanks around
    an item (``rw, vers=4.1``, as pasted text sometimes has them) are not part of it.

    Args:
        text: e.g. ``"rw,vers=4.1,hard"``.

    Returns:
        ``{"rw": True, "vers": "4.1", "hard": True}``.
    """
    return dict(_parse_option_pairs(text.strip()))


@lru_cache(maxsize=4096)
def _parse_option_pairs(text: str) -> tuple[tuple[str, OptionValue], ...]:
    # Cached: a node's mounts repeat a handful of option strings, and callers get a fresh dict.
    options: dict[str, OptionValue] = {}
    for item in _split_unquoted_commas(text) if '"' in text else text.split(","):
        # A paste may put a blank after each comma ("rw, vers=4.1"): not part of the key.
        item = item.strip()
        if item:
            key, sep, value = item.partition("=")
            options[key.rstrip()] = value.lstrip() if sep else True
    return tuple(options.items())


def options_from_list(items: Iterable[str]) -> dict[str, OptionValue]:
    """Build an option dict from a list such as ``PV.spec.mountOptions`` (items may hold commas)."""
    options: dict[str, OptionValue] = {}
    for item in items:
        options.update(parse_options(item))
    return options


def split_network_source(source: str, fstype: str) -> tuple[str | None, str | None]:
    """Split a network mount source into (server, export); (None, None) for local filesystems.

    Handles ``host:/path``, ``[fd00::1]:/path`` (brackets removed from the server), CIFS
    ``//host/share`` and Ceph ``mon1,mon2:/path``.
    """
    if fstype not in NETWORK_FSTYPES:
        return None, None
    if source.startswith("//"):
        host, _, share = source[2:].partition("/")
        return (host or None), "/" + share
    if source.startswith("["):
        closing = source.find("]")
        if closing > 0 and source[closing + 1 : closing + 2] == ":":
            return source[1:closing], source[closing + 2 :] or "/"
    server, sep, export = source.rpartition(":")
    if not sep or not server:
        return None, None
    return server, export or "/"


def _mountinfo_fields(line: str) -> list[str] | None:
    """The fields of a well-formed mountinfo line (super options may be missing), else None."""
    fields = line.split()
    try:
        separator = fields.index("-", 6)
    except ValueError:
        return None
    if not separator + 3 <= len(fields) <= separator + 4:
        return None
    if not (fields[0].isdigit() and fields[1].isdigit() and _MAJOR_MINOR.match(fields[2])):
        return None
    return fields if fields[4].startswith("/") else None


def _mountinfo_line_complete(line: str) -> bool:
    fields = _mountinfo_fields(line)
    return fields is not None and len(fields) == fields.index("-", 6) + 4


def _proc_mounts_line_complete(line: str) -> bool:
    fields = line.split()
    return (
        len(fields) == 6
        and fields[1].startswith("/")
        and bool(_FSTYPE.match(fields[2]))
        and fields[4].isdigit()
        and fields[5].isdigit()
    )


def _mount_command_line_complete(line: str) -> bool:
    return _MOUNT_COMMAND_LINE.match(line) is not None


_COMPLETE: dict[str, Callable[[str], bool]] = {
    FORMAT_MOUNTINFO: _mountinfo_line_complete,
    FORMAT_PROC_MOUNTS: _proc_mounts_line_complete,
    FORMAT_MOUNT_COMMAND: _mount_command_line_complete,
}


def _simple_entry(
    source: str, mountpoint: str, fstype: str, options_text: str, number: int, fmt: str
) -> MountEntry:
    server, export = split_network_source(source, fstype)
    options = parse_options(options_text)
    return MountEntry(
        source=source,
        mountpoint=mountpoint,
        fstype=fstype,
        options=options,
        server=server,
        export=export,
        line_number=number,
        source_format=fmt,
    )


def mark_visibility(entries: Sequence[MountEntry]) -> list[MountEntry]:
    """Mark stacked mounts: of several mounts on one mount point, only the top one is visible.

    With mountinfo ids, a mount whose id is the parent of another mount on the same mount point is
    covered by it; otherwise (and for formats without ids) the later line wins, as the kernel lists
    mounts in the order they were made.
    """
    by_mountpoint: dict[str, list[int]] = {}
    for index, entry in enumerate(entries):
        by_mountpoint.setdefault(entry.mountpoint, []).append(index)
    hidden: set[int] = set()
    for indexes in by_mountpoint.values():
        if len(indexes) < 2:
            continue
        parents = {entries[i].parent_id for i in indexes if entries[i].parent_id is not None}
        covered = {
            i for i in indexes if entries[i].mount_id is not None and entries[i].mount_id in parents
        }
        # Without a parent link inside the group, fall back to file order: the last line is on top.
        hidden.update(covered if covered else indexes[:-1])
    return [
        entry
        if entry.visible == (index not in hidden)
        else replace(entry, visible=index not in hidden)
        for index, entry in enumerate(entries)
    ]


def _split_unquoted_commas(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts
