"""What people paste: the notes a parser keeps on the lines it could not take as printed, and the
helpers that recognise what a paste adds to a command's output (shell prompts, e-mail quotes).

Shared by every parser of captured text (mount tables, mountstats, multipath, iscsiadm, sanlun).
Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SKIPPED = "skipped"
REJOINED = "rejoined"
#: The line was read after something a paste added was taken out of it (an annotation, emphasis).
TRIMMED = "trimmed"
#: How much of a line a note shows.
NOTE_WIDTH = 100


@dataclass(frozen=True)
class LineNote:
    """A line of a captured text that a parser could not take as printed.

    ``action`` is ``skipped`` (left out; the other lines were read), ``rejoined`` (the start of a
    line wrapped over ``line``..``last_line``, read joined) or ``trimmed`` (read once what a paste
    added was removed: a trailing annotation, Markdown emphasis, a second line glued to it).
    ``text`` is the line as found, or the joined line for ``rejoined``.
    """

    line: int
    text: str
    action: str
    reason: str
    last_line: int | None = None

    def describe(self, source: str) -> str:
        """``mounts.txt line 3: not a mountinfo line; skipped: '...'`` (the text truncated)."""
        if self.last_line and self.last_line != self.line:
            where = f"lines {self.line}-{self.last_line}"
        else:
            where = f"line {self.line}"
        text = self.text.strip().replace("\t", " ")
        if len(text) > NOTE_WIDTH:
            text = text[: NOTE_WIDTH - 1] + "…"
        return f"{source} {where}: {self.reason}; {self.action}: {text!r}"


def note_line(notes: list[LineNote] | None, number: int, text: str, reason: str) -> None:
    """Record one skipped line (a shell prompt says so instead of ``reason``)."""
    if notes is None or not text.strip():
        return
    if looks_like_prompt(text):
        reason = "a shell prompt, not output"
    notes.append(LineNote(number, text, SKIPPED, reason))


_PROMPT = re.compile(
    r"^\s*(?:"
    r"[$#] "  # "$ mount", "# multipath -ll"
    r"|\[[^\]\s]*@[^\]]*\][$#]"  # "[root@host ~]#"
    r"|[\w.-]+@[\w.-]+:\S*\s*[$#](?:\s|$)"  # "user@host:~$ cmd", "root@m20c2:/home/x#"
    r"|[\w.-]+:\S*\s[$#](?:\s|$)"  # "node1:~ # multipath -l"
    r"|(?:ba|z)?sh-[\d.]+[$#]"  # "sh-5.1# multipath -ll"
    r"|\[sudo\] password for "  # "[sudo] password for alice:" (sudo asks before the output)
    r"|Password:\s*$"  # su, and sudo configured without the "[sudo]" prefix
    r")"
)


def looks_like_prompt(line: str) -> bool:
    """Whether a line is a shell prompt (with or without its command) pasted with the output."""
    return bool(_PROMPT.match(line))


_QUOTE_LEVEL = re.compile(r"^> ?")


def unquote_mail(text: str) -> tuple[str, int]:
    """Remove the ``> `` an e-mail reply puts before every line (several levels: ``>> ``).

    Returns:
        The text (line numbers unchanged) and how many quote levels were removed; 0, with the
        text untouched, unless every non-blank line is quoted.
    """
    lines = text.split("\n")
    quoted = [line for line in lines if line.strip()]
    if not quoted or not all(line.startswith(">") for line in quoted):
        return text, 0
    levels = 0
    while quoted and all(line.startswith(">") for line in quoted):
        lines = [_QUOTE_LEVEL.sub("", line, count=1) for line in lines]
        quoted = [line for line in lines if line.strip()]
        levels += 1
    return "\n".join(lines), levels


def trim_pasted_lines(text: str, notes: list[LineNote] | None = None) -> str:
    """Remove Markdown emphasis from every line (line numbers kept), one ``trimmed`` note each.

    ``__`` inside a word (``pg_init__retries``) is left alone: only pairs that open after a blank
    or the line start and close before a blank or the line end are emphasis.
    """
    if "**" not in text and "__" not in text:
        return text
    lines = text.split("\n")
    for index, line in enumerate(lines):
        trimmed = _strip_word_emphasis(line)
        if trimmed != line:
            lines[index] = trimmed
            if notes is not None:
                notes.append(LineNote(index + 1, line, TRIMMED, "Markdown emphasis removed"))
    return "\n".join(lines)


# ``**10G**``, ``__failed__``: a pair opening at the line start or after a blank, ``=``, ``(`` or
# ``,`` and closing before a blank, ``,``, ``)`` or the line end.
_WORD_EMPHASIS = re.compile(
    r"(?:(?<=^)|(?<=[\s=(,]))(\*\*|__)(?=\S)(?P<inner>[^*]+?)(?<=\S)\1(?=$|[\s,)])"
)


def _strip_word_emphasis(line: str) -> str:
    return _WORD_EMPHASIS.sub(lambda match: match.group("inner"), line)
