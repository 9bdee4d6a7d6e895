"""iscsi's report, built from node texts: one node's texts parsed (:mod:`.node_parse`), its
devices mapped to claims with a sanlun-like view of each LUN (:mod:`.luns`), the MP/ISCSI rules
run; and the IscsiReport around the nodes. Live (a privileged debug pod's sections) and offline
(``--from-file`` captures) alike; a node without iSCSI is a normal result, not an error."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kubectl_storage.core.iscsi.luns import (
    bare_devices_in_use,
    device_owners,
    lun_view,
    runs_trident,
)
from kubectl_storage.core.iscsi.node_parse import ParsedNode, parse_node, tool_facts
from kubectl_storage.core.iscsi.report import HostTools, IscsiNode, IscsiReport
from kubectl_storage.core.iscsi.rules import check_unique_initiator_names, evaluate_iscsi_node
from kubectl_storage.core.iscsi.rules.config import unjudged_defaults
from kubectl_storage.core.nodes.capture import NodeCapture, first_line
from kubectl_storage.core.nodes.kernel_health import SECTION as KERNEL_LOG
from kubectl_storage.core.nodes.kernel_health import KernelHealth, device_aliases
from kubectl_storage.core.nodes.kernel_log_rules import assess_kernel_log
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.core.report.findings import Finding


def inspect_captures(
    captures: Iterable[NodeCapture], objects: VolumeObjects | None, *, source: str
) -> IscsiReport:
    """The report of these nodes' texts, their devices mapped to the claims in ``objects`` (the
    cluster's pods, PVs and PVCs; None when unknown). Live and ``--from-file`` runs both end
    here; ``source`` is ``cluster`` or ``files``."""
    return build_report([build_node_report(capture, objects) for capture in captures], source)


def build_report(nodes: Sequence[IscsiNode], source: str) -> IscsiReport:
    """The IscsiReport of these nodes (``source``: ``cluster`` or ``files``), with the findings
    only the nodes together show."""
    names = {node.node: node.initiator_name for node in nodes if node.initiator_name}
    return IscsiReport(
        source=source,
        nodes=tuple(nodes),
        cluster_findings=tuple(check_unique_initiator_names(names)),
    )


def build_node_report(capture: NodeCapture, objects: VolumeObjects | None) -> IscsiNode:
    """Parse one node's texts, map devices to claims, run the MP/ISCSI rules."""
    tools = tool_facts(capture)
    facts = parse_node(capture) if capture.error is None else ParsedNode()
    facts.warnings[:0] = capture.warnings
    objects = objects or VolumeObjects()
    owners = device_owners(capture.node, facts, objects)
    in_use = bare_devices_in_use(owners) if facts.mounts is not None else None
    findings: list[Finding] = []
    if capture.error is None:
        findings = evaluate_iscsi_node(
            facts.sessions,
            facts.maps,
            facts.conf,
            node_records=facts.records,
            multipathd_running=tools.multipathd_running,
            multipath_installed=tools.multipath_installed,
            iscsid_running=tools.iscsid_running,
            multipath_conf_present=facts.conf_present,
            trident=runs_trident(capture.node, objects),
            in_use_devices=in_use,
            iscsid_conf=facts.iscsid_conf,
            sanlun=facts.sanlun,
            effective_conf=facts.effective_conf,
            initiator_name=facts.initiator_name,
        )
        if facts.effective_conf is None and facts.conf is not None:
            facts.warnings.extend(unjudged_defaults(facts.conf, facts.maps))
        if not _multipath_examined(capture, tools):
            # Without any multipath view, "no dm-multipath holder" would be a guess.
            findings = [finding for finding in findings if finding.id != "ISCSI008"]
            if facts.sessions:
                facts.warnings.append(
                    "no multipath output given: LUNs were not checked for multipathing"
                )
    kernel_log = _kernel_log(capture, facts, objects)
    if kernel_log is not None:
        findings.extend(kernel_log.findings)
    if not facts.maps and facts.mpath_devices:
        facts.warnings.append(
            f"{len(facts.mpath_devices)} dm-multipath device(s) in sysfs "
            f"({', '.join(facts.mpath_devices)}) but no multipath output could be read"
        )
    return IscsiNode(
        node=capture.node,
        error=capture.error,
        kernel=first_line(capture.first("kernel")) or None,
        inputs=tuple(capture.inputs),
        status=None if capture.error else _status(capture, tools, facts),
        tools=tools,
        sessions=facts.sessions,
        node_records=facts.records,
        multipath_maps=facts.maps,
        maps_source=facts.maps_source,
        luns=lun_view(facts, owners),
        sanlun=facts.sanlun,
        findings=tuple(findings),
        warnings=tuple(facts.warnings),
        sanlun_devices=facts.sanlun_devices,
        unread_lines=facts.unread_lines,
        kernel_log=kernel_log,
        initiator_name=facts.initiator_name,
    )


def _kernel_log(
    capture: NodeCapture, facts: ParsedNode, objects: VolumeObjects
) -> KernelHealth | None:
    """The kernel log's storage events on this node's devices, with iSCSI connections and
    multipath maps followed to the disks and mounts they carry; None when no log was read."""
    text = "\n".join(capture.all(KERNEL_LOG))
    if not text or capture.error is not None:
        return None
    mounts = facts.mounts or []
    owners = objects.resolve((entry.mountpoint for entry in mounts), capture.node)
    sessions = {
        session.sid: [disk.disk for disk in session.disks if disk.disk]
        for session in facts.sessions
        if session.sid is not None
    }
    return assess_kernel_log(
        text,
        mounts,
        owners,
        kernel_release=first_line(capture.first("kernel")) or None,
        aliases=device_aliases(facts.dm_names, sessions),
    )


def _multipath_examined(capture: NodeCapture, tools: HostTools) -> bool:
    """Whether the node's multipath state was looked at (live, or a multipath file given)."""
    return tools.probed or any(
        kind in capture.texts for kind in ("multipath-ll", "multipathd-json", "block-devices")
    )


def _status(capture: NodeCapture, tools: HostTools, facts: ParsedNode) -> str:
    """One line a person reads first: ``no iSCSI sessions, multipath not installed``."""
    parts = []
    if any(kind in capture.texts for kind in ("iscsiadm-session", "iscsi-sysfs")):
        count = len(facts.sessions)
        parts.append(f"{count} iSCSI session(s)" if count else "no iSCSI sessions")
    if tools.multipath_installed is False:
        parts.append("multipath not installed")
    else:
        if tools.multipathd_running is False:
            parts.append("multipathd not running")
        if facts.maps_source or any(
            kind in capture.texts for kind in ("multipath-ll", "multipathd-json")
        ):
            count = len(facts.maps)
            parts.append(f"{count} multipath map(s)" if count else "no multipath maps")
    if capture.from_files and "iscsiadm-node" in capture.texts:
        # Offline only: given alone, the records are what the file says (live, the line sums
        # up sessions and maps, and the records stay in node_records).
        count = len(facts.records)
        parts.append(f"{count} iSCSI node record(s)" if count else "no iSCSI node records")
    if facts.sanlun:
        parts.append(f"{len(facts.sanlun)} ONTAP LUN(s) in sanlun output")
    if facts.sanlun_devices:
        count = len({device.ontap_path for device in facts.sanlun_devices})
        parts.append(
            f"{count} ONTAP LUN(s) on {len(facts.sanlun_devices)} device(s) in sanlun output"
        )
    return ", ".join(parts) or "nothing to report"
