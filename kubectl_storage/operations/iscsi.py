"""`kubectl storage iscsi`: iSCSI sessions and dm-multipath maps of nodes, and what uses them.

Live: one privileged debug pod per node (it runs the host's own ``multipathd``, ``multipath`` and
``iscsiadm`` with ``chroot /host``) collects sysfs, the tools' output, the configuration files
(password lines removed on the node) and mountinfo; PVs and PVCs are read once to name the
claim behind each LUN. Offline: the same steps on captured files (``--from-file``), with
``kubectl get … -o json`` captures standing for the cluster's objects; lines a paste broke are
rejoined or skipped with a warning each.

Per node the report has the sessions, the maps with their path groups and paths, a sanlun-like
view of each LUN (claim → LUN → dm device → paths, active or passive), the probed tools and the
MP/ISCSI findings. A node without iSCSI is a normal result, not an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubectl_storage.core.iscsi.iscsid_conf import (
    IscsidConf,
    looks_like_iscsid_conf,
    parse_iscsid_conf,
)
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
    MultipathParseError,
    MultipathPath,
    merge_multipath_views,
    parse_multipath_ll,
    parse_multipathd_json,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf, parse_multipath_conf
from kubectl_storage.core.iscsi.rules import evaluate_iscsi_node
from kubectl_storage.core.iscsi.sanlun import SanlunLun, parse_sanlun_lun_show_p
from kubectl_storage.core.iscsi.sessions import (
    IscsiDisk,
    IscsiInputFormat,
    IscsiNodeRecord,
    IscsiSession,
    detect_iscsi_format,
    parse_iscsi_sysfs_dump,
    parse_iscsiadm_node,
    parse_iscsiadm_session,
    parse_iscsiadm_session_detail,
    scsi_device_states,
)
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.nodes.collect import ABSENT_MARKER, ISCSI_SECTIONS, parse_tools_section
from kubectl_storage.core.nodes.kubelet_paths import VolumeOwner
from kubectl_storage.core.nodes.mounts import (
    FORMAT_MOUNTINFO,
    LineNote,
    MountEntry,
    MountParseError,
    detect_mount_format,
    parse_mountinfo,
)
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.findings import Finding, Severity
from kubectl_storage.errors import UsageError
from kubectl_storage.kube.api import KubeApi
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

KIND = "IscsiReport"

#: What the pod collects: the iSCSI sections plus mountinfo, to find which claim uses a device.
SECTIONS = (*ISCSI_SECTIONS, "mountinfo")

_TOOLS = ("multipath", "multipathd", "iscsiadm", "sanlun")
_FAILED_CHECKER = frozenset({"faulty", "shaky", "i/o timeout", "disconnected"})
_SEVERITIES = tuple(severity.value for severity in sorted(Severity, key=lambda s: -s.rank))

# --from-file formats → the live section they stand for.
_FILE_KINDS = {
    IscsiInputFormat.MULTIPATH_LL: "multipath-ll",
    IscsiInputFormat.MULTIPATHD_JSON: "multipathd-json",
    IscsiInputFormat.MULTIPATH_CONF: "multipath-conf",
    IscsiInputFormat.ISCSIADM_SESSION: "iscsiadm-session",
    IscsiInputFormat.ISCSIADM_SESSION_DETAIL: "iscsiadm-session",
    IscsiInputFormat.ISCSIADM_NODE: "iscsiadm-node",
    IscsiInputFormat.ISCSI_SYSFS: "iscsi-sysfs",
    IscsiInputFormat.SANLUN: "sanlun",
}


# ---------------------------------------------------------------------------------------------
# The procedure
# ---------------------------------------------------------------------------------------------


# iscsi runs the host's tools in the host root: privileged.
ISCSI_INSPECTION = InspectionKind("iscsi", SECTIONS, privileged=True)


def iscsi_command() -> InspectionCommand:
    """The pipeline command: privileged debug pods on the chosen nodes, then
    :func:`inspect_iscsi`."""
    return InspectionCommand(ISCSI_INSPECTION, inspect_iscsi)


def inspect_iscsi(api: KubeApi, outputs: list[NodeOutput]) -> dict[str, Any]:
    """Name the claims behind the nodes' LUNs, evaluate, report."""
    log.info("reading pods, volumes and claims")
    objects = read_volume_objects(api)
    nodes = [build_node_report(NodeCapture.from_output(output), objects) for output in outputs]
    return build_report(nodes, source="cluster")


def iscsi_files(paths: Sequence[str | Path], node_name: str | None) -> dict[str, Any]:
    """Report on captured files: ``multipath -ll``, multipathd JSON, ``iscsiadm``, sysfs dumps,
    ``sanlun lun show -p``, multipath.conf and mountinfo (to map devices to kubelet volumes),
    and ``kubectl get … -o json|yaml`` captures of pods, PVs and PVCs (to name the claims).

    The files are one node's unless ``NODE=FILE`` says otherwise
    (:func:`~kubectl_storage.operations.node_capture.read_capture_files`).

    Raises:
        UsageError: a file is unreadable or in no format we know.
    """
    files = read_capture_files(paths, node_name, classify_iscsi_file)
    nodes = [build_node_report(capture, files.objects) for capture in files.nodes]
    return build_report(nodes, "files")


def classify_iscsi_file(path: Path, text: str) -> str:
    """The section a ``--from-file`` input stands for (``multipath-ll``, ``iscsi-sysfs``...)."""
    fmt = detect_iscsi_format(text)
    if fmt in _FILE_KINDS:
        return _FILE_KINDS[fmt]
    if "No active sessions" in text:
        return "iscsiadm-session"
    if detect_mount_format(text) == FORMAT_MOUNTINFO:
        return "mountinfo"
    if looks_like_iscsid_conf(text):
        return "iscsid-conf"
    raise UsageError(
        f"--from-file {path}: not iSCSI or multipath output"
        + (f" (it starts with {first_line(text)!r})" if text.strip() else " (it is empty)"),
        "Give `multipath -ll`, `multipathd show maps json`, `iscsiadm -m session [-P 3]`, "
        "`iscsiadm -m node`, `sanlun lun show -p`, /etc/multipath.conf, /etc/iscsi/iscsid.conf "
        "or /proc/1/mountinfo.",
    )


def build_report(nodes: list[dict[str, Any]], source: str) -> dict[str, Any]:
    """The IscsiReport: nodes, then a summary."""
    counts = dict.fromkeys(_SEVERITIES, 0)
    for node in nodes:
        for finding in node["findings"]:
            counts[finding["severity"]] += 1
    paths = [
        path
        for node in nodes
        for mpath in node["multipath_maps"]
        for group in mpath["path_groups"]
        for path in group["paths"]
    ]
    summary = {
        "nodes": len(nodes),
        "nodes_failed": sum(1 for node in nodes if node["error"]),
        "sessions": sum(len(node["sessions"]) for node in nodes),
        "multipath_maps": sum(len(node["multipath_maps"]) for node in nodes),
        "paths": len(paths),
        "failed_paths": sum(1 for path in paths if _path_failed(path)),
        "findings": counts,
    }
    return report_envelope(KIND, {"source": source, "nodes": nodes, "summary": summary})


def report_findings(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every finding of every node (for --fail-on)."""
    return [finding for node in report["nodes"] for finding in node["findings"]]


# ---------------------------------------------------------------------------------------------
# One node
# ---------------------------------------------------------------------------------------------


@dataclass
class _NodeFacts:
    """What one node's texts say, parsed; collected warnings on the way."""

    sessions: tuple[IscsiSession, ...] = ()
    maps: tuple[MultipathMap, ...] = ()
    maps_source: str | None = None
    conf: MultipathConf | None = None
    #: None: unknown (offline, or not collected); False: the node has no /etc/multipath.conf.
    conf_present: bool | None = None
    records: tuple[IscsiNodeRecord, ...] = ()
    #: /etc/iscsi/iscsid.conf (password lines removed on the node); None when not read.
    iscsid_conf: IscsidConf | None = None
    sanlun: tuple[SanlunLun, ...] = ()
    mounts: list[MountEntry] | None = None
    dm_names: dict[str, str] = field(default_factory=dict)
    mpath_devices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def build_node_report(capture: NodeCapture, objects: VolumeObjects | None) -> dict[str, Any]:
    """Parse one node's texts, map devices to claims, run the MP/ISCSI rules."""
    tools = tool_facts(capture)
    facts = _parse(capture) if capture.error is None else _NodeFacts()
    facts.warnings[:0] = capture.warnings
    objects = objects or VolumeObjects()
    owners = _device_owners(capture.node, facts, objects)
    in_use = _bare_devices_in_use(owners) if facts.mounts is not None else None
    findings: list[Finding] = []
    if capture.error is None:
        installed = _installed(tools, "multipath", "multipathd")
        findings = evaluate_iscsi_node(
            facts.sessions,
            facts.maps,
            facts.conf,
            node_records=facts.records,
            multipathd_running=tools["multipathd_running"],
            multipath_installed=installed,
            iscsid_running=tools["iscsid_running"],
            multipath_conf_present=facts.conf_present,
            trident=_runs_trident(capture.node, objects),
            in_use_devices=in_use,
            iscsid_conf=facts.iscsid_conf,
            sanlun=facts.sanlun,
        )
        if not _multipath_examined(capture, tools):
            # Without any multipath view, "no dm-multipath holder" would be a guess.
            findings = [finding for finding in findings if finding.id != "ISCSI008"]
            if facts.sessions:
                facts.warnings.append(
                    "no multipath output given: LUNs were not checked for multipathing"
                )
    if not facts.maps and facts.mpath_devices:
        facts.warnings.append(
            f"{len(facts.mpath_devices)} dm-multipath device(s) in sysfs "
            f"({', '.join(facts.mpath_devices)}) but no multipath output could be read"
        )
    return {
        "node": capture.node,
        "error": capture.error,
        "kernel": first_line(capture.first("kernel")) or None,
        "inputs": list(capture.inputs),
        "status": None if capture.error else _status(capture, tools, facts),
        "tools": tools,
        "sessions": [session.to_dict() for session in facts.sessions],
        "node_records": [record.to_dict() for record in facts.records],
        "multipath_maps": [_map_dict(mpath) for mpath in facts.maps],
        "maps_source": facts.maps_source,
        "luns": lun_view(facts, owners),
        "sanlun": [lun.to_dict() for lun in facts.sanlun],
        "findings": [finding.to_dict() for finding in findings],
        "warnings": facts.warnings,
    }


def tool_facts(capture: NodeCapture) -> dict[str, Any]:
    """Which host tools exist and which daemons run; all None when not probed (files)."""
    probed = "tools" in capture.texts and bool(capture.first("tools"))
    raw = parse_tools_section(capture.first("tools")) if probed else {}
    facts: dict[str, Any] = {"probed": probed}
    for tool in _TOOLS:
        value = raw.get(f"tool:{tool}")
        facts[tool] = value if value and value != "absent" else None
    for daemon in ("multipathd", "iscsid"):
        state = raw.get(f"daemon:{daemon}")
        facts[f"{daemon}_running"] = None if state is None else state == "running"
    return facts


def _multipath_examined(capture: NodeCapture, tools: Mapping[str, Any]) -> bool:
    """Whether the node's multipath state was looked at (live, or a multipath file given)."""
    return bool(tools["probed"]) or any(
        kind in capture.texts for kind in ("multipath-ll", "multipathd-json", "block-devices")
    )


def _installed(tools: Mapping[str, Any], *names: str) -> bool | None:
    if not tools["probed"]:
        return None
    return any(tools[name] for name in names)


def _parse(capture: NodeCapture) -> _NodeFacts:
    facts = _NodeFacts()
    facts.sessions = _sessions(capture, facts.warnings)
    facts.maps, facts.maps_source = _maps(capture, facts.warnings, facts.sessions)
    conf_texts = [t for t in capture.all("multipath-conf") if t.strip() != ABSENT_MARKER]
    facts.conf = parse_multipath_conf("\n".join(conf_texts)) if conf_texts else None
    if any(t.strip() == ABSENT_MARKER for t in capture.all("multipath-conf")):
        facts.conf_present = False
    elif conf_texts:
        facts.conf_present = True
    facts.records = tuple(
        record
        for text, notes in _noted(capture, "iscsiadm-node", facts.warnings)
        for record in parse_iscsiadm_node(text, notes=notes)
    )
    iscsid_texts = [
        t for t in capture.all("iscsid-conf") if t.strip() and t.strip() != ABSENT_MARKER
    ]
    facts.iscsid_conf = parse_iscsid_conf("\n".join(iscsid_texts)) if iscsid_texts else None
    facts.sanlun = tuple(
        lun
        for text, notes in _noted(capture, "sanlun", facts.warnings)
        for lun in parse_sanlun_lun_show_p(text, notes=notes)
    )
    if "mountinfo" in capture.texts:
        facts.mounts = []
        for text, notes in _noted(capture, "mountinfo", facts.warnings):
            try:
                facts.mounts.extend(parse_mountinfo(text, strict=False, notes=notes))
            except MountParseError as exc:  # pragma: no cover - non-strict parsing skips lines
                facts.warnings.append(f"mountinfo unreadable: {exc}")
    for device in parse_block_devices(capture.first("block-devices")):
        if device.get("dm_name"):
            facts.dm_names[device["dm_name"]] = device["name"]
        if str(device.get("dm_uuid", "")).startswith("mpath-"):
            facts.mpath_devices.append(device["name"])
    return facts


def _noted(
    capture: NodeCapture, kind: str, warnings: list[str]
) -> Iterator[tuple[str, list[LineNote]]]:
    """The texts of one kind, each with a list for its parser's notes; once a text is parsed
    (the caller asks for the next), its skipped and rejoined lines become warnings (offline
    only, see ``line_warnings``)."""
    for label, text in capture.labelled(kind):
        notes: list[LineNote] = []
        yield text, notes
        warnings.extend(line_warnings(capture, label, notes))


def _sessions(capture: NodeCapture, warnings: list[str]) -> tuple[IscsiSession, ...]:
    """Sessions from ``iscsiadm -m session [-P 3]`` when it gave any, else from sysfs."""
    sessions: list[IscsiSession] = []
    for text, notes in _noted(capture, "iscsiadm-session", warnings):
        fmt = detect_iscsi_format(text)
        if fmt == IscsiInputFormat.ISCSIADM_SESSION_DETAIL:
            sessions.extend(parse_iscsiadm_session_detail(text, notes=notes))
        elif fmt == IscsiInputFormat.ISCSIADM_SESSION:
            sessions.extend(parse_iscsiadm_session(text, notes=notes))
        elif "No active sessions" not in text:
            warnings.append(f"iscsiadm output not understood: {first_line(text)}")
    if sessions:
        return tuple(sessions)
    return tuple(
        session for text in capture.all("iscsi-sysfs") for session in parse_iscsi_sysfs_dump(text)
    )


def _maps(
    capture: NodeCapture, warnings: list[str], sessions: Sequence[IscsiSession] = ()
) -> tuple[tuple[MultipathMap, ...], str | None]:
    """Maps from multipathd JSON (queueing, failback), completed with ``multipath -ll`` (size,
    H:C:T:L); ``multipath -ll`` alone when the daemon did not answer. A path dm-multipath still
    calls active whose SCSI disk the kernel has blocked (the sessions' view) counts as failed."""
    from_json: list[MultipathMap] = []
    for text in capture.all("multipathd-json"):
        try:
            from_json.extend(parse_multipathd_json(text))
        except MultipathParseError as exc:
            warnings.append(f"multipathd did not answer with maps ({first_line(text)}): {exc}")
    from_text = [
        m
        for text, notes in _noted(capture, "multipath-ll", warnings)
        for m in parse_multipath_ll(text, notes=notes)
    ]
    maps = merge_multipath_views(from_json, from_text, scsi_device_states(sessions))
    if from_json:
        return maps, "multipathd-json"
    if from_text:
        return maps, "multipath-ll"
    return (), None


def parse_block_devices(text: str) -> list[dict[str, Any]]:
    """``dm-0 holders= slaves=sdb,sdc, dm_name=mpatha dm_uuid=mpath-36…`` lines → dicts."""
    devices = []
    for line in text.splitlines():
        words = line.split()
        if not words or "=" in words[0]:
            continue
        device: dict[str, Any] = {"name": words[0]}
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if not sep:
                continue
            if key in ("holders", "slaves"):
                device[key] = [item for item in value.split(",") if item]
            else:
                device[key] = value
        devices.append(device)
    return devices


# ---------------------------------------------------------------------------------------------
# Devices → claims, and the sanlun-like view
# ---------------------------------------------------------------------------------------------


def _device_owners(
    node: str, facts: _NodeFacts, objects: VolumeObjects
) -> dict[str, dict[str, Any]]:
    """Block device name (``dm-3``, ``sdb``, or a /dev/mapper name) → the claim that uses it."""
    if not facts.mounts:
        return {}
    visible = [entry for entry in facts.mounts if entry.visible]
    resolved = objects.resolve((entry.mountpoint for entry in visible), node)
    owners: dict[str, dict[str, Any]] = {}
    for entry in visible:
        owner = resolved.get(entry.mountpoint)
        device = _device_of(entry, facts.dm_names)
        if owner is None or device is None:
            continue
        _merge_owner(owners.setdefault(device, _empty_owner()), owner, entry.mountpoint)
    return owners


def _device_of(entry: MountEntry, dm_names: Mapping[str, str]) -> str | None:
    """The block device behind a mount: its ``/dev/…`` source, or for a raw block volume (a
    bind mount of the device node) the node's name in devtmpfs."""
    if entry.source.startswith("/dev/"):
        name = entry.source[len("/dev/") :]
    elif entry.fstype == "devtmpfs" and entry.root and entry.root != "/":
        name = entry.root.lstrip("/")
    else:
        return None
    if name.startswith("mapper/"):
        mapper = name[len("mapper/") :]
        return dm_names.get(mapper, mapper)
    return name


def _empty_owner() -> dict[str, Any]:
    return {
        "namespace": None,
        "pvc": None,
        "pv": None,
        "storage_class": None,
        "pods": [],
        "mountpoints": [],
    }


def _merge_owner(target: dict[str, Any], owner: VolumeOwner, mountpoint: str) -> None:
    for key, value in (
        ("namespace", owner.namespace),
        ("pvc", owner.pvc_name),
        ("pv", owner.pv_name or owner.kubelet_path.volume_name),
        ("storage_class", owner.storage_class),
    ):
        if target[key] is None and value:
            target[key] = value
    if owner.pod_name and owner.pod_name not in target["pods"]:
        target["pods"].append(owner.pod_name)
    target["mountpoints"].append(mountpoint)


def _bare_devices_in_use(owners: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """``sdX`` devices kubelet uses directly (no dm-multipath in between)."""
    return {device for device in owners if device.startswith("sd")}


TRIDENT_CSI_DRIVER = "csi.trident.netapp.io"


def _runs_trident(node: str, objects: VolumeObjects) -> bool:
    """A Trident node: a Trident node plugin pod runs on it, or a pod on it uses a PV of the
    Trident CSI driver (MP003 is then a warning, ISCSI012 applies)."""
    claims: set[tuple[Any, Any]] = set()
    for pod in objects.pods:
        spec = pod.get("spec") or {}
        if spec.get("nodeName") != node:
            continue
        for container in spec.get("containers") or []:
            if "trident" in str(container.get("image", "")):
                return True
        namespace = dig(pod, "metadata", "namespace")
        for volume in spec.get("volumes") or []:
            claim = dig(volume, "persistentVolumeClaim", "claimName")
            if claim:
                claims.add((namespace, claim))
    if not claims:
        return False
    volumes = {
        dig(pvc, "spec", "volumeName")
        for pvc in objects.pvcs
        if (dig(pvc, "metadata", "namespace"), dig(pvc, "metadata", "name")) in claims
    }
    return any(
        dig(pv, "spec", "csi", "driver") == TRIDENT_CSI_DRIVER
        for pv in objects.pvs
        if dig(pv, "metadata", "name") in volumes
    )


def path_role(path: MultipathPath | Mapping[str, Any], group_status: str) -> str:
    """``failed``, ``active`` (in the group I/O goes to) or ``passive`` (a standby group)."""
    if _path_failed(path):
        return "failed"
    return "active" if group_status == "active" else "passive"


def _path_failed(path: MultipathPath | Mapping[str, Any]) -> bool:
    get = path.get if isinstance(path, Mapping) else lambda key: getattr(path, key)
    return bool(
        get("dm_state") == "failed"
        or get("path_state") in _FAILED_CHECKER
        or get("online_state") in ("offline", "blocked", "transport-offline")
    )


def lun_view(facts: _NodeFacts, owners: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per LUN, as ``sanlun lun show -p`` shows them: who uses it, its LUN number and
    target, the dm device, and each path with its role. Bare iSCSI disks get a row too."""
    disks = {
        disk.disk: (session, disk)
        for session in facts.sessions
        for disk in session.disks
        if disk.disk
    }
    sanlun = {key: lun for lun in facts.sanlun for key in (lun.host_device, lun.dm_device) if key}
    rows = []
    covered: set[str] = set()
    for mpath in facts.maps:
        paths = []
        for group in mpath.path_groups:
            for path in group.paths:
                session = disks[path.dev][0] if path.dev and path.dev in disks else None
                covered.add(path.dev or "")
                paths.append(
                    {
                        "dev": path.dev,
                        "hctl": path.hctl,
                        "portal": _portal(session),
                        "group_status": group.status,
                        "role": path_role(path, group.status),
                        "dm_state": path.dm_state,
                        "path_state": path.path_state,
                        "online_state": path.online_state,
                    }
                )
        lun, target = _lun_and_target(mpath.paths, disks)
        owner = _owner_of(owners, mpath.dm, mpath.alias, mpath.wwid)
        ontap = sanlun.get(mpath.wwid) or (sanlun.get(mpath.alias) if mpath.alias else None)
        rows.append(
            {
                **owner,
                "lun": lun,
                "target": target,
                "wwid": mpath.wwid,
                "alias": mpath.alias,
                "dm": mpath.dm,
                "vendor": mpath.vendor,
                "product": mpath.product,
                "size": mpath.size,
                "ontap_path": f"{ontap.vserver}:{ontap.lun_path}" if ontap else None,
                "paths": paths,
            }
        )
    for session in facts.sessions:
        for disk in session.disks:
            if not disk.disk or disk.disk in covered:
                continue
            rows.append(
                {
                    **_owner_of(owners, disk.disk),
                    "lun": disk.lun,
                    "target": session.target,
                    "wwid": None,
                    "alias": None,
                    "dm": None,
                    "vendor": None,
                    "product": None,
                    "size": None,
                    "ontap_path": None,
                    "paths": [
                        {
                            "dev": disk.disk,
                            "hctl": disk.hctl,
                            "portal": _portal(session),
                            "group_status": None,
                            "role": "no-multipath",
                            "dm_state": None,
                            "path_state": None,
                            "online_state": disk.state,
                        }
                    ],
                }
            )
    return rows


def _owner_of(owners: Mapping[str, Mapping[str, Any]], *names: str | None) -> dict[str, Any]:
    for name in names:
        if name and name in owners:
            found = owners[name]
            return {
                "namespace": found["namespace"],
                "pvc": found["pvc"],
                "pv": found["pv"],
                "storage_class": found["storage_class"],
                "pods": list(found["pods"]),
            }
    return {"namespace": None, "pvc": None, "pv": None, "storage_class": None, "pods": []}


def _lun_and_target(
    paths: Iterable[MultipathPath], disks: Mapping[str, tuple[IscsiSession, IscsiDisk]]
) -> tuple[int | None, str | None]:
    """The LUN number and target from the session that owns a path, else from an H:C:T:L."""
    lun: int | None = None
    for path in paths:
        if path.dev is not None and path.dev in disks:
            session, disk = disks[path.dev]
            return disk.lun, session.target
        if lun is None and path.hctl:
            lun = int(path.hctl.rsplit(":", 1)[1])
    return lun, None


def _portal(session: IscsiSession | None) -> str | None:
    if session is None:
        return None
    return session.current_portal or session.persistent_portal


def _map_dict(mpath: MultipathMap) -> dict[str, Any]:
    """The contract fields, plus what multipathd JSON adds when known."""
    return {
        **mpath.to_dict(),
        "failback": mpath.failback,
        "queueing": mpath.queueing,
    }


def _status(capture: NodeCapture, tools: Mapping[str, Any], facts: _NodeFacts) -> str:
    """One line a person reads first: ``no iSCSI sessions, multipath not installed``."""
    parts = []
    if any(kind in capture.texts for kind in ("iscsiadm-session", "iscsi-sysfs")):
        count = len(facts.sessions)
        parts.append(f"{count} iSCSI session(s)" if count else "no iSCSI sessions")
    if _installed(tools, "multipath", "multipathd") is False:
        parts.append("multipath not installed")
    else:
        if tools["multipathd_running"] is False:
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
    return ", ".join(parts) or "nothing to report"
