"""Findings, per-node warnings and kernel-log events, drawn the same way by every node
command."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TextIO

from kubectl_storage.core.nodes.kernel_health import KernelHealth
from kubectl_storage.core.report.findings import Finding
from kubectl_storage.render.tables import write_table


class NodeWarnings(Protocol):
    """A node of a node command's report: its name and what could not be read on it."""

    @property
    def node(self) -> str:
        """The node's name."""
        ...

    @property
    def warnings(self) -> Sequence[str]:
        """What could not be read, in order."""
        ...


class NodeKernelLog(Protocol):
    """A node of a node command's report: its name and its kernel-log health."""

    @property
    def node(self) -> str:
        """The node's name."""
        ...

    @property
    def kernel_log(self) -> KernelHealth | None:
        """The kernel log's storage events, None when no log was read."""
        ...


def write_findings(findings: Iterable[tuple[str, Finding]], out: TextIO) -> None:
    """``SEVERITY ID  subject: message`` lines, most severe first, each with its fix below."""
    items = sorted(findings, key=lambda item: -item[1].severity.rank)
    if not items:
        return
    out.write("\nFindings:\n")
    for subject, finding in items:
        out.write(
            f"  {finding.severity.value.upper():5} {finding.id:9} {subject}: {finding.message}\n"
        )
        if finding.fix:
            out.write(f"        fix: {finding.fix}\n")


def write_warnings(nodes: Iterable[NodeWarnings], out: TextIO) -> None:
    """What could not be read on a node, though the node itself answered."""
    lines = [f"  {node.node}: {warning}" for node in nodes for warning in node.warnings]
    if lines:
        out.write("\nWarnings:\n" + "\n".join(lines) + "\n")


def write_kernel_events(nodes: Iterable[NodeKernelLog], out: TextIO) -> None:
    """The kernel log's storage events, one row per device (or NFS server) and family; only
    when there are any."""
    rows: list[list[object]] = []
    for node in nodes:
        health = node.kernel_log
        if health is None:
            continue
        for group in (*health.events, *health.nfs_servers):
            rows.append(
                [
                    node.node,
                    group.last_at or "-",
                    group.kind,
                    group.where,
                    group.count,
                    group.state or "-",
                    ",".join(finding.id for finding in group.findings) or "-",
                ]
            )
    if rows:
        out.write("\n")
        write_table(
            rows,
            ["node", "last", "event", "device or server", "count", "now", "findings"],
            out,
            title="Kernel log",
        )
