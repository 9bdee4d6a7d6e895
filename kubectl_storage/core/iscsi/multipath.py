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

Pure: text in, dataclasses out; no I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MultipathMap",
    "MultipathParseError",
    "MultipathPath",
    "PathGroup",
    "parse_multipath_ll",
    "parse_multipathd_json",
]


class MultipathParseError(ValueError):
    """The text is not multipath output we can read (only raised for JSON input)."""


@dataclass(frozen=True)
class MultipathPath:
    """One path (an ``sdX`` or NVMe namespace) of a multipath map.

    ``dm_state`` is the kernel view (active/failed/undef), ``path_state`` the multipathd checker
    view (ready/faulty/ghost/i/o pending/…), ``online_state`` the SCSI device state
    (running/offline/unknown; ``None`` in the old bracket format, which does not print it).
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
    match = _MAP_HEADER.match(line)
    if not match or line.startswith((" ", "\t", "|", "`", "'", "\\")):
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


def parse_multipath_ll(text: str) -> tuple[MultipathMap, ...]:
    """Parse ``multipath -ll`` / ``multipath -l`` (or ``multipathd show maps topology``) output.

    Lines that belong to no map (warnings, debug output, the paths-list table) are skipped, so a
    capture with stderr mixed in still parses.

    Args:
        text: the command's output, current or old bracket format.

    Returns:
        The maps in printed order; an empty tuple when the text holds none.
    """
    maps: list[MultipathMap] = []
    current: _MapBuilder | None = None
    for raw in text.splitlines():
        line = _PROMPT.sub("", raw.rstrip())
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
    if current:
        maps.append(current.build())
    return tuple(maps)


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
