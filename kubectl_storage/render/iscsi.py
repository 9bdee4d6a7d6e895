"""Table form of the IscsiReport; ``-o wide`` adds the sanlun-like view of each LUN."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from kubectl_storage.render.findings import write_findings, write_warnings
from kubectl_storage.render.tables import write_table


def write_iscsi_table(report: dict[str, Any], out: TextIO, wide: bool = False) -> None:
    """Nodes, sessions, multipath maps (wide: LUNs → dm device → paths), findings."""
    nodes = report["nodes"]
    write_table(
        [
            [
                node["node"],
                node["kernel"] or "-",
                len(node["sessions"]),
                len(node["multipath_maps"]),
                _usable_paths(node),
                f"error: {node['error']}" if node["error"] else node["status"],
            ]
            for node in nodes
        ],
        ["node", "kernel", "sessions", "maps", "paths ok", "status"],
        out,
        title="Nodes",
    )
    if any(node["sessions"] for node in nodes):
        out.write("\n")
        _write_sessions(nodes, out, wide)
    if any(node["multipath_maps"] for node in nodes):
        out.write("\n")
        _write_maps(nodes, out)
    if wide and any(node["luns"] for node in nodes):
        out.write("\n")
        write_lun_view(nodes, out)
    if any(node["sanlun"] for node in nodes):
        out.write("\n")
        _write_sanlun(nodes, out)
    write_findings(((node["node"], finding) for node in nodes for finding in node["findings"]), out)
    write_warnings(nodes, out)
    summary = report["summary"]
    counts = summary["findings"]
    out.write(
        f"\n{summary['nodes']} node(s), {summary['sessions']} session(s), "
        f"{summary['multipath_maps']} multipath map(s), {summary['failed_paths']} of "
        f"{summary['paths']} path(s) failed; findings: {counts['error']} error, "
        f"{counts['warn']} warn, {counts['info']} info\n"
    )


def _usable_paths(node: dict[str, Any]) -> str:
    paths = [
        path
        for mpath in node["multipath_maps"]
        for group in mpath["path_groups"]
        for path in group["paths"]
    ]
    if not paths:
        return "-"
    good = sum(
        1 for p in paths if p["dm_state"] == "active" and p["path_state"] in ("ready", "ghost")
    )
    return f"{good}/{len(paths)}"


def _write_sessions(nodes: Sequence[dict[str, Any]], out: TextIO, wide: bool) -> None:
    headers = ["node", "sid", "target", "portal", "iface", "connection", "session", "disks"]
    if wide:
        headers += ["internal state", "recovery tmo s", "chap"]
    rows = []
    for node in nodes:
        for session in node["sessions"]:
            row = [
                node["node"],
                session["sid"],
                session["target"],
                session["current_portal"] or session["persistent_portal"] or "-",
                session["iface_name"] or "-",
                session["connection_state"] or "-",
                session["session_state"] or "-",
                ",".join(f"{d['disk'] or d['hctl']}({d['state'] or '?'})" for d in session["disks"])
                or "-",
            ]
            if wide:
                row += [
                    session["internal_session_state"] or "-",
                    session["recovery_timeout_s"] if session["recovery_timeout_s"] else "-",
                    _chap(session),
                ]
            rows.append(row)
    write_table(rows, headers, out, title="iSCSI sessions")


def _chap(session: dict[str, Any]) -> str:
    if session["chap_enabled"] is None:
        return "-"
    if not session["chap_enabled"]:
        return "off"
    return "mutual" if session["chap_mutual"] else "one-way"


def _write_maps(nodes: Sequence[dict[str, Any]], out: TextIO) -> None:
    rows = []
    for node in nodes:
        for mpath in node["multipath_maps"]:
            groups = " | ".join(
                f"{group['status']}: "
                + " ".join(
                    f"{p['dev'] or p['hctl'] or '?'}({p['dm_state']} {p['path_state']})"
                    for p in group["paths"]
                )
                for group in mpath["path_groups"]
            )
            rows.append(
                [
                    node["node"],
                    mpath["alias"] or mpath["wwid"],
                    mpath["wwid"] if mpath["alias"] else "-",
                    mpath["dm"] or "-",
                    f"{mpath['vendor']},{mpath['product']}",
                    mpath["size"] or "-",
                    groups or "(no path groups)",
                ]
            )
    write_table(
        rows,
        ["node", "map", "wwid", "dm", "vendor,product", "size", "path groups"],
        out,
        title="Multipath maps",
    )


def write_lun_view(nodes: Sequence[dict[str, Any]], out: TextIO) -> None:
    """sanlun-like: one block per LUN (claim, LUN, dm device, map), one row per path."""
    rows = []
    for node in nodes:
        for lun in node["luns"]:
            claim = f"{lun['namespace']}/{lun['pvc']}" if lun["pvc"] else (lun["pv"] or "-")
            first = [
                node["node"],
                claim,
                "-" if lun["lun"] is None else lun["lun"],
                lun["target"] or "-",
                lun["dm"] or "-",
                lun["alias"] or lun["wwid"] or "-",
                lun["size"] or "-",
            ]
            for index, path in enumerate(lun["paths"] or [{}]):
                lead = first if index == 0 else [""] * len(first)
                rows.append(
                    [
                        *lead,
                        path.get("dev") or "-",
                        path.get("hctl") or "-",
                        path.get("portal") or "-",
                        path.get("role") or "-",
                        " ".join(
                            str(path[key])
                            for key in ("dm_state", "path_state", "online_state")
                            if path.get(key)
                        )
                        or "-",
                    ]
                )
    write_table(
        rows,
        [
            *("node", "claim", "lun", "target", "dm", "map", "size"),
            *("path", "hctl", "portal", "role", "state"),
        ],
        out,
        title="LUNs (claim → LUN → dm device → paths)",
    )


def _write_sanlun(nodes: Sequence[dict[str, Any]], out: TextIO) -> None:
    rows = []
    for node in nodes:
        for lun in node["sanlun"]:
            first = [
                node["node"],
                f"{lun['vserver']}:{lun['lun_path']}",
                "-" if lun["lun"] is None else lun["lun"],
                lun["lun_size"] or "-",
                lun["host_device"] or "-",
            ]
            for index, path in enumerate(lun["paths"] or [{}]):
                lead = first if index == 0 else [""] * len(first)
                rows.append(
                    [
                        *lead,
                        path.get("state", "-"),
                        path.get("path_type", "-"),
                        path.get("device", "-"),
                        path.get("host_adapter", "-"),
                        path.get("lif", "-"),
                    ]
                )
    write_table(
        rows,
        [
            *("node", "ontap path", "lun", "size", "host device"),
            *("state", "type", "dev", "adapter", "lif"),
        ],
        out,
        title="ONTAP LUNs (sanlun lun show -p)",
    )
