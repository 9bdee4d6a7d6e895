"""Session rules: state (ISCSI001-ISCSI003, ISCSI013), CHAP (ISCSI007), disks without multipath
(ISCSI008), duplicate sessions, portal redundancy, initiator names (ISCSI009-ISCSI011)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
)
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.rules.health import (
    LOGGED_IN,
    multipathed_devices,
    session_name,
)
from kubectl_storage.core.iscsi.sessions import IscsiNodeRecord, IscsiSession
from kubectl_storage.core.report.findings import Finding, Severity

# --- session checks (ISCSI001-ISCSI010, ISCSI013) -----------------------------------------------


def check_session_state(session: IscsiSession) -> list[Finding]:
    """ISCSI001 (not logged in), ISCSI002 (iscsid recovering), ISCSI003 (connection failed),
    ISCSI013 (attached SCSI disk not running), ISCSI017 (iscsid could not be asked)."""
    findings = []
    name = session_name(session)
    session_down = session.session_state is not None and session.session_state not in LOGGED_IN
    # iscsiadm prints "Unknown" for the connection (and iscsid's internal state) when it could
    # not ask iscsid (open-iscsi usr/session_info.c); that says nothing about the session.
    conn_unknown = (
        session.source != "sysfs" and (session.connection_state or "").lower() == "unknown"
    )
    iscsiadm_conn_down = (
        session.source != "sysfs"
        and session.connection_state is not None
        and session.connection_state not in LOGGED_IN
        and not conn_unknown
    )
    if conn_unknown:
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI017",
                Severity.WARN,
                f"{name}: iscsiadm could not ask iscsid for the connection state (Unknown); "
                f"the session state ({session.session_state or '-'}) is the kernel's",
                "Check that iscsid runs on the node (`systemctl status iscsid`) and answers "
                "`iscsiadm -m session`",
            )
        )
    if session_down or iscsiadm_conn_down:
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI001",
                Severity.ERROR,
                f"{name}: session {session.session_state}, connection {session.connection_state}",
                "Check portal reachability and CHAP; `iscsiadm -m node -T … -p … -u` then `-l`",
            )
        )
    if session.internal_session_state in {"REOPEN", "CLEANUP", "REDIRECT"}:
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI002",
                Severity.WARN,
                f"{name}: iscsid internal state {session.internal_session_state} (re-establishing)",
                "Re-sample; inspect the kernel log for `detected conn error`",
            )
        )
    if session.source == "sysfs" and session.connection_state in {"failed", "down"}:
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI003",
                Severity.ERROR,
                f"{name}: connection state {session.connection_state}",
                "Check portal reachability and CHAP; re-login the session",
            )
        )
    for disk in session.disks:
        if disk.state is not None and disk.state != "running":
            findings.append(
                ISCSI_RULES.cite(
                    "ISCSI013",
                    Severity.ERROR,
                    f"{name}: SCSI device {disk.disk or disk.hctl} is {disk.state}",
                    "Rescan (`iscsiadm -m session -r SID -R`) or re-login",
                )
            )
    return findings


def check_chap(session: IscsiSession) -> list[Finding]:
    """ISCSI007: no CHAP (warn) or one-way CHAP only (info)."""
    name = session_name(session)
    if session.chap_enabled is False:
        return [
            ISCSI_RULES.cite(
                "ISCSI007",
                Severity.WARN,
                f"{name}: no CHAP authentication",
                "Enable bidirectional CHAP (Trident `useCHAP: true`, or array + iscsid.conf CHAP)",
            )
        ]
    if session.chap_enabled and session.chap_mutual is False:
        return [
            ISCSI_RULES.cite(
                "ISCSI007",
                Severity.INFO,
                f"{name}: one-way CHAP only (target not authenticated)",
                "Use bidirectional CHAP",
            )
        ]
    return []


def check_unmultipathed_disks(
    sessions: Sequence[IscsiSession],
    maps: Sequence[MultipathMap],
    *,
    in_use_devices: Iterable[str] | None = None,
) -> list[Finding]:
    """ISCSI008: an iSCSI disk that is no path of any multipath map.

    With ``in_use_devices`` (devices kubelet mounts or maps, from mountinfo/C.4) only those are
    reported, as errors; without it every bare iSCSI disk is reported as a warning.
    """
    multipathed = multipathed_devices(maps)
    in_use = set(in_use_devices) if in_use_devices is not None else None
    findings = []
    for session in sessions:
        for disk in session.disks:
            if not disk.disk or disk.disk in multipathed:
                continue
            if in_use is not None and disk.disk not in in_use:
                continue
            findings.append(
                ISCSI_RULES.cite(
                    "ISCSI008",
                    Severity.ERROR if in_use is not None else Severity.WARN,
                    f"{session_name(session)}: {disk.disk} (LUN {disk.lun}) "
                    "has no dm-multipath holder" + (" and is in use" if in_use is not None else ""),
                    "Fix MP000/MP003, then `multipath -a <wwid>`, rescan and restart the pod",
                )
            )
    return findings


def check_duplicate_sessions(
    sessions: Sequence[IscsiSession], *, nr_sessions: int = 1
) -> list[Finding]:
    """ISCSI009: more than ``nr_sessions`` sessions to one (target, persistent portal, iface)."""
    groups: dict[tuple[str, str | None, str | None], list[IscsiSession]] = defaultdict(list)
    for session in sessions:
        groups[(session.target, session.persistent_portal, session.iface_name)].append(session)
    findings = []
    for (target, portal, iface), members in groups.items():
        if portal is None or len(members) <= max(nr_sessions, 1):
            continue
        sids = ", ".join(str(s.sid) for s in members)
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI009",
                Severity.WARN,
                f"{len(members)} sessions (sids {sids}) to {target} @ {portal} "
                f"via iface {iface or 'default'} (node.session.nr_sessions {max(nr_sessions, 1)})",
                "Log out the extra sessions and clean stale node records",
            )
        )
    return findings


def check_portal_redundancy(
    sessions: Sequence[IscsiSession], node_records: Sequence[IscsiNodeRecord]
) -> list[Finding]:
    """ISCSI010: all sessions to a target use one portal while the node DB knows several."""
    findings = []
    by_target: dict[str, set[str]] = defaultdict(set)
    for session in sessions:
        if session.persistent_portal:
            by_target[session.target].add(session.persistent_portal)
    known: dict[str, set[str]] = defaultdict(set)
    for record in node_records:
        known[record.target].add(record.portal)
    for target, portals in by_target.items():
        if len(portals) == 1 and len(known.get(target, set())) > 1:
            findings.append(
                ISCSI_RULES.cite(
                    "ISCSI010",
                    Severity.WARN,
                    f"{target}: every session uses portal {next(iter(portals))} "
                    "while the node database lists "
                    f"{len(known[target])} portals",
                    "Log in to all portals (or bind several ifaces)",
                )
            )
    return findings


def check_unique_initiator_names(initiators: Mapping[str, str]) -> list[Finding]:
    """ISCSI011 (cluster level): the same InitiatorName on several nodes.

    Args:
        initiators: node name -> InitiatorName (from /etc/iscsi/initiatorname.iscsi).
    """
    by_iqn: dict[str, list[str]] = defaultdict(list)
    for node, iqn in initiators.items():
        by_iqn[iqn].append(node)
    return [
        ISCSI_RULES.cite(
            "ISCSI011",
            Severity.ERROR,
            f"InitiatorName {iqn} is used by nodes {', '.join(sorted(nodes))}",
            "Regenerate with `iscsi-iname` into /etc/iscsi/initiatorname.iscsi; restart iscsid",
        )
        for iqn, nodes in sorted(by_iqn.items())
        if len(nodes) > 1
    ]


def check_initiator_is_not_a_target(
    initiator_name: str | None,
    sessions: Sequence[IscsiSession],
    node_records: Sequence[IscsiNodeRecord] = (),
) -> list[Finding]:
    """ISCSI018: the node's InitiatorName is the IQN of a target it logs in to (or knows): an
    iSCSI name names one node, initiator or target (S80), so an initiator named as its target
    is a configuration copied into the wrong file, and an ACL on that name admits nobody."""
    if not initiator_name:
        return []
    targets = {session.target for session in sessions} | {r.target for r in node_records}
    if initiator_name.lower() not in {target.lower() for target in targets}:
        return []
    return [
        ISCSI_RULES.cite(
            "ISCSI018",
            Severity.WARN,
            f"InitiatorName {initiator_name} is the name of a target this node logs in to",
            "Give the node its own name (`iscsi-iname` into /etc/iscsi/initiatorname.iscsi), "
            "restart iscsid and log in again; the target's ACL must name the new one",
        )
    ]
