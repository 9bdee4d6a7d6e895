"""JSON and YAML output: the report as built, keys in the order the model gives them."""

from __future__ import annotations

import json
from typing import Any, TextIO


def write_json(report: dict[str, Any], out: TextIO) -> None:
    """Write the report as indented JSON followed by a newline."""
    json.dump(report, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")


def _dumper() -> Any:
    """A safe YAML dumper that writes multi-line strings (job files, scripts) as ``|`` blocks."""
    import yaml  # noqa: PLC0415 - only needed for YAML output

    class BlockStyleDumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    BlockStyleDumper.add_representer(str, represent_str)
    return BlockStyleDumper


def write_yaml(report: dict[str, Any], out: TextIO) -> None:
    """Write the report as block-style YAML, keeping key order."""
    import yaml  # noqa: PLC0415 - only needed for YAML output

    yaml.dump(report, out, Dumper=_dumper(), sort_keys=False, allow_unicode=True)


def write_yaml_documents(documents: list[dict[str, Any]], out: TextIO) -> None:
    """Write several manifests as one YAML stream (``--dry-run`` output)."""
    import yaml  # noqa: PLC0415 - only needed for YAML output

    yaml.dump_all(documents, out, Dumper=_dumper(), sort_keys=False, allow_unicode=True)
