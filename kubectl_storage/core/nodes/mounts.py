"""Mount tables as data: parsers for every text form a node's mount list comes in.

Reads ``/proc/<pid>/mountinfo``, ``/proc/mounts`` (and ``/etc/mtab``, same format), the output of
``mount`` ("src on /mnt type nfs4 (opts)"), ``nfsstat -m`` ("/mnt from src" + "Flags:") and the
headers plus ``opts:`` lines of ``/proc/<pid>/mountstats``. Every parser returns
:class:`MountEntry` objects; :func:`parse_mounts` picks the parser with :func:`detect_mount_format`.

Pure: text in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
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
_MOUNTINFO_LINE = re.compile(r"^\d+ \d+ \d+:\d+ \S+ \S+ \S+( \S+)* - \S+ ")
_MOUNT_COMMAND_LINE = re.compile(
    r"^(?P<source>.*?) on (?P<mountpoint>.*) type (?P<fstype>\S+) \((?P<options>.*)\)$"
)
_MOUNTSTATS_HEADER = re.compile(
    r"^(?:device (?P<device>\S+)|no device) mounted on (?P<mountpoint>\S+)"
    r" with fstype (?P<fstype>\S+)"
)
_NFSSTAT_HEADER = re.compile(r"^(?P<mountpoint>\S.*?) from (?P<source>\S+)\s*$")
_NFSSTAT_FLAGS = re.compile(r"^\s*Flags:\s*(?P<flags>.*)$")


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
    ``key=value`` keeps the value as printed; a repeated key keeps its last value.

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
        if item:
            key, sep, value = item.partition("=")
            options[key] = value if sep else True
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


def detect_mount_format(text: str) -> str:
    """Tell which mount-table format ``text`` is in from its first meaningful lines.

    Returns:
        One of ``"mountinfo"``, ``"proc-mounts"``, ``"mount"``, ``"nfsstat"``, ``"mountstats"`` or
        ``"unknown"``.
    """
    lines = [line for line in text.splitlines() if line.strip()][:20]
    if not lines:
        return FORMAT_UNKNOWN
    if any(_MOUNTSTATS_HEADER.match(line) for line in lines):
        return FORMAT_MOUNTSTATS
    if _MOUNTINFO_LINE.match(lines[0]):
        return FORMAT_MOUNTINFO
    if any(_NFSSTAT_FLAGS.match(line) for line in lines) and any(
        _NFSSTAT_HEADER.match(line) for line in lines
    ):
        return FORMAT_NFSSTAT
    if _MOUNT_COMMAND_LINE.match(lines[0]):
        return FORMAT_MOUNT_COMMAND
    fields = lines[0].split()
    if len(fields) == 6 and fields[4].isdigit() and fields[5].isdigit():
        return FORMAT_PROC_MOUNTS
    return FORMAT_UNKNOWN


def parse_mounts(text: str, *, strict: bool = False) -> list[MountEntry]:
    """Parse any supported mount-table text, choosing the parser by :func:`detect_mount_format`.

    Args:
        text: the whole file or command output.
        strict: raise :class:`MountParseError` on a malformed line instead of skipping it.

    Returns:
        Entries in file order, stacked mounts marked with ``visible``.

    Raises:
        MountParseError: the format is not recognised (always), or a line is malformed (strict).
    """
    fmt = detect_mount_format(text)
    parsers = {
        FORMAT_MOUNTINFO: parse_mountinfo,
        FORMAT_PROC_MOUNTS: parse_proc_mounts,
        FORMAT_MOUNT_COMMAND: parse_mount_command,
        FORMAT_NFSSTAT: parse_nfsstat_m,
        FORMAT_MOUNTSTATS: parse_mountstats_mounts,
    }
    if fmt not in parsers:
        raise MountParseError(
            "not a mount table: expected mountinfo, /proc/mounts, mount, nfsstat -m or mountstats"
        )
    return parsers[fmt](text, strict=strict)


def parse_mountinfo(text: str, *, strict: bool = False) -> list[MountEntry]:
    """Parse ``/proc/<pid>/mountinfo`` (proc_pid_mountinfo(5)).

    Fields: mount id, parent id, ``maj:min``, root, mount point, per-mount options, optional fields
    (``shared:N``, ``master:N`` ...) up to the ``-`` separator, then fstype, source, super-options.
    """
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        entry = _parse_mountinfo_line(line, number)
        if entry is None:
            if strict:
                raise MountParseError(f"line {number}: not a mountinfo line: {line!r}")
            continue
        entries.append(entry)
    return mark_visibility(entries)


def _parse_mountinfo_line(line: str, number: int) -> MountEntry | None:
    fields = line.split(" ")
    try:
        separator = fields.index("-", 6)
    except ValueError:
        return None
    if separator + 3 > len(fields) or not fields[0].isdigit() or not fields[1].isdigit():
        return None
    fstype = unescape_octal(fields[separator + 1])
    source = unescape_octal(fields[separator + 2])
    super_text = fields[separator + 3] if separator + 3 < len(fields) else ""
    mount_options = parse_options(fields[5])
    super_options = parse_options(super_text)
    server, export = split_network_source(source, fstype)
    return MountEntry(
        source=source,
        mountpoint=unescape_octal(fields[4]),
        fstype=fstype,
        options=_merge_mount_and_super_options(mount_options, super_options),
        server=server,
        export=export,
        mount_id=int(fields[0]),
        parent_id=int(fields[1]),
        major_minor=fields[2],
        root=unescape_octal(fields[3]),
        mount_options=mount_options,
        super_options=super_options,
        optional_fields=tuple(field for field in fields[6:separator] if field),
        line_number=number,
        source_format=FORMAT_MOUNTINFO,
    )


def _merge_mount_and_super_options(
    mount_options: dict[str, OptionValue], super_options: dict[str, OptionValue]
) -> dict[str, OptionValue]:
    # Per-mount flags first (as /proc/mounts prints them), then the filesystem's own options.
    merged = dict(mount_options)
    for key, value in super_options.items():
        if key not in merged:
            merged[key] = value
    # A mount is read-only if either the mount or the superblock is (a ro bind of an rw fs).
    if "ro" in mount_options or "ro" in super_options:
        merged.pop("rw", None)
        merged = {"ro": True, **{k: v for k, v in merged.items() if k != "ro"}}
    return merged


def parse_proc_mounts(text: str, *, strict: bool = False) -> list[MountEntry]:
    """Parse ``/proc/mounts`` or ``/etc/mtab``: ``source mountpoint fstype options dump pass``."""
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 4:
            if strict:
                raise MountParseError(f"line {number}: expected at least 4 fields: {line!r}")
            continue
        entries.append(
            _simple_entry(
                source=unescape_octal(fields[0]),
                mountpoint=unescape_octal(fields[1]),
                fstype=fields[2],
                options_text=fields[3],
                number=number,
                fmt=FORMAT_PROC_MOUNTS,
            )
        )
    return mark_visibility(entries)


def parse_mount_command(text: str, *, strict: bool = False) -> list[MountEntry]:
    """Parse ``mount`` output: ``server:/export on /mnt type nfs4 (rw,relatime,...)``."""
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _MOUNT_COMMAND_LINE.match(line.rstrip())
        if match is None:
            if strict:
                raise MountParseError(f"line {number}: not 'SRC on DIR type FS (OPTS)': {line!r}")
            continue
        entries.append(
            _simple_entry(
                source=match["source"],
                mountpoint=match["mountpoint"],
                fstype=match["fstype"],
                options_text=match["options"],
                number=number,
                fmt=FORMAT_MOUNT_COMMAND,
            )
        )
    return mark_visibility(entries)


def parse_nfsstat_m(text: str, *, strict: bool = False) -> list[MountEntry]:
    """Parse ``nfsstat -m``: ``/mnt from server:/export`` then an indented ``Flags:`` line.

    The flags may be wrapped over several indented lines (as mail clients do); they are joined.
    ``nfsstat -m`` does not print the fstype: it is ``nfs4`` for ``vers=4*``, else ``nfs``.
    """
    entries: list[MountEntry] = []
    header: tuple[str, str, int] | None = None
    flags: list[str] = []

    def flush() -> None:
        if header is None:
            return
        mountpoint, source, number = header
        if not flags and strict:
            raise MountParseError(f"line {number}: no Flags: line for {mountpoint}")
        options_text = "".join(flags)
        version = str(parse_options(options_text).get("vers", ""))
        fstype = "nfs4" if version.startswith("4") else "nfs"
        entries.append(
            _simple_entry(source, mountpoint, fstype, options_text, number, FORMAT_NFSSTAT)
        )

    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        header_match = _NFSSTAT_HEADER.match(line) if not line[0].isspace() else None
        flags_match = _NFSSTAT_FLAGS.match(line)
        if header_match and not flags_match:
            flush()
            header = (unescape_octal(header_match["mountpoint"]), header_match["source"], number)
            flags = []
        elif flags_match and header is not None:
            flags = [flags_match["flags"].strip()]
        elif header is not None and flags and line[0].isspace():
            flags.append(line.strip())  # a wrapped continuation of the Flags: line
        elif strict:
            raise MountParseError(f"line {number}: unexpected nfsstat -m line: {line!r}")
    flush()
    return mark_visibility(entries)


def parse_mountstats_mounts(text: str, *, strict: bool = False) -> list[MountEntry]:
    """Mount entries from ``/proc/<pid>/mountstats`` headers and their ``opts:`` lines.

    Only the mount list is read here; the statistics are in
    :mod:`kubectl_storage.core.mount_audit.mountstats`.
    """
    del strict  # every line of mountstats is either a header or ignored detail
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _MOUNTSTATS_HEADER.match(line)
        if header:
            entries.append(
                _simple_entry(
                    source=unescape_octal(header["device"] or "none"),
                    mountpoint=unescape_octal(header["mountpoint"]),
                    fstype=header["fstype"],
                    options_text="",
                    number=number,
                    fmt=FORMAT_MOUNTSTATS,
                )
            )
            continue
        stripped = line.strip()
        if entries and stripped.startswith("opts:"):
            options = parse_options(stripped[len("opts:") :])
            entries[-1] = replace(entries[-1], options=options, super_options=options)
    return mark_visibility(entries)


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
