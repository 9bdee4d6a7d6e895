"""The MountAuditReport: per node, the audited NFS mounts and the pod volumes kubelet mounted.

Typed all the way down; ``to_dict()`` is the JSON/YAML document (docs/output.md), and the table
renderer reads the attributes. Pure: built from parsed mounts, audits and volume owners.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubectl_storage.core.mount_audit.mountstats import NfsMountStats, OpStats
from kubectl_storage.core.mount_audit.rules import MountAudit, NfsClientIdentity
from kubectl_storage.core.nodes.kernel_health import KernelHealth, kernel_log_keys
from kubectl_storage.core.nodes.mount_model import OptionValue
from kubectl_storage.core.nodes.volume_owners import VolumeOwner
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.findings import Finding, SeverityCounts
from kubectl_storage.core.report.verdict import Outcome, findings_outcome

KIND = "MountAuditReport"

#: The operations whose counters the report shows per mount.
REPORTED_OPS = ("READ", "WRITE", "GETATTR")


@dataclass(frozen=True)
class VolumeRef:
    """The Kubernetes objects behind one kubelet mount (every field None when none were found)."""

    namespace: str | None = None
    pod: str | None = None
    pvc: str | None = None
    pv: str | None = None
    storage_class: str | None = None
    driver: str | None = None
    kind: str | None = None
    volume: str | None = None

    @classmethod
    def of(cls, owner: VolumeOwner | None, pv_fallback: str | None = None) -> VolumeRef:
        """The reference of ``owner``; ``pv_fallback`` names the PV when the owner does not."""
        if owner is None:
            return cls(pv=pv_fallback)
        return cls(
            namespace=owner.namespace,
            pod=owner.pod_name,
            pvc=owner.pvc_name,
            pv=owner.pv_name or pv_fallback,
            storage_class=owner.storage_class,
            driver=_driver(owner),
            kind=owner.kubelet_path.kind,
            volume=owner.kubelet_path.volume_name,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: namespace, pod, pvc, pv, storage_class, driver, kind, volume."""
        return {
            "namespace": self.namespace,
            "pod": self.pod,
            "pvc": self.pvc,
            "pv": self.pv,
            "storage_class": self.storage_class,
            "driver": self.driver,
            "kind": self.kind,
            "volume": self.volume,
        }


def _driver(owner: VolumeOwner) -> str | None:
    if owner.csi_driver:
        return owner.csi_driver
    plugin = owner.kubelet_path.plugin
    if plugin and plugin != "kubernetes.io~csi":
        return plugin.replace("~", "/")  # in-tree plugin, e.g. kubernetes.io/nfs
    return None


OpCounter = Literal["ops", "avg_rtt_ms", "avg_execute_ms"]


@dataclass(frozen=True)
class MountCounters:
    """Key mountstats counters of one mount: age, connections, retransmits, READ/WRITE/GETATTR."""

    age_seconds: int | None
    xprt_count: int | None
    retransmissions: int
    major_timeouts: int
    #: The reported operations that appear in mountstats, in :data:`REPORTED_OPS` order.
    ops: Mapping[str, OpStats]

    @classmethod
    def of(cls, stats: NfsMountStats) -> MountCounters:
        """The counters the report shows, from one mountstats block."""
        ops = {name: op for name in REPORTED_OPS if (op := stats.op(name)) is not None}
        return cls(
            age_seconds=stats.age_seconds,
            xprt_count=stats.xprt_count,
            retransmissions=sum(op.retransmissions for op in stats.ops.values()),
            major_timeouts=sum(op.major_timeouts for op in stats.ops.values()),
            ops=ops,
        )

    def op_value(self, op: str, counter: OpCounter) -> int | float | None:
        """One counter of one operation as the JSON shows it (means rounded to 3 decimals);
        None when the operation is not listed or ran no request."""
        stats = self.ops.get(op)
        return None if stats is None else stats.to_dict()[counter]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: age_seconds, xprt_count, retransmissions, major_timeouts, ops."""
        return {
            "age_seconds": self.age_seconds,
            "xprt_count": self.xprt_count,
            "retransmissions": self.retransmissions,
            "major_timeouts": self.major_timeouts,
            "ops": {name: op.to_dict() for name, op in self.ops.items()},
        }


@dataclass(frozen=True)
class AuditedMount:
    """One NFS mount of a node: the audit, who uses it and its counters."""

    audit: MountAudit
    owner: VolumeRef
    stats: MountCounters | None = None

    @property
    def server(self) -> str | None:
        """The server of the mount's source."""
        return self.audit.mount.server

    @property
    def export(self) -> str | None:
        """The exported path of the mount's source."""
        return self.audit.mount.export

    @property
    def mountpoint(self) -> str:
        """Where the node mounted it."""
        return self.audit.mount.mountpoint

    @property
    def visible(self) -> bool:
        """False when another mount on the same mount point hides it."""
        return self.audit.mount.visible

    @property
    def options(self) -> Mapping[str, OptionValue]:
        """The effective options the rules judged."""
        return self.audit.effective_options

    @property
    def requested_options(self) -> tuple[str, ...] | None:
        """What the PV asked for (None: no PV, or nothing known)."""
        return self.audit.requested_options

    @property
    def profile(self) -> str:
        """The vendor profile the mount was judged by."""
        return self.audit.profile

    @property
    def findings(self) -> tuple[Finding, ...]:
        """The rules' findings, most severe first."""
        return self.audit.findings

    @property
    def label(self) -> str:
        """How a user recognises the mount: its claim, else its volume, else its mount point."""
        owner = self.owner
        if owner.pvc:
            return f"{owner.namespace}/{owner.pvc}"
        if owner.pv:
            return owner.pv
        if owner.volume:
            return owner.volume
        if owner.kind == "global-mount":
            return f"{owner.driver or 'csi'} staging"
        return self.mountpoint

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: the audit's fields (less pv_name), the owner, stats, findings."""
        body = self.audit.to_dict()
        findings = body.pop("findings")
        body.pop("pv_name")  # the owner's pv says it
        body.update(self.owner.to_dict())
        body["stats"] = None if self.stats is None else self.stats.to_dict()
        body["findings"] = findings
        return body


@dataclass(frozen=True)
class PodVolume:
    """A volume kubelet mounted for a pod (CSI or in-tree; not secrets or config maps)."""

    owner: VolumeRef
    mountpoint: str
    fstype: str
    source: str
    pod_uid: str | None
    read_only: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: the owner's fields, then mountpoint, fstype, source, pod_uid, read_only."""
        return {
            **self.owner.to_dict(),
            "mountpoint": self.mountpoint,
            "fstype": self.fstype,
            "source": self.source,
            "pod_uid": self.pod_uid,
            "read_only": self.read_only,
        }


@dataclass(frozen=True)
class MountAuditNode:
    """One node's part of the report; ``error`` says why the node could not be read.
    ``unread_lines`` counts the lines of captured files that could not be read (each is named
    in ``warnings``). ``kernel_log`` is the kernel-log health (None: no log was read or given)."""

    node: str
    error: str | None
    kernel: str | None
    inputs: tuple[str, ...]
    nfs_parameters: Mapping[str, str]
    mounts: tuple[AuditedMount, ...]
    volumes: tuple[PodVolume, ...]
    warnings: tuple[str, ...]
    unread_lines: int = 0
    kernel_log: KernelHealth | None = None
    #: What the node's NFSv4 client calls itself (None when its hostname was not read).
    nfs_client_identity: NfsClientIdentity | None = None

    @property
    def status(self) -> str:
        """``error: …``, ``no NFS mounts`` or ``audited``."""
        if self.error:
            return f"error: {self.error}"
        return "no NFS mounts" if not self.mounts else "audited"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: node, error, kernel, inputs, nfs_parameters, mounts, volumes, warnings,
        unread_lines, then kernel_log, kernel_events and nfs_servers (see
        :meth:`~kubectl_storage.core.nodes.kernel_health.KernelHealth.to_dict`; null and empty
        when no kernel log was read)."""
        return {
            "node": self.node,
            "error": self.error,
            "kernel": self.kernel,
            "inputs": list(self.inputs),
            "nfs_parameters": dict(self.nfs_parameters),
            "mounts": [mount.to_dict() for mount in self.mounts],
            "volumes": [volume.to_dict() for volume in self.volumes],
            "warnings": list(self.warnings),
            "unread_lines": self.unread_lines,
            **kernel_log_keys(self.kernel_log),
            "nfs_client_identity": (
                None if self.nfs_client_identity is None else self.nfs_client_identity.to_dict()
            ),
        }


@dataclass(frozen=True)
class MountAuditSummary:
    """The report's last lines: counts over every node."""

    nodes: int
    nodes_failed: int
    nfs_mounts: int
    volumes: int
    findings: SeverityCounts
    unread_lines: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: nodes, nodes_failed, nfs_mounts, volumes, findings (by severity),
        unread_lines."""
        return {
            "nodes": self.nodes,
            "nodes_failed": self.nodes_failed,
            "nfs_mounts": self.nfs_mounts,
            "volumes": self.volumes,
            "findings": self.findings.to_dict(),
            "unread_lines": self.unread_lines,
        }


@dataclass(frozen=True)
class MountAuditReport:
    """What ``mount-audit`` found: ``source`` is ``cluster`` or ``files``; ``profile`` the
    ``--profile`` override (None: detected per mount)."""

    source: str
    profile: str | None
    nodes: tuple[MountAuditNode, ...]
    #: What only the nodes together show (one NFSv4 client identity on several nodes, NFS120).
    cluster_findings: tuple[Finding, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding of every mount of every node, then the kernel log's (for --fail-on)."""
        mounts = (finding for _, _, finding in self.subject_findings())
        kernel = (finding for _, _, finding in self.kernel_findings())
        return (*mounts, *kernel, *self.cluster_findings)

    def kernel_findings(self) -> Iterator[tuple[MountAuditNode, str, Finding]]:
        """Each kernel-log finding with its node and subject (a device, a server, the log)."""
        for node in self.nodes:
            if node.kernel_log is not None:
                for subject, finding in node.kernel_log.subject_findings():
                    yield node, subject, finding

    def subject_findings(self) -> Iterator[tuple[MountAuditNode, AuditedMount, Finding]]:
        """Each finding with its node and mount, in report order."""
        for node in self.nodes:
            for mount in node.mounts:
                for finding in mount.findings:
                    yield node, mount, finding

    @property
    def outcome(self) -> Outcome:
        """Fail on an error finding, warn on a warn finding or a node not inspected."""
        return findings_outcome(self.findings, (n.node for n in self.nodes if n.error))

    @property
    def summary(self) -> MountAuditSummary:
        """Counts over every node."""
        return MountAuditSummary(
            nodes=len(self.nodes),
            nodes_failed=sum(1 for node in self.nodes if node.error),
            nfs_mounts=sum(len(node.mounts) for node in self.nodes),
            volumes=sum(len(node.volumes) for node in self.nodes),
            findings=SeverityCounts.of(self.findings),
            unread_lines=sum(node.unread_lines for node in self.nodes),
        )

    def to_dict(self) -> dict[str, Any]:
        """The MountAuditReport document: apiVersion, kind, source, profile, nodes,
        cluster_findings, summary."""
        return report_envelope(
            KIND,
            self.outcome,
            {
                "source": self.source,
                "profile": self.profile,
                "nodes": [node.to_dict() for node in self.nodes],
                "cluster_findings": [finding.to_dict() for finding in self.cluster_findings],
                "summary": self.summary.to_dict(),
            },
        )
