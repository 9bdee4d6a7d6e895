"""Table form of the IscsiReport; ``-o wide`` adds the sanlun-like view of each LUN."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from kubectl_storage.core.iscsi.report import IscsiNode, IscsiReport
from kubectl_storage.core.iscsi.sessions import IscsiSession
from kubectl_storage.render.findings import write_findings, write_kernel_events, write_warnings
from kubectl_storage.render.tables import write_table


def write_iscsi_table(report: IscsiReport, out: TextIO, wide: bool = False) -> None:
    """Nodes, sessions, multipath maps (wide: LUNs → dm device → paths), findings."""
    nodes = report.nodes
    write_table(
        [
            [
                node.node,
                node.kernel or "-",
                len(node.sessions),
                len(node.multipath_maps),
                _usable_paths(node),
                f"error: {node.error}" if node.error else node.status,
            ]
            for node in nodes
        ],
        ["node", "kernel", "sessions", "maps", "paths ok", "status"],
        out,
        title="Nodes",
    )
    if any(node.sessions for node in nodes):
        out.write("\n")
        _write_sessions(nodes, out, wide)
    if any(node.multipath_maps for node in nodes):
        out.write("\n")
        _write_maps(nodes, out)
    if wide and any(node.luns for node in nodes):
        out.write("\n")
        write_lun_view(nodes, out)
    if any(node.sanlun for node in nodes):
        out.write("\n")
        _write_sanlun(nodes, out)
    write_kernel_events(nodes, out)
    write_findings(
        [
            *((node.node, finding) for node in nodes for finding in node.findings),
            *(("cluster", finding) for finding in report.cluster_findings),
        ],
        out,
    )
    write_warnings(nodes, out)
    summary = report.summary
    counts = summary.findings
    out.write(
        f"\n{summary.nodes} node(s), {summary.sessions} session(s), "
        f"{summary.multipath_maps} multipath map(s), {summary.failed_paths} of "
        f"{summary.paths} path(s) failed; findings: {counts.error} error, "
        f"{counts.warn} warn, {counts.info} info\n"
    )
    if summary.unread_lines:
        # Named one by one under Warnings; the count says how much of the paste was left out.
        incomplete = (
            f", {summary.incomplete_maps} multipath map(s) may miss a path"
            if summary.incomplete_maps
            else ""
        )
        out.write(f"{summary.unread_lines} captured line(s) not understood{incomplete}\n")


def _usable_paths(node: IscsiNode) -> str:
    paths = list(node.paths)
    if not paths:
        return "-"
    good = sum(1 for p in paths if p.dm_state == "active" and p.path_state in ("ready", "ghost"))
    return f"{good}/{len(paths)}"


def _write_sessions(nodes: Sequence[IscsiNode], out: TextIO, wide: bool) -> None:
    headers = ["node", "sid", "target", "portal", "iface", "connection", "session", "disks"]
    if wide:
        headers += ["internal state", "recovery tmo s", "chap"]
    rows = []
    for node in nodes:
        for session in node.sessions:
            row = [
                node.node,
                session.sid,
                session.target,
                session.current_portal or session.persistent_portal or "-",
                session.iface_name or "-",
                session.connection_state or "-",
                session.session_state or "-",
                ",".join(f"{d.disk or d.hctl}({d.state or '?'})" for d in session.disks) or "-",
            ]
            if wide:
                row += [
                    session.internal_session_state or "-",
                    session.recovery_timeout_s if session.recovery_timeout_s else "-",
                    _chap(session),
                ]
            rows.append(row)
    write_table(rows, headers, out, title="iSCSI sessions")


def _chap(session: IscsiSession) -> str:
    if session.chap_enabled is None:
        return "-"
    if not session.chap_enabled:
        return "off"
    return "mutual" if session.chap_mutual else "one-way"


def _write_maps(nodes: Sequence[IscsiNode], out: TextIO) -> None:
    rows = []
    for node in nodes:
        for mpath in node.multipath_maps:
            groups = " | ".join(
                f"{group.status}: "
                + " ".join(
                    f"{p.dev or p.hctl or '?'}({p.dm_state} {p.path_state})" for p in group.paths
                )
                for group in mpath.path_groups
            )
            rows.append(
                [
                    node.node,
                    mpath.alias or mpath.wwid,
                    mpath.wwid if mpath.alias else "-",
                    mpath.dm or "-",
                    f"{mpath.vendor},{mpath.product}",
                    mpath.size or "-",
                    groups or "(no path groups)",
                ]
            )
    write_table(
        rows,
        ["node", "map", "wwid", "dm", "vendor,product", "size", "path groups"],
        out,
        title="Multipath maps",
    )


def write_lun_view(nodes: Sequence[IscsiNode], out: TextIO) -> None:
    """sanlun-like: one block per LUN (claim, LUN, dm device, map), one row per path."""
    rows: list[list[object]] = []
    for node in nodes:
        for lun in node.luns:
            first: list[object] = [
                node.node,
                lun.owner.label,
                "-" if lun.lun is None else lun.lun,
                lun.target or "-",
                lun.dm or "-",
                lun.alias or lun.wwid or "-",
                lun.size or "-",
            ]
            if not lun.paths:
                rows.append([*first, "-", "-", "-", "-", "-"])
            for index, path in enumerate(lun.paths):
                lead = first if index == 0 else [""] * len(first)
                rows.append(
                    [
                        *lead,
                        path.dev or "-",
                        path.hctl or "-",
                        path.portal or "-",
                        path.role or "-",
                        path.states,
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


def _write_sanlun(nodes: Sequence[IscsiNode], out: TextIO) -> None:
    rows: list[list[object]] = []
    for node in nodes:
        for lun in node.sanlun:
            first: list[object] = [
                node.node,
                f"{lun.vserver}:{lun.lun_path}",
                "-" if lun.lun is None else lun.lun,
                lun.lun_size or "-",
                lun.host_device or "-",
            ]
            if not lun.paths:
                rows.append([*first, "-", "-", "-", "-", "-"])
            for index, path in enumerate(lun.paths):
                lead = first if index == 0 else [""] * len(first)
                rows.append(
                    [*lead, path.state, path.path_type, path.device, path.host_adapter, path.lif]
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
