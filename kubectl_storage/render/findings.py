"""Findings and per-node warnings, drawn the same way by every node command."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO


def write_findings(findings: Iterable[tuple[str, dict[str, Any]]], out: TextIO) -> None:
    """``SEVERITY ID  subject: message`` lines, most severe first, each with its fix below."""
    rank = {"error": 0, "warn": 1, "info": 2}
    items = sorted(findings, key=lambda item: rank.get(item[1]["severity"], 3))
    if not items:
        return
    out.write("\nFindings:\n")
    for subject, finding in items:
        out.write(
            f"  {finding['severity'].upper():5} {finding['id']:9} {subject}: {finding['message']}\n"
        )
        if finding.get("fix"):
            out.write(f"        fix: {finding['fix']}\n")


def write_warnings(nodes: Iterable[dict[str, Any]], out: TextIO) -> None:
    """What could not be read on a node, though the node itself answered."""
    lines = [f"  {node['node']}: {warning}" for node in nodes for warning in node["warnings"]]
    if lines:
        out.write("\nWarnings:\n" + "\n".join(lines) + "\n")
