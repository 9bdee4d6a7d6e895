"""A minimal reader for ``/etc/multipath.conf`` (and ``conf.d/*.conf``) text.

It keeps what the rules need: the ``defaults`` and ``overrides`` key/values, every ``device``
stanza of ``devices``, ``blacklist``/``blacklist_exceptions`` entries and the ``multipaths``
stanzas. Comments start with ``#`` or ``!`` (also after a value); values may be double-quoted.

Repeated top-level sections are merged in order, later keys winning: multipath-tools warns
``duplicate keyword: defaults`` for such files, and the merge is our approximation of its
behaviour (verify with ``multipathd show config`` when it matters). Unknown sections are kept in
``other_sections`` so nothing is silently lost.

The same reader takes ``multipathd show config`` / ``multipath -t`` output (the *merged*
configuration: every built-in hwtable entry, the user's device stanzas merged over the built-in
entry they name and appended last, defaults filled with the built-in values); such a result has
``merged`` True and :func:`setting` resolves a key as multipathd's propsel.c does. Pure: text in,
dataclasses out; no I/O.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["MultipathConf", "Stanza", "looks_merged", "parse_multipath_conf", "setting"]


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
    #: True for ``multipathd show config`` / ``multipath -t`` output (built-ins included).
    merged: bool = False

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
            "merged": self.merged,
        }


#: Keys ``multipath -t`` always prints under ``defaults`` (libmultipath print.c prints every
#: defaults keyword with its built-in value) and a hand-written file rarely sets all of.
_MERGED_DEFAULTS_KEYS = ("verbosity", "polling_interval", "max_polling_interval", "rr_min_io_rq")


def looks_merged(conf: MultipathConf) -> bool:
    """Whether parsed text is the merged configuration (``multipathd show config`` /
    ``multipath -t``): its defaults carry the built-in values of every keyword and its devices
    section the built-in hardware table (well over a hundred entries in multipath-tools 0.9)."""
    return (
        all(conf.defaults.get(key) is not None for key in _MERGED_DEFAULTS_KEYS)
        and len(conf.devices) >= 50
    )


def setting(
    conf: MultipathConf, key: str, vendor: str, product: str
) -> tuple[str | None, str | None]:
    """The value of ``key`` for a vendor/product and the section it comes from.

    Order of libmultipath propsel.c (``do_set`` overrides, ``do_set_from_hwe``, ``do_set``
    conf, ``do_default``): ``overrides``, then the last matching device entry (in merged output
    the user's stanza merged over the built-in one), then ``defaults``. In merged output the
    defaults carry the built-in default, so a value is always found for a printed keyword.

    For a file (not merged) the built-in device entry, which wins over ``defaults``, is unknown:
    a value only ``defaults`` gives is returned with ``where`` ``"defaults"`` and callers must not
    take it for the value in force (see :func:`setting_in_force`).
    """
    if conf.overrides.get(key) is not None:
        return conf.overrides.get(key), "overrides"
    device = conf.device_for(vendor, product)
    if device is not None and device.get(key) is not None:
        label = "device entry" if conf.merged else "devices stanza"
        return device.get(key), f"{label} {device.get('vendor')}/{device.get('product') or ''}"
    if conf.defaults.get(key) is not None:
        return conf.defaults.get(key), "defaults"
    return None, None


def setting_in_force(
    conf: MultipathConf, key: str, vendor: str, product: str
) -> tuple[str | None, str | None]:
    """:func:`setting`, but ``(None, None)`` when only a file's ``defaults`` give the value:
    multipathd's built-in device entry for the array, which the file does not show, may set the
    key and would then win (multipath.conf(5): devices entries override defaults)."""
    value, where = setting(conf, key, vendor, product)
    if where == "defaults" and not conf.merged:
        return None, None
    return value, where


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


def parse_multipath_conf(text: str, *, merged: bool | None = None) -> MultipathConf:
    """Parse multipath.conf text (or ``multipathd show config`` output) into its sections.

    Args:
        text: the file content (several files may be concatenated, conf.d last).
        merged: whether the text is the merged configuration; ``None``: tell by its content
            (:func:`looks_merged`).

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
    conf = MultipathConf(
        defaults=Stanza(tuple(defaults)),
        overrides=Stanza(tuple(overrides)),
        devices=tuple(devices),
        multipaths=tuple(multipaths),
        blacklist=tuple(blacklist),
        blacklist_devices=tuple(blacklist_devices),
        blacklist_exceptions=tuple(exceptions),
        other_sections=tuple(others),
    )
    is_merged = looks_merged(conf) if merged is None else merged
    return replace(conf, merged=is_merged) if is_merged else conf
