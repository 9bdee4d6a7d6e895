"""dm-multipath topology: parsers for ``multipath -ll`` / ``multipath -l`` and multipathd JSON.

Both kinds of input become the same frozen dataclasses (:class:`MultipathMap`, :class:`PathGroup`,
:class:`MultipathPath`), whose ``to_dict()`` is the JSON contract of the ``IscsiReport``.

Text grammar (reference/rules.md B.1). Handled on purpose:

* the current format (``size=… features='…' hwhandler='…' wp=rw``, ``|-+- policy='…' prio=N
  status=…``, ``| |- H:C:T:L sdX M:m dm chk online``) and the old bracket format of
  multipath-tools < 0.4.9 (``[size=10G][features=1 queue_if_no_path][hwhandler=0][rw]``,
  ``\\_ round-robin 0 [prio=50][active]``, ``\\_ 3:0:0:1 sdb 8:16 [active][ready]``);
* maps with and without an alias, an ``create:``/``reload:`` action prefix, WWIDs with spaces,
  vendor/product padded with blanks (``PURE    ,FlashArray``), maps printed without path groups;
* two-word checker states (``i/o pending``, ``i/o timeout``), ``undef`` from ``multipath -l``,
  placeholder paths (``#:#:#:# - #:#``, a path the kernel table has but sysfs lost);
* tree prefixes drawn with `````, ``'`` or nothing (text copied out of PDFs loses indentation);
* noise mixed in by ``-v3``/stderr: ``Dec 01 10:00:00 | …``, ``4735.224337 | …``, the
  ``===== paths list =====`` table, ``params = …``, ``multipathd>`` prompts. It is skipped.

JSON (rules.md B.2): ``multipathd show maps json`` (``"maps": [...]``) and ``multipathd show map X
json`` (``"map": {...}``). Text around the JSON document (an interactive prompt) is ignored.
JSON has no HCTL and no size, so those fields are ``None`` for JSON input.

:func:`merge_multipath_views` makes the node's one view of its maps: multipathd JSON completed
with ``multipath -ll`` (size, H:C:T:L), and the kernel's SCSI device state where dm-multipath
still sends I/O to a path whose device services none (see there).

Pure: text in, dataclasses out; no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kubectl_storage.core.nodes.mounts import REJOINED, LineNote, note_line

__all__ = [
    "SCSI_STATES_WITHOUT_IO",
    "MultipathMap",
    "MultipathParseError",
    "MultipathPath",
    "PathGroup",
    "merge_multipath_views",
    "parse_multipath_ll",
    "parse_multipathd_json",
]

#: SCSI device states (Linux drivers/scsi/scsi_sysfs.c ``sdev_states``) in which the device
#: services no normal I/O: ``blocked`` while the iSCSI session recovers (I/O waits until the
#: session's recovery timeout, then fails), ``transport-offline`` after it, ``offline``, and the
#: transitional ``created-blocked``, ``quiesce``, ``cancel`` and ``deleted``. Only ``running``
#: (and ``created``, before the first scan) services I/O.
SCSI_STATES_WITHOUT_IO = frozenset(
    {"blocked", "created-blocked", "offline", "transport-offline", "quiesce", "cancel", "deleted"}
)


class MultipathParseError(ValueError):
    """The text is not multipath output we can read (only raised for JSON input)."""


@dataclass(frozen=True)
class MultipathPath:
    """One path (an ``sdX`` or NVMe namespace) of a multipath map.

    ``dm_state`` is the kernel view (active/failed/undef), ``path_state`` the multipathd checker
    view (ready/faulty/ghost/i/o pending/…), ``online_state`` the SCSI device state
    (running/offline/unknown; ``None`` in the old bracket format, which does not print it; the
    kernel's own state, e.g. ``blocked``, after :func:`merge_multipath_views`).
    ``prio``, ``checker``, ``host_adapter`` and ``target`` only come from multipathd JSON.
    """

    hctl: str | None
    dev: str | None
    major_minor: str | None
    dm_state: str
    path_state: str
    online_state: str | None
    prio: int | None = None
    checker: str | None = None
    host_adapter: str | None = None
    target: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: hctl, dev, major_minor, dm_state, path_state, online_state."""
        return {
            "hctl": self.hctl,
            "dev": self.dev,
            "major_minor": self.major_minor,
            "dm_state": self.dm_state,
            "path_state": self.path_state,
            "online_state": self.online_state,
        }


@dataclass(frozen=True)
class PathGroup:
    """A priority group: selector policy, group priority, status (active/enabled/…) and paths."""

    policy: str
    prio: int | None
    status: str
    paths: tuple[MultipathPath, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: policy, prio, status, paths."""
        return {
            "policy": self.policy,
            "prio": self.prio,
            "status": self.status,
            "paths": [path.to_dict() for path in self.paths],
        }


@dataclass(frozen=True)
class MultipathMap:
    """One dm-multipath map (one LUN).

    ``alias`` is ``None`` when the map is named by its WWID. ``failback``, ``queueing`` and
    ``active_paths`` come only from multipathd JSON (``None`` from text); ``action`` is the
    ``create:``/``reload:`` prefix when present.
    """

    wwid: str
    alias: str | None
    dm: str | None
    vendor: str
    product: str
    size: str | None
    features: str
    hwhandler: str
    wp: str | None
    path_groups: tuple[PathGroup, ...] = ()
    action: str | None = None
    failback: str | None = None
    queueing: str | None = None
    active_paths: int | None = None

    @property
    def name(self) -> str:
        """The name multipath shows first: the alias, or the WWID when there is none."""
        return self.alias or self.wwid

    @property
    def paths(self) -> tuple[MultipathPath, ...]:
        """Every path of every group, in printed order."""
        return tuple(path for group in self.path_groups for path in group.paths)

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: wwid, alias, dm, vendor, product, size, features, hwhandler, wp,
        path_groups."""
        return {
            "wwid": self.wwid,
            "alias": self.alias,
            "dm": self.dm,
            "vendor": self.vendor,
            "product": self.product,
            "size": self.size,
            "features": self.features,
            "hwhandler": self.hwhandler,
            "wp": self.wp,
            "path_groups": [group.to_dict() for group in self.path_groups],
        }


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


# --- JSON ---------------------------------------------------------------------------------------


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except ValueError:
        return None


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return None if text in {"", "[undef]", "undef"} else text


def _json_path(raw: dict[str, Any]) -> MultipathPath:
    return MultipathPath(
        hctl=None,  # the JSON templates carry no H:C:T:L
        dev=_str_or_none(raw.get("dev")),
        major_minor=_str_or_none(raw.get("dev_t")),
        dm_state=str(raw.get("dm_st", "undef")),
        path_state=str(raw.get("chk_st", "undef")),
        online_state=_str_or_none(raw.get("dev_st")),
        prio=_int_or_none(raw.get("pri")),
        checker=_str_or_none(raw.get("checker")),
        host_adapter=_str_or_none(raw.get("host_adapter")),
        target=_str_or_none(raw.get("target_wwnn")),
    )


def _json_map(raw: dict[str, Any]) -> MultipathMap:
    name = str(raw.get("name", "")).strip()
    wwid = str(raw.get("uuid", "")).strip() or name
    groups = tuple(
        PathGroup(
            policy=str(group.get("selector", "")),
            prio=_int_or_none(group.get("pri")),
            status=str(group.get("dm_st", "undef")),
            paths=tuple(_json_path(path) for path in group.get("paths", []) or []),
        )
        for group in raw.get("path_groups", []) or []
    )
    return MultipathMap(
        wwid=wwid,
        alias=name if name and name != wwid else None,
        dm=_str_or_none(raw.get("sysfs")),
        vendor=str(raw.get("vend", "")).strip(),
        product=str(raw.get("prod", "")).strip(),
        size=None,  # not part of the JSON templates
        features=str(raw.get("features", "")),
        hwhandler=str(raw.get("hwhandler", "")),
        wp=_str_or_none(raw.get("write_prot")),
        path_groups=groups,
        action=_str_or_none(raw.get("action")),
        failback=_str_or_none(raw.get("failback")),
        queueing=_str_or_none(raw.get("queueing")),
        active_paths=_int_or_none(raw.get("paths")),
    )


def parse_multipathd_json(text: str) -> tuple[MultipathMap, ...]:
    """Parse ``multipathd show maps json`` or ``multipathd show map <name> json``.

    Args:
        text: the reply; text before the first ``{`` and after the last ``}`` (prompts) is ignored.

    Returns:
        The maps, in reply order (one for ``show map X json``).

    Raises:
        MultipathParseError: when no JSON document with ``maps`` or ``map`` is found.
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise MultipathParseError("no JSON object in multipathd output")
    try:
        document = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise MultipathParseError(f"multipathd JSON does not parse: {exc}") from exc
    if not isinstance(document, dict):
        raise MultipathParseError("multipathd JSON is not an object")
    if isinstance(document.get("maps"), list):
        return tuple(_json_map(item) for item in document["maps"] if isinstance(item, dict))
    if isinstance(document.get("map"), dict):
        return (_json_map(document["map"]),)
    raise MultipathParseError("multipathd JSON has neither 'maps' nor 'map'")


# --- one view of the maps ---------------------------------------------------------------------


def _complete(mpath: MultipathMap, text_map: MultipathMap | None) -> MultipathMap:
    """Fill what multipathd JSON lacks (size, H:C:T:L) from the same map in ``multipath -ll``."""
    if text_map is None:
        return mpath
    hctl = {path.dev: path.hctl for path in text_map.paths if path.dev}
    groups = tuple(
        replace(
            group,
            paths=tuple(
                replace(path, hctl=path.hctl or hctl.get(path.dev or "")) for path in group.paths
            ),
        )
        for group in mpath.path_groups
    )
    return replace(mpath, size=mpath.size or text_map.size, path_groups=groups)


def _with_device_state(path: MultipathPath, scsi_states: Mapping[str, str]) -> MultipathPath:
    state = scsi_states.get(path.dev or "")
    if state in SCSI_STATES_WITHOUT_IO and path.dm_state == "active":
        return replace(path, online_state=state)
    return path


def merge_multipath_views(
    json_maps: Iterable[MultipathMap],
    text_maps: Iterable[MultipathMap] = (),
    scsi_states: Mapping[str, str] | None = None,
) -> tuple[MultipathMap, ...]:
    """The node's maps: multipathd JSON (queueing, failback, priorities), completed with the same
    maps of ``multipath -ll`` (size, H:C:T:L); ``multipath -ll`` alone when JSON gave none.

    With ``scsi_states`` (``{"sdb": "blocked"}``, the kernel's SCSI device states from sysfs or
    ``iscsiadm -P 3``), a path that dm-multipath still has ``active`` but whose device is in a
    state that services no I/O (:data:`SCSI_STATES_WITHOUT_IO`) gets that state as its
    ``online_state``. multipath's own column cannot say it: it prints ``offline`` only for the
    kernel's ``offline`` and ``running`` for everything else (libmultipath print.c
    ``snprint_offline``, discovery.c ``path_offline``), and multipathd's JSON holds what its
    checker saw last. Real case (tests/nodelab, portal-drop): a dropped portal's session in
    recovery, sysfs ``blocked``, multipathd JSON ``active ready running``, ``multipath -ll``
    ``active i/o pending running`` (path_offline maps ``blocked`` to pending): I/O sent down that
    path waits for the session's recovery timeout. A path dm-multipath has already failed keeps
    multipath's view unchanged.
    """
    json_list, text_list = list(json_maps), list(text_maps)
    if json_list:
        by_wwid = {mpath.wwid: mpath for mpath in text_list}
        maps = [_complete(mpath, by_wwid.get(mpath.wwid)) for mpath in json_list]
    else:
        maps = text_list
    if not scsi_states:
        return tuple(maps)
    return tuple(
        replace(
            mpath,
            path_groups=tuple(
                replace(
                    group,
                    paths=tuple(_with_device_state(path, scsi_states) for path in group.paths),
                )
                for group in mpath.path_groups
            ),
        )
        for mpath in maps
    )
