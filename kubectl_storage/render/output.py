"""Choosing the renderer: ``-o table|json|yaml`` over one report.

Every command's report is a typed object with ``to_dict()`` (its JSON document, the contract in
docs/output.md); the table renderer draws the typed object itself, never the document.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Protocol, TextIO, TypeVar

from kubectl_storage.render.structured import write_json, write_yaml


class OutputFormat(StrEnum):
    """Values of -o/--output."""

    TABLE = "table"
    WIDE = "wide"
    JSON = "json"
    YAML = "yaml"


class Report(Protocol):
    """A typed report: its JSON document is ``to_dict()``."""

    def to_dict(self) -> dict[str, Any]:
        """The report's document (apiVersion, kind, stable key order)."""
        ...


ReportT = TypeVar("ReportT", bound=Report)


def document_of(report: Report) -> dict[str, Any]:
    """The JSON/YAML document of a report."""
    return report.to_dict()


def write_report(
    report: ReportT,
    fmt: OutputFormat,
    out: TextIO,
    table: Callable[[ReportT, TextIO, bool], None],
) -> None:
    """Write ``report`` in ``fmt``; ``table(report, out, wide)`` draws the human form."""
    if fmt is OutputFormat.JSON:
        write_json(document_of(report), out)
    elif fmt is OutputFormat.YAML:
        write_yaml(document_of(report), out)
    else:
        table(report, out, fmt is OutputFormat.WIDE)
