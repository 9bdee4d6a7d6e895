"""Choosing the renderer: ``-o table|json|yaml`` over one report dict."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TextIO

from kubectl_storage.render.structured import write_json, write_yaml


class OutputFormat(StrEnum):
    """Values of -o/--output."""

    TABLE = "table"
    WIDE = "wide"
    JSON = "json"
    YAML = "yaml"


def write_report(
    report: dict[str, Any],
    fmt: OutputFormat,
    out: TextIO,
    table: Callable[[dict[str, Any], TextIO, bool], None],
) -> None:
    """Write ``report`` in ``fmt``; ``table(report, out, wide)`` draws the human form."""
    if fmt is OutputFormat.JSON:
        write_json(report, out)
    elif fmt is OutputFormat.YAML:
        write_yaml(report, out)
    else:
        table(report, out, fmt is OutputFormat.WIDE)
