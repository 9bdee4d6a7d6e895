"""``multipath -ll`` / ``multipath -l`` text, current and old bracket format, with the noise of
``-v3`` and pastes skipped and wrapped lines rejoined."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kubectl_storage.core.iscsi.multipath.model import MultipathMap, MultipathPath, PathGroup
from kubectl_storage.core.nodes.paste import REJOINED, LineNote, note_line

# --- text ---------------------------------------------------------------------------------------

# "Dec 01 10:00:00 | msg" (syslog-style) and "4735.224337 | msg" (monotonic, newer tools).
_NOISE = re.compile(r"^\s*(?:[A-Z][a-z]{2} +\d+ [\d:]+|\d+\.\d+) \| ")
# -v3/-v4 debug lines old versions print without a timestamp (RHEL 5): skipped without a note.
_DEBUG = re.compile(
    r"^\s*(?:params = |status = |\*word = |[\w-]+: [\w ]+ = |process \d+ |forked \d+)"
)
_PROMPT = re.compile(r"^multipathd>\s?")
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
_PATH = re.compile(
    _TREE + _HCTL + r" +(?P<dev>\S+) +(?P<mm>\d+:\d+|#:#) +(?P<dm>active|failed|undef)"
    rf" +(?P<chk>{_CHK}) +(?P<online>\w+)\s*$"
)
_OLD_PATH = re.compile(
    _TREE + _HCTL + r" +(?P<dev>\S+) +(?P<mm>\d+:\d+) +\[(?P<dm>\w+)\]\[(?P<chk>[^\]]+)\]"
    r"(?:\[(?P<online>\w+)\])?\s*$"
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
    dm: str
    vendor: str
    product: str
    action: str | None
    size: str | None = None
    features: str = ""
    hwhandler: str = ""
    wp: str | None = None
    groups: list[tuple[str, int | None, str, list[MultipathPath]]] | None = None

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


def _apply_props(builder: _MapBuilder, line: str) -> bool:
    """Fill size/features/hwhandler/wp from a property line; False if it is not one."""
    old = _OLD_PROPS.match(line)
    if old:
        builder.size = old.group("size").strip()
        builder.features = old.group("features").strip()
        builder.hwhandler = old.group("hwhandler").strip()
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
    match = _PATH.match(line) or _OLD_PATH.match(line)
    if not match:
        return None
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
    lines = _rejoin_wrapped([_PROMPT.sub("", raw.rstrip()) for raw in text.splitlines()], notes)
    for number, line in enumerate(lines, start=1):
        if not line.strip() or _NOISE.match(line):
            continue
        if line.startswith("====="):  # "===== paths list =====": a table of paths, not a map
            if current:
                maps.append(current.build())
            current = None
            continue
        if current is not None and current.size is None and _apply_props(current, line.strip()):
            continue
        header = _header(line)
        if header is not None:
            if current:
                maps.append(current.build())
            current = header
            continue
        if current is None:
            continue
        group = _PG.match(line) or _OLD_PG.match(line)
        if group:
            if current.groups is None:
                current.groups = []
            current.groups.append(
                (group.group("policy"), int(group.group("prio")), group.group("status"), [])
            )
            continue
        path = _path_from(line)
        if path is not None and current.groups:
            current.groups[-1][3].append(path)
        elif path is not None:
            note_line(notes, number, line, "a path line outside any path group")
        elif not _DEBUG.match(line):
            note_line(notes, number, line, "not a multipath -ll line")
    if current:
        maps.append(current.build())
    return tuple(maps)


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
