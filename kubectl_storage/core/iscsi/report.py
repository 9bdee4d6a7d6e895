"""The IscsiReport: per node, the sessions, multipath maps, a sanlun-like LUN view and findings.

Typed all the way down; ``to_dict()`` is the JSON/YAML document (docs/output.md), and the table
renderer reads the attributes. Pure: built from parsed sessions, maps and volume owners.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.iscsi.multipath import MultipathMap, MultipathPath
from kubectl_storage.core.iscsi.sanlun import SanlunLun
from kubectl_storage.core.iscsi.sanlun_table import SanlunDevice
from kubectl_storage.core.iscsi.sessions import IscsiNodeRecord, IscsiSession
from kubectl_storage.core.nodes.kernel_health import KernelHealth, kernel_log_keys
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.findings import Finding, SeverityCounts
from kubectl_storage.core.report.verdict import Outcome, findings_outcome

KIND = "IscsiReport"

#: multipathd checker states that mean the path does not carry I/O.
_FAILED_CHECKER = frozenset({"faulty", "shaky", "i/o timeout", "disconnected"})
_FAILED_ONLINE = frozenset({"offline", "blocked", "transport-offline"})


def path_failed(path: MultipathPath) -> bool:
    """The kernel failed the path, the checker finds it bad, or the SCSI device is offline."""
    return (
        path.dm_state == "failed"
        or path.path_state in _FAILED_CHECKER
        or path.online_state in _FAILED_ONLINE
    )


@dataclass(frozen=True)
class HostTools:
    """Which host tools exist (their version line) and which daemons run; None: not probed."""

    probed: bool = False
    multipath: str | None = None
    multipathd: str | None = None
    iscsiadm: str | None = None
    sanlun: str | None = None
    multipathd_running: bool | None = None
    iscsid_running: bool | None = None

    @property
    def multipath_installed(self) -> bool | None:
        """Whether multipath or multipathd is on the host (None: not probed)."""
        if not self.probed:
            return None
        return bool(self.multipath or self.multipathd)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: probed, the four tools, then the two daemons."""
        return {
            "probed": self.probed,
            "multipath": self.multipath,
            "multipathd": self.multipathd,
            "iscsiadm": self.iscsiadm,
            "sanlun": self.sanlun,
            "multipathd_running": self.multipathd_running,
            "iscsid_running": self.iscsid_running,
        }


@dataclass(frozen=True)
class ClaimRef:
    """The claim behind a block device, and the pods that mount it (None: nobody found)."""

    namespace: str | None = None
    pvc: str | None = None
    pv: str | None = None
    storage_class: str | None = None
    pods: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``namespace/pvc``, else the PV, else ``-``."""
        if self.pvc:
            return f"{self.namespace}/{self.pvc}"
        return self.pv or "-"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: namespace, pvc, pv, storage_class, pods."""
        return {
            "namespace": self.namespace,
            "pvc": self.pvc,
            "pv": self.pv,
            "storage_class": self.storage_class,
            "pods": list(self.pods),
        }


@dataclass(frozen=True)
class LunPath:
    """One path of a LUN and its role: ``active``, ``passive``, ``failed`` or ``no-multipath``."""

    dev: str | None
    hctl: str | None
    portal: str | None
    group_status: str | None
    role: str
    dm_state: str | None
    path_state: str | None
    online_state: str | None

    @property
    def states(self) -> str:
        """The known states, space-separated (``active ready running``); ``-`` when none."""
        known = [s for s in (self.dm_state, self.path_state, self.online_state) if s]
        return " ".join(known) or "-"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: dev, hctl, portal, group_status, role, dm_state, path_state,
        online_state."""
        return {
            "dev": self.dev,
            "hctl": self.hctl,
            "portal": self.portal,
            "group_status": self.group_status,
            "role": self.role,
            "dm_state": self.dm_state,
            "path_state": self.path_state,
            "online_state": self.online_state,
        }


@dataclass(frozen=True)
class LunRow:
    """One LUN as ``sanlun lun show -p`` shows it: the claim, LUN number and target, the dm
    device (None for a bare iSCSI disk) and each path."""

    owner: ClaimRef
    lun: int | None
    target: str | None
    paths: tuple[LunPath, ...]
    wwid: str | None = None
    alias: str | None = None
    dm: str | None = None
    vendor: str | None = None
    product: str | None = None
    size: str | None = None
    ontap_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: the owner's fields, lun, target, wwid, alias, dm, vendor, product, size,
        ontap_path, paths."""
        return {
            **self.owner.to_dict(),
            "lun": self.lun,
            "target": self.target,
            "wwid": self.wwid,
            "alias": self.alias,
            "dm": self.dm,
            "vendor": self.vendor,
            "product": self.product,
            "size": self.size,
            "ontap_path": self.ontap_path,
            "paths": [path.to_dict() for path in self.paths],
        }


def map_to_dict(mpath: MultipathMap) -> dict[str, Any]:
    """A map's JSON: the contract fields, plus what multipathd JSON adds when known."""
    return {**mpath.to_dict(), "failback": mpath.failback, "queueing": mpath.queueing}


@dataclass(frozen=True)
class IscsiNode:
    """One node's part of the report; ``error`` says why the node could not be read (then
    ``status`` is None and the lists are empty). ``unread_lines`` counts the lines of captured
    files that could not be read (each is named in ``warnings``)."""

    node: str
    error: str | None
    kernel: str | None
    inputs: tuple[str, ...]
    status: str | None
    tools: HostTools
    sessions: tuple[IscsiSession, ...] = ()
    node_records: tuple[IscsiNodeRecord, ...] = ()
    multipath_maps: tuple[MultipathMap, ...] = ()
    maps_source: str | None = None
    luns: tuple[LunRow, ...] = ()
    sanlun: tuple[SanlunLun, ...] = ()
    findings: tuple[Finding, ...] = ()
    warnings: tuple[str, ...] = ()
    sanlun_devices: tuple[SanlunDevice, ...] = ()
    unread_lines: int = 0
    #: The kernel log's storage events (None: no log was read); their findings are in
    #: ``findings`` too.
    kernel_log: KernelHealth | None = None
    #: The node's iSCSI InitiatorName (its file, else its sessions'); None when unknown.
    initiator_name: str | None = None

    @property
    def incomplete_maps(self) -> tuple[MultipathMap, ...]:
        """Maps with lines that could not be read: a path of theirs may be missing."""
        return tuple(mpath for mpath in self.multipath_maps if mpath.unread_lines)

    @property
    def paths(self) -> Iterator[MultipathPath]:
        """Every path of every map, group by group."""
        for mpath in self.multipath_maps:
            for group in mpath.path_groups:
                yield from group.paths

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: node, error, kernel, inputs, status, tools, sessions, node_records,
        multipath_maps, maps_source, luns, sanlun, findings, warnings, then (issue 22)
        sanlun_devices, unread_lines, incomplete_maps (the names of the maps with unread lines),
        then kernel_log, kernel_events and nfs_servers (null and empty without a kernel log)."""
        return {
            "node": self.node,
            "error": self.error,
            "kernel": self.kernel,
            "inputs": list(self.inputs),
            "status": self.status,
            "tools": self.tools.to_dict(),
            "sessions": [session.to_dict() for session in self.sessions],
            "node_records": [record.to_dict() for record in self.node_records],
            "multipath_maps": [map_to_dict(mpath) for mpath in self.multipath_maps],
            "maps_source": self.maps_source,
            "luns": [lun.to_dict() for lun in self.luns],
            "sanlun": [lun.to_dict() for lun in self.sanlun],
            "findings": [finding.to_dict() for finding in self.findings],
            "warnings": list(self.warnings),
            "sanlun_devices": [device.to_dict() for device in self.sanlun_devices],
            "unread_lines": self.unread_lines,
            "incomplete_maps": [mpath.name for mpath in self.incomplete_maps],
            **kernel_log_keys(self.kernel_log),
            "initiator_name": self.initiator_name,
        }


@dataclass(frozen=True)
class IscsiSummary:
    """The report's last line: counts over every node."""

    nodes: int
    nodes_failed: int
    sessions: int
    multipath_maps: int
    paths: int
    failed_paths: int
    findings: SeverityCounts
    unread_lines: int = 0
    incomplete_maps: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: nodes, nodes_failed, sessions, multipath_maps, paths, failed_paths,
        findings (by severity), unread_lines, incomplete_maps."""
        return {
            "nodes": self.nodes,
            "nodes_failed": self.nodes_failed,
            "sessions": self.sessions,
            "multipath_maps": self.multipath_maps,
            "paths": self.paths,
            "failed_paths": self.failed_paths,
            "findings": self.findings.to_dict(),
            "unread_lines": self.unread_lines,
            "incomplete_maps": self.incomplete_maps,
        }


@dataclass(frozen=True)
class IscsiReport:
    """What ``iscsi`` found; ``source`` is ``cluster`` or ``files``."""

    source: str
    nodes: tuple[IscsiNode, ...]
    #: What only the nodes together show (one InitiatorName on several nodes, ISCSI011).
    cluster_findings: tuple[Finding, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding of every node, then the cluster's (for --fail-on)."""
        nodes = (finding for node in self.nodes for finding in node.findings)
        return (*nodes, *self.cluster_findings)

    @property
    def outcome(self) -> Outcome:
        """Fail on an error finding, warn on a warn finding or a node not inspected."""
        return findings_outcome(self.findings, (n.node for n in self.nodes if n.error))

    @property
    def summary(self) -> IscsiSummary:
        """Counts over every node."""
        paths = [path for node in self.nodes for path in node.paths]
        return IscsiSummary(
            nodes=len(self.nodes),
            nodes_failed=sum(1 for node in self.nodes if node.error),
            sessions=sum(len(node.sessions) for node in self.nodes),
            multipath_maps=sum(len(node.multipath_maps) for node in self.nodes),
            paths=len(paths),
            failed_paths=sum(1 for path in paths if path_failed(path)),
            findings=SeverityCounts.of(self.findings),
            unread_lines=sum(node.unread_lines for node in self.nodes),
            incomplete_maps=sum(len(node.incomplete_maps) for node in self.nodes),
        )

    def to_dict(self) -> dict[str, Any]:
        """The IscsiReport document: apiVersion, kind, source, nodes, cluster_findings,
        summary."""
        return report_envelope(
            KIND,
            self.outcome,
            {
                "source": self.source,
                "nodes": [node.to_dict() for node in self.nodes],
                "cluster_findings": [finding.to_dict() for finding in self.cluster_findings],
                "summary": self.summary.to_dict(),
            },
        )
