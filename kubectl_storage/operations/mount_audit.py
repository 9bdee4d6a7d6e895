"""`kubectl storage mount-audit`: NFS mounts of nodes, judged against the NFS rules.

Live: collect mountinfo, mountstats, the NFS client parameters and the kernel release from each
node through a debug pod (not privileged), read pods, PVs, PVCs and StorageClasses once, map
kubelet mount paths back to them, and run the NFS rules with what each PV asked for. Offline:
the same steps on captured files (``--from-file``); the Kubernetes side too when ``kubectl get
pv,pvc,sc,pods -o json`` captures are among them. Lines a paste broke are rejoined or skipped
with a warning each, instead of refusing the file.

The report lists, per node, the NFS mounts (options, findings, counters, owner) and every pod
volume kubelet mounted (CSI or not), so a node without NFS still shows what it serves.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kubectl_storage.core.mount_audit.mountstats import NfsMountStats, parse_mountstats
from kubectl_storage.core.mount_audit.rules import (
    MountAudit,
    NodeFacts,
    audit_mounts,
)
from kubectl_storage.core.nodes.collect import MOUNT_SECTIONS
from kubectl_storage.core.nodes.kubelet_paths import (
    KIND_BLOCK,
    KIND_GLOBAL_MOUNT,
    KIND_POD_VOLUME,
    VolumeOwner,
)
from kubectl_storage.core.nodes.mounts import (
    FORMAT_MOUNTINFO,
    FORMAT_MOUNTSTATS,
    FORMAT_UNKNOWN,
    LineNote,
    MountEntry,
    MountParseError,
    detect_mount_format,
    parse_mounts,
)
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.errors import UsageError
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.operations.node_capture import (
    NodeCapture,
    VolumeObjects,
    first_line,
    line_warnings,
    read_capture_files,
    read_volume_objects,
)
from kubectl_storage.operations.node_inspection import (
    InspectionCommand,
    InspectionKind,
    NodeOutput,
)

log = logging.getLogger(__name__)

KIND = "MountAuditReport"

#: Pod volumes that are the pod's own files, not storage: left out of the volume list.
_NOT_STORAGE_PLUGINS = frozenset(
    {
        "kubernetes.io~secret",
        "kubernetes.io~configmap",
        "kubernetes.io~projected",
        "kubernetes.io~downward-api",
        "kubernetes.io~empty-dir",
    }
)

#: The operations whose counters the report shows per mount.
REPORTED_OPS = ("READ", "WRITE", "GETATTR")

_SEVERITIES = tuple(severity.value for severity in sorted(Severity, key=lambda s: -s.rank))


# ---------------------------------------------------------------------------------------------
# The procedure
# ---------------------------------------------------------------------------------------------


# mount-audit reads mountinfo and mountstats, readable without privilege.
MOUNT_AUDIT_INSPECTION = InspectionKind("mount-audit", MOUNT_SECTIONS, privileged=False)


def mount_audit_command(profile: str | None) -> InspectionCommand:
    """The pipeline command: debug pods on the chosen nodes, then :func:`audit_nodes`."""
    return InspectionCommand(
        MOUNT_AUDIT_INSPECTION, lambda api, outputs: audit_nodes(api, outputs, profile)
    )


def audit_nodes(api: KubeApi, outputs: list[NodeOutput], profile: str | None) -> dict[str, Any]:
    """Map the nodes' volumes to the cluster's objects, audit, report."""
    log.info("reading pods, volumes, claims and classes")
    objects = read_volume_objects(api)
    nodes = [
        build_node_report(NodeCapture.from_output(output), objects, profile) for output in outputs
    ]
    return build_report(nodes, source="cluster", profile=profile)


def audit_files(
    paths: Sequence[str | Path], node_name: str | None, profile: str | None
) -> dict[str, Any]:
    """Audit captured files: mountinfo, /proc/mounts, ``mount``, ``nfsstat -m``, mountstats,
    and ``kubectl get … -o json|yaml`` captures of pods, PVs, PVCs and StorageClasses.

    The files are one node's unless ``NODE=FILE`` says otherwise
    (:func:`~kubectl_storage.operations.node_capture.read_capture_files`).

    Raises:
        UsageError: a file is unreadable or in no format we know.
    """
    files = read_capture_files(paths, node_name, classify_mount_file)
    nodes = [build_node_report(capture, files.objects, profile) for capture in files.nodes]
    return build_report(nodes, source="files", profile=profile)


def classify_mount_file(path: Path, text: str) -> str:
    """The capture kind of one ``--from-file`` input (``mountinfo``, ``mountstats``, ...)."""
    fmt = detect_mount_format(text)
    if fmt == FORMAT_UNKNOWN:
        raise UsageError(
            f"--from-file {path}: not a mount table, nfsstat -m or mountstats output"
            + (f" (it starts with {first_line(text)!r})" if text.strip() else " (it is empty)"),
            "Give /proc/<pid>/mountinfo, /proc/mounts, `mount` or `nfsstat -m` output, or "
            "/proc/<pid>/mountstats.",
        )
    if fmt in (FORMAT_MOUNTINFO, FORMAT_MOUNTSTATS):
        return fmt
    return "mount-table"


def build_report(
    nodes: list[dict[str, Any]], *, source: str, profile: str | None
) -> dict[str, Any]:
    """The MountAuditReport: nodes, then a summary."""
    counts = dict.fromkeys(_SEVERITIES, 0)
    for node in nodes:
        for mount in node["mounts"]:
            for finding in mount["findings"]:
                counts[finding["severity"]] += 1
    summary = {
        "nodes": len(nodes),
        "nodes_failed": sum(1 for node in nodes if node["error"]),
        "nfs_mounts": sum(len(node["mounts"]) for node in nodes),
        "volumes": sum(len(node["volumes"]) for node in nodes),
        "findings": counts,
    }
    return report_envelope(
        KIND, {"source": source, "profile": profile, "nodes": nodes, "summary": summary}
    )


def report_findings(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every finding of every mount of every node (for --fail-on)."""
    return [
        finding
        for node in report["nodes"]
        for mount in node["mounts"]
        for finding in mount["findings"]
    ]


# ---------------------------------------------------------------------------------------------
# One node
# ---------------------------------------------------------------------------------------------


def build_node_report(
    capture: NodeCapture, objects: VolumeObjects | None, profile: str | None
) -> dict[str, Any]:
    """Parse one node's texts, map its volumes, run the NFS rules."""
    warnings: list[str] = list(capture.warnings)
    kernel = first_line(capture.first("kernel")) or None
    params = parse_nfs_params(capture.first("nfs-params"))
    error = capture.error
    mounts: list[MountEntry] = []
    if error is None:
        try:
            mounts = _mount_table(capture, warnings)
        except MountParseError as exc:
            error = f"mount table unreadable: {exc}"
    stats = _mountstats(capture, warnings) if error is None else []
    objects = objects or VolumeObjects()
    owners = objects.resolve((entry.mountpoint for entry in mounts), capture.node)
    contexts = {mp: objects.volume_context(owner) for mp, owner in owners.items()}
    audits = audit_mounts(
        mounts,
        profile=profile,
        contexts=contexts,
        stats=stats,
        node=NodeFacts(
            kernel_release=kernel,
            tcp_max_slot_table_entries=_int(params.get("sunrpc.tcp_max_slot_table_entries")),
            max_session_slots=_int(params.get("nfs.max_session_slots")),
        ),
    )
    stats_by_audit = _match_stats([audit.mount for audit in audits], stats)
    warnings.extend(_unmatched_stats(capture, stats, stats_by_audit))
    return {
        "node": capture.node,
        "error": error,
        "kernel": kernel,
        "inputs": list(capture.inputs),
        "nfs_parameters": params,
        "mounts": [
            _mount_dict(audit, owners.get(audit.mount.mountpoint), block)
            for audit, block in zip(audits, stats_by_audit, strict=True)
        ],
        "volumes": volume_list(mounts, owners),
        "warnings": warnings,
    }


def _mount_table(capture: NodeCapture, warnings: list[str]) -> list[MountEntry]:
    """The node's mounts from the best table given: mountinfo, else others, else mountstats.

    Each file's rejoined and skipped lines become warnings (offline); a mountstats file used
    as the table gets its notes from :func:`_mountstats`, which reads it anyway.
    """
    if capture.all("mountinfo"):
        if capture.all("mount-table"):
            warnings.append("mountinfo given: other mount tables of this node were not used")
        return _parse_tables(capture, "mountinfo", warnings)
    if capture.all("mount-table"):
        return _parse_tables(capture, "mount-table", warnings)
    return [entry for text in capture.all("mountstats") for entry in parse_mounts(text)]


def _parse_tables(capture: NodeCapture, kind: str, warnings: list[str]) -> list[MountEntry]:
    entries: list[MountEntry] = []
    for label, text in capture.labelled(kind):
        notes: list[LineNote] = []
        entries.extend(parse_mounts(text, notes=notes))
        warnings.extend(line_warnings(capture, label, notes))
    return entries


def _mountstats(capture: NodeCapture, warnings: list[str]) -> list[NfsMountStats]:
    stats: list[NfsMountStats] = []
    for label, text in capture.labelled("mountstats"):
        if detect_mount_format(text) != FORMAT_MOUNTSTATS:
            warnings.append(
                f"mountstats not readable ({first_line(text)}): "
                "no per-mount counters or defaulted options"
            )
            continue
        notes: list[LineNote] = []
        stats.extend(parse_mountstats(text, notes=notes))
        warnings.extend(line_warnings(capture, label, notes))
    return stats


def _unmatched_stats(
    capture: NodeCapture, stats: Sequence[NfsMountStats], matched: Sequence[NfsMountStats | None]
) -> list[str]:
    """Offline, mountstats blocks that no mount of the table has: files of another node?"""
    table_given = bool(capture.all("mountinfo") or capture.all("mount-table"))
    if not capture.from_files or not stats or not table_given:
        return []
    used = {id(block) for block in matched if block is not None}
    left = [block for block in stats if id(block) not in used]
    if not left:
        return []
    points = sorted({block.mountpoint for block in left})
    more = f" and {len(points) - 3} more" if len(points) > 3 else ""
    return [
        f"{len(left)} NFS mount(s) in mountstats are not in the mount table "
        f"({', '.join(points[:3])}{more}): are the files of the same node? "
        "(give NODE=FILE for files of different nodes)"
    ]


def parse_nfs_params(text: str) -> dict[str, str]:
    """``/sys/module/nfs/parameters/max_session_slots: 64`` lines → ``{"nfs.max_session_slots":
    "64"}``."""
    params: dict[str, str] = {}
    for line in text.splitlines():
        path, sep, value = line.partition(": ")
        parts = path.strip().split("/")
        if sep and len(parts) >= 3 and parts[-2] == "parameters":
            params[f"{parts[-3]}.{parts[-1]}"] = value.strip()
    return params


def _match_stats(
    mounts: Sequence[MountEntry], stats: Sequence[NfsMountStats]
) -> list[NfsMountStats | None]:
    # The rules pair blocks with mounts the same way: by (mount point, device), in order, so
    # two mounts stacked on one mount point each get their own block.
    pool: dict[tuple[str, str], list[NfsMountStats]] = defaultdict(list)
    for block in stats:
        pool[(block.mountpoint, block.device)].append(block)
    matched: list[NfsMountStats | None] = []
    for mount in mounts:
        candidates = pool.get((mount.mountpoint, mount.source))
        matched.append(candidates.pop(0) if candidates else None)
    return matched


def _mount_dict(
    audit: MountAudit, owner: VolumeOwner | None, stats: NfsMountStats | None
) -> dict[str, Any]:
    base = audit.to_dict()
    findings = base.pop("findings")
    base.pop("pv_name")
    base.update(_owner_fields(owner, pv_fallback=audit.pv_name))
    base["stats"] = mount_counters(stats)
    base["findings"] = findings
    return base


def _owner_fields(owner: VolumeOwner | None, pv_fallback: str | None = None) -> dict[str, Any]:
    return {
        "namespace": owner.namespace if owner else None,
        "pod": owner.pod_name if owner else None,
        "pvc": owner.pvc_name if owner else None,
        "pv": (owner.pv_name if owner else None) or pv_fallback,
        "storage_class": owner.storage_class if owner else None,
        "driver": _driver(owner) if owner else None,
        "kind": owner.kubelet_path.kind if owner else None,
        "volume": owner.kubelet_path.volume_name if owner else None,
    }


def _driver(owner: VolumeOwner) -> str | None:
    if owner.csi_driver:
        return owner.csi_driver
    plugin = owner.kubelet_path.plugin
    if plugin and plugin != "kubernetes.io~csi":
        return plugin.replace("~", "/")  # in-tree plugin, e.g. kubernetes.io/nfs
    return None


def mount_counters(stats: NfsMountStats | None) -> dict[str, Any] | None:
    """Key mountstats counters of one mount: age, connections, READ/WRITE/GETATTR, retransmits."""
    if stats is None:
        return None
    ops: dict[str, Any] = {}
    for name in REPORTED_OPS:
        op = stats.op(name)
        if op is not None:
            ops[name] = op.to_dict()
    return {
        "age_seconds": stats.age_seconds,
        "xprt_count": stats.xprt_count,
        "retransmissions": sum(op.retransmissions for op in stats.ops.values()),
        "major_timeouts": sum(op.major_timeouts for op in stats.ops.values()),
        "ops": ops,
    }


def volume_list(mounts: Sequence[MountEntry], owners: Mapping[str, VolumeOwner]) -> list[JsonDict]:
    """Every volume kubelet mounted for pods (CSI and in-tree; not secrets or config maps)."""
    volumes = []
    for entry in mounts:
        owner = owners.get(entry.mountpoint)
        if owner is None or not entry.visible:
            continue
        path = owner.kubelet_path
        if path.kind not in (KIND_POD_VOLUME, KIND_GLOBAL_MOUNT, KIND_BLOCK):
            continue
        if path.plugin in _NOT_STORAGE_PLUGINS:
            continue
        volumes.append(
            {
                **_owner_fields(owner),
                "mountpoint": entry.mountpoint,
                "fstype": entry.fstype,
                "source": entry.source,
                "pod_uid": path.pod_uid,
                "read_only": entry.read_only,
            }
        )
    return volumes


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
