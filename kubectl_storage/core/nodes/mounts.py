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

The module is in four parts: :mod:`.paste` (line notes, prompts, quotes), :mod:`.mount_model`
(entries, options, sources), :mod:`.mount_wrap` (wrapped lines joined) and this one (format
detection and the parsers); the names of the first three are re-exported here.

Pure: text in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from kubectl_storage.core.nodes.mount_model import (
    _FSTYPE,
    _MOUNT_COMMAND_LINE,
    _MOUNTSTATS_BLOCK_START,
    _MOUNTSTATS_HEADER,
    _NFSSTAT_FLAGS,
    _NFSSTAT_HEADER,
    FORMAT_MOUNT_COMMAND,
    FORMAT_MOUNTINFO,
    FORMAT_MOUNTSTATS,
    FORMAT_NFSSTAT,
    FORMAT_PROC_MOUNTS,
    FORMAT_UNKNOWN,
    MountEntry,
    MountParseError,
    OptionValue,
    _mountinfo_fields,
    _proc_mounts_line_complete,
    _simple_entry,
    mark_visibility,
    parse_options,
    split_network_source,
    unescape_octal,
)
from kubectl_storage.core.nodes.mount_wrap import (
    _option_continuation,
    rejoin_mountstats,
    rejoin_wrapped_lines,
)
from kubectl_storage.core.nodes.paste import (
    REJOINED,
    TRIMMED,
    LineNote,
    looks_like_prompt,
    note_line,
    trim_pasted_lines,
)

__all__ = [
    "MountstatsBlock",
    "detect_mount_format",
    "mountstats_blocks",
    "parse_mount_command",
    "parse_mountinfo",
    "parse_mounts",
    "parse_mountstats_mounts",
    "parse_nfsstat_m",
    "parse_proc_mounts",
]


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
    if any(_NFSSTAT_FLAGS.match(line) for line in lines):
        # nfsstat -m entries whose "<mount point> from <server>" line is missing or cut: read as
        # nfsstat -m, so that each such Flags: line is named instead of the file refused.
        return FORMAT_NFSSTAT
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
        text = rejoin_wrapped_lines(trim_pasted_lines(text, notes), FORMAT_MOUNTINFO, notes)
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
        text = rejoin_wrapped_lines(trim_pasted_lines(text, notes), FORMAT_PROC_MOUNTS, notes)
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
        options_text, trimmed = _proc_mounts_options(fields, strict)
        if options_text is None:
            if strict:
                raise MountParseError(f"line {number}: more than 6 fields: {line!r}")
            note_line(notes, number, line, "more fields than a /proc/mounts line has")
            continue
        if trimmed and notes is not None:
            notes.append(LineNote(number, line, TRIMMED, trimmed))
        entries.append(
            _simple_entry(
                source=unescape_octal(fields[0]),
                mountpoint=unescape_octal(fields[1]),
                fstype=fields[2],
                options_text=options_text,
                number=number,
                fmt=FORMAT_PROC_MOUNTS,
            )
        )
    return mark_visibility(entries)


def _proc_mounts_options(fields: list[str], strict: bool) -> tuple[str | None, str | None]:
    """The option field of a /proc/mounts line, and what was done to read it: a list a paste
    spread over several fields with blanks after its commas (``rw, vers=4.1, hard``) joined
    again, or words after ``dump pass`` (an annotation) left out. None when the extra fields
    are neither (the line cannot be told apart)."""
    if len(fields) > 4 and fields[3].endswith(","):
        tail = fields[4:]
        has_numbers = len(tail) >= 2 and tail[-1].isdigit() and tail[-2].isdigit()
        pieces = fields[3:-2] if has_numbers else fields[3:]
        if strict or not all(piece.endswith(",") for piece in pieces[:-1]):
            return None, None
        return "".join(pieces), "blanks after commas in the options"
    if len(fields) <= 6:
        return fields[3], None
    if not strict and fields[4].isdigit() and fields[5].isdigit():
        return fields[3], f"read without the annotation {' '.join(fields[6:])!r}"
    return None, None


def parse_mount_command(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[MountEntry]:
    """Parse ``mount`` output: ``server:/export on /mnt type nfs4 (rw,relatime,...)``."""
    if not strict:
        text = rejoin_wrapped_lines(trim_pasted_lines(text, notes), FORMAT_MOUNT_COMMAND, notes)
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
    if not strict:
        text = trim_pasted_lines(text, notes)
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
        elif flags_match and header is not None and not flags:
            flags, flag_lines = [flags_match["flags"].strip()], [number]
        elif flags_match and not strict:
            # No "<mount point> from <server>" line before it (missing, cut, or a second
            # Flags: line under one header): the options cannot be given a mount.
            note_line(notes, number, raw, "a Flags: line without its '<mount point> from' line")
        elif (
            header is not None
            and flags
            and not strict
            and not line.startswith("#")
            and _option_continuation(flags[-1], line)
        ):
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
        text = rejoin_mountstats(trim_pasted_lines(text, notes), notes)
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
