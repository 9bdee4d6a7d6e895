"""Table form of the MountAuditReport: nodes, NFS mounts, pod volumes, then the findings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from kubectl_storage.render.findings import write_findings, write_warnings
from kubectl_storage.render.tables import write_table

#: Options shown in the wide table, in this order (the JSON has all of them).
_KEY_OPTIONS = ("vers", "proto", "nconnect", "rsize", "wsize", "timeo", "retrans", "sec")


def write_mount_audit_table(report: dict[str, Any], out: TextIO, wide: bool = False) -> None:
    """Nodes, NFS mounts, pod volumes, findings; ``wide`` adds options, counters, mount points."""
    nodes = report["nodes"]
    write_table(
        [
            [
                node["node"],
                node["kernel"] or "-",
                len(node["mounts"]),
                len(node["volumes"]),
                _node_status(node),
            ]
            for node in nodes
        ],
        ["node", "kernel", "nfs mounts", "volumes", "status"],
        out,
        title="Nodes",
    )
    out.write("\n")
    _write_mounts(nodes, out, wide)
    out.write("\n")
    _write_volumes(nodes, out, wide)
    write_findings(
        (
            (f"{node['node']} {_mount_label(mount)}", finding)
            for node in nodes
            for mount in node["mounts"]
            for finding in mount["findings"]
        ),
        out,
    )
    write_warnings(nodes, out)
    summary = report["summary"]
    counts = summary["findings"]
    out.write(
        f"\n{summary['nodes']} node(s), {summary['nfs_mounts']} NFS mount(s), "
        f"{summary['volumes']} volume(s); findings: {counts['error']} error, "
        f"{counts['warn']} warn, {counts['info']} info\n"
    )


def _node_status(node: dict[str, Any]) -> str:
    if node["error"]:
        return f"error: {node['error']}"
    return "no NFS mounts" if not node["mounts"] else "audited"


def _write_mounts(nodes: Sequence[dict[str, Any]], out: TextIO, wide: bool) -> None:
    headers = ["node", "server", "export", "vers", "profile", "volume"]
    headers += ["read rtt ms", "write rtt ms", "retrans", "findings"]
    if wide:
        headers += ["mountpoint", "options", "requested", "ops r/w/getattr", "exec ms r/w", "xprt"]
    rows = []
    for node in nodes:
        for mount in node["mounts"]:
            stats = mount["stats"] or {}
            ops = stats.get("ops") or {}
            row = [
                node["node"],
                mount["server"] or "-",
                mount["export"] or "-",
                mount["options"].get("vers", "-"),
                mount["profile"],
                _mount_label(mount),
                _op_value(ops, "READ", "avg_rtt_ms"),
                _op_value(ops, "WRITE", "avg_rtt_ms"),
                stats.get("retransmissions", "-") if stats else "-",
                ",".join(f["id"] for f in mount["findings"]) or "-",
            ]
            if wide:
                row += [
                    mount["mountpoint"] + ("" if mount["visible"] else " (hidden)"),
                    _options(mount["options"]),
                    ",".join(mount["requested_options"] or []) or "-",
                    "/".join(_op_value(ops, op, "ops") for op in ("READ", "WRITE", "GETATTR")),
                    "/".join(_op_value(ops, op, "avg_execute_ms") for op in ("READ", "WRITE")),
                    stats.get("xprt_count", "-") if stats else "-",
                ]
            rows.append(row)
    write_table(rows, headers, out, title="NFS mounts")


def _write_volumes(nodes: Sequence[dict[str, Any]], out: TextIO, wide: bool) -> None:
    headers = ["node", "namespace", "pod", "pvc", "volume", "storage class", "driver", "fstype"]
    if wide:
        headers += ["kind", "mountpoint"]
    rows = []
    for node in nodes:
        for volume in node["volumes"]:
            row = [
                node["node"],
                volume["namespace"] or "-",
                volume["pod"] or "-",
                volume["pvc"] or "-",
                volume["pv"] or volume["volume"] or "-",
                volume["storage_class"] or "-",
                volume["driver"] or "-",
                volume["fstype"],
            ]
            if wide:
                row += [volume["kind"], volume["mountpoint"]]
            rows.append(row)
    write_table(rows, headers, out, title="Pod volumes")


def _mount_label(mount: dict[str, Any]) -> str:
    """How a user recognises a mount: its claim, else its volume, else its mount point."""
    if mount.get("pvc"):
        return f"{mount['namespace']}/{mount['pvc']}"
    if mount.get("pv"):
        return str(mount["pv"])
    if mount.get("volume"):
        return str(mount["volume"])
    if mount.get("kind") == "global-mount":
        return f"{mount.get('driver') or 'csi'} staging"
    return str(mount["mountpoint"])


def _op_value(ops: dict[str, Any], op: str, key: str) -> str:
    value = (ops.get(op) or {}).get(key)
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _options(options: dict[str, Any]) -> str:
    shown = [f"{key}={options[key]}" for key in _KEY_OPTIONS if key in options]
    shown.append("soft" if options.get("soft") is True else "hard")
    return ",".join(shown)
