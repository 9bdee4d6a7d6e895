"""mount-audit's report, built from node texts: one node's mount tables, mountstats and NFS
client parameters parsed, its kubelet mount paths mapped to pods, PVs, PVCs and StorageClasses,
the NFS rules run with what each PV asked for; live (a debug pod's sections) and offline
(``--from-file`` captures) alike. Lines a paste broke are rejoined or skipped with a warning
each, instead of refusing the file.

The report lists, per node, the NFS mounts (options, findings, counters, owner) and every pod
volume kubelet mounted (CSI or not), so a node without NFS still shows what it serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kubectl_storage.core.mount_audit.mountstats import (
    NfsMountStats,
    match_stats,
    parse_mountstats,
)
from kubectl_storage.core.mount_audit.report import (
    AuditedMount,
    MountAuditNode,
    MountAuditReport,
    MountCounters,
    PodVolume,
    VolumeRef,
)
from kubectl_storage.core.mount_audit.rules import (
    NfsClientIdentity,
    NodeFacts,
    audit_mounts,
    check_shared_client_identity,
    client_identity,
)
from kubectl_storage.core.nodes.capture import NodeCapture, first_line, line_warnings
from kubectl_storage.core.nodes.kernel_health import SECTION as KERNEL_LOG
from kubectl_storage.core.nodes.kernel_health import is_kernel_log
from kubectl_storage.core.nodes.kernel_log_rules import assess_kernel_log
from kubectl_storage.core.nodes.kubelet_paths import KIND_BLOCK, KIND_GLOBAL_MOUNT, KIND_POD_VOLUME
from kubectl_storage.core.nodes.mount_model import (
    FORMAT_MOUNTINFO,
    FORMAT_MOUNTSTATS,
    FORMAT_UNKNOWN,
    MountEntry,
    MountParseError,
)
from kubectl_storage.core.nodes.mounts import detect_mount_format, parse_mounts
from kubectl_storage.core.nodes.paste import SKIPPED, LineNote
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.core.nodes.volume_owners import VolumeOwner

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


# ---------------------------------------------------------------------------------------------
# The nodes
# ---------------------------------------------------------------------------------------------


def mount_file_kind(text: str) -> str | None:
    """The capture kind of one ``--from-file`` input (``mountinfo``, ``mountstats``,
    ``mount-table``, ``kernel-log``), or None when it is no mount table, ``nfsstat -m``,
    mountstats or kernel log."""
    fmt = detect_mount_format(text)
    if fmt == FORMAT_UNKNOWN:
        return KERNEL_LOG if is_kernel_log(text) else None
    if fmt in (FORMAT_MOUNTINFO, FORMAT_MOUNTSTATS):
        return fmt
    return "mount-table"


def audit_captures(
    captures: Iterable[NodeCapture],
    objects: VolumeObjects | None,
    *,
    source: str,
    profile: str | None,
) -> MountAuditReport:
    """The report of these nodes' texts, their volumes mapped to ``objects`` (the cluster's
    pods, PVs, PVCs and classes; None when unknown). Live and ``--from-file`` runs both end
    here; ``source`` is ``cluster`` or ``files``."""
    nodes = [build_node_report(capture, objects, profile) for capture in captures]
    return build_report(nodes, source=source, profile=profile)


def build_report(
    nodes: Sequence[MountAuditNode], *, source: str, profile: str | None
) -> MountAuditReport:
    """The MountAuditReport of these nodes (``source``: ``cluster`` or ``files``)."""
    servers = {
        node.node: (
            node.nfs_client_identity,
            [m.server for m in node.mounts if m.server and _is_v4(m.options.get("vers"))],
        )
        for node in nodes
    }
    return MountAuditReport(
        source=source,
        profile=profile,
        nodes=tuple(nodes),
        cluster_findings=tuple(check_shared_client_identity(servers)),
    )


def _is_v4(vers: object) -> bool:
    return str(vers or "").startswith("4")


# ---------------------------------------------------------------------------------------------
# One node
# ---------------------------------------------------------------------------------------------


def build_node_report(
    capture: NodeCapture, objects: VolumeObjects | None, profile: str | None
) -> MountAuditNode:
    """Parse one node's texts, map its volumes, run the NFS rules."""
    warnings: list[str] = list(capture.warnings)
    skipped: list[LineNote] = []  # lines of captured files not read (each also a warning)
    kernel = first_line(capture.first("kernel")) or None
    params = parse_nfs_params(capture.first("nfs-params"))
    error = capture.error
    mounts: list[MountEntry] = []
    if error is None:
        try:
            mounts = _mount_table(capture, warnings, skipped)
        except MountParseError as exc:
            error = f"mount table unreadable: {exc}"
    stats = _mountstats(capture, warnings, skipped) if error is None else []
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
    log_text = "\n".join(capture.all(KERNEL_LOG))
    kernel_log = (
        assess_kernel_log(log_text, mounts, owners, kernel_release=kernel)
        if log_text and error is None
        else None
    )
    stats_by_audit = match_stats([audit.mount for audit in audits], stats)
    warnings.extend(_unmatched_stats(capture, stats, stats_by_audit))
    return MountAuditNode(
        node=capture.node,
        error=error,
        kernel=kernel,
        inputs=tuple(capture.inputs),
        nfs_parameters=params,
        mounts=tuple(
            AuditedMount(
                audit,
                VolumeRef.of(owners.get(audit.mount.mountpoint), pv_fallback=audit.pv_name),
                None if block is None else MountCounters.of(block),
            )
            for audit, block in zip(audits, stats_by_audit, strict=True)
        ),
        volumes=volume_list(mounts, owners),
        warnings=tuple(warnings),
        unread_lines=len(skipped),
        kernel_log=kernel_log,
        nfs_client_identity=_client_identity(capture.first("nfs-identity"), params),
    )


def _client_identity(text: str, params: Mapping[str, str]) -> NfsClientIdentity | None:
    """The NFSv4 client identity from the ``nfs-identity`` section (``kv`` lines)."""
    values = {}
    for line in text.splitlines():
        path, sep, value = line.partition(": ")
        if sep:
            values[path.rsplit("/", 1)[-1]] = value
    return client_identity(
        values.get("hostname"), values.get("identifier"), params.get("nfs.nfs4_unique_id")
    )


def _mount_table(
    capture: NodeCapture, warnings: list[str], skipped: list[LineNote]
) -> list[MountEntry]:
    """The node's mounts from the best table given: mountinfo, else others, else mountstats.

    Each file's rejoined and skipped lines become warnings (offline); a mountstats file used
    as the table gets its notes from :func:`_mountstats`, which reads it anyway.
    """
    if capture.all("mountinfo"):
        if capture.all("mount-table"):
            warnings.append("mountinfo given: other mount tables of this node were not used")
        return _parse_tables(capture, "mountinfo", warnings, skipped)
    if capture.all("mount-table"):
        return _parse_tables(capture, "mount-table", warnings, skipped)
    return [entry for text in capture.all("mountstats") for entry in parse_mounts(text)]


def _parse_tables(
    capture: NodeCapture, kind: str, warnings: list[str], skipped: list[LineNote]
) -> list[MountEntry]:
    entries: list[MountEntry] = []
    for label, text in capture.labelled(kind):
        notes: list[LineNote] = []
        entries.extend(parse_mounts(text, notes=notes))
        _keep_notes(capture, label, notes, warnings, skipped)
    return entries


def _keep_notes(
    capture: NodeCapture,
    label: str,
    notes: Sequence[LineNote],
    warnings: list[str],
    skipped: list[LineNote],
) -> None:
    """A file's line notes become warnings, its skipped lines are counted (offline only)."""
    found = line_warnings(capture, label, notes)
    warnings.extend(found)
    if found:
        skipped.extend(note for note in notes if note.action == SKIPPED)


def _mountstats(
    capture: NodeCapture, warnings: list[str], skipped: list[LineNote]
) -> list[NfsMountStats]:
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
        _keep_notes(capture, label, notes, warnings, skipped)
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


def volume_list(
    mounts: Sequence[MountEntry], owners: Mapping[str, VolumeOwner]
) -> tuple[PodVolume, ...]:
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
            PodVolume(
                VolumeRef.of(owner),
                mountpoint=entry.mountpoint,
                fstype=entry.fstype,
                source=entry.source,
                pod_uid=path.pod_uid,
                read_only=entry.read_only,
            )
        )
    return tuple(volumes)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
