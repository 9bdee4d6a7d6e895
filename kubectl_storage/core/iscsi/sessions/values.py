"""What the iscsiadm parsers share: ``key: value`` lines, iscsiadm's spellings of "unset",
numbers that may be missing, and skipped lines noted without quoting CHAP."""

from __future__ import annotations

import re

from kubectl_storage.core.nodes.paste import LineNote, note_line


def note_skipped(notes: list[LineNote] | None, number: int, line: str, reason: str) -> None:
    """A skipped line; CHAP lines are never quoted."""
    if any(word in line.lower() for word in ("password", "username")):
        line = "(a CHAP line, not shown)"
    note_line(notes, number, line, reason)


KEY_VALUE = re.compile(r"^(?P<key>[A-Za-z][\w ]*?):\s*(?P<value>.*?)\s*$")
EMPTY = {"", "<empty>", "(null)", "<NULL>"}


def optional(value: str) -> str | None:
    """None for iscsiadm's ways of printing nothing (``<empty>``, ``(null)``...)."""
    return None if value in EMPTY else value


def as_int(value: str | None) -> int | None:
    """The number, or None when missing or not a number."""
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None
