"""iSCSI / dm-multipath rules (reference/rules.md B.3), as pure functions returning Findings.

Each check takes parsed data (:mod:`.multipath`, :mod:`.sessions`, :mod:`.multipath_conf`,
:mod:`.iscsid_conf`, :mod:`.sanlun`) and returns ``list[Finding]``; an empty list means the rule
did not fire. Rule ids are the ones of rules.md (plus MP016, this project's); the catalogue
:data:`RULES` names each rule's sources, and every finding's ``source`` cites them. Array
thresholds live in one table per array family (:mod:`.vendors`). The lead calls
:func:`evaluate_iscsi_node` once per node.

Implemented: MP000 MP001 MP002 MP003 MP004 MP010 MP011 MP012 MP013 MP014 MP015 MP016 MP020 MP021
MP022 MP023 MP030 MP031 MP032, ISCSI001 ISCSI002 ISCSI003 ISCSI004 ISCSI005 ISCSI006 ISCSI007
ISCSI008 ISCSI009 ISCSI010 ISCSI011 ISCSI012 ISCSI013 ISCSI014 ISCSI015 ISCSI016. ISCSI006,
ISCSI012, ISCSI014 and ISCSI016 read /etc/iscsi/iscsid.conf (:mod:`.iscsid_conf`), which only
seeds new node records; ISCSI004 and ISCSI014 judge its ``replacement_timeout`` next to the live
sessions' ``recovery_tmo``, knowing that multipathd writes its ``fast_io_fail_tmo`` into the
recovery timeout of every session it maps (S75). ``sanlun lun show -p`` (NetApp) path states
and types feed MP010, MP011, MP016, MP020 and MP021. Not implemented (need sysfs timeouts we do
not collect yet): MP033 MP034.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubectl_storage.core.iscsi.iscsid_conf import (
    NOOP_OUT_INTERVAL,
    NOOP_OUT_TIMEOUT,
    REPLACEMENT_TIMEOUT,
    SCAN,
    STARTUP,
    IscsidConf,
)
from kubectl_storage.core.iscsi.multipath import (
    SCSI_STATES_WITHOUT_IO,
    MultipathMap,
    MultipathPath,
    PathGroup,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf
from kubectl_storage.core.iscsi.sanlun import SanlunLun
from kubectl_storage.core.iscsi.sessions import IscsiNodeRecord, IscsiSession
from kubectl_storage.core.iscsi.vendors import ARRAYS, ArrayVendor, array_for
from kubectl_storage.core.report.findings import Finding, RuleSpec, Severity

__all__ = [
    "RULES",
    "SOURCES",
    "RuleSpec",
    "check_chap",
    "check_duplicate_sessions",
    "check_hpe_iscsid_conf",
    "check_iscsid_noop_out",
    "check_iscsid_replacement_timeout",
    "check_iscsid_scan",
    "check_multipath_conf",
    "check_multipath_map",
    "check_multipathd_presence",
    "check_portal_redundancy",
    "check_pure_detect_prio",
    "check_replacement_timeout",
    "check_sanlun_luns",
    "check_session_state",
    "check_unique_initiator_names",
    "check_unmultipathed_disks",
    "evaluate_iscsi_node",
    "multipathd_leaves_recovery_timeout",
    "rule_catalogue",
]

SOURCES: dict[str, str] = {
    "S45": "S45 kubernetes pkg/volume/iscsi/iscsi_util.go, pkg/volume/util/device_util_linux.go",
    "S50": "S50 multipath.conf(5), opensvc/multipath-tools multipath/multipath.conf.5.in",
    "S51": "S51 multipathd(8), multipath-tools multipathd/multipathd.8.in",
    "S52": "S52 multipath-tools libmultipath/print.c",
    "S53": "S53 multipath-tools libmultipath/hwtable.c (built-in vendor entries)",
    "S55": "S55 Red Hat DM Multipath guide, 'Multipath Command Output'",
    "S56": "S56 open-iscsi README §6 and §8.1-8.2, and etc/iscsid.conf",
    "S57": "S57 open-iscsi usr/session_info.c, usr/iscsi_sysfs.c",
    "S58": "S58 Linux drivers/scsi/scsi_transport_iscsi.c",
    "S59": "S59 Linux drivers/scsi/scsi_sysfs.c access states; "
    "multipath-tools libmultipath/prioritizers/sysfs.c",
    "S60": "S60 NetApp ONTAP SAN host docs, linux-rhel-multipathing (NetAppDocs/ontap-sanhost)",
    "S61": "S61 NetApp ONTAP SAN host docs, linux-iscsi-configuration (replacement_timeout 5)",
    "S62": "S62 NetApp ONTAP SAN host docs, reuse_hu_recommended_settings",
    "S63": "S63 NetApp Trident 'Prepare the worker node' "
    "(https://docs.netapp.com/us-en/trident/trident-use/worker-node-prep.html)",
    "S64": "S64 NetApp Trident ontap-san-prep ('NetApp recommends using bidirectional CHAP')",
    "S65": "S65 Pure Storage 'Linux Recommended Settings'",
    "S66": "S66 Pure Storage published device stanza (tripleo-deployment-configs pure-temp.yaml)",
    "S67": "S67 Portworx 'Use FlashArray as backend storage' (multipath.conf for Kubernetes)",
    "S68": "S68 HPE CSI driver node conformance (hpe-linux-config.yaml) and example multipath.conf",
    "S75": "S75 multipath-tools libmultipath/discovery.c (0.9.4, 0.14.3): sysfs_set_scsi_tmo() "
    "and sysfs_set_session_tmo() write fast_io_fail_tmo (default 5, defaults.h) into the "
    "recovery_tmo of the iSCSI session of every path of a map (off and 0 cannot be set on "
    "iSCSI); path_offline() reads the SCSI device state (offline: down, blocked: pending)",
    "H1": "H1 NetApp Linux Host Utilities, sanlun lun show -p "
    "(https://docs.netapp.com/us-en/ontap-sanhost/hu-luhu-sanlun-utility.html): host path state "
    "up/down, path type primary (the node owning the LUN) or secondary (its HA partner)",
}


#: The iSCSI / multipath rule catalogue (rules.md B.3 with this project's changes).
RULES: dict[str, RuleSpec] = {
    spec.id: spec
    for spec in (
        RuleSpec("MP000", "error", "iSCSI in use, multipathd not installed or not running", "S63"),
        RuleSpec("MP001", "error", "/etc/multipath.conf missing", "S62 S60"),
        RuleSpec("MP002", "info", "defaults/overrides hide built-in vendor entries", "S62 S50 S55"),
        RuleSpec(
            "MP003",
            "warn (Trident) / info",
            "find_multipaths lets a single-path LUN stay a bare sdX (yes, on, strict, smart)",
            "S63 S50 S55 S67",
        ),
        RuleSpec(
            "MP004", "info", "user_friendly_names yes where the vendor needs no", "S67 S53 S60"
        ),
        RuleSpec(
            "MP010", "error", "failed, faulty or offline path (map or sanlun)", "S51 S52 S55 H1"
        ),
        RuleSpec("MP011", "error", "no usable path (map or sanlun)", "S51 S52 H1"),
        RuleSpec("MP012", "warn", "fewer than two paths", "S60 S56 S63"),
        RuleSpec("MP013", "warn", "more paths than the vendor supports", "S60"),
        RuleSpec("MP014", "info", "transient checker state", "S51"),
        RuleSpec("MP015", "error", "every path ALUA standby", "S51 S59"),
        RuleSpec(
            "MP016",
            "warn",
            "ONTAP LUN with no primary path up: I/O through the HA partner (sanlun)",
            "H1 S60",
        ),
        RuleSpec(
            "MP020",
            "warn",
            "one path group mixing ALUA priorities or primary and secondary paths",
            "S50 S60 S53 S66 S68 S59 H1",
        ),
        RuleSpec(
            "MP021",
            "warn (info with failback immediate)",
            "I/O on a lower-priority group while a higher one is usable",
            "S50 S60 S53 S66 S68 H1",
        ),
        RuleSpec("MP022", "info", "path_checker not the vendor's", "S50 S60 S66 S68"),
        RuleSpec("MP023", "info", "detect_prio on for Pure FlashArray", "S65 S53"),
        RuleSpec(
            "MP030",
            "warn",
            "no_path_retry / queueing against vendor guidance",
            "S50 S60 S53 S66 S67 S68",
        ),
        RuleSpec(
            "MP031",
            "warn",
            "unbounded queueing with queue_without_daemon yes (unset means no)",
            "S50",
        ),
        RuleSpec("MP032", "info", "deprecated features queue_if_no_path", "S50"),
        RuleSpec("ISCSI001", "error", "session not logged in", "S58 S57 S63"),
        RuleSpec("ISCSI002", "warn", "iscsid re-establishing the session", "S57 S56"),
        RuleSpec("ISCSI003", "error", "connection failed or down (sysfs)", "S58"),
        RuleSpec(
            "ISCSI004",
            "warn",
            "replacement_timeout above 15 s on a multipathed session, or in iscsid.conf where "
            "multipathd will not override it",
            "S56 S61 S68 S58 S75",
        ),
        RuleSpec("ISCSI005", "info", "short replacement_timeout without multipath", "S56"),
        RuleSpec("ISCSI006", "warn", "NOP-Out pings off with multipathed sessions", "S56 S68"),
        RuleSpec("ISCSI007", "warn/info", "no CHAP or one-way CHAP", "S64 S56 S58"),
        RuleSpec("ISCSI008", "error/warn", "iSCSI disk used without multipath", "S45 S51 S63"),
        RuleSpec("ISCSI009", "warn", "duplicate sessions", "S56 S68 S57"),
        RuleSpec("ISCSI010", "warn", "one portal while the node DB lists several", "S56 S60"),
        RuleSpec("ISCSI011", "error", "InitiatorName shared by nodes", "S63"),
        RuleSpec("ISCSI012", "warn", "node.session.scan not manual on a Trident node", "S63"),
        RuleSpec("ISCSI013", "error", "SCSI device not running", "S57 S52"),
        RuleSpec(
            "ISCSI014",
            "info",
            "iscsid.conf replacement_timeout differs from sessions without a multipath map",
            "S56 S58 S75",
        ),
        RuleSpec("ISCSI015", "warn", "iSCSI in use, iscsid not running", "S63"),
        RuleSpec("ISCSI016", "info", "iscsid.conf below the HPE CSI values", "S68 S56"),
    )
}


def rule_catalogue() -> list[dict[str, Any]]:
    """Every iSCSI/multipath rule with its severity, title and resolved sources (JSON shape)."""
    return [spec.to_dict(SOURCES) for spec in RULES.values()]


def _source(*keys: str) -> str:
    unique = dict.fromkeys(key for group in keys for key in group.split())
    return "; ".join(SOURCES[key] for key in unique)


def _finding(rule: str, severity: Severity, message: str, fix: str, *keys: str) -> Finding:
    """A finding citing ``keys`` (default: the rule's catalogue sources)."""
    cited = keys or (RULES[rule].sources,)
    return Finding(id=rule, severity=severity, message=message, fix=fix, source=_source(*cited))


# --- path health ---------------------------------------------------------------------------------

_BAD_CHECKER = {"faulty", "shaky", "i/o timeout", "disconnected"}
_TRANSIENT_CHECKER = {"i/o pending", "delayed"}
_USABLE_CHECKER = {"ready", "ghost"}
_PRIMARY, _SECONDARY = "primary", "secondary"


def _is_usable(path: MultipathPath) -> bool:
    return (
        path.dm_state == "active"
        and path.path_state in _USABLE_CHECKER
        and path.online_state in {None, "running"}
    )


def _has_state_info(path: MultipathPath) -> bool:
    """``multipath -l`` prints ``undef`` for checker states: we cannot judge health from it."""
    return path.path_state != "undef"


def _is_bad(path: MultipathPath) -> bool:
    """Failed by dm-multipath, faulty for the checker, or a SCSI device that services no I/O
    (``offline``; ``blocked`` or ``transport-offline`` from the kernel's state, see
    :func:`~kubectl_storage.core.iscsi.multipath.merge_multipath_views`)."""
    return _has_state_info(path) and (
        path.dm_state == "failed"
        or path.path_state in _BAD_CHECKER
        or path.online_state in SCSI_STATES_WITHOUT_IO
    )


def _path_states(path: MultipathPath) -> str:
    """``active ready blocked`` and, for a path dm-multipath still uses while its SCSI device
    services no I/O, what that means."""
    states = f"{path.dm_state} {path.path_state} {path.online_state}"
    if _stopped_under_dm(path):
        states += (
            f": dm-multipath still sends I/O down it, but its SCSI device is {path.online_state} "
            "and services none"
        )
    return states


def _stopped_under_dm(path: MultipathPath) -> bool:
    """dm-multipath still uses the path while the kernel has stopped its SCSI device."""
    return path.dm_state == "active" and path.online_state in SCSI_STATES_WITHOUT_IO


def _map_name(mpath: MultipathMap) -> str:
    return f"{mpath.name} ({mpath.dm or 'no dm'}, {mpath.vendor},{mpath.product})"


def _has_no_usable_path(mpath: MultipathMap) -> bool:
    """MP011's condition: the daemon counts no active path, or every judged path is unusable."""
    if not mpath.paths:
        return False
    if mpath.active_paths is not None:
        return mpath.active_paths == 0
    judged = [path for path in mpath.paths if _has_state_info(path)]
    return bool(judged) and not any(_is_usable(path) for path in judged)


# --- per-map checks (MP010-MP015, MP020, MP021) --------------------------------------------------


def check_multipath_map(
    mpath: MultipathMap,
    *,
    access_states: Mapping[str, str] | None = None,
    failback: str | None = None,
    path_types: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Path count, path health and ALUA grouping of one map (MP010-MP015, MP020, MP021).

    Args:
        mpath: the map.
        access_states: optional ``{"sdb": "active/optimized", …}`` from
            ``/sys/block/sdX/device/access_state`` (for MP020 when path priorities are unknown).
        failback: effective failback when known from elsewhere (config); the map's own JSON
            ``failback`` is used first, except its ``-`` (see :func:`_failback_of`).
        path_types: optional ``{"sdb": "primary", "sdc": "secondary"}`` from ``sanlun lun show
            -p`` (ONTAP's ALUA view: primary paths reach the node owning the LUN).
    """
    findings: list[Finding] = []
    name = _map_name(mpath)
    paths = mpath.paths
    judged = [path for path in paths if _has_state_info(path)]
    bad = [path for path in judged if _is_bad(path)]
    array = array_for(mpath.vendor, mpath.product)
    if bad:
        devices = ", ".join(f"{p.dev or p.hctl or '?'} ({_path_states(p)})" for p in bad)
        # A device stopped by the kernel (iSCSI session recovery blocks it, S58) that multipath
        # has not failed yet: multipath's own columns cannot show it (S52, S75).
        kernel = "S58 S75" if any(_stopped_under_dm(p) for p in bad) else ""
        findings.append(
            _finding(
                "MP010",
                Severity.ERROR,
                f"{name}: {len(bad)} of {len(paths)} paths failed: {devices}",
                "Check the iSCSI session, network link and array port; `multipathd show paths`",
                "S51 S52 S55",
                kernel,
            )
        )
    if _has_no_usable_path(mpath):
        findings.append(
            _finding(
                "MP011",
                Severity.ERROR,
                f"{name}: no usable path; I/O is queued or failing "
                f"(queueing {mpath.queueing or 'unknown'})",
                "Restore at least one path; see MP030 about queueing",
                "S51 S52",
            )
        )
    if len(paths) < 2:
        findings.append(
            _finding(
                "MP012",
                Severity.WARN,
                f"{name}: {len(paths)} path(s); a single path gives no failover",
                "Log in to at least two portals or ifaces (or add zoning) "
                "so each LUN has >= 2 paths",
            )
        )
    if array is not None and array.max_paths is not None and len(paths) > array.max_paths:
        findings.append(
            _finding(
                "MP013",
                Severity.WARN,
                f"{name}: {len(paths)} paths; {array.name}: a single LUN "
                f"shouldn't require more than {array.max_paths} paths",
                f"Reduce portals/ifaces or use portsets so each LUN has at most "
                f"{array.max_paths} paths",
                array.source("max_paths"),
            )
        )
    transient = [path for path in paths if path.path_state in _TRANSIENT_CHECKER]
    if transient:
        findings.append(
            _finding(
                "MP014",
                Severity.INFO,
                f"{name}: checker state transient on {', '.join(p.dev or '?' for p in transient)}",
                "Re-sample before alerting",
            )
        )
    ghosts = [path for path in judged if path.path_state == "ghost"]
    active_ready = any(
        group.status == "active" and any(p.path_state == "ready" for p in group.paths)
        for group in mpath.path_groups
    )
    if judged and len(ghosts) == len(judged) and not active_ready:
        findings.append(
            _finding(
                "MP015",
                Severity.ERROR,
                f"{name}: every path is ALUA standby (ghost); no active path",
                "Investigate the array's ALUA state (controller failover in progress?)",
            )
        )
    types = path_types or {}
    findings.extend(_check_alua_grouping(mpath, name, access_states or {}, types))
    findings.extend(_check_active_group(mpath, name, _failback_of(mpath.failback, failback), types))
    return findings


def _failback_of(live: str | None, configured: str | None) -> str | None:
    """The failback policy to name: multipathd JSON's, or the configured one.

    multipathd prints ``immediate`` and ``followover`` by name and otherwise ``-`` unless a
    deferred failback is counting down (libmultipath print.c ``snprint_failback``): ``-`` is
    ``failback manual`` (also the built-in default, ``DEFAULT_FAILBACK -FAILBACK_MANUAL`` in
    defaults.h) or an idle ``failback N``, which multipath.conf then tells apart.
    """
    if live == "-":
        return configured or "manual"
    return live or configured


def _types_of(group: PathGroup, types: Mapping[str, str]) -> set[str]:
    return {types[path.dev] for path in group.paths if path.dev and path.dev in types}


def _check_alua_grouping(
    mpath: MultipathMap, name: str, access_states: Mapping[str, str], types: Mapping[str, str]
) -> list[Finding]:
    """MP020: one path group (multibus) mixing ALUA priorities, access states or primary and
    secondary paths, so I/O is spread over the HA partner's non-optimized paths too."""
    if len(mpath.path_groups) != 1 or len(mpath.paths) < 2:
        return []
    (group,) = mpath.path_groups
    # Priorities of paths that work: a failed path reports a low priority on symmetric arrays too.
    prios = {path.prio for path in group.paths if path.prio is not None and _is_usable(path)}
    states = {access_states[p.dev] for p in group.paths if p.dev and p.dev in access_states}
    asymmetric_states = "active/optimized" in states and bool(
        states & {"active/non-optimized", "standby"}
    )
    mixed_types = {_PRIMARY, _SECONDARY} <= _types_of(group, types)
    if len(prios) >= 2:
        evidence = f"path priorities {sorted(prios)}"
    elif "alua" in mpath.hwhandler and asymmetric_states:
        evidence = f"access states {sorted(states)}"
    elif mixed_types:
        evidence = "primary and secondary paths (sanlun)"
    else:
        return []
    return [
        _finding(
            "MP020",
            Severity.WARN,
            f"{name}: all paths in one group on an asymmetric (ALUA) array ({evidence}); "
            "I/O also goes over non-optimized paths through the HA partner",
            "path_grouping_policy group_by_prio with the vendor prioritizer (alua, ontap, sysfs)",
        )
    ]


def _check_active_group(
    mpath: MultipathMap, name: str, failback: str | None, types: Mapping[str, str]
) -> list[Finding]:
    """MP021: the active group is a lower-priority one (or holds only secondary paths) while a
    better group has usable paths: I/O goes through the non-optimized paths (the HA partner).

    The state is the finding whatever the failback policy: with ``failback immediate`` it should
    last one checker interval at most (info: re-sample), otherwise it lasts until someone
    switches groups (warn).
    """
    if len(mpath.path_groups) < 2:
        return []
    active = [group for group in mpath.path_groups if group.status == "active"]
    if not active or not any(_is_usable(path) for path in active[0].paths):
        return []  # no I/O through it: MP010/MP011 tell what is wrong
    current = active[0]
    better: list[PathGroup] = []
    evidence = ""
    if current.prio is not None:
        better = [
            group
            for group in mpath.path_groups
            if group.prio is not None
            and group.prio > current.prio
            and any(_is_usable(path) for path in group.paths)
        ]
        if better:
            evidence = f"active group prio {current.prio} < usable group prio {better[0].prio}"
    if not better and _types_of(current, types) == {_SECONDARY}:
        better = [
            group
            for group in mpath.path_groups
            if group is not current
            and _PRIMARY in _types_of(group, types)
            and any(_is_usable(path) for path in group.paths)
        ]
        if better:
            evidence = "the active group has only secondary paths while primary paths are usable"
    if not better:
        return []
    immediate = failback == "immediate"
    return [
        _finding(
            "MP021",
            Severity.INFO if immediate else Severity.WARN,
            f"{name}: I/O goes through the lower-priority paths ({evidence}); failback is "
            f"{failback or 'unknown'}",
            "Re-sample: failback immediate should switch back at the next path check; if it "
            "stays, check the array's ALUA state"
            if immediate
            else "failback immediate (or `multipathd switchgroup map <map> group <n>`)",
        )
    ]


# --- sanlun (MP010, MP011, MP016) --------------------------------------------------------------


def _map_for_lun(lun: SanlunLun, maps: Sequence[MultipathMap]) -> MultipathMap | None:
    for mpath in maps:
        names = {mpath.wwid, mpath.alias, mpath.dm} - {None}
        if lun.host_device in names or (lun.dm_device is not None and lun.dm_device == mpath.dm):
            return mpath
    return None


def check_sanlun_luns(
    luns: Sequence[SanlunLun], maps: Sequence[MultipathMap] = ()
) -> list[Finding]:
    """ONTAP's view of each LUN's paths (``sanlun lun show -p``): MP010 for a path not ``up``,
    MP011 when none is up, MP016 when no primary path is up (I/O through the HA partner).

    A path the LUN's multipath map already reports failed, or a map already without a usable
    path, is not reported twice.
    """
    findings: list[Finding] = []
    for lun in luns:
        if not lun.paths:
            continue
        name = f"ONTAP LUN {lun.vserver}:{lun.lun_path}" + (
            f" ({lun.host_device})" if lun.host_device else ""
        )
        mpath = _map_for_lun(lun, maps)
        known_bad = {p.dev for p in mpath.paths if _is_bad(p)} if mpath else set()
        up = [path for path in lun.paths if path.state.lower() == "up"]
        down = [path for path in lun.paths if path.state.lower() != "up"]
        if not up:
            if mpath is None or not _has_no_usable_path(mpath):
                findings.append(
                    _finding(
                        "MP011",
                        Severity.ERROR,
                        f"{name}: no path up ({', '.join(f'{p.device} {p.state}' for p in down)})",
                        "Restore at least one path: check the sessions and the LIFs",
                        "H1 S51",
                    )
                )
            continue
        unreported = [path for path in down if path.device not in known_bad]
        if unreported:
            shown = ", ".join(f"{p.device} ({p.path_type} {p.state})" for p in unreported)
            findings.append(
                _finding(
                    "MP010",
                    Severity.ERROR,
                    f"{name}: {len(down)} of {len(lun.paths)} paths not up: {shown}",
                    "Check the iSCSI session and the LIF of each path that is down",
                    "H1 S51",
                )
            )
        if not any(path.path_type.lower() == _PRIMARY for path in up):
            primaries = [p for p in lun.paths if p.path_type.lower() == _PRIMARY]
            what = (
                ", ".join(f"{p.device} {p.state}" for p in primaries)
                if primaries
                else "none listed"
            )
            findings.append(
                _finding(
                    "MP016",
                    Severity.WARN,
                    f"{name}: no primary path up (primary: {what}); I/O goes through the HA "
                    "partner's secondary paths",
                    "Restore the paths to the node owning the LUN (sessions to its LIFs), or move "
                    "the LUN's volume to the node the host reaches",
                )
            )
    return findings


# --- daemon and configuration (MP000-MP004, MP022, MP030-MP032) ---------------------------------


def check_multipathd_presence(
    *,
    iscsi_in_use: bool,
    multipathd_running: bool | None,
    multipath_installed: bool | None = None,
    conf_present: bool | None = None,
) -> list[Finding]:
    """MP000 (multipathd not installed or not running) and MP001 (no /etc/multipath.conf).

    ``None`` means "not known" and never fires.
    """
    if not iscsi_in_use:
        return []
    findings = []
    if multipath_installed is False or multipathd_running is False:
        what = "not installed" if multipath_installed is False else "not running"
        findings.append(
            _finding(
                "MP000",
                Severity.ERROR,
                f"iSCSI sessions exist but multipathd is {what}: no failover",
                "Install multipath-tools/device-mapper-multipath; "
                "`systemctl enable --now multipathd`",
            )
        )
    if conf_present is False:
        findings.append(
            _finding(
                "MP001",
                Severity.ERROR,
                "/etc/multipath.conf is missing; the multipath daemon needs it to start",
                "`touch /etc/multipath.conf` (ONTAP built-ins suffice) or `mpathconf --enable`",
            )
        )
    return findings


_MP002_KEYS = (
    "path_grouping_policy",
    "failback",
    "no_path_retry",
    "path_checker",
    "prio",
    "hardware_handler",
    "features",
    "dev_loss_tmo",
    "fast_io_fail_tmo",
)

#: find_multipaths values that multipath every path, even a LUN's only one (multipath.conf(5):
#: ``greedy``; ``no``/``off``: multipathd behaves like greedy).
_FIND_MULTIPATHS_ALL = {"no", "off", "greedy"}


def _effective(conf: MultipathConf, key: str, vendor: str, product: str) -> str | None:
    """Config value by precedence overrides > devices > defaults (built-ins not known here)."""
    device = conf.device_for(vendor, product)
    for value in (
        conf.overrides.get(key),
        device.get(key) if device else None,
        conf.defaults.get(key),
    ):
        if value is not None:
            return value
    return None


def _unbounded_queueing(conf: MultipathConf) -> list[str]:
    """Where the files configure queueing that never stops: ``no_path_retry queue``, or the
    deprecated ``features queue_if_no_path`` in a section that does not set ``no_path_retry``
    (which takes precedence over the feature, multipath.conf(5)); overrides beat both."""
    where: list[str] = []
    override_retry = conf.overrides.get("no_path_retry")
    sections = [("defaults", conf.defaults), ("overrides", conf.overrides)] + [
        (f"device {stanza.get('vendor') or '?'}", stanza) for stanza in conf.devices
    ]
    for label, section in sections:
        retry = section.get("no_path_retry")
        if label != "overrides" and override_retry is not None:
            retry = override_retry
        if retry == "queue" or (
            retry is None and "queue_if_no_path" in (section.get("features") or "")
        ):
            where.append(label)
    return where


def check_multipath_conf(
    conf: MultipathConf, maps: Sequence[MultipathMap] = (), *, trident: bool = False
) -> list[Finding]:
    """Configuration rules MP002, MP003, MP004, MP022, MP030 (config side), MP031, MP032.

    Args:
        conf: parsed multipath.conf.
        maps: the node's maps (to know which vendors are present).
        trident: the node runs Trident (MP003 becomes a warning).
    """
    findings: list[Finding] = []
    present = {(m.vendor, m.product): array_for(m.vendor, m.product) for m in maps}
    builtin = {array.name for array in present.values() if array is not None}
    for section_name, section in (("defaults", conf.defaults), ("overrides", conf.overrides)):
        overridden = [key for key in _MP002_KEYS if section.get(key) is not None]
        if overridden and builtin:
            findings.append(
                _finding(
                    "MP002",
                    Severity.INFO,
                    f"multipath.conf {section_name} sets {', '.join(overridden)} while LUNs of "
                    f"{', '.join(sorted(builtin))} (built-in entries) are present",
                    "Move these settings into a devices { device { vendor … product … } } stanza",
                )
            )
    find_multipaths = conf.defaults.get("find_multipaths")
    if find_multipaths is not None and find_multipaths not in _FIND_MULTIPATHS_ALL:
        findings.append(
            _finding(
                "MP003",
                Severity.WARN if trident else Severity.INFO,
                f"find_multipaths is {find_multipaths!r}: a new LUN with one path at attach "
                "time may be used as a bare sdX",
                "Trident: `find_multipaths no` under defaults; others: the vendor value",
            )
        )
    for (vendor, product), array in present.items():
        if array is None:
            continue
        ufn = _effective(conf, "user_friendly_names", vendor, product)
        if array.user_friendly_names_no and ufn == "yes":
            findings.append(
                _finding(
                    "MP004",
                    Severity.INFO,
                    f"user_friendly_names yes applies to {vendor},{product}; "
                    f"{array.name} requires no",
                    "Set `user_friendly_names no` in the device stanza",
                    array.source("user_friendly_names_no") or RULES["MP004"].sources,
                )
            )
        checker = _effective(conf, "path_checker", vendor, product)
        if array.path_checker and checker is not None and checker != array.path_checker:
            findings.append(
                _finding(
                    "MP022",
                    Severity.INFO,
                    f"path_checker {checker} for {vendor},{product}; {array.path_checker} is "
                    f"the {array.name} checker (asynchronous)",
                    f"path_checker {array.path_checker}",
                    array.source("path_checker") or RULES["MP022"].sources,
                )
            )
        value = _effective(conf, "no_path_retry", vendor, product)
        if (
            array.no_path_retry_wanted is not None
            and value is not None
            and value not in array.no_path_retry_allowed
        ):
            findings.append(
                _finding(
                    "MP030",
                    Severity.WARN,
                    f"no_path_retry {value} for {vendor},{product}; "
                    f"{array.name} guidance is {array.no_path_retry_wanted}",
                    f"no_path_retry {array.no_path_retry_wanted} in a devices stanza for {vendor}",
                    array.source("no_path_retry"),
                )
            )
    queueing = _unbounded_queueing(conf)
    # multipath.conf(5): queue_without_daemon "The default is: no"; only an explicit yes keeps
    # queueing on once multipathd has stopped.
    if queueing and (conf.defaults.get("queue_without_daemon") or "no").lower() == "yes":
        findings.append(
            _finding(
                "MP031",
                Severity.WARN,
                f"unbounded queueing ({', '.join(queueing)}) with queue_without_daemon yes: "
                "processes can hang unkillable when all paths are down and multipathd has stopped",
                "queue_without_daemon no (the default); prefer a bounded no_path_retry N "
                "unless the vendor requires queue",
            )
        )
    feature_sections = [
        name
        for name, section in (("defaults", conf.defaults), ("overrides", conf.overrides))
        if "queue_if_no_path" in (section.get("features") or "")
    ]
    feature_sections += [
        "devices" for stanza in conf.devices if "queue_if_no_path" in (stanza.get("features") or "")
    ][:1]
    if feature_sections:
        findings.append(
            _finding(
                "MP032",
                Severity.INFO,
                f"features queue_if_no_path set in {', '.join(feature_sections)}: "
                "deprecated, superseded "
                "by no_path_retry",
                "Use no_path_retry instead",
            )
        )
    return findings


def _check_map_queueing(mpath: MultipathMap) -> list[Finding]:
    """MP030 from the live map (multipathd JSON ``queueing``)."""
    array = array_for(mpath.vendor, mpath.product)
    if array is None or array.live_queueing is None or mpath.queueing is None:
        return []
    if mpath.queueing == array.live_queueing:
        return []
    return [
        _finding(
            "MP030",
            Severity.WARN,
            f"{mpath.name} ({mpath.vendor},{mpath.product}): queueing {mpath.queueing}; "
            "vendor guidance is "
            f"no_path_retry {array.no_path_retry_wanted} (queueing {array.live_queueing})",
            "Use the vendor no_path_retry in a devices stanza",
            array.source("no_path_retry"),
        )
    ]


def check_pure_detect_prio(conf: MultipathConf, maps: Sequence[MultipathMap] = ()) -> list[Finding]:
    """MP023: a map of an array that requires ``detect_prio no`` (Pure FlashArray) while
    multipath.conf turns it on.

    Limitation: :mod:`.multipath_conf` knows only the files, not the built-in hwtable, so the
    value is resolved as overrides > matching device stanza > defaults (:func:`_effective`). A
    value the files leave unset is not judged (older built-ins inherit the upstream default yes,
    newer PURE entries set it off; ``multipathd show config`` tells which). A ``defaults``-only
    yes is reported with that caveat, because a newer built-in PURE entry would win over it.
    """
    findings = []
    seen: set[tuple[str, str]] = set()
    for mpath in maps:
        key = (mpath.vendor, mpath.product)
        array = array_for(*key)
        if array is None or not array.detect_prio_no or key in seen:
            continue
        seen.add(key)
        value = _effective(conf, "detect_prio", *key)
        if value is None or value.lower() not in {"yes", "on"}:
            continue
        device = conf.device_for(*key)
        if conf.overrides.get("detect_prio") is not None:
            where = "overrides"
        elif device is not None and device.get("detect_prio") is not None:
            where = "its devices stanza"
        else:
            where = "defaults (a newer built-in PURE entry, which sets it off, would win)"
        findings.append(
            _finding(
                "MP023",
                Severity.INFO,
                f"detect_prio {value} for {mpath.vendor},{mpath.product} from {where}; "
                f"{array.name} requires no, otherwise the sysfs prioritizer replaces alua and "
                "array firmware updates can go wrong",
                f'detect_prio "no" in the {array.vendor} device stanza',
                array.source("detect_prio_no"),
            )
        )
    return findings


# --- session checks (ISCSI001-ISCSI010, ISCSI013) -----------------------------------------------

_LOGGED_IN = {"LOGGED_IN", "LOGGED IN"}


def _session_name(session: IscsiSession) -> str:
    portal = session.persistent_portal or session.current_portal or "?"
    return f"session {session.sid} {session.target} @ {portal}"


def check_session_state(session: IscsiSession) -> list[Finding]:
    """ISCSI001 (not logged in), ISCSI002 (iscsid recovering), ISCSI003 (connection failed),
    ISCSI013 (attached SCSI disk not running)."""
    findings = []
    name = _session_name(session)
    session_down = session.session_state is not None and session.session_state not in _LOGGED_IN
    iscsiadm_conn_down = (
        session.source != "sysfs"
        and session.connection_state is not None
        and session.connection_state not in _LOGGED_IN
    )
    if session_down or iscsiadm_conn_down:
        findings.append(
            _finding(
                "ISCSI001",
                Severity.ERROR,
                f"{name}: session {session.session_state}, connection {session.connection_state}",
                "Check portal reachability and CHAP; `iscsiadm -m node -T … -p … -u` then `-l`",
            )
        )
    if session.internal_session_state in {"REOPEN", "CLEANUP", "REDIRECT"}:
        findings.append(
            _finding(
                "ISCSI002",
                Severity.WARN,
                f"{name}: iscsid internal state {session.internal_session_state} (re-establishing)",
                "Re-sample; inspect the kernel log for `detected conn error`",
            )
        )
    if session.source == "sysfs" and session.connection_state in {"failed", "down"}:
        findings.append(
            _finding(
                "ISCSI003",
                Severity.ERROR,
                f"{name}: connection state {session.connection_state}",
                "Check portal reachability and CHAP; re-login the session",
            )
        )
    for disk in session.disks:
        if disk.state is not None and disk.state != "running":
            findings.append(
                _finding(
                    "ISCSI013",
                    Severity.ERROR,
                    f"{name}: SCSI device {disk.disk or disk.hctl} is {disk.state}",
                    "Rescan (`iscsiadm -m session -r SID -R`) or re-login",
                )
            )
    return findings


def _multipathed_devices(maps: Iterable[MultipathMap]) -> set[str]:
    return {path.dev for mpath in maps for path in mpath.paths if path.dev}


#: The longest replacement_timeout open-iscsi advises with multipath ("5 to 15 seconds", S56).
_MULTIPATH_REPLACEMENT_TIMEOUT_MAX = 15


def _vendor_timeouts(arrays: Iterable[ArrayVendor] = ARRAYS) -> str:
    """``NetApp 5, HPE 10`` from the array table."""
    return ", ".join(
        f"{array.name.split()[0]} {array.replacement_timeout}"
        for array in arrays
        if array.replacement_timeout is not None
    )


def check_replacement_timeout(
    session: IscsiSession, multipathed: bool, *, conf: IscsidConf | None = None
) -> list[Finding]:
    """ISCSI004 (multipathed and replacement_timeout > 15 s) and ISCSI005 (single path, < 120 s).

    With the node's iscsid.conf the finding says what it holds: when the file already has a
    short value, the fix is updating the existing node records (the file only seeds new ones).
    A mapped session running more than 15 s also means multipathd did not give it its
    fast_io_fail_tmo (S75: off or 0, or multipathd not running when the path was added): the
    fix names that too.
    """
    timeout = session.recovery_timeout_s
    if timeout is None:
        return []
    name = _session_name(session)
    if multipathed and timeout > _MULTIPATH_REPLACEMENT_TIMEOUT_MAX:
        configured = conf.int_value(REPLACEMENT_TIMEOUT) if conf is not None else None
        record_only = configured is not None and configured <= _MULTIPATH_REPLACEMENT_TIMEOUT_MAX
        fix = (
            f"iscsid.conf already sets {configured}; it only seeds new node records: "
            "`iscsiadm -m node -o update -n node.session.timeo.replacement_timeout "
            f"-v {configured}`, then re-login"
            if record_only
            else f"Set node.session.timeo.replacement_timeout ({_vendor_timeouts()}) in "
            "iscsid.conf and `iscsiadm -m node -o update -n "
            "node.session.timeo.replacement_timeout -v 5`, then re-login"
        )
        fix += (
            "; multipathd normally gives the sessions it maps its fast_io_fail_tmo: check that "
            "multipathd runs and multipath.conf does not set fast_io_fail_tmo off or 0"
        )
        shown = f" (iscsid.conf: {configured})" if configured is not None else ""
        return [
            _finding(
                "ISCSI004",
                Severity.WARN,
                f"{name}: replacement_timeout {timeout}s delays multipath failover "
                f"(5-15s recommended){shown}",
                fix,
                RULES["ISCSI004"].sources,
                "S75",
            )
        ]
    if not multipathed and session.disks and timeout < 120:
        return [
            _finding(
                "ISCSI005",
                Severity.INFO,
                f"{name}: LUNs not multipathed and replacement_timeout {timeout}s: a single path "
                "should keep I/O longer (default 120s)",
                "Add a second path (see MP012) rather than lowering the timeout",
            )
        ]
    return []


#: multipath.conf fast_io_fail_tmo values multipathd cannot write into an iSCSI session's
#: recovery timeout ("can't switch off fast_io_fail_tmo on iSCSI", "can't set fast_io_fail_tmo to
#: '0' on iSCSI": libmultipath discovery.c sysfs_set_session_tmo, S75).
_FAST_IO_FAIL_NOT_ON_ISCSI = frozenset({"off", "0"})


def multipathd_leaves_recovery_timeout(
    maps: Sequence[MultipathMap],
    multipath_conf: MultipathConf | None = None,
    *,
    multipathd_running: bool | None = None,
) -> str | None:
    """Why the sessions multipathd maps would keep their node record's replacement_timeout; None
    when multipathd sets it (or nothing says it does not).

    multipathd writes its ``fast_io_fail_tmo`` (multipath.conf; 5 by default) into the
    ``recovery_tmo`` of the iSCSI session behind every path of a map it sets up
    (libmultipath discovery.c ``sysfs_set_scsi_tmo`` → ``sysfs_set_session_tmo``, S75). So a
    mapped session runs multipathd's value whatever its record holds; the lab shows it (records
    and iscsid.conf 120, mapped sessions 10, the unmapped one 120: tests/nodelab). It does not
    when it is not running, or when ``fast_io_fail_tmo`` is ``off`` or ``0`` (which it cannot
    set on iSCSI). A ``fast_io_fail_tmo`` from the built-in hardware table is not known here.
    """
    if multipathd_running is False:
        return "multipathd is not running"
    if multipath_conf is None:
        return None
    for mpath in maps:
        value = _effective(multipath_conf, "fast_io_fail_tmo", mpath.vendor, mpath.product)
        if value is not None and value.lower() in _FAST_IO_FAIL_NOT_ON_ISCSI:
            return (
                f"multipath.conf sets fast_io_fail_tmo {value} for {mpath.vendor},{mpath.product}, "
                "which multipathd cannot give an iSCSI session"
            )
    return None


def check_iscsid_replacement_timeout(
    conf: IscsidConf,
    sessions: Sequence[IscsiSession],
    multipathed: Mapping[int | None, bool],
    *,
    maps: Sequence[MultipathMap] = (),
    multipath_conf: MultipathConf | None = None,
    multipathd_running: bool | None = None,
) -> list[Finding]:
    """iscsid.conf's ``node.session.timeo.replacement_timeout`` next to the live sessions' values.

    iscsid.conf seeds new node records, and a login gives the session its record's value; but
    multipathd then replaces it with ``fast_io_fail_tmo`` in every session whose disk it maps
    (:func:`multipathd_leaves_recovery_timeout`). Records and iscsid.conf holding the shipped 120
    while the mapped sessions run 5 or 10 is therefore the normal state under multipathd, and
    the live value of a mapped session says nothing about its record.

    * ISCSI004 (iscsid.conf): multipathed sessions exist and all run 15 s or less, the file gives
      new records more, and multipathd will not replace it (not running, or fast_io_fail_tmo off
      or 0): a session logged in later (a new LUN or portal, a re-login) fails over slowly.
    * ISCSI014: the file sets a value that sessions without a multipath map (their recovery
      timeout is their record's) do not run: those records predate the edit, and a re-login
      keeps the record's value.

    Args:
        conf: parsed iscsid.conf.
        sessions: the live sessions (``recovery_tmo`` is their replacement_timeout).
        multipathed: per session id, whether its LUNs are multipathed.
        maps / multipath_conf / multipathd_running: the node's maps, multipath.conf and whether
            multipathd runs (``None``: unknown), to tell whether multipathd sets the mapped
            sessions' timeout.
    """
    setting = conf.get(REPLACEMENT_TIMEOUT)
    configured = setting.as_int() if setting is not None else None
    if configured is None:
        return []
    limit = _MULTIPATH_REPLACEMENT_TIMEOUT_MAX
    known = [s for s in sessions if s.recovery_timeout_s is not None]
    multi = [s for s in known if multipathed.get(s.sid)]
    flagged = {s.sid for s in multi if (s.recovery_timeout_s or 0) > limit}
    shown = f"{REPLACEMENT_TIMEOUT} = {configured}" + (
        "" if conf.from_file(REPLACEMENT_TIMEOUT) else " (default)"
    )
    findings: list[Finding] = []
    gap = multipathd_leaves_recovery_timeout(
        maps, multipath_conf, multipathd_running=multipathd_running
    )
    if multi and not flagged and configured > limit and gap is not None:
        runs = sorted({t for s in multi if (t := s.recovery_timeout_s) is not None})
        findings.append(
            _finding(
                "ISCSI004",
                Severity.WARN,
                f"multipathed sessions run {', '.join(f'{t}s' for t in runs)}, but {gap} and "
                f"iscsid.conf has {shown}: sessions logged in later (a new LUN or portal, a "
                "re-login) keep their node record's value and fail over slowly",
                "Run multipathd with fast_io_fail_tmo 5-15 (it writes it into the recovery "
                "timeout of the sessions it maps), or set "
                f"node.session.timeo.replacement_timeout in /etc/iscsi/iscsid.conf "
                f"({_vendor_timeouts()}; 5-15 with multipath) and in the existing records",
                RULES["ISCSI004"].sources,
                "S75",
            )
        )
    if conf.from_file(REPLACEMENT_TIMEOUT):
        differing = [
            s for s in known if not multipathed.get(s.sid) and s.recovery_timeout_s != configured
        ]
        if differing:
            values = ", ".join(f"{s.sid}: {s.recovery_timeout_s}s" for s in differing)
            findings.append(
                _finding(
                    "ISCSI014",
                    Severity.INFO,
                    f"iscsid.conf sets {shown}, but sessions without a multipath map run other "
                    f"values ({values}): their node records were created before the file "
                    "changed, and a re-login keeps the record's value",
                    "`iscsiadm -m node -T <target> -p <portal> -o update -n "
                    f"node.session.timeo.replacement_timeout -v {configured}`, then re-login",
                    RULES["ISCSI014"].sources,
                    "S75",
                )
            )
    return findings


def check_chap(session: IscsiSession) -> list[Finding]:
    """ISCSI007: no CHAP (warn) or one-way CHAP only (info)."""
    name = _session_name(session)
    if session.chap_enabled is False:
        return [
            _finding(
                "ISCSI007",
                Severity.WARN,
                f"{name}: no CHAP authentication",
                "Enable bidirectional CHAP (Trident `useCHAP: true`, or array + iscsid.conf CHAP)",
            )
        ]
    if session.chap_enabled and session.chap_mutual is False:
        return [
            _finding(
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
    multipathed = _multipathed_devices(maps)
    in_use = set(in_use_devices) if in_use_devices is not None else None
    findings = []
    for session in sessions:
        for disk in session.disks:
            if not disk.disk or disk.disk in multipathed:
                continue
            if in_use is not None and disk.disk not in in_use:
                continue
            findings.append(
                _finding(
                    "ISCSI008",
                    Severity.ERROR if in_use is not None else Severity.WARN,
                    f"{_session_name(session)}: {disk.disk} (LUN {disk.lun}) "
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
            _finding(
                "ISCSI009",
                Severity.WARN,
                f"{len(members)} sessions (sids {sids}) to {target} @ {portal} "
                f"via iface {iface or 'default'}",
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
                _finding(
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
        _finding(
            "ISCSI011",
            Severity.ERROR,
            f"InitiatorName {iqn} is used by nodes {', '.join(sorted(nodes))}",
            "Regenerate with `iscsi-iname` into /etc/iscsi/initiatorname.iscsi; restart iscsid",
        )
        for iqn, nodes in sorted(by_iqn.items())
        if len(nodes) > 1
    ]


# --- iscsid.conf (ISCSI006, ISCSI012, ISCSI016) --------------------------------------------------
#
# iscsid.conf seeds node records at discovery; sessions run with their record's values, which we
# do not collect. These rules therefore describe what new node records get.


def _shown(conf: IscsidConf, key: str) -> str:
    """``key = value`` with ``(default)`` when the file does not set it."""
    value = conf.value(key)
    return f"{key} = {value}" + ("" if conf.from_file(key) else " (default)")


def check_iscsid_scan(conf: IscsidConf, *, trident: bool) -> list[Finding]:
    """ISCSI012 (Trident nodes): ``node.session.scan`` is not ``manual``."""
    if not trident:
        return []
    value = conf.value(SCAN)
    if value is not None and value.lower() == "manual":
        return []
    return [
        _finding(
            "ISCSI012",
            Severity.WARN,
            f"Trident node: iscsid.conf has {_shown(conf, SCAN)}; new node records get automatic "
            "LUN scans, which attach every LUN mapped to the initiator to this node",
            "`sed -i 's/^\\(node.session.scan\\).*/\\1 = manual/' /etc/iscsi/iscsid.conf`, then "
            "restart iscsid",
        )
    ]


def check_iscsid_noop_out(conf: IscsidConf, *, multipathed: bool) -> list[Finding]:
    """ISCSI006: multipathed sessions exist while NOP-Out pings are off (interval or timeout 0).

    Judged on iscsid.conf, i.e. on what new node records get; existing records keep their own
    values (not collected).
    """
    if not multipathed:
        return []
    zero = [key for key in (NOOP_OUT_INTERVAL, NOOP_OUT_TIMEOUT) if conf.int_value(key) == 0]
    if not zero:
        return []
    return [
        _finding(
            "ISCSI006",
            Severity.WARN,
            f"multipathed iSCSI sessions, and iscsid.conf sets {', '.join(zero)} to 0: new node "
            "records get no NOP-Out pings, so a dead connection is noticed only through SCSI "
            "command timeouts and multipath failover starts late (existing records not checked)",
            "noop_out_interval 5 and noop_out_timeout 10 in iscsid.conf and "
            "`iscsiadm -m node -o update -n node.conn[0].timeo.noop_out_timeout -v 10`, "
            "then re-login",
        )
    ]


def check_hpe_iscsid_conf(conf: IscsidConf, maps: Sequence[MultipathMap]) -> list[Finding]:
    """ISCSI016: LUNs of an array with iscsid.conf conformance values (HPE Nimble / Alletra
    5000/6000: queue_depth 256, cmds_max 512, login_timeout 15, node.startup manual) while the
    file gives new records less."""
    findings = []
    seen: set[str] = set()
    for mpath in maps:
        array = array_for(mpath.vendor, mpath.product)
        if array is None or array.key in seen:
            continue
        if not array.iscsid_minimums and not array.iscsid_startup_manual:
            continue
        seen.add(array.key)
        off = [
            f"{_shown(conf, key)} ({array.name.split()[0]}: >= {minimum})"
            for key, minimum in array.iscsid_minimums
            if (number := conf.int_value(key)) is not None and number < minimum
        ]
        startup = conf.value(STARTUP)
        if array.iscsid_startup_manual and startup is not None and startup.lower() != "manual":
            off.append(f"{_shown(conf, STARTUP)} ({array.name.split()[0]}: manual)")
        if not off:
            continue
        wanted = ", ".join(f"{key} {minimum}" for key, minimum in array.iscsid_minimums)
        findings.append(
            _finding(
                "ISCSI016",
                Severity.INFO,
                f"{array.name} LUNs present; new node records get {'; '.join(off)}",
                f"Set the {array.name} values in /etc/iscsi/iscsid.conf ({wanted}"
                + (", node.startup manual" if array.iscsid_startup_manual else "")
                + ")",
                array.source("iscsid_minimums"),
            )
        )
    return findings


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

    Returns:
        Findings sorted by severity (error, warn, info), then rule id; order is stable.
    """
    iscsi_in_use = bool(sessions)
    findings = check_multipathd_presence(
        iscsi_in_use=iscsi_in_use,
        multipathd_running=multipathd_running,
        multipath_installed=multipath_installed,
        conf_present=multipath_conf_present,
    )
    if iscsi_in_use and iscsid_running is False:
        findings.append(
            _finding(
                "ISCSI015",
                Severity.WARN,
                "iSCSI sessions exist but iscsid is not running",
                "`systemctl enable --now iscsid`",
            )
        )
    path_types = {path.device: path.path_type.lower() for lun in sanlun for path in lun.paths}
    config_failback = conf.defaults.get("failback") if conf else None
    for mpath in maps:
        device = conf.device_for(mpath.vendor, mpath.product) if conf else None
        failback = (device.get("failback") if device else None) or config_failback
        findings.extend(
            check_multipath_map(
                mpath, access_states=access_states, failback=failback, path_types=path_types
            )
        )
        findings.extend(_check_map_queueing(mpath))
    findings.extend(check_sanlun_luns(sanlun, maps))
    if conf is not None:
        findings.extend(check_multipath_conf(conf, maps, trident=trident))
        findings.extend(check_pure_detect_prio(conf, maps))
    multipathed = _multipathed_devices(maps)
    per_session: dict[int | None, bool] = {}
    for session in sessions:
        findings.extend(check_session_state(session))
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
    findings.extend(check_unmultipathed_disks(sessions, maps, in_use_devices=in_use_devices))
    findings.extend(check_duplicate_sessions(sessions, nr_sessions=nr_sessions))
    findings.extend(check_portal_redundancy(sessions, node_records))
    return sorted(findings, key=lambda f: (-f.severity.rank, f.id))
