"""A minimal reader for ``/etc/multipath.conf`` (and ``conf.d/*.conf``) text.

It keeps what the rules need: the ``defaults`` and ``overrides`` key/values, every ``device``
stanza of ``devices``, ``blacklist``/``blacklist_exceptions`` entries and the ``multipaths``
stanzas. Comments start with ``#`` or ``!`` (also after a value); values may be double-quoted.

Repeated top-level sections are merged in order, later keys winning: multipath-tools warns
``duplicate keyword: defaults`` for such files, and the merge is our approximation of its
behaviour (verify with ``multipathd show config`` when it matters). Unknown sections are kept in
``other_sections`` so nothing is silently lost.

This is not the effective configuration: built-in hwtable entries are not known here (use
``multipathd show config`` for that). Pure: text in, dataclasses out; no I/O.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MultipathConf", "Stanza", "parse_multipath_conf"]


@dataclass(frozen=True)
class Stanza:
    """One ``device { … }`` / ``multipath { … }`` block, or a flat section's key/values."""

    values: tuple[tuple[str, str], ...] = ()

    def get(self, key: str, default: str | None = None) -> str | None:
        """The last value given for ``key`` (later lines win), or ``default``."""
        found = default
        for name, value in self.values:
            if name == key:
                found = value
        return found

    def as_dict(self) -> dict[str, str]:
        """Key/values as a dict (later duplicates win)."""
        return dict(self.values)

    def matches_vendor(self, vendor: str, product: str) -> bool:
        """Whether this device stanza's vendor/product regexes match (as multipath does, anchored
        at the start, trailing blanks ignored); a stanza without ``vendor`` never matches."""
        vendor_re, product_re = self.get("vendor"), self.get("product")
        if vendor_re is None:
            return False
        try:
            if not re.match(vendor_re.rstrip(), vendor):
                return False
            return product_re is None or bool(re.match(product_re.rstrip(), product))
        except re.error:
            return vendor_re.strip() == vendor


@dataclass(frozen=True)
class MultipathConf:
    """Parsed multipath.conf sections."""

    defaults: Stanza = field(default_factory=Stanza)
    overrides: Stanza = field(default_factory=Stanza)
    devices: tuple[Stanza, ...] = ()
    multipaths: tuple[Stanza, ...] = ()
    blacklist: tuple[tuple[str, str], ...] = ()
    blacklist_devices: tuple[Stanza, ...] = ()
    blacklist_exceptions: tuple[tuple[str, str], ...] = ()
    other_sections: tuple[str, ...] = ()

    def device_for(self, vendor: str, product: str) -> Stanza | None:
        """The last ``devices`` stanza matching vendor/product (multipath lets later ones win)."""
        found = None
        for stanza in self.devices:
            if stanza.matches_vendor(vendor, product):
                found = stanza
        return found

    def to_dict(self) -> dict[str, Any]:
        """JSON shape for reports and debugging."""
        return {
            "defaults": self.defaults.as_dict(),
            "overrides": self.overrides.as_dict(),
            "devices": [stanza.as_dict() for stanza in self.devices],
            "multipaths": [stanza.as_dict() for stanza in self.multipaths],
            "blacklist": [list(entry) for entry in self.blacklist],
            "blacklist_devices": [stanza.as_dict() for stanza in self.blacklist_devices],
            "blacklist_exceptions": [list(entry) for entry in self.blacklist_exceptions],
            "other_sections": list(self.other_sections),
        }


def _tokens(line: str) -> list[str]:
    """Split a line into words, honouring double quotes and dropping ``#``/``!`` comments."""
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#!"
    lexer.quotes = '"'
    lexer.escape = ""  # backslashes belong to regexes (devnode "^nvme\\d"), not to the lexer
    try:
        return list(lexer)
    except ValueError:  # unbalanced quote: fall back to a plain split
        return line.split("#", 1)[0].split("!", 1)[0].split()


def parse_multipath_conf(text: str) -> MultipathConf:
    """Parse multipath.conf text into its sections.

    Args:
        text: the file content (several files may be concatenated, conf.d last).

    Returns:
        The :class:`MultipathConf`; an empty one for an empty file.
    """
    defaults: list[tuple[str, str]] = []
    overrides: list[tuple[str, str]] = []
    devices: list[Stanza] = []
    multipaths: list[Stanza] = []
    blacklist: list[tuple[str, str]] = []
    blacklist_devices: list[Stanza] = []
    exceptions: list[tuple[str, str]] = []
    others: list[str] = []
    stack: list[str] = []  # open section names, outermost first
    stanza: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        words = _tokens(raw.replace("{", " { ").replace("}", " } "))
        while words:
            word = words.pop(0)
            if word == "}":
                closing = stack.pop() if stack else ""
                if closing in {"device", "multipath"} and stanza is not None:
                    parent = stack[-1] if stack else ""
                    target = {"devices": devices, "multipaths": multipaths}.get(parent)
                    if parent in {"blacklist", "blacklist_exceptions"}:
                        target = blacklist_devices if parent == "blacklist" else None
                    if target is not None:
                        target.append(Stanza(tuple(stanza)))
                    stanza = None
                continue
            if words and words[0] == "{":
                words.pop(0)
                stack.append(word)
                if word in {"device", "multipath"}:
                    stanza = []
                elif len(stack) == 1 and word not in {
                    "defaults",
                    "overrides",
                    "devices",
                    "multipaths",
                    "blacklist",
                    "blacklist_exceptions",
                }:
                    others.append(word)
                continue
            # the value runs to the end of the line or to a "}" closing a one-line section
            end = words.index("}") if "}" in words else len(words)
            value = " ".join(words[:end])
            words = words[end:]
            section = stack[0] if stack else ""
            if stanza is not None:
                stanza.append((word, value))
            elif section == "defaults":
                defaults.append((word, value))
            elif section == "overrides":
                overrides.append((word, value))
            elif section == "blacklist":
                blacklist.append((word, value))
            elif section == "blacklist_exceptions":
                exceptions.append((word, value))
    return MultipathConf(
        defaults=Stanza(tuple(defaults)),
        overrides=Stanza(tuple(overrides)),
        devices=tuple(devices),
        multipaths=tuple(multipaths),
        blacklist=tuple(blacklist),
        blacklist_devices=tuple(blacklist_devices),
        blacklist_exceptions=tuple(exceptions),
        other_sections=tuple(others),
    )
