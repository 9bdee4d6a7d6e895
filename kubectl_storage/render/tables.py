"""Shared table helpers: plain tabulate tables that stay readable when piped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from tabulate import tabulate


def write_table(
    rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO, *, title: str = ""
) -> None:
    """Write one kubectl-style table (no borders, upper-case headers) with an optional title."""
    if title:
        out.write(f"{title}\n")
    if not rows:
        out.write("  (none)\n")
        return
    text = tabulate(
        [["" if v is None else v for v in row] for row in rows],
        headers=[h.upper() for h in headers],
        tablefmt="plain",
        disable_numparse=True,
    )
    out.write(text + "\n")


def write_notes(notes: Sequence[dict[str, Any]], out: TextIO) -> None:
    """Findings or notes as `SEVERITY ID message` lines, with the fix indented below."""
    if not notes:
        return
    out.write("\nNotes:\n")
    for note in notes:
        out.write(f"  {note['severity'].upper():5} {note['id']}  {note['message']}\n")
        if note.get("fix"):
            out.write(f"        fix: {note['fix']}\n")


def yes_no(value: bool) -> str:
    """Render a boolean the way kubectl columns do."""
    return "true" if value else "false"
