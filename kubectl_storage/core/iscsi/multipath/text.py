"""``multipath -ll`` / ``multipath -l`` text, current and old bracket format, with the noise of
``-v3`` and pastes skipped and wrapped lines rejoined."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_storage.core.iscsi.multipath.model import MultipathMap, MultipathPath, PathGroup
from kubectl_storage.core.nodes.paste import (
    REJOINED,
    TRIMMED,
    LineNote,
    looks_like_prompt,
    note_line,
    trim_pasted_lines,
)

# --- text ---------------------------------------------------------------------------------------

# "Dec 01 10:00:00 | msg" (syslog-style) and "4735.224337 | msg" (monotonic, newer tools).
_NOISE = re.compile(r"^\s*(?:[A-Z][a-z]{2} +\d+ [\d:]+|\d+\.\d+) \| ")
# -v3/-v4 debug lines old versions print without a timestamp (RHEL 5): skipped without a note.
_DEBUG = re.compile(
    r"^\s*(?:params = |status = |\*word = |[\w-]+: [\w ]+ = |process \d+ |forked \d+)"
)
# -v3/-v4 per-device debug lines before the maps: "sdz: size = 2936", "sr0: blacklisted".
_DEVICE_DEBUG = re.compile(r"^\s*[\w-]+: \S")
_PROMPT = re.compile(r"^multipathd>\s?")
# A header the way Red Hat's DM Multipath guide prints it: no dm-N (RHEL 5, multipath -l).
_OLD_HEADER = re.compile(r"^(?:(?P<action>[a-z]+): )?(?P<name>[^\s(]+) \((?P<wwid>[^)]+)\)\s*$")
_MAP_HEADER = re.compile(
    r"^(?:(?P<action>[a-z]+): )?(?P<name>\S.*?)(?: \((?P<wwid>[^)]+)\))?"
    r" ?(?P<dm>dm-\d+)(?: +(?P<venprod>.*?))?\s*$"
)
_PROPS = re.compile(r"^size=(?P<size>\S+)\s")
_QUOTED = {key: re.compile(rf"{key}='(?P<v>[^']*)'") for key in ("features", "hwhandler")}
_WP = re.compile(r"\bwp=(?P<wp>\w+)")
_OLD_PROPS = re.compile(
    r"^\[size=(?P<size>[^\]]*)\]\[features=(?P<features>[^\]]*)\]"
    r"\[hwhandler=(?P<hwhandler>[^\]]*)\](?:\[(?P<wp>\w+)\s*\])?"
)
_TREE = r"[\s|`'\\_+-]*"
_PG = re.compile(_TREE + r"policy='(?P<policy>[^']*)' prio=(?P<prio>-?\d+) status=(?P<status>\w+)")
_OLD_PG = re.compile(r"^\\_ (?P<policy>.+?) \[prio=(?P<prio>-?\d+)\]\[(?P<status>\w+)\]")
_HCTL = r"(?P<hctl>\d+:\d+:\d+:\d+|#:#:#:#)"
_CHK = r"i/o pending|i/o timeout|\w+"
# Whatever follows the last state is a note the poster added ("<----", "# this one").
_ANNOTATION = r"(?:\s+(?P<annotation>\S.*?))?\s*$"
_HCTL_IN = re.compile(r"\d+:\d+:\d+:\d+")
_PATH = re.compile(
    _TREE + _HCTL + r" +(?P<dev>[^\s*]+) +(?P<mm>\d+:\d+|#:#) +(?P<dm>active|failed|undef)"
    rf" +(?P<chk>{_CHK}) +(?P<online>\w+)" + _ANNOTATION
)
_OLD_PATH = re.compile(
    _TREE + _HCTL + r" +(?P<dev>[^\s*]+) +(?P<mm>\d+:\d+) +\[(?P<dm>\w+)\]\[(?P<chk>[^\]]+)\]"
    r"(?:\[(?P<online>\w+)\])?" + _ANNOTATION
)
# Where a second record starts on a line a paste glued together (or a PDF or web page
# flattened): a path, a path group, a property line. Only after something that is not tree.
_GLUED = re.compile(
    r"\s+(?="
    r"[\s|`'\\_+-]*(?:\d+:\d+:\d+:\d+|#:#:#:#) +\S+ +(?:\d+:\d+|#:#) "
    r"|[\s|`'\\_+-]*policy='"
    r"|\\_ \S.*? \[prio="
    r"|size=\S+ features='"
    r"|\[size="
    r")"
)


def _placeholder(value: str) -> str | None:
    """multipath prints ``#:#:#:#``, ``-`` and ``#:#`` for values it could not read."""
    return None if value in {"#:#:#:#", "-", "#:#"} else value


def _split_vendor_product(text: str | None) -> tuple[str, str]:
    if not text:
        return "", ""
    vendor, sep, product = text.partition(",")
    if not sep:  # e.g. "uninitialized": no vendor/product known
        return "", ""
    return vendor.strip(), product.strip()


@dataclass
class _MapBuilder:
    """Mutable accumulator while reading one map's lines."""

    wwid: str
    alias: str | None
    dm: str | None
    vendor: str
    product: str
    action: str | None
    size: str | None = None
    features: str = ""
    hwhandler: str = ""
    wp: str | None = None
    groups: list[tuple[str, int | None, str, list[MultipathPath]]] | None = None
    unread: list[int] | None = None

    def build(self) -> MultipathMap:
        groups = tuple(
            PathGroup(policy=policy, prio=prio, status=status, paths=tuple(paths))
            for policy, prio, status, paths in (self.groups or [])
        )
        return MultipathMap(
            wwid=self.wwid,
            alias=self.alias,
            dm=self.dm,
            vendor=self.vendor,
            product=self.product,
            size=self.size,
            features=self.features,
            hwhandler=self.hwhandler,
            wp=self.wp,
            path_groups=groups,
            action=self.action,
            unread_lines=tuple(self.unread or ()),
        )


def _header(line: str) -> _MapBuilder | None:
    # A header starts at the margin, but a paste may indent it (a Markdown block, a web page).
    line = line.lstrip()
    match = _MAP_HEADER.match(line)
    if not match or line.startswith(("|", "`", "'", "\\")):
        return None
    name, wwid = match.group("name").strip(), match.group("wwid")
    vendor, product = _split_vendor_product(match.group("venprod"))
    return _MapBuilder(
        wwid=(wwid or name).strip(),
        alias=name if wwid and wwid.strip() != name else None,
        dm=match.group("dm"),
        vendor=vendor,
        product=product,
        action=match.group("action"),
    )


def _old_header(line: str, following: str | None) -> _MapBuilder | None:
    """A header without ``dm-N`` (``mpath1 (3600d…)``), taken only when a bracket property line
    follows it."""
    match = _OLD_HEADER.match(line.strip())
    if not match or following is None or not _OLD_PROPS.match(following.strip()):
        return None
    name, wwid = match.group("name"), match.group("wwid").strip()
    return _MapBuilder(
        wwid=wwid,
        alias=name if wwid != name else None,
        dm=None,
        vendor="",
        product="",
        action=match.group("action"),
    )


def _apply_props(builder: _MapBuilder, line: str) -> bool:
    """Fill size/features/hwhandler/wp from a property line; False if it is not one."""
    old = _OLD_PROPS.match(line)
    if old:
        builder.size = old.group("size").strip()
        builder.features = old.group("features").strip().strip('"')
        builder.hwhandler = old.group("hwhandler").strip().strip('"')
        builder.wp = old.group("wp")
        return True
    props = _PROPS.match(line)
    if not props:
        return False
    builder.size = props.group("size")
    for key, pattern in _QUOTED.items():
        found = pattern.search(line)
        setattr(builder, key, found.group("v") if found else "")
    wp = _WP.search(line)
    builder.wp = wp.group("wp") if wp else None
    return True


def _path_from(line: str) -> MultipathPath | None:
    found = _annotated_path(line)
    return found[0] if found else None


def _annotated_path(line: str) -> tuple[MultipathPath, str | None] | None:
    """The path on a path line, and the annotation a poster added after its states, if any."""
    match = _PATH.match(line) or _OLD_PATH.match(line)
    if not match:
        return None
    annotation = match.group("annotation")
    if annotation and _HCTL_IN.search(annotation):
        return None  # a second path glued on, not a note: the line is not read as one path
    return _path_of(match), annotation


def _path_of(match: re.Match[str]) -> MultipathPath:
    return MultipathPath(
        hctl=_placeholder(match.group("hctl")),
        dev=_placeholder(match.group("dev")),
        major_minor=_placeholder(match.group("mm")),
        dm_state=match.group("dm"),
        path_state=match.group("chk"),
        online_state=match.group("online"),
    )


def parse_multipath_ll(text: str, notes: list[LineNote] | None = None) -> tuple[MultipathMap, ...]:
    """Parse ``multipath -ll`` / ``multipath -l`` (or ``multipathd show maps topology``) output.

    Lines that belong to no map (warnings, debug output, the paths-list table) are skipped, so a
    capture with stderr mixed in still parses. A line a paste wrapped (a property line cut
    before ``hwhandler=``, a path line cut before its last states, a header cut before its
    ``dm-N`` or vendor) is rejoined first; a line inside a map that is none of the above is
    skipped. Both are recorded in ``notes``.

    Args:
        text: the command's output, current or old bracket format.
        notes: where to record rejoined and skipped lines.

    Returns:
        The maps in printed order; an empty tuple when the text holds none.
    """
    maps: list[MultipathMap] = []
    current: _MapBuilder | None = None
    in_paths_list = False
    text = trim_pasted_lines(text, notes)
    lines = _rejoin_wrapped([_PROMPT.sub("", raw.rstrip()) for raw in text.splitlines()], notes)
    records = _unglue(lines, notes)
    for index, (number, line) in enumerate(records):
        if not line.strip() or _NOISE.match(line):
            continue
        if line.startswith("====="):  # "===== paths list =====": a table of paths, not a map
            if current:
                maps.append(current.build())
            current, in_paths_list = None, True
            continue
        if current is not None and current.size is None and _apply_props(current, line.strip()):
            continue
        following = records[index + 1][1] if index + 1 < len(records) else None
        header = _header(line) or _old_header(line, following)
        if header is not None:
            if current:
                maps.append(current.build())
            current, in_paths_list = header, False
            continue
        if current is None:
            if not (in_paths_list or _DEBUG.match(line) or _DEVICE_DEBUG.match(line)):
                note_line(notes, number, line, "not a multipath -ll line (before the first map)")
            continue
        group = _PG.match(line) or _OLD_PG.match(line)
        if group:
            if current.groups is None:
                current.groups = []
            current.groups.append(
                (group.group("policy"), int(group.group("prio")), group.group("status"), [])
            )
            continue
        _read_map_line(current, number, line, notes)
    if current:
        maps.append(current.build())
    return tuple(maps)


def _read_map_line(
    current: _MapBuilder, number: int, line: str, notes: list[LineNote] | None
) -> None:
    """A line inside a map that is not its header, properties or a group: a path, or a line
    that could not be read (noted, and counted on the map unless it is debug output or a
    prompt)."""
    found = _annotated_path(line)
    if found is not None and current.groups:
        path, annotation = found
        current.groups[-1][3].append(path)
        if annotation and notes is not None:
            notes.append(
                LineNote(number, line, TRIMMED, f"read without the annotation {annotation!r}")
            )
        return
    if found is not None:
        note_line(notes, number, line, "a path line outside any path group")
    elif _DEBUG.match(line):
        return
    else:
        note_line(notes, number, line, "not a multipath -ll line")
    if not looks_like_prompt(line):
        current.unread = [*(current.unread or []), number]


def _unglue(lines: list[str], notes: list[LineNote] | None) -> list[tuple[int, str]]:
    """``(line number, record)`` for every record, a line holding several (a paste that lost
    line breaks, a PDF or web page that flattened the tree) split into its records, all with
    the number of the line they were on; one ``trimmed`` note per such line."""
    records: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        pieces = _split_glued(line)
        if len(pieces) > 1 and notes is not None:
            notes.append(
                LineNote(number, line, TRIMMED, f"{len(pieces)} lines glued into one, read apart")
            )
        records.extend((number, piece) for piece in pieces)
    return records


def _split_glued(line: str) -> list[str]:
    """The records of one line: split where a path, group or property line starts after
    something other than tree drawing, when every piece is then a line we can read."""
    cuts: list[int] = []
    for match in _GLUED.finditer(line):
        # Only after a record's text: not between tree drawing and the record it leads to.
        if any(char.isalnum() for char in line[cuts[-1] if cuts else 0 : match.start()]):
            cuts.append(match.end())
    if not cuts:
        return [line]
    bounds = zip([0, *cuts], [*cuts, len(line)], strict=True)
    pieces = [line[start:end].rstrip() for start, end in bounds]
    if all(
        _kind(piece) in ("header", "props", "group", "path") or _OLD_HEADER.match(piece.strip())
        for piece in pieces
    ):
        return pieces
    return [line]


def _kind(line: str) -> str | None:
    """What one line of ``multipath -ll`` is: header, props, group, path, other (noise), or
    None when it is none of them."""
    stripped = line.strip()
    if not stripped or _NOISE.match(line) or stripped.startswith("====="):
        return "other"
    if _OLD_PROPS.match(stripped) or _PROPS.match(stripped):
        return "props"
    if _PG.match(line) or _OLD_PG.match(line):
        return "group"
    if _path_from(line) is not None:
        return "path"
    if _header(line) is not None:
        return "header"
    return None


def _join(line: str, piece: str) -> str | None:
    """``line`` and the unrecognised ``piece`` after it as one line, when that is what a wrap
    cut in two; else None."""
    kind, stripped = _kind(line), piece.strip()
    if kind == "props":
        if "wp=" not in line and stripped.startswith(("features=", "hwhandler=", "wp=")):
            return f"{line.rstrip()} {stripped}"
        return None
    if kind == "header":
        header = _MAP_HEADER.match(line.lstrip())
        if header and not header.group("venprod") and "," in stripped and "=" not in stripped:
            return f"{line.rstrip()} {stripped}"
        return None
    if kind is None:
        joined = f"{line.rstrip()} {stripped}"
        if _kind(joined) in ("header", "props", "group", "path"):
            return joined
    return None


def _rejoin_wrapped(lines: list[str], notes: list[LineNote] | None) -> list[str]:
    """The lines with wrapped ones joined: the joined line takes the last one's place, the
    others become blank, so line numbers stay; one ``rejoined`` note per joined line."""
    lines = list(lines)
    starts: dict[int, int] = {}  # index of a joined line -> index of its first piece
    for index in range(len(lines) - 1):
        piece = lines[index + 1]
        if not lines[index].strip() or _kind(piece) is not None:
            continue
        joined = _join(lines[index], piece)
        if joined is None:
            continue
        starts[index + 1] = starts.pop(index, index)
        lines[index], lines[index + 1] = "", joined
    if notes is not None:
        for last, first in sorted(starts.items(), key=lambda item: item[1]):
            notes.append(
                LineNote(
                    first + 1,
                    lines[last],
                    REJOINED,
                    f"one line wrapped over {last - first + 1}",
                    last + 1,
                )
            )
    return lines
