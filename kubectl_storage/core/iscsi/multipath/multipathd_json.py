"""``multipathd show maps json`` and ``show map X json`` (text around the document ignored)."""

from __future__ import annotations

import json
from typing import Any

from kubectl_storage.core.iscsi.multipath.model import (
    MultipathMap,
    MultipathParseError,
    MultipathPath,
    PathGroup,
)

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
