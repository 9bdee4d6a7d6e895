"""iSCSI / dm-multipath rules (reference/rules.md B.3), as pure functions returning Findings.

Each check takes parsed data (:mod:`.multipath`, :mod:`.iscsi`, :mod:`.multipath_conf`) and
returns ``list[Finding]``; an empty list means the rule did not fire. Rule ids are the ones of
rules.md; ``Finding.source`` names the vendor or upstream document (the rules.md source key and
the document). The lead calls :func:`evaluate_iscsi_node` once per node.

Implemented: MP000 MP001 MP002 MP003 MP004 MP010 MP011 MP012 MP013 MP014 MP015 MP020 MP021
MP022 MP023 MP030 MP031 MP032, ISCSI001 ISCSI002 ISCSI003 ISCSI004 ISCSI005 ISCSI006 ISCSI007
ISCSI008 ISCSI009 ISCSI010 ISCSI011 ISCSI012 ISCSI013 ISCSI015 ISCSI016. ISCSI006, ISCSI012 and
ISCSI016 read /etc/iscsi/iscsid.conf (:mod:`.iscsid_conf`), which only seeds new node records:
per-record values are not collected. Not implemented (need per-record node settings, or sysfs
timeouts we do not collect yet): MP033 MP034 ISCSI014.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kubectl_storage.core.iscsi.iscsid_conf import (
    CMDS_MAX,
    LOGIN_TIMEOUT,
    NOOP_OUT_INTERVAL,
    NOOP_OUT_TIMEOUT,
    QUEUE_DEPTH,
    SCAN,
    STARTUP,
    IscsidConf,
)
from kubectl_storage.core.iscsi.multipath import MultipathMap, MultipathPath
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf
from kubectl_storage.core.iscsi.sessions import IscsiNodeRecord, IscsiSession
from kubectl_storage.core.report.findings import Finding, Severity

__all__ = [
    "SOURCES",
    "check_chap",
    "check_duplicate_sessions",
    "check_hpe_iscsid_conf",
    "check_iscsid_noop_out",
    "check_iscsid_scan",
    "check_multipath_conf",
    "check_multipath_map",
    "check_multipathd_presence",
    "check_portal_redundancy",
    "check_pure_detect_prio",
    "check_replacement_timeout",
    "check_session_state",
    "check_unique_initiator_names",
    "check_unmultipathed_disks",
    "evaluate_iscsi_node",
]

SOURCES: dict[str, str] = {
    "S50": "S50 multipath.conf(5), opensvc/multipath-tools multipath/multipath.conf.5.in",
    "S51": "S51 multipathd(8), multipath-tools multipathd/multipathd.8.in",
    "S52": "S52 multipath-tools libmultipath/print.c",
    "S53": "S53 multipath-tools libmultipath/hwtable.c (built-in vendor entries)",
    "S55": "S55 Red Hat DM Multipath guide, 'Multipath Command Output'",
    "S56": "S56 open-iscsi README §8.1-8.2 and etc/iscsid.conf",
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
    "S45": "S45 kubernetes pkg/volume/iscsi/iscsi_util.go, pkg/volume/util/device_util_linux.go",
}


def _source(*keys: str) -> str:
    return "; ".join(SOURCES[key] for key in keys)


def _finding(rule: str, severity: Severity, message: str, fix: str, *keys: str) -> Finding:
    return Finding(id=rule, severity=severity, message=message, fix=fix, source=_source(*keys))


# --- vendor knowledge (rules.md B.4) ------------------------------------------------------------

_BAD_CHECKER = {"faulty", "shaky", "i/o timeout", "disconnected"}
_TRANSIENT_CHECKER = {"i/o pending", "delayed"}
_USABLE_CHECKER = {"ready", "ghost"}


def _vendor_key(vendor: str, product: str) -> str | None:
    """Which B.4 vendor profile a map belongs to, if any."""
    vendor, product = vendor.strip().upper(), product.strip().upper()
    if vendor == "NETAPP" and product.startswith("LUN"):
        return "netapp"
    if vendor == "PURE":
        return "pure"
    if vendor == "DELLEMC" and product.startswith("POWERSTORE"):
        return "powerstore"
    if vendor == "NIMBLE":
        return "nimble"
    return None


_VENDOR_NO_PATH_RETRY = {
    "netapp": ({"queue"}, "queue", "S60"),
    "pure": ({"0", "fail"}, "0", "S66"),
    "powerstore": ({"3"}, "3", "S53"),
    "nimble": ({"30"}, "30", "S68"),
}

_VENDOR_NAMES = {
    "netapp": "NetApp ONTAP",
    "pure": "Pure FlashArray",
    "powerstore": "Dell PowerStore",
    "nimble": "HPE Nimble",
}


def _is_usable(path: MultipathPath) -> bool:
    return (
        path.dm_state == "active"
        and path.path_state in _USABLE_CHECKER
        and path.online_state in {None, "running"}
    )


def _has_state_info(path: MultipathPath) -> bool:
    """``multipath -l`` prints ``undef`` for checker states: we cannot judge health from it."""
    return path.path_state != "undef"


# --- per-map checks (MP010-MP015, MP020, MP021) --------------------------------------------------


def check_multipath_map(
    mpath: MultipathMap,
    *,
    access_states: Mapping[str, str] | None = None,
    failback: str | None = None,
) -> list[Finding]:
    """Path count, path health and ALUA grouping of one map (MP010-MP015, MP020, MP021).

    Args:
        mpath: the map.
        access_states: optional ``{"sdb": "active/optimized", …}`` from
            ``/sys/block/sdX/device/access_state`` (for MP020 when path priorities are unknown).
        failback: effective failback when known from elsewhere (config); the map's own JSON
            ``failback`` is used first.
    """
    findings: list[Finding] = []
    name = f"{mpath.name} ({mpath.dm or 'no dm'}, {mpath.vendor},{mpath.product})"
    paths = mpath.paths
    judged = [path for path in paths if _has_state_info(path)]
    bad = [
        path
        for path in judged
        if path.dm_state == "failed"
        or path.path_state in _BAD_CHECKER
        or path.online_state == "offline"
    ]
    usable = [path for path in judged if _is_usable(path)]
    if bad:
        devices = ", ".join(
            f"{p.dev or p.hctl or '?'} ({p.dm_state} {p.path_state} {p.online_state})" for p in bad
        )
        findings.append(
            _finding(
                "MP010",
                Severity.ERROR,
                f"{name}: {len(bad)} of {len(paths)} paths failed: {devices}",
                "Check the iSCSI session, network link and array port; `multipathd show paths`",
                "S51",
                "S52",
                "S55",
            )
        )
    no_paths_active = mpath.active_paths == 0 if mpath.active_paths is not None else None
    if paths and (no_paths_active or (judged and not usable and no_paths_active is None)):
        findings.append(
            _finding(
                "MP011",
                Severity.ERROR,
                f"{name}: no usable path; I/O is queued or failing "
                f"(queueing {mpath.queueing or 'unknown'})",
                "Restore at least one path; see MP030 about queueing",
                "S51",
                "S52",
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
                "S60",
                "S56",
                "S63",
            )
        )
    if _vendor_key(mpath.vendor, mpath.product) == "netapp" and len(paths) > 4:
        findings.append(
            _finding(
                "MP013",
                Severity.WARN,
                f"{name}: {len(paths)} paths; ONTAP: a single LUN "
                "shouldn't require more than four paths",
                "Reduce portals/ifaces or use portsets so each LUN has at most 4 paths",
                "S60",
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
                "S51",
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
                "S51",
                "S59",
            )
        )
    findings.extend(_check_alua_grouping(mpath, name, access_states or {}))
    findings.extend(_check_failback(mpath, name, mpath.failback or failback))
    return findings


def _check_alua_grouping(
    mpath: MultipathMap, name: str, access_states: Mapping[str, str]
) -> list[Finding]:
    """MP020: one path group while paths differ in priority or ALUA access state."""
    if len(mpath.path_groups) != 1 or len(mpath.paths) < 2:
        return []
    prios = {path.prio for path in mpath.paths if path.prio is not None}
    states = {access_states[p.dev] for p in mpath.paths if p.dev and p.dev in access_states}
    asymmetric_states = "active/optimized" in states and bool(
        states & {"active/non-optimized", "standby"}
    )
    if len(prios) < 2 and not ("alua" in mpath.hwhandler and asymmetric_states):
        return []
    evidence = (
        f"path priorities {sorted(prios)}" if len(prios) >= 2 else f"access states {sorted(states)}"
    )
    return [
        _finding(
            "MP020",
            Severity.WARN,
            f"{name}: all paths in one group on an asymmetric (ALUA) array ({evidence}); "
            "I/O also goes "
            "over non-optimized paths",
            "path_grouping_policy group_by_prio with the vendor prioritizer (alua, ontap, sysfs)",
            "S50",
            "S60",
            "S53",
            "S66",
            "S68",
            "S59",
        )
    ]


def _check_failback(mpath: MultipathMap, name: str, failback: str | None) -> list[Finding]:
    """MP021: I/O stays on a lower-priority group while failback is not immediate."""
    if failback is None or failback == "immediate" or len(mpath.path_groups) < 2:
        return []
    active = [group for group in mpath.path_groups if group.status == "active"]
    if not active or active[0].prio is None:
        return []
    better = [
        group
        for group in mpath.path_groups
        if group.prio is not None
        and group.prio > active[0].prio
        and any(_is_usable(p) for p in group.paths)
    ]
    if not better:
        return []
    return [
        _finding(
            "MP021",
            Severity.WARN,
            f"{name}: active group prio {active[0].prio} < usable group prio {better[0].prio} "
            f"and failback is {failback}",
            "failback immediate",
            "S50",
            "S60",
            "S53",
            "S66",
            "S68",
        )
    ]


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
                "S63",
            )
        )
    if conf_present is False:
        findings.append(
            _finding(
                "MP001",
                Severity.ERROR,
                "/etc/multipath.conf is missing; the multipath daemon needs it to start",
                "`touch /etc/multipath.conf` (ONTAP built-ins suffice) or `mpathconf --enable`",
                "S62",
                "S60",
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
    vendors = {(m.vendor, m.product): _vendor_key(m.vendor, m.product) for m in maps}
    builtin_vendors = {key for key in vendors.values() if key}
    for section_name, section in (("defaults", conf.defaults), ("overrides", conf.overrides)):
        overridden = [key for key in _MP002_KEYS if section.get(key) is not None]
        if overridden and builtin_vendors:
            findings.append(
                _finding(
                    "MP002",
                    Severity.INFO,
                    f"multipath.conf {section_name} sets {', '.join(overridden)} while LUNs of "
                    f"{', '.join(sorted(_VENDOR_NAMES[v] for v in builtin_vendors))} "
                    "(built-in entries) are present",
                    "Move these settings into a devices { device { vendor … product … } } stanza",
                    "S62",
                    "S50",
                    "S55",
                )
            )
    find_multipaths = conf.defaults.get("find_multipaths")
    if find_multipaths is not None and find_multipaths not in {"no", "off"}:
        findings.append(
            _finding(
                "MP003",
                Severity.WARN if trident else Severity.INFO,
                f"find_multipaths is {find_multipaths!r}: a new LUN with one path at attach "
                "time may be "
                "used as a bare sdX",
                "Trident: `find_multipaths no` under defaults; others: the vendor value",
                "S63",
                "S50",
                "S55",
                "S67",
            )
        )
    for (vendor, product), key in vendors.items():
        if key not in {"pure", "netapp"}:
            continue
        ufn = _effective(conf, "user_friendly_names", vendor, product)
        if ufn == "yes":
            findings.append(
                _finding(
                    "MP004",
                    Severity.INFO,
                    f"user_friendly_names yes applies to {vendor},{product}; "
                    "the vendor requires no",
                    "Set `user_friendly_names no` in the device stanza",
                    "S67",
                    "S53",
                    "S60",
                )
            )
        checker = _effective(conf, "path_checker", vendor, product)
        if checker is not None and checker != "tur":
            findings.append(
                _finding(
                    "MP022",
                    Severity.INFO,
                    f"path_checker {checker} for {vendor},{product}; tur is the "
                    "recommended asynchronous checker",
                    "path_checker tur",
                    "S50",
                    "S60",
                    "S66",
                    "S68",
                )
            )
    for (vendor, product), key in vendors.items():
        if key is None:
            continue
        allowed, wanted, src = _VENDOR_NO_PATH_RETRY[key]
        value = _effective(conf, "no_path_retry", vendor, product)
        if value is not None and value not in allowed:
            findings.append(
                _finding(
                    "MP030",
                    Severity.WARN,
                    f"no_path_retry {value} for {vendor},{product}; "
                    f"{_VENDOR_NAMES[key]} guidance is {wanted}",
                    f"no_path_retry {wanted} in a devices stanza for {vendor}",
                    src,
                    "S50",
                )
            )
    queue_configured = (
        conf.defaults.get("no_path_retry") == "queue"
        or any(stanza.get("no_path_retry") == "queue" for stanza in conf.devices)
        or any(
            "queue_if_no_path" in (section.get("features") or "")
            for section in (conf.defaults, conf.overrides)
        )
    )
    if queue_configured and conf.defaults.get("queue_without_daemon") != "no":
        findings.append(
            _finding(
                "MP031",
                Severity.WARN,
                "unbounded queueing (no_path_retry queue / queue_if_no_path) without "
                "queue_without_daemon no: processes can hang unkillable when all paths are down",
                "queue_without_daemon no; prefer a bounded no_path_retry N "
                "unless the vendor requires queue",
                "S50",
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
                "S50",
            )
        )
    return findings


def _check_map_queueing(mpath: MultipathMap) -> list[Finding]:
    """MP030 from the live map (multipathd JSON ``queueing``)."""
    key = _vendor_key(mpath.vendor, mpath.product)
    if key not in {"netapp", "pure"} or mpath.queueing is None:
        return []
    if key == "netapp" and mpath.queueing != "on":
        wanted = "queue (queueing on)"
    elif key == "pure" and mpath.queueing != "off":
        wanted = "0 (queueing off)"
    else:
        return []
    return [
        _finding(
            "MP030",
            Severity.WARN,
            f"{mpath.name} ({mpath.vendor},{mpath.product}): queueing {mpath.queueing}; "
            "vendor guidance is "
            f"no_path_retry {wanted}",
            "Use the vendor no_path_retry in a devices stanza",
            "S60" if key == "netapp" else "S66",
            "S50",
        )
    ]


def check_pure_detect_prio(conf: MultipathConf, maps: Sequence[MultipathMap] = ()) -> list[Finding]:
    """MP023: a Pure FlashArray map while multipath.conf turns ``detect_prio`` on.

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
        if _vendor_key(*key) != "pure" or key in seen:
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
                "Pure requires no, otherwise the sysfs prioritizer replaces alua and array "
                "firmware updates can go wrong",
                'detect_prio "no" in the PURE device stanza',
                "S65",
                "S53",
            )
        )
    return findings


# --- session checks (ISCSI001-ISCSI010, ISCSI013) -----------------------------------------------

_LOGGED_IN = {"LOGGED_IN", "LOGGED IN"}
_CONN_UP = {"LOGGED IN", "LOGGED_IN", "up"}


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
                "S58",
                "S57",
                "S63",
            )
        )
    if session.internal_session_state in {"REOPEN", "CLEANUP", "REDIRECT"}:
        findings.append(
            _finding(
                "ISCSI002",
                Severity.WARN,
                f"{name}: iscsid internal state {session.internal_session_state} (re-establishing)",
                "Re-sample; inspect the kernel log for `detected conn error`",
                "S57",
                "S56",
            )
        )
    if session.source == "sysfs" and session.connection_state in {"failed", "down"}:
        findings.append(
            _finding(
                "ISCSI003",
                Severity.ERROR,
                f"{name}: connection state {session.connection_state}",
                "Check portal reachability and CHAP; re-login the session",
                "S58",
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
                    "S57",
                    "S52",
                )
            )
    return findings


def _multipathed_devices(maps: Iterable[MultipathMap]) -> set[str]:
    return {path.dev for mpath in maps for path in mpath.paths if path.dev}


def check_replacement_timeout(session: IscsiSession, multipathed: bool) -> list[Finding]:
    """ISCSI004 (multipathed and replacement_timeout > 15 s) and ISCSI005 (single path, < 120 s)."""
    timeout = session.recovery_timeout_s
    if timeout is None:
        return []
    name = _session_name(session)
    if multipathed and timeout > 15:
        return [
            _finding(
                "ISCSI004",
                Severity.WARN,
                f"{name}: replacement_timeout {timeout}s delays multipath failover "
                "(5-15s recommended)",
                "Set node.session.timeo.replacement_timeout (NetApp 5, HPE 10) in iscsid.conf and "
                "`iscsiadm -m node -o update -n node.session.timeo.replacement_timeout -v 5`, "
                "then re-login",
                "S56",
                "S61",
                "S68",
                "S58",
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
                "S56",
            )
        ]
    return []


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
                "S64",
                "S56",
                "S58",
            )
        ]
    if session.chap_enabled and session.chap_mutual is False:
        return [
            _finding(
                "ISCSI007",
                Severity.INFO,
                f"{name}: one-way CHAP only (target not authenticated)",
                "Use bidirectional CHAP",
                "S64",
                "S56",
                "S58",
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
                    "S45",
                    "S51",
                    "S63",
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
                "S56",
                "S68",
                "S57",
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
                    "S56",
                    "S60",
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
            "S63",
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
            "S63",
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
            "S56",
            "S68",
        )
    ]


#: HPE CSI node conformance (rules.md ISCSI016, S68): key, how to compare, wanted value.
_HPE_ISCSID = (
    (QUEUE_DEPTH, 256),
    (CMDS_MAX, 512),
    (LOGIN_TIMEOUT, 15),
)


def check_hpe_iscsid_conf(conf: IscsidConf, maps: Sequence[MultipathMap]) -> list[Finding]:
    """ISCSI016 (HPE Nimble / Alletra 5000/6000 LUNs present): iscsid.conf below the HPE CSI
    conformance values (queue_depth 256, cmds_max 512, login_timeout 15, node.startup manual)."""
    if not any(_vendor_key(m.vendor, m.product) == "nimble" for m in maps):
        return []
    off = [
        f"{_shown(conf, key)} (HPE: >= {minimum})"
        for key, minimum in _HPE_ISCSID
        if (number := conf.int_value(key)) is not None and number < minimum
    ]
    startup = conf.value(STARTUP)
    if startup is not None and startup.lower() != "manual":
        off.append(f"{_shown(conf, STARTUP)} (HPE: manual)")
    if not off:
        return []
    return [
        _finding(
            "ISCSI016",
            Severity.INFO,
            f"HPE Nimble LUNs present; new node records get {'; '.join(off)}",
            "Set the HPE CSI values in /etc/iscsi/iscsid.conf (node.session.queue_depth 256, "
            "node.session.cmds_max 512, node.conn[0].timeo.login_timeout 15, "
            "node.startup manual)",
            "S68",
            "S56",
        )
    ]


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
) -> list[Finding]:
    """Run every node-level iSCSI/multipath rule and return the findings, most severe first.

    Args:
        sessions: parsed sessions (``iscsiadm -m session -P 3`` or the sysfs dump).
        maps: parsed multipath maps (multipathd JSON preferred, ``multipath -ll`` otherwise).
        conf: parsed /etc/multipath.conf, when read.
        node_records: ``iscsiadm -m node`` records (ISCSI010).
        multipathd_running / multipath_installed / multipath_conf_present / iscsid_running:
            facts probed on the node; ``None`` = unknown, never fires.
        trident: the node runs Trident (raises MP003 to warn; enables ISCSI012).
        in_use_devices: ``sdX`` names kubelet uses directly (ISCSI008 severity, see there).
        access_states: ``{"sdX": access_state}`` from sysfs (MP020 when priorities are unknown).
        nr_sessions: ``node.session.nr_sessions`` (ISCSI009 tolerance).
        iscsid_conf: parsed /etc/iscsi/iscsid.conf, when read (ISCSI006, ISCSI012, ISCSI016).

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
                "S63",
            )
        )
    config_failback = conf.defaults.get("failback") if conf else None
    for mpath in maps:
        device = conf.device_for(mpath.vendor, mpath.product) if conf else None
        failback = (device.get("failback") if device else None) or config_failback
        findings.extend(check_multipath_map(mpath, access_states=access_states, failback=failback))
        findings.extend(_check_map_queueing(mpath))
    if conf is not None:
        findings.extend(check_multipath_conf(conf, maps, trident=trident))
        findings.extend(check_pure_detect_prio(conf, maps))
    multipathed = _multipathed_devices(maps)
    any_multipathed = False
    for session in sessions:
        findings.extend(check_session_state(session))
        findings.extend(check_chap(session))
        session_multipathed = any(d.disk in multipathed for d in session.disks if d.disk)
        any_multipathed = any_multipathed or session_multipathed
        findings.extend(check_replacement_timeout(session, session_multipathed))
    if iscsid_conf is not None:
        findings.extend(check_iscsid_scan(iscsid_conf, trident=trident))
        findings.extend(check_iscsid_noop_out(iscsid_conf, multipathed=any_multipathed))
        findings.extend(check_hpe_iscsid_conf(iscsid_conf, maps))
    findings.extend(check_unmultipathed_disks(sessions, maps, in_use_devices=in_use_devices))
    findings.extend(check_duplicate_sessions(sessions, nr_sessions=nr_sessions))
    findings.extend(check_portal_redundancy(sessions, node_records))
    return sorted(findings, key=lambda f: (-f.severity.rank, f.id))
