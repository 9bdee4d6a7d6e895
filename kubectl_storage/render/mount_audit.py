"""Table form of the MountAuditReport: nodes, NFS mounts, pod volumes, then the findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TextIO

from kubectl_storage.core.mount_audit.report import (
    AuditedMount,
    MountAuditNode,
    MountAuditReport,
    MountCounters,
    OpCounter,
)
from kubectl_storage.core.nodes.mount_model import OptionValue
from kubectl_storage.render.findings import write_findings, write_kernel_events, write_warnings
from kubectl_storage.render.tables import write_table

#: Options shown in the wide table, in this order (the JSON has all of them).
_KEY_OPTIONS = ("vers", "proto", "nconnect", "rsize", "wsize", "timeo", "retrans", "sec")


def write_mount_audit_table(report: MountAuditReport, out: TextIO, wide: bool = False) -> None:
    """Nodes, NFS mounts, pod volumes, findings; ``wide`` adds options, counters, mount points."""
    nodes = report.nodes
    write_table(
        [
            [
                node.node,
                node.kernel or "-",
                len(node.mounts),
                len(node.volumes),
                "-" if node.kernel_log is None else node.kernel_log.source,
                node.status,
            ]
            for node in nodes
        ],
        ["node", "kernel", "nfs mounts", "volumes", "kernel log", "status"],
        out,
        title="Nodes",
    )
    out.write("\n")
    _write_mounts(nodes, out, wide)
    out.write("\n")
    _write_volumes(nodes, out, wide)
    write_kernel_events(nodes, out)
    write_findings(
        [
            *((f"{node.node} {mount.label}", f) for node, mount, f in report.subject_findings()),
            *((f"{node.node} {subject}", f) for node, subject, f in report.kernel_findings()),
            *(("cluster", finding) for finding in report.cluster_findings),
        ],
        out,
    )
    write_warnings(nodes, out)
    summary = report.summary
    counts = summary.findings
    out.write(
        f"\n{summary.nodes} node(s), {summary.nfs_mounts} NFS mount(s), "
        f"{summary.volumes} volume(s); findings: {counts.error} error, "
        f"{counts.warn} warn, {counts.info} info\n"
    )
    if summary.unread_lines:
        # Each is named under Warnings; the count says how much of the paste was left out.
        out.write(f"{summary.unread_lines} captured line(s) not understood\n")


def _write_mounts(nodes: Sequence[MountAuditNode], out: TextIO, wide: bool) -> None:
    headers = ["node", "server", "export", "vers", "profile", "volume"]
    headers += ["read rtt ms", "write rtt ms", "retrans", "findings"]
    if wide:
        headers += ["mountpoint", "options", "requested", "ops r/w/getattr", "exec ms r/w", "xprt"]
    rows: list[list[object]] = []
    for node in nodes:
        for mount in node.mounts:
            stats = mount.stats
            row: list[object] = [
                node.node,
                mount.server or "-",
                mount.export or "-",
                mount.options.get("vers", "-"),
                mount.profile,
                mount.label,
                _op_value(stats, "READ", "avg_rtt_ms"),
                _op_value(stats, "WRITE", "avg_rtt_ms"),
                "-" if stats is None else stats.retransmissions,
                ",".join(finding.id for finding in mount.findings) or "-",
            ]
            if wide:
                row += _wide_mount_cells(mount, stats)
            rows.append(row)
    write_table(rows, headers, out, title="NFS mounts")


def _wide_mount_cells(mount: AuditedMount, stats: MountCounters | None) -> list[object]:
    return [
        mount.mountpoint + ("" if mount.visible else " (hidden)"),
        _options(mount.options),
        ",".join(mount.requested_options or []) or "-",
        "/".join(_op_value(stats, op, "ops") for op in ("READ", "WRITE", "GETATTR")),
        "/".join(_op_value(stats, op, "avg_execute_ms") for op in ("READ", "WRITE")),
        "-" if stats is None else stats.xprt_count,
    ]


def _write_volumes(nodes: Sequence[MountAuditNode], out: TextIO, wide: bool) -> None:
    headers = ["node", "namespace", "pod", "pvc", "volume", "storage class", "driver", "fstype"]
    if wide:
        headers += ["kind", "mountpoint"]
    rows: list[list[object]] = []
    for node in nodes:
        for volume in node.volumes:
            owner = volume.owner
            row: list[object] = [
                node.node,
                owner.namespace or "-",
                owner.pod or "-",
                owner.pvc or "-",
                owner.pv or owner.volume or "-",
                owner.storage_class or "-",
                owner.driver or "-",
                volume.fstype,
            ]
            if wide:
                row += [owner.kind, volume.mountpoint]
            rows.append(row)
    write_table(rows, headers, out, title="Pod volumes")


def _op_value(stats: MountCounters | None, op: str, counter: OpCounter) -> str:
    value = None if stats is None else stats.op_value(op, counter)
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _options(options: Mapping[str, OptionValue]) -> str:
    shown = [f"{key}={options[key]}" for key in _KEY_OPTIONS if key in options]
    shown.append("soft" if options.get("soft") is True else "hard")
    return ",".join(shown)
