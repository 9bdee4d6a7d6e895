"""Per-map rules (MP010-MP015, MP020, MP021) and what ``sanlun lun show -p`` adds (MP010, MP011,
MP016)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
    PathGroup,
)
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.rules.health import (
    PRIMARY,
    SECONDARY,
    TRANSIENT_CHECKER,
    has_no_usable_path,
    has_state_info,
    is_bad,
    is_usable,
    map_name,
    path_states,
    stopped_under_dm,
)
from kubectl_storage.core.iscsi.sanlun import SanlunLun
from kubectl_storage.core.iscsi.vendors import array_for, is_local_disk
from kubectl_storage.core.report.findings import Finding, Severity

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
    name = map_name(mpath)
    paths = mpath.paths
    judged = [path for path in paths if has_state_info(path)]
    bad = [path for path in judged if is_bad(path)]
    array = array_for(mpath.vendor, mpath.product)
    if bad:
        devices = ", ".join(f"{p.dev or p.hctl or '?'} ({path_states(p)})" for p in bad)
        # A device stopped by the kernel (iSCSI session recovery blocks it, S58) that multipath
        # has not failed yet: multipath's own columns cannot show it (S52, S75).
        kernel = "S58 S75" if any(stopped_under_dm(p) for p in bad) else ""
        findings.append(
            ISCSI_RULES.cite(
                "MP010",
                Severity.ERROR,
                f"{name}: {len(bad)} of {len(paths)} paths failed: {devices}",
                "Check the iSCSI session, network link and array port; `multipathd show paths`",
                "S51 S52 S55",
                kernel,
            )
        )
    if has_no_usable_path(mpath):
        what = "no usable path" if paths else "no path left under the map"
        findings.append(
            ISCSI_RULES.cite(
                "MP011",
                Severity.ERROR,
                f"{name}: {what}; I/O is queued or failing "
                f"(queueing {mpath.queueing or 'unknown'})",
                "Restore at least one path; see MP030 about queueing",
                "S51 S52",
            )
        )
    if is_local_disk(mpath.vendor, mpath.product):
        findings.append(
            ISCSI_RULES.cite(
                "MP017",
                Severity.WARN,
                f"{name}: {mpath.vendor.strip()},{mpath.product.strip()} is a local or virtual "
                "disk under dm-multipath; it has no second path to add",
                "Blacklist it in multipath.conf (blacklist { device { vendor … product … } } or "
                "its wwid), then `multipath -f` the map",
            )
        )
    elif len(paths) == 1:  # none at all: MP011
        findings.append(
            ISCSI_RULES.cite(
                "MP012",
                Severity.WARN,
                f"{name}: {len(paths)} path(s); a single path gives no failover",
                "Log in to at least two portals or ifaces (or add zoning) "
                "so each LUN has >= 2 paths",
            )
        )
    if array is not None and array.max_paths is not None and len(paths) > array.max_paths:
        findings.append(
            ISCSI_RULES.cite(
                "MP013",
                Severity.WARN,
                f"{name}: {len(paths)} paths; {array.name}: a single LUN "
                f"shouldn't require more than {array.max_paths} paths",
                f"Reduce portals/ifaces or use portsets so each LUN has at most "
                f"{array.max_paths} paths",
                array.source("max_paths"),
            )
        )
    transient = [path for path in paths if path.path_state in TRANSIENT_CHECKER]
    if transient:
        findings.append(
            ISCSI_RULES.cite(
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
            ISCSI_RULES.cite(
                "MP015",
                Severity.ERROR,
                f"{name}: every path is ALUA standby (ghost); no active path",
                "Investigate the array's ALUA state (controller failover in progress?)",
            )
        )
    types = path_types or {}
    findings.extend(_check_alua_grouping(mpath, name, access_states or {}, types))
    findings.extend(_check_active_group(mpath, name, _failback_of(mpath.failback, failback), types))
    return _say_lines_unread(mpath, findings)


#: Findings that count or compare a map's paths: a path line that could not be read changes them.
_PATH_COUNT_RULES = frozenset({"MP010", "MP011", "MP012", "MP013", "MP015", "MP020", "MP021"})


def _say_lines_unread(mpath: MultipathMap, findings: list[Finding]) -> list[Finding]:
    """A finding on a pasted map some of whose lines could not be read says so: the path it
    counts or compares may be on one of them (issue 22)."""
    if not mpath.unread_lines:
        return findings
    count = len(mpath.unread_lines)
    where = ", ".join(str(number) for number in mpath.unread_lines[:5])
    more = ", …" if count > 5 else ""
    caveat = (
        f" (depends on {count} line(s) of this map that could not be read: line "
        f"{where}{more}; a path may be missing)"
    )
    return [
        replace(finding, message=finding.message + caveat)
        if finding.id in _PATH_COUNT_RULES
        else finding
        for finding in findings
    ]


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
    prios = {path.prio for path in group.paths if path.prio is not None and is_usable(path)}
    states = {access_states[p.dev] for p in group.paths if p.dev and p.dev in access_states}
    asymmetric_states = "active/optimized" in states and bool(
        states & {"active/non-optimized", "standby"}
    )
    mixed_types = {PRIMARY, SECONDARY} <= _types_of(group, types)
    if len(prios) >= 2:
        evidence = f"path priorities {sorted(prios)}"
    elif "alua" in mpath.hwhandler and asymmetric_states:
        evidence = f"access states {sorted(states)}"
    elif mixed_types:
        evidence = "primary and secondary paths (sanlun)"
    else:
        return []
    return [
        ISCSI_RULES.cite(
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
    if not active or not any(is_usable(path) for path in active[0].paths):
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
            and any(is_usable(path) for path in group.paths)
        ]
        if better:
            evidence = f"active group prio {current.prio} < usable group prio {better[0].prio}"
    if not better and _types_of(current, types) == {SECONDARY}:
        better = [
            group
            for group in mpath.path_groups
            if group is not current
            and PRIMARY in _types_of(group, types)
            and any(is_usable(path) for path in group.paths)
        ]
        if better:
            evidence = "the active group has only secondary paths while primary paths are usable"
    if not better:
        return []
    immediate = failback == "immediate"
    return [
        ISCSI_RULES.cite(
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
        known_bad = {p.dev for p in mpath.paths if is_bad(p)} if mpath else set()
        up = [path for path in lun.paths if path.state.lower() == "up"]
        down = [path for path in lun.paths if path.state.lower() != "up"]
        if not up:
            if mpath is None or not has_no_usable_path(mpath):
                findings.append(
                    ISCSI_RULES.cite(
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
                ISCSI_RULES.cite(
                    "MP010",
                    Severity.ERROR,
                    f"{name}: {len(down)} of {len(lun.paths)} paths not up: {shown}",
                    "Check the iSCSI session and the LIF of each path that is down",
                    "H1 S51",
                )
            )
        if not any(path.path_type.lower() == PRIMARY for path in up):
            primaries = [p for p in lun.paths if p.path_type.lower() == PRIMARY]
            what = (
                ", ".join(f"{p.device} {p.state}" for p in primaries)
                if primaries
                else "none listed"
            )
            findings.append(
                ISCSI_RULES.cite(
                    "MP016",
                    Severity.WARN,
                    f"{name}: no primary path up (primary: {what}); I/O goes through the HA "
                    "partner's secondary paths",
                    "Restore the paths to the node owning the LUN (sessions to its LIFs), or move "
                    "the LUN's volume to the node the host reaches",
                )
            )
    return findings
