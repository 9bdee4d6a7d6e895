"""One node's texts parsed: sessions, maps, configuration, records, sanlun, mountinfo and the
block devices, with what could not be read kept as warnings; the host tools probed; and which
section a ``--from-file`` capture stands for."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.iscsi.iscsid_conf import (
    IscsidConf,
    looks_like_iscsid_conf,
    parse_iscsid_conf,
)
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
    MultipathParseError,
    merge_multipath_views,
    parse_multipath_ll,
    parse_multipathd_json,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf, parse_multipath_conf
from kubectl_storage.core.iscsi.report import HostTools
from kubectl_storage.core.iscsi.sanlun import SanlunLun, parse_sanlun_lun_show_p
from kubectl_storage.core.iscsi.sanlun_table import SanlunDevice, parse_sanlun_lun_show
from kubectl_storage.core.iscsi.sessions import (
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
from kubectl_storage.core.nodes.capture import NodeCapture, first_line, line_warnings
from kubectl_storage.core.nodes.collect import ABSENT_MARKER, parse_tools_section
from kubectl_storage.core.nodes.kernel_health import SECTION as KERNEL_LOG
from kubectl_storage.core.nodes.kernel_health import is_kernel_log
from kubectl_storage.core.nodes.mount_model import FORMAT_MOUNTINFO, MountEntry, MountParseError
from kubectl_storage.core.nodes.mounts import detect_mount_format, parse_mountinfo
from kubectl_storage.core.nodes.paste import SKIPPED, LineNote

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


def iscsi_file_kind(text: str) -> str | None:
    """The section a ``--from-file`` input stands for (``multipath-ll``, ``iscsi-sysfs``...),
    or None when it is no iSCSI or multipath output we read."""
    fmt = detect_iscsi_format(text)
    if fmt in _FILE_KINDS:
        return _FILE_KINDS[fmt]
    if "No active sessions" in text:
        return "iscsiadm-session"
    if detect_mount_format(text) == FORMAT_MOUNTINFO:
        return "mountinfo"
    if parse_initiator_name(text) is not None:
        return "initiator-name"
    if looks_like_iscsid_conf(text):
        return "iscsid-conf"
    if is_kernel_log(text):
        return KERNEL_LOG
    return None


@dataclass
class ParsedNode:
    """What one node's texts say, parsed; collected warnings on the way."""

    sessions: tuple[IscsiSession, ...] = ()
    maps: tuple[MultipathMap, ...] = ()
    maps_source: str | None = None
    conf: MultipathConf | None = None
    #: None: unknown (offline, or not collected); False: the node has no /etc/multipath.conf.
    conf_present: bool | None = None
    #: ``multipathd show config`` / ``multipath -t`` (built-in hardware table included).
    effective_conf: MultipathConf | None = None
    records: tuple[IscsiNodeRecord, ...] = ()
    #: /etc/iscsi/iscsid.conf (password lines removed on the node); None when not read.
    iscsid_conf: IscsidConf | None = None
    sanlun: tuple[SanlunLun, ...] = ()
    #: /etc/iscsi/initiatorname.iscsi's InitiatorName, else the one the sessions use.
    initiator_name: str | None = None
    #: Rows of ``sanlun lun show [all]`` / ``-wwpn``: a host device of an ONTAP LUN each.
    sanlun_devices: tuple[SanlunDevice, ...] = ()
    mounts: list[MountEntry] | None = None
    dm_names: dict[str, str] = field(default_factory=dict)
    mpath_devices: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Lines of the captured files that could not be read (each also named in ``warnings``).
    unread_lines: int = 0


def tool_facts(capture: NodeCapture) -> HostTools:
    """Which host tools exist and which daemons run; all None when not probed (files)."""
    probed = "tools" in capture.texts and bool(capture.first("tools"))
    raw = parse_tools_section(capture.first("tools")) if probed else {}

    def tool(name: str) -> str | None:
        value = raw.get(f"tool:{name}")
        return value if value and value != "absent" else None

    def running(daemon: str) -> bool | None:
        state = raw.get(f"daemon:{daemon}")
        return None if state is None else state == "running"

    return HostTools(
        probed=probed,
        multipath=tool("multipath"),
        multipathd=tool("multipathd"),
        iscsiadm=tool("iscsiadm"),
        sanlun=tool("sanlun"),
        multipathd_running=running("multipathd"),
        iscsid_running=running("iscsid"),
    )


def parse_node(capture: NodeCapture) -> ParsedNode:
    """Parse every text of one node (its warnings collected in the result)."""
    facts = ParsedNode()
    facts.sessions = _sessions(capture, facts)
    facts.maps, facts.maps_source = _maps(capture, facts, facts.sessions)
    _confs(capture, facts)
    facts.records = tuple(
        record
        for text, notes in _noted(capture, "iscsiadm-node", facts)
        for record in parse_iscsiadm_node(text, notes=notes)
    )
    iscsid_texts = [
        t for t in capture.all("iscsid-conf") if t.strip() and t.strip() != ABSENT_MARKER
    ]
    facts.iscsid_conf = parse_iscsid_conf("\n".join(iscsid_texts)) if iscsid_texts else None
    luns: list[SanlunLun] = []
    devices: list[SanlunDevice] = []
    for text, notes in _noted(capture, "sanlun", facts):
        if "ONTAP Path:" in text:
            luns.extend(parse_sanlun_lun_show_p(text, notes=notes))
        else:
            devices.extend(parse_sanlun_lun_show(text, notes=notes))
    facts.sanlun, facts.sanlun_devices = tuple(luns), tuple(devices)
    if "mountinfo" in capture.texts:
        facts.mounts = []
        for text, notes in _noted(capture, "mountinfo", facts):
            try:
                facts.mounts.extend(parse_mountinfo(text, strict=False, notes=notes))
            except MountParseError as exc:  # pragma: no cover - non-strict parsing skips lines
                facts.warnings.append(f"mountinfo unreadable: {exc}")
    facts.initiator_name = parse_initiator_name(capture.first("initiator-name")) or next(
        (session.initiator_name for session in facts.sessions if session.initiator_name), None
    )
    for device in parse_block_devices(capture.first("block-devices")):
        if device.get("dm_name"):
            facts.dm_names[device["dm_name"]] = device["name"]
        if str(device.get("dm_uuid", "")).startswith("mpath-"):
            facts.mpath_devices.append(device["name"])
    return facts


def _confs(capture: NodeCapture, facts: ParsedNode) -> None:
    """/etc/multipath.conf and the merged configuration. A given file that is ``multipath -t``
    output (recognised by its content) counts as the merged configuration."""
    files: list[str] = []
    for text in capture.all("multipath-conf"):
        if text.strip() == ABSENT_MARKER:
            facts.conf_present = False
        elif parse_multipath_conf(text).merged:
            facts.effective_conf = parse_multipath_conf(text, merged=True)
        else:
            files.append(text)
    if files:
        facts.conf = parse_multipath_conf("\n".join(files), merged=False)
        if facts.conf_present is None:
            facts.conf_present = True
    for text in capture.all("multipath-config"):
        merged = parse_multipath_conf(text)
        if merged.merged:
            facts.effective_conf = merged
        elif text.strip():
            facts.warnings.append(
                f"multipathd show config / multipath -t not understood: {first_line(text)}"
            )
    if facts.conf is None and facts.effective_conf is not None:
        facts.conf = facts.effective_conf


def _noted(
    capture: NodeCapture, kind: str, facts: ParsedNode
) -> Iterator[tuple[str, list[LineNote]]]:
    """The texts of one kind, each with a list for its parser's notes; once a text is parsed
    (the caller asks for the next), its skipped, trimmed and rejoined lines become warnings and
    the skipped ones are counted (offline only, see ``line_warnings``)."""
    for label, text in capture.labelled(kind):
        notes: list[LineNote] = []
        yield text, notes
        found = line_warnings(capture, label, notes)
        facts.warnings.extend(found)
        if found:
            facts.unread_lines += sum(1 for note in notes if note.action == SKIPPED)


def _sessions(capture: NodeCapture, facts: ParsedNode) -> tuple[IscsiSession, ...]:
    """Sessions from ``iscsiadm -m session [-P 3]`` when it gave any, else from sysfs."""
    sessions: list[IscsiSession] = []
    warnings = facts.warnings
    for text, notes in _noted(capture, "iscsiadm-session", facts):
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
    capture: NodeCapture, facts: ParsedNode, sessions: Sequence[IscsiSession] = ()
) -> tuple[tuple[MultipathMap, ...], str | None]:
    """Maps from multipathd JSON (queueing, failback), completed with ``multipath -ll`` (size,
    H:C:T:L); ``multipath -ll`` alone when the daemon did not answer. A path dm-multipath still
    calls active whose SCSI disk the kernel has blocked (the sessions' view) counts as failed."""
    warnings = facts.warnings
    from_json: list[MultipathMap] = []
    for text in capture.all("multipathd-json"):
        try:
            from_json.extend(parse_multipathd_json(text))
        except MultipathParseError as exc:
            warnings.append(f"multipathd did not answer with maps ({first_line(text)}): {exc}")
    from_text = [
        m
        for text, notes in _noted(capture, "multipath-ll", facts)
        for m in parse_multipath_ll(text, notes=notes)
    ]
    maps = merge_multipath_views(from_json, from_text, scsi_device_states(sessions))
    daemon = parse_tools_section(capture.first("tools")).get("daemon:multipathd")
    if from_text and not from_json and daemon == "running":
        # multipathd runs but gave no maps while multipath -ll found some: say so, or the maps
        # would read as complete without queueing and failback.
        warnings.append(
            "multipathd answered nothing to `show maps json` while multipath -ll lists "
            f"{len(from_text)} map(s): the maps lack multipathd's queueing and failback "
            "(is multipathd reachable? it listens on an abstract socket of the host network)"
        )
    if from_json:
        return maps, "multipathd-json"
    if from_text:
        return maps, "multipath-ll"
    return (), None


_INITIATOR_NAME = re.compile(r"^\s*InitiatorName\s*=\s*(?P<name>\S+)\s*$", re.MULTILINE)


def parse_initiator_name(text: str) -> str | None:
    """``InitiatorName=iqn.1993-08.org.debian:01:abc`` (/etc/iscsi/initiatorname.iscsi, comment
    lines aside) → the name; None when the text has no such line."""
    match = _INITIATOR_NAME.search(text)
    return match["name"] if match else None


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
