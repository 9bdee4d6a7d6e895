"""A reader for ``/etc/iscsi/iscsid.conf`` text (open-iscsi's initiator configuration).

The file is flat: ``key = value`` lines, ``#`` comments, blank lines. Keys such as
``node.conn[0].timeo.noop_out_interval`` are kept verbatim. When a key is assigned twice the last
line wins, as when iscsid and iscsiadm read the file into a record. A line without ``=`` is kept
in ``ignored`` rather than dropped silently.

iscsid.conf only seeds *new* node records (discovery or ``iscsiadm -m node -o new``); existing
records under ``/etc/iscsi/nodes`` keep the values they were created with. What this module
returns is therefore "what a new record would get", not what a live session uses.

Keys the rules read fall back to open-iscsi's built-in defaults (:data:`DEFAULTS`) when the file
does not set them, and every value says where it came from. Pure: text in, dataclasses out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "DEFAULTS",
    "IscsidConf",
    "IscsidSetting",
    "looks_like_iscsid_conf",
    "parse_iscsid_conf",
]

SCAN = "node.session.scan"
QUEUE_DEPTH = "node.session.queue_depth"
CMDS_MAX = "node.session.cmds_max"
LOGIN_TIMEOUT = "node.conn[0].timeo.login_timeout"
NOOP_OUT_INTERVAL = "node.conn[0].timeo.noop_out_interval"
NOOP_OUT_TIMEOUT = "node.conn[0].timeo.noop_out_timeout"
STARTUP = "node.startup"
REPLACEMENT_TIMEOUT = "node.session.timeo.replacement_timeout"

#: open-iscsi's values for the keys the rules use, when iscsid.conf does not set them
#: (rules.md S56: shipped etc/iscsid.conf and README). ``node.startup`` is ``manual`` without a
#: setting: the shipped file's comment says so, and open-iscsi's idbm_node_setup_defaults()
#: zero-fills the record, where 0 is ISCSI_STARTUP_MANUAL. ``replacement_timeout`` is 120 s
#: ("the default is 120 seconds" in the shipped file's comment, README section 8.1).
DEFAULTS: Mapping[str, str] = {
    SCAN: "auto",
    QUEUE_DEPTH: "32",
    CMDS_MAX: "128",
    LOGIN_TIMEOUT: "15",
    NOOP_OUT_INTERVAL: "5",
    NOOP_OUT_TIMEOUT: "5",
    STARTUP: "manual",
    REPLACEMENT_TIMEOUT: "120",
}

Origin = Literal["file", "default"]


@dataclass(frozen=True)
class IscsidSetting:
    """One effective value and where it came from (``file`` line number, or ``default``)."""

    key: str
    value: str
    origin: Origin
    line: int | None = None

    def as_int(self) -> int | None:
        """The value as an integer, or None when it is not one (``auto``, ``Yes``...)."""
        try:
            return int(self.value.strip())
        except ValueError:
            return None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: key, value, origin, line."""
        return {"key": self.key, "value": self.value, "origin": self.origin, "line": self.line}


@dataclass(frozen=True)
class IscsidConf:
    """The effective settings of one iscsid.conf: the file's last assignments, then defaults."""

    settings: Mapping[str, IscsidSetting] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()

    def get(self, key: str) -> IscsidSetting | None:
        """The effective setting for ``key``, or None when neither the file nor the defaults
        know it."""
        return self.settings.get(key)

    def value(self, key: str) -> str | None:
        """Just the value of :meth:`get`."""
        setting = self.settings.get(key)
        return setting.value if setting else None

    def int_value(self, key: str) -> int | None:
        """The value as an integer, or None (unset or not a number)."""
        setting = self.settings.get(key)
        return setting.as_int() if setting else None

    def from_file(self, key: str) -> bool:
        """Whether the file itself sets ``key`` (False when the value is a default)."""
        setting = self.settings.get(key)
        return setting is not None and setting.origin == "file"

    def as_dict(self) -> dict[str, str]:
        """Every effective key with its value."""
        return {key: setting.value for key, setting in self.settings.items()}

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: settings by key with their origin, and the lines that were not read."""
        return {
            "settings": {key: setting.to_dict() for key, setting in self.settings.items()},
            "ignored": list(self.ignored),
        }


def _strip_comment(line: str) -> str:
    """Drop a ``#`` comment: a whole line, or `` # …`` after a value (iscsid.conf values such as
    ``CRC32C,None`` or numbers never contain a ``#`` preceded by a blank)."""
    stripped = line.strip()
    if stripped.startswith("#"):
        return ""
    for index, char in enumerate(stripped):
        if char == "#" and index > 0 and stripped[index - 1] in " \t":
            return stripped[:index].rstrip()
    return stripped


def parse_iscsid_conf(text: str) -> IscsidConf:
    """Parse iscsid.conf text into its effective settings.

    Args:
        text: the file content (password and secret lines may have been removed on the node).

    Returns:
        An :class:`IscsidConf`: every key of the file (last assignment wins) plus
        :data:`DEFAULTS` for the keys the file leaves out.
    """
    settings: dict[str, IscsidSetting] = {}
    ignored: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        if not line:
            continue
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key or any(ch in key for ch in " \t"):
            ignored.append(raw.strip())
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        settings[key] = IscsidSetting(key=key, value=value, origin="file", line=number)
    for key, value in DEFAULTS.items():
        settings.setdefault(key, IscsidSetting(key=key, value=value, origin="default"))
    return IscsidConf(settings=settings, ignored=tuple(ignored))


def looks_like_iscsid_conf(text: str) -> bool:
    """Whether text reads like an iscsid.conf: at least one ``node.``/``iscsid.``/``discovery.``
    assignment and no line that is something else (braces of multipath.conf, tables)."""
    assignments = 0
    for raw in text.splitlines():
        line = _strip_comment(raw)
        if not line:
            continue
        key, sep, _ = line.partition("=")
        key = key.strip()
        if not sep or " " in key or "{" in line or "}" in line:
            return False
        if key.startswith(("node.", "iscsid.", "discovery.")):
            assignments += 1
    return assignments > 0
