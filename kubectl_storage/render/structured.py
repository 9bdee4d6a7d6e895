"""JSON and YAML output: the report as built, keys in the order the model gives them."""

from __future__ import annotations

import json
from typing import Any, TextIO


def write_json(report: dict[str, Any], out: TextIO) -> None:
    """Write the report as indented JSON followed by a newline."""
    json.dump(report, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")


def write_yaml(report: dict[str, Any], out: TextIO) -> None:
    """Write the report as block-style YAML, keeping key order."""
    import yaml  # noqa: PLC0415 - only needed for -o yaml

    yaml.safe_dump(report, out, sort_keys=False, default_flow_style=False, allow_unicode=True)


def write_yaml_documents(documents: list[dict[str, Any]], out: TextIO) -> None:
    """Write several manifests as one YAML stream (``--dry-run`` output)."""
    import yaml  # noqa: PLC0415

    yaml.safe_dump_all(documents, out, sort_keys=False, default_flow_style=False)
