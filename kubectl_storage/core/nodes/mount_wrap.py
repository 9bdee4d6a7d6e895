"""Wrapped lines of a pasted mount table joined again (a mail client or a narrow window cut them).

Pure: text in, text out (line numbers kept), notes on every joined line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from kubectl_storage.core.nodes.mount_model import (
    _COMPLETE,
    _MOUNTSTATS_HEADER,
    _NUMBERS,
    _OP_ROW,
    _STATS_KEY,
    _STATS_NUMBER_KEYS,
    _STATS_OPTION_KEYS,
    FORMAT_MOUNT_COMMAND,
    FORMAT_MOUNTINFO,
    FORMAT_MOUNTSTATS,
)
from kubectl_storage.core.nodes.paste import REJOINED, LineNote, looks_like_prompt

#: At most this many physical lines make one wrapped line.
_MAX_WRAP = 8
#: An option list (or a piece of one): ``rw,vers=4.2,`` or ``76,wsize=1048576``.
_OPTION_PIECE = re.compile(r"^,?[^\s,=]+(?:=[^\s,]*)?(?:,[^\s,=]+(?:=[^\s,]*)?)*,?$")


def _option_continuation(previous: str, line: str) -> bool:
    """Whether ``line`` continues the option list that ends ``previous`` (cut by a hard wrap)."""
    if not _OPTION_PIECE.match(line):
        return False
    return previous.endswith(",") or line.startswith(",") or "=" in line or "," in line


def rejoin_wrapped_lines(text: str, fmt: str, notes: list[LineNote] | None = None) -> str:
    """Join again the lines a mail client or a narrow window wrapped.

    One mount per line formats (mountinfo, /proc/mounts, ``mount``): a line that is not complete
    is joined with the lines after it (up to four) when the joined line is; a complete mountinfo
    line whose option list goes on on the next line gets that piece back. ``nfsstat -m`` and
    mountstats: see :func:`parse_nfsstat_m` and :func:`rejoin_mountstats`.

    The joined line takes the place of the first, the others become blank, so line numbers
    stay. One ``rejoined`` note per joined line.
    """
    if fmt == FORMAT_MOUNTSTATS:
        return rejoin_mountstats(text, notes)
    complete = _COMPLETE.get(fmt)
    if complete is None:
        return text
    lines = text.split("\n")
    out = list(lines)
    previous: int | None = None  # the last complete line, if nothing but joined lines follow it
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if not line:
            previous = None
            index += 1
            continue
        if complete(line):
            previous = index
            index += 1
            continue
        if (
            fmt == FORMAT_MOUNTINFO
            and previous is not None
            and _option_continuation(out[previous].strip(), line)
            and complete(out[previous].strip() + line)
        ):
            out[previous] = out[previous].strip() + line
            out[index] = ""
            _note_rejoined(notes, out[previous], previous, index)
            index += 1
            continue
        found = None if looks_like_prompt(line) else _join_forward(lines, index, complete, fmt)
        if found is None:
            previous = None
            index += 1
            continue
        last, joined = found
        _place_joined(out, notes, joined, index, last)
        previous = index
        index = last + 1
    return "\n".join(out)


def _join_forward(
    lines: Sequence[str], start: int, complete: Callable[[str], bool], fmt: str
) -> tuple[int, str] | None:
    """The first complete line made of ``lines[start]`` and the next ones, with its last index."""
    variants = [lines[start].strip()]
    for index in range(start + 1, min(len(lines), start + _MAX_WRAP)):
        piece = lines[index].strip()
        if not piece or complete(piece) or looks_like_prompt(piece):
            return None
        variants = [
            variant + separator
            for variant in variants
            for separator in _separators(variant, piece, fmt)
        ][:16]
        variants = [variant + piece for variant in variants]
        for variant in variants:
            if complete(variant):
                return index, variant
    return None


def _separators(before: str, after: str, fmt: str) -> tuple[str, str]:
    """How to join two pieces, likelier first: a cut inside an option list needs nothing."""
    inside_options = fmt == FORMAT_MOUNT_COMMAND and "(" in before and ")" not in before
    if inside_options or before.endswith(",") or after.startswith(","):
        return "", " "
    # A hard wrap (a terminal or chat window cutting at a fixed width) cuts inside a word:
    # "server.example.com:" / "/export" is one source, not two fields.
    if before.endswith((":", "/", "=", ".")) or after.startswith(("/", ":", "=", ".")):
        return "", " "
    return " ", ""


def _note_rejoined(notes: list[LineNote] | None, joined: str, first: int, last: int) -> None:
    """One note per joined line (indexes 0-based); a line joined again extends its note."""
    if notes is None:
        return
    if notes and notes[-1].action == REJOINED and notes[-1].line == first + 1:
        notes.pop()
    count = last - first + 1
    notes.append(LineNote(first + 1, joined, REJOINED, f"one line wrapped over {count}", last + 1))


def _place_joined(
    out: list[str], notes: list[LineNote] | None, joined: str, first: int, last: int
) -> None:
    """The joined line in place of the first of its pieces, the others blank (so line numbers
    stay), and its note."""
    out[first] = joined
    for blank in range(first + 1, last + 1):
        out[blank] = ""
    _note_rejoined(notes, joined, first, last)


def rejoin_mountstats(text: str, notes: list[LineNote] | None = None) -> str:
    """Join again wrapped lines of ``/proc/<pid>/mountstats`` (line numbers kept, as above).

    A ``device … mounted on … with fstype …`` header cut in two, and, inside a block, a piece
    without a ``key:`` that goes on the line before: an option list (``opts:``, ``caps:``,
    ``sec:``, ``nfsv4:``) or a row of counters (``events:``, ``bytes:``, ``xprt:``, per-op rows).
    """
    lines = text.split("\n")
    out = list(lines)
    previous: int | None = None  # the line a continuation would belong to
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if not line:
            previous = None
            index += 1
            continue
        if line.startswith(("device ", "no device ")) and not _MOUNTSTATS_HEADER.match(line):
            found = _join_header(lines, index)
            previous = None
            if found is None:
                index += 1
                continue
            last, joined = found
            _place_joined(out, notes, joined, index, last)
            index = last + 1
            continue
        if _STATS_KEY.match(line) or _MOUNTSTATS_HEADER.match(line):
            previous = index
            index += 1
            continue
        if previous is not None:
            before = out[previous].strip()
            key = before.partition(":")[0].strip()
            rejoined: str | None = None
            if key in _STATS_OPTION_KEYS and _option_continuation(before, line):
                rejoined = before + line
            elif (key in _STATS_NUMBER_KEYS or _OP_ROW.match(before)) and _NUMBERS.match(line):
                rejoined = f"{before} {line}"
            if rejoined is not None:
                out[previous] = _indent(out[previous]) + rejoined
                out[index] = ""
                _note_rejoined(notes, rejoined, previous, index)
                index += 1
                continue
        previous = None
        index += 1
    return "\n".join(out)


def _join_header(lines: Sequence[str], start: int) -> tuple[int, str] | None:
    joined = lines[start].strip()
    for index in range(start + 1, min(len(lines), start + _MAX_WRAP)):
        piece = lines[index].strip()
        if not piece or _STATS_KEY.match(piece):
            return None
        joined = f"{joined} {piece}"
        if _MOUNTSTATS_HEADER.match(joined):
            return index, joined
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
