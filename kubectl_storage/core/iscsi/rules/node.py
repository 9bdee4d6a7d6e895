"""The node entry point: every rule on one node's parsed state, in one call."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kubectl_storage.core.iscsi.iscsid_conf import (
    IscsidConf,
)
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf, setting
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.rules.config import (
    check_map_queueing,
    check_multipath_conf,
    check_multipathd_presence,
    check_pure_detect_prio,
)
from kubectl_storage.core.iscsi.rules.health import (
    multipathed_devices,
)
from kubectl_storage.core.iscsi.rules.iscsid import (
    check_hpe_iscsid_conf,
    check_iscsid_noop_out,
    check_iscsid_scan,
)
from kubectl_storage.core.iscsi.rules.maps import (
    check_multipath_map,
    check_sanlun_luns,
)
from kubectl_storage.core.iscsi.rules.sessions import (
    check_chap,
    check_duplicate_sessions,
    check_initiator_is_not_a_target,
    check_portal_redundancy,
    check_session_state,
    check_unmultipathed_disks,
)
from kubectl_storage.core.iscsi.rules.timeouts import (
    check_iscsid_replacement_timeout,
    check_replacement_timeout,
)
from kubectl_storage.core.iscsi.sanlun import SanlunLun
from kubectl_storage.core.iscsi.sessions import IscsiNodeRecord, IscsiSession
from kubectl_storage.core.iscsi.vendors import is_local_target
from kubectl_storage.core.report.findings import Finding, Severity

# --- node entry point ---------------------------------------------------------------------------


def evaluate_iscsi_node(
    sessions: Sequence[IscsiSession],
    maps: Sequence[MultipathMap],
    conf: MultipathConf | None = None,
    *,
    node_records: Sequence[IscsiNodeRecord] = (),
    multipathd_running: bool | None = None,
    multipath_installed: bool | None = None,
    multipath_conf_present: bool | None = None,
    iscsid_running: bool | None = None,
    trident: bool = False,
    in_use_devices: Iterable[str] | None = None,
    access_states: Mapping[str, str] | None = None,
    nr_sessions: int = 1,
    iscsid_conf: IscsidConf | None = None,
    sanlun: Sequence[SanlunLun] = (),
    effective_conf: MultipathConf | None = None,
    initiator_name: str | None = None,
) -> list[Finding]:
    """Run every node-level iSCSI/multipath rule and return the findings, most severe first.

    Args:
        sessions: parsed sessions (``iscsiadm -m session -P 3`` or the sysfs dump).
        maps: the node's maps as :func:`~kubectl_storage.core.iscsi.multipath.merge_multipath_views`
            gives them (multipathd JSON preferred, ``multipath -ll`` otherwise, with the
            kernel's SCSI device states of the sessions' disks, for MP010).
        conf: parsed /etc/multipath.conf, when read.
        node_records: ``iscsiadm -m node`` records (ISCSI010).
        multipathd_running / multipath_installed / multipath_conf_present / iscsid_running:
            facts probed on the node; ``None`` = unknown, never fires (``multipathd_running``
            False also makes iscsid.conf's replacement_timeout matter, ISCSI004).
        trident: the node runs Trident (raises MP003 to warn; enables ISCSI012).
        in_use_devices: ``sdX`` names kubelet uses directly (ISCSI008 severity, see there).
        access_states: ``{"sdX": access_state}`` from sysfs (MP020 when priorities are unknown).
        nr_sessions: ``node.session.nr_sessions`` (ISCSI009 tolerance).
        iscsid_conf: parsed /etc/iscsi/iscsid.conf, when read (ISCSI004, ISCSI006, ISCSI012,
            ISCSI014, ISCSI016).
        sanlun: parsed ``sanlun lun show -p`` (MP010, MP011, MP016; path types for MP020/MP021).
        effective_conf: ``multipathd show config`` / ``multipath -t`` (built-in hardware table
            included): MP004, MP022, MP030 and the failback MP021 expects are read from it.
        initiator_name: the node's InitiatorName (ISCSI018).

    Returns:
        Findings sorted by severity (error, warn, info), then rule id; order is stable.
    """
    # iSCSI that stays on the node (Longhorn's engine and its local tgt) is not a SAN: no failover
    # to set up, and its disks must stay out of dm-multipath (S78).
    san_sessions = [s for s in sessions if not is_local_target(s.target)]
    findings = check_multipathd_presence(
        iscsi_in_use=bool(san_sessions),
        multipathd_running=multipathd_running,
        multipath_installed=multipath_installed,
        conf_present=multipath_conf_present,
    )
    if sessions and iscsid_running is False:
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI015",
                Severity.WARN,
                "iSCSI sessions exist but iscsid is not running",
                "`systemctl enable --now iscsid`",
            )
        )
    path_types = {path.device: path.path_type.lower() for lun in sanlun for path in lun.paths}
    in_force = effective_conf if effective_conf is not None else conf
    for mpath in maps:
        failback = None
        if in_force is not None:
            failback = setting(in_force, "failback", mpath.vendor, mpath.product)[0]
            failback = failback.strip('"') if failback else None
        findings.extend(
            check_multipath_map(
                mpath, access_states=access_states, failback=failback, path_types=path_types
            )
        )
        findings.extend(check_map_queueing(mpath))
    findings.extend(check_sanlun_luns(sanlun, maps))
    if conf is not None:
        findings.extend(check_multipath_conf(conf, maps, trident=trident, effective=effective_conf))
        findings.extend(check_pure_detect_prio(conf, maps))
    multipathed = multipathed_devices(maps)
    per_session: dict[int | None, bool] = {}
    for session in sessions:
        findings.extend(check_session_state(session))
        if session in san_sessions:  # the node's own tgt (Longhorn) runs without CHAP by design
            findings.extend(check_chap(session))
        session_multipathed = any(d.disk in multipathed for d in session.disks if d.disk)
        per_session[session.sid] = per_session.get(session.sid, False) or session_multipathed
        findings.extend(check_replacement_timeout(session, session_multipathed, conf=iscsid_conf))
    if iscsid_conf is not None:
        findings.extend(check_iscsid_scan(iscsid_conf, trident=trident))
        findings.extend(check_iscsid_noop_out(iscsid_conf, multipathed=any(per_session.values())))
        findings.extend(
            check_iscsid_replacement_timeout(
                iscsid_conf,
                sessions,
                per_session,
                maps=maps,
                multipath_conf=conf,
                multipathd_running=multipathd_running,
            )
        )
        findings.extend(check_hpe_iscsid_conf(iscsid_conf, maps))
    findings.extend(check_unmultipathed_disks(san_sessions, maps, in_use_devices=in_use_devices))
    # open-iscsi: node.session.nr_sessions sessions per target portal are wanted (S56); the file
    # seeds new records, so it stands for the records' value, which is not collected.
    configured = iscsid_conf.int_value("node.session.nr_sessions") if iscsid_conf else None
    nr_sessions = max(nr_sessions, configured or 1)
    findings.extend(check_duplicate_sessions(sessions, nr_sessions=nr_sessions))
    findings.extend(check_portal_redundancy(sessions, node_records))
    findings.extend(check_initiator_is_not_a_target(initiator_name, sessions, node_records))
    return sorted(findings, key=lambda f: (-f.severity.rank, f.id))
