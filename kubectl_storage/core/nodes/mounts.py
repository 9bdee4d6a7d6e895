"""Mount tables as data: parsers for every text form a node's mount list comes in.

Reads ``/proc/<pid>/mountinfo``, ``/proc/mounts`` (and ``/etc/mtab``, same format), the output of
``mount`` ("src on /mnt type nfs4 (opts)"), ``nfsstat -m`` ("/mnt from src" + "Flags:") and the
headers plus ``opts:`` lines of ``/proc/<pid>/mountstats``. Every parser returns
:class:`MountEntry` objects; :func:`parse_mounts` picks the parser with :func:`detect_mount_format`.

Captured text is often pasted from somewhere: a mail client wraps long lines, a web page or a
Markdown block indents or unindents them, a shell prompt or an ellipsis sits between them. Each
parser therefore takes ``notes``: a list it appends one :class:`LineNote` to for every line it
skipped, or rejoined with the lines after it (:func:`rejoin_wrapped_lines`), instead of refusing
the whole text. The kernel's own files never need it.

Pure: text in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
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


SKIPPED = "skipped"
REJOINED = "rejoined"
#: How much of a line a note shows.
NOTE_WIDTH = 100


@dataclass(frozen=True)
class LineNote:
    """A line of a captured text that a parser could not take as printed.

    ``action`` is ``skipped`` (left out; the other lines were read) or ``rejoined`` (the start of a
    line wrapped over ``line``..``last_line``, read joined). ``text`` is the line as found, or the
    joined line for ``rejoined``.
    """

    line: int
    text: str
    action: str
    reason: str
    last_line: int | None = None

    def describe(self, source: str) -> str:
        """``mounts.txt line 3: not a mountinfo line; skipped: '...'`` (the text truncated)."""
        if self.last_line and self.last_line != self.line:
            where = f"lines {self.line}-{self.last_line}"
        else:
            where = f"line {self.line}"
        text = self.text.strip().replace("\t", " ")
        if len(text) > NOTE_WIDTH:
            text = text[: NOTE_WIDTH - 1] + "…"
        return f"{source} {where}: {self.reason}; {self.action}: {text!r}"


def note_line(notes: list[LineNote] | None, number: int, text: str, reason: str) -> None:
    """Record one skipped line (a shell prompt says so instead of ``reason``)."""
    if notes is None or not text.strip():
        return
    if looks_like_prompt(text):
        reason = "a shell prompt, not output"
    notes.append(LineNote(number, text, SKIPPED, reason))


_PROMPT = re.compile(
    r"^\s*(?:"
    r"[$#] "  # "$ mount", "# multipath -ll"
    r"|\[[^\]\s]*@[^\]]*\][$#]"  # "[root@host ~]#"
    r"|[\w.-]+@[\w.-]+:\S*\s*[$#](?:\s|$)"  # "user@host:~$ cmd", "root@m20c2:/home/x#"
    r"|[\w.-]+:\S*\s[$#](?:\s|$)"  # "node1:~ # multipath -l"
    r"|(?:ba|z)?sh-[\d.]+[$#]"  # "sh-5.1# multipath -ll"
    r")"
)


def looks_like_prompt(line: str) -> bool:
    """Whether a line is a shell prompt (with or without its command) pasted with the output."""
    return bool(_PROMPT.match(line))


_QUOTE_LEVEL = re.compile(r"^> ?")


def unquote_mail(text: str) -> tuple[str, int]:
    """Remove the ``> `` an e-mail reply puts before every line (several levels: ``>> ``).

    Returns:
        The text (line numbers unchanged) and how many quote levels were removed; 0, with the
        text untouched, unless every non-blank line is quoted.
    """
    lines = text.split("\n")
    quoted = [line for line in lines if line.strip()]
    if not quoted or not all(line.startswith(">") for line in quoted):
        return text, 0
    levels = 0
    while quoted and all(line.startswith(">") for line in quoted):
        lines = [_QUOTE_LEVEL.sub("", line, count=1) for line in lines]
        quoted = [line for line in lines if line.strip()]
        levels += 1
    return "\n".join(lines), levels


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

    A line of the format anywhere in the first 20 (prompts and stray lines before it are
    allowed); failing that, the first 200 lines with wrapped lines rejoined
    (:func:`rejoin_wrapped_lines`), so a table a mail client wrapped is still recognised.

    Returns:
        One of ``"mountinfo"``, ``"proc-mounts"``, ``"mount"``, ``"nfsstat"``, ``"mountstats"`` or
        ``"unknown"``.
    """
    fmt = _detect(text)
    if fmt != FORMAT_UNKNOWN:
        return fmt
    head = "\n".join(text.splitlines()[:200])
    for candidate in (FORMAT_PROC_MOUNTS, FORMAT_MOUNT_COMMAND, FORMAT_MOUNTINFO):
        if _detect(rejoin_wrapped_lines(head, candidate)) == candidate:
            return candidate
    return FORMAT_UNKNOWN


def _detect(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()][:20]
    if not lines:
        return FORMAT_UNKNOWN
    if any(_MOUNTSTATS_HEADER.match(line) for line in lines):
        return FORMAT_MOUNTSTATS
    if any(_mountinfo_fields(line) is not None for line in lines):
        return FORMAT_MOUNTINFO
    if any(_NFSSTAT_FLAGS.match(line) for line in lines) and any(
        _NFSSTAT_HEADER.match(line) for line in lines
    ):
        return FORMAT_NFSSTAT
    if any(_MOUNT_COMMAND_LINE.match(line) for line in lines):
        return FORMAT_MOUNT_COMMAND
    if any(_proc_mounts_line_complete(line) for line in lines):
        return FORMAT_PROC_MOUNTS
    return FORMAT_UNKNOWN


def parse_mounts(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Parse any supported mount-table text, choosing the parser by :func:`detect_mount_format`.

    Args:
        text: the whole file or command output.
        strict: raise :class:`MountParseError` on a malformed line instead of skipping it.
        notes: where to record each skipped or rejoined line (see :class:`LineNote`).

    Returns:
        Entries in file order, stacked mounts marked with ``visible``.

    Raises:
        MountParseError: the format is not recognised (always), or a line is malformed (strict).
    """
    fmt = detect_mount_format(text)
    parsers: dict[str, Callable[..., list[MountEntry]]] = {
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
    return parsers[fmt](text, strict=strict, notes=notes)


# ---------------------------------------------------------------------------------------------
# Wrapped lines
# ---------------------------------------------------------------------------------------------

#: At most this many physical lines make one wrapped line.
_MAX_WRAP = 4
#: An option list (or a piece of one): ``rw,vers=4.2,`` or ``76,wsize=1048576``.
_OPTION_PIECE = re.compile(r"^,?[^\s,=]+(?:=[^\s,]*)?(?:,[^\s,=]+(?:=[^\s,]*)?)*,?$")


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


def _option_continuation(previous: str, line: str) -> bool:
    """Whether ``line`` continues the option list that ends ``previous`` (cut by a hard wrap)."""
    if not _OPTION_PIECE.match(line):
        return False
    return previous.endswith(",") or line.startswith(",") or "=" in line or "," in line


def rejoin_wrapped_lines(text: str, fmt: str, notes: list[LineNote] | None = None) -> str:
    """Join again the lines a mail client or a narrow window wrapped.

    One mount per line formats (mountinfo, /proc/mounts, ``mount``): a line that is not complete
    is joined with the lines after it (up to four) when the joined line is; a complete mountinfo
    line whose option list goes on on the next line gets that piece back. ``nfsstat -m`` and
    mountstats: see :func:`parse_nfsstat_m` and :func:`rejoin_mountstats`.

    The joined line takes the place of the first, the others become blank, so line numbers
    stay. One ``rejoined`` note per joined line.
    """
    if fmt == FORMAT_MOUNTSTATS:
        return rejoin_mountstats(text, notes)
    complete = _COMPLETE.get(fmt)
    if complete is None:
        return text
    lines = text.split("\n")
    out = list(lines)
    previous: int | None = None  # the last complete line, if nothing but joined lines follow it
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if not line:
            previous = None
            index += 1
            continue
        if complete(line):
            previous = index
            index += 1
            continue
        if (
            fmt == FORMAT_MOUNTINFO
            and previous is not None
            and _option_continuation(out[previous].strip(), line)
            and complete(out[previous].strip() + line)
        ):
            out[previous] = out[previous].strip() + line
            out[index] = ""
            _note_rejoined(notes, out[previous], previous, index)
            index += 1
            continue
        found = _join_forward(lines, index, complete, fmt)
        if found is None:
            previous = None
            index += 1
            continue
        last, joined = found
        out[index] = joined
        for blank in range(index + 1, last + 1):
            out[blank] = ""
        _note_rejoined(notes, joined, index, last)
        previous = index
        index = last + 1
    return "\n".join(out)


def _join_forward(
    lines: Sequence[str], start: int, complete: Callable[[str], bool], fmt: str
) -> tuple[int, str] | None:
    """The first complete line made of ``lines[start]`` and the next ones, with its last index."""
    variants = [lines[start].strip()]
    for index in range(start + 1, min(len(lines), start + _MAX_WRAP)):
        piece = lines[index].strip()
        if not piece or complete(piece) or looks_like_prompt(piece):
            return None
        variants = [
            variant + separator
            for variant in variants
            for separator in _separators(variant, piece, fmt)
        ][:16]
        variants = [variant + piece for variant in variants]
        for variant in variants:
            if complete(variant):
                return index, variant
    return None


def _separators(before: str, after: str, fmt: str) -> tuple[str, str]:
    """How to join two pieces, likelier first: a cut inside an option list needs nothing."""
    inside_options = fmt == FORMAT_MOUNT_COMMAND and "(" in before and ")" not in before
    if inside_options or before.endswith(",") or after.startswith(","):
        return "", " "
    return " ", ""


def _note_rejoined(notes: list[LineNote] | None, joined: str, first: int, last: int) -> None:
    """One note per joined line (indexes 0-based); a line joined again extends its note."""
    if notes is None:
        return
    if notes and notes[-1].action == REJOINED and notes[-1].line == first + 1:
        notes.pop()
    count = last - first + 1
    notes.append(LineNote(first + 1, joined, REJOINED, f"one line wrapped over {count}", last + 1))


def rejoin_mountstats(text: str, notes: list[LineNote] | None = None) -> str:
    """Join again wrapped lines of ``/proc/<pid>/mountstats`` (line numbers kept, as above).

    A ``device … mounted on … with fstype …`` header cut in two, and, inside a block, a piece
    without a ``key:`` that goes on the line before: an option list (``opts:``, ``caps:``,
    ``sec:``, ``nfsv4:``) or a row of counters (``events:``, ``bytes:``, ``xprt:``, per-op rows).
    """
    lines = text.split("\n")
    out = list(lines)
    previous: int | None = None  # the line a continuation would belong to
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if not line:
            previous = None
            index += 1
            continue
        if line.startswith(("device ", "no device ")) and not _MOUNTSTATS_HEADER.match(line):
            found = _join_header(lines, index)
            previous = None
            if found is None:
                index += 1
                continue
            last, joined = found
            out[index] = joined
            for blank in range(index + 1, last + 1):
                out[blank] = ""
            _note_rejoined(notes, joined, index, last)
            index = last + 1
            continue
        if _STATS_KEY.match(line) or _MOUNTSTATS_HEADER.match(line):
            previous = index
            index += 1
            continue
        if previous is not None:
            before = out[previous].strip()
            key = before.partition(":")[0].strip()
            rejoined: str | None = None
            if key in _STATS_OPTION_KEYS and _option_continuation(before, line):
                rejoined = before + line
            elif (key in _STATS_NUMBER_KEYS or _OP_ROW.match(before)) and _NUMBERS.match(line):
                rejoined = f"{before} {line}"
            if rejoined is not None:
                out[previous] = _indent(out[previous]) + rejoined
                out[index] = ""
                _note_rejoined(notes, rejoined, previous, index)
                index += 1
                continue
        previous = None
        index += 1
    return "\n".join(out)


def _join_header(lines: Sequence[str], start: int) -> tuple[int, str] | None:
    joined = lines[start].strip()
    for index in range(start + 1, min(len(lines), start + _MAX_WRAP)):
        piece = lines[index].strip()
        if not piece or _STATS_KEY.match(piece):
            return None
        joined = f"{joined} {piece}"
        if _MOUNTSTATS_HEADER.match(joined):
            return index, joined
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


# ---------------------------------------------------------------------------------------------
# The parsers
# ---------------------------------------------------------------------------------------------


def parse_mountinfo(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Parse ``/proc/<pid>/mountinfo`` (proc_pid_mountinfo(5)).

    Fields: mount id, parent id, ``maj:min``, root, mount point, per-mount options, optional fields
    (``shared:N``, ``master:N`` ...) up to the ``-`` separator, then fstype, source, super-options.
    Without ``strict``, wrapped lines are rejoined and other malformed lines skipped (``notes``).
    """
    if not strict:
        text = rejoin_wrapped_lines(text, FORMAT_MOUNTINFO, notes)
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        entry = _parse_mountinfo_line(line, number)
        if entry is None:
            if strict:
                raise MountParseError(f"line {number}: not a mountinfo line: {line!r}")
            note_line(notes, number, line, "not a mountinfo line")
            continue
        entries.append(entry)
    return mark_visibility(entries)


def _parse_mountinfo_line(line: str, number: int) -> MountEntry | None:
    fields = _mountinfo_fields(line)
    if fields is None:
        return None
    separator = fields.index("-", 6)
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
        optional_fields=tuple(fields[6:separator]),
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


def parse_proc_mounts(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Parse ``/proc/mounts`` or ``/etc/mtab``: ``source mountpoint fstype options dump pass``.

    A line missing ``dump pass`` is read as it is; wrapped lines are rejoined (``notes``).
    """
    if not strict:
        text = rejoin_wrapped_lines(text, FORMAT_PROC_MOUNTS, notes)
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or (fields[0].startswith("#") and not looks_like_prompt(line)):
            continue
        if (
            len(fields) < 4
            or not fields[1].startswith("/")
            or not _FSTYPE.match(fields[2])
            or looks_like_prompt(line)
        ):
            if strict:
                raise MountParseError(f"line {number}: expected at least 4 fields: {line!r}")
            note_line(notes, number, line, "not a /proc/mounts line")
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


def parse_mount_command(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Parse ``mount`` output: ``server:/export on /mnt type nfs4 (rw,relatime,...)``."""
    if not strict:
        text = rejoin_wrapped_lines(text, FORMAT_MOUNT_COMMAND, notes)
    entries: list[MountEntry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        match = _MOUNT_COMMAND_LINE.match(line.strip())
        if match is None or looks_like_prompt(line):
            if strict:
                raise MountParseError(f"line {number}: not 'SRC on DIR type FS (OPTS)': {line!r}")
            note_line(notes, number, line, "not a 'SRC on DIR type FS (OPTS)' line")
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


def parse_nfsstat_m(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Parse ``nfsstat -m``: ``/mnt from server:/export`` then an indented ``Flags:`` line.

    Indentation is not relied on (a paste may add or lose it). The flags may be wrapped over
    several lines (as mail clients and narrow windows do): a line that continues the option list
    is joined to it, and ``notes`` gets one ``rejoined`` note for the mount. ``nfsstat -m`` does
    not print the fstype: it is ``nfs4`` for ``vers=4*``, else ``nfs``.
    """
    entries: list[MountEntry] = []
    header: tuple[str, str, int] | None = None
    flags: list[str] = []
    flag_lines: list[int] = []

    def flush() -> None:
        if header is None:
            return
        mountpoint, source, number = header
        if not flags and strict:
            raise MountParseError(f"line {number}: no Flags: line for {mountpoint}")
        options_text = "".join(flags)
        if notes is not None and len(flag_lines) > 1:
            notes.append(
                LineNote(
                    flag_lines[0],
                    f"Flags: {options_text}",
                    REJOINED,
                    f"the Flags: line wrapped over {len(flag_lines)}",
                    flag_lines[-1],
                )
            )
        version = str(parse_options(options_text).get("vers", ""))
        fstype = "nfs4" if version.startswith("4") else "nfs"
        entries.append(
            _simple_entry(source, mountpoint, fstype, options_text, number, FORMAT_NFSSTAT)
        )

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        flags_match = _NFSSTAT_FLAGS.match(line)
        header_match = None if flags_match else _NFSSTAT_HEADER.match(line)
        if header_match and not looks_like_prompt(line):
            flush()
            header = (unescape_octal(header_match["mountpoint"]), header_match["source"], number)
            flags, flag_lines = [], []
        elif flags_match and header is not None:
            flags, flag_lines = [flags_match["flags"].strip()], [number]
        elif header is not None and flags and _OPTION_PIECE.match(line) and not strict:
            flags.append(line)  # a wrapped continuation of the Flags: line
            flag_lines.append(number)
        elif header is not None and flags and raw[0].isspace() and strict:
            flags.append(line)
        elif strict:
            raise MountParseError(f"line {number}: unexpected nfsstat -m line: {raw!r}")
        else:
            note_line(notes, number, raw, "not an nfsstat -m line")
    flush()
    return mark_visibility(entries)


@dataclass(frozen=True)
class MountstatsBlock:
    """One block of ``/proc/<pid>/mountstats``: a header line and the lines under it.

    ``has_header`` is False for text before the first readable header (a prompt, a stray line, a
    header cut beyond repair). ``device`` and ``mountpoint`` are unescaped (``\\040`` is a
    space); ``device`` is ``none`` for ``no device``. ``line_number`` is the block's first line,
    ``text`` the whole block (header included), ``body`` the lines after the header.
    """

    line_number: int
    text: str
    has_header: bool
    device: str = ""
    mountpoint: str = ""
    fstype: str = ""
    statvers: str | None = None

    @property
    def body(self) -> str:
        """The block's lines after its header line."""
        return self.text.partition("\n")[2]


def mountstats_blocks(text: str) -> Iterator[MountstatsBlock]:
    """Split ``/proc/<pid>/mountstats`` text into its blocks, in file order (no rejoining).

    The one reader of the format's frame: :func:`parse_mountstats_mounts` (the mount list) and
    :func:`kubectl_storage.core.mount_audit.mountstats.parse_mountstats` (the NFS counters) both
    read the blocks this gives. A block costs one header match, so 10,000 mounts stay fast.
    """
    line_number = 1
    for block in _MOUNTSTATS_BLOCK_START.split(text):
        number, line_number = line_number, line_number + block.count("\n") + 1
        header = _MOUNTSTATS_HEADER.match(block.partition("\n")[0].strip())
        if header is None:
            yield MountstatsBlock(number, block, has_header=False)
            continue
        yield MountstatsBlock(
            number,
            block,
            has_header=True,
            device=unescape_octal(header["device"] or "none"),
            mountpoint=unescape_octal(header["mountpoint"]),
            fstype=header["fstype"],
            statvers=header["statvers"],
        )


def parse_mountstats_mounts(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Mount entries from ``/proc/<pid>/mountstats`` headers and their ``opts:`` lines.

    Only the mount list is read here; the statistics (and the notes on unreadable counter
    lines) are in :mod:`kubectl_storage.core.mount_audit.mountstats`. Without ``strict``,
    wrapped headers and option lists are rejoined first (``notes`` gets those).
    """
    if not strict:
        text = rejoin_mountstats(text, notes)
    entries: list[MountEntry] = []
    for block in mountstats_blocks(text):
        if not block.has_header:
            continue
        entry = _simple_entry(
            source=block.device,
            mountpoint=block.mountpoint,
            fstype=block.fstype,
            options_text="",
            number=block.line_number,
            fmt=FORMAT_MOUNTSTATS,
        )
        for line in block.body.split("\n"):
            stripped = line.strip()
            if stripped.startswith("opts:"):
                options = parse_options(stripped[len("opts:") :])
                entry = replace(entry, options=options, super_options=options)
        entries.append(entry)
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
