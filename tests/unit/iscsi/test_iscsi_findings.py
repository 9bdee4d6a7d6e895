"""Issue 11 part 2 (multipath, iSCSI): findings made right. Each change has a case that fires and
one that stays quiet, on real captures where one exists (tests/fixtures/*/SOURCES.md); the maps
built here are marked as constructed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kubectl_storage.core.iscsi.iscsid_conf import IscsidConf, parse_iscsid_conf
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
    MultipathPath,
    PathGroup,
    parse_multipath_ll,
)
from kubectl_storage.core.iscsi.multipath_conf import parse_multipath_conf
from kubectl_storage.core.iscsi.rules import evaluate_iscsi_node
from kubectl_storage.core.iscsi.rules.config import check_multipath_conf
from kubectl_storage.core.iscsi.rules.maps import check_multipath_map, check_sanlun_luns
from kubectl_storage.core.iscsi.rules.timeouts import (
    check_iscsid_replacement_timeout,
    check_replacement_timeout,
)
from kubectl_storage.core.iscsi.sanlun import SanlunLun, parse_sanlun_lun_show_p
from kubectl_storage.core.iscsi.sessions import (
    IscsiDisk,
    IscsiSession,
    parse_iscsiadm_session_detail,
)
from kubectl_storage.core.report.findings import Finding, Severity

FIXTURES = Path(__file__).parents[2] / "fixtures"
EKS_WWID = "3600a09806c574230475d537a77624479"  # the LUN of the real EKS sanlun capture


def _ids(findings: list[Finding]) -> list[str]:
    return [f.id for f in findings]


def _sanlun(name: str) -> tuple[SanlunLun, ...]:
    return parse_sanlun_lun_show_p((FIXTURES / "sanlun" / name).read_text())


def _iscsid(name: str) -> IscsidConf:
    return parse_iscsid_conf((FIXTURES / "iscsid" / name).read_text(encoding="utf-8"))


def _path(
    dev: str, *, dm: str = "active", chk: str = "ready", prio: int | None = None
) -> MultipathPath:
    return MultipathPath(
        hctl=f"3:0:0:{ord(dev[-1]) - 97}",
        dev=dev,
        major_minor="8:0",
        dm_state=dm,
        path_state=chk,
        online_state="running",
        prio=prio,
    )


def _group(*paths: MultipathPath, prio: int | None = 50, status: str = "active") -> PathGroup:
    return PathGroup(policy="service-time 0", prio=prio, status=status, paths=paths)


def _map(*groups: PathGroup, wwid: str = EKS_WWID, **extra: object) -> MultipathMap:
    base = MultipathMap(
        wwid=wwid,
        alias=None,
        dm="dm-0",
        vendor="NETAPP",
        product="LUN C-Mode",
        size="100G",
        features="3 queue_if_no_path pg_init_retries 50",
        hwhandler="1 alua",
        wp="rw",
        path_groups=groups,
    )
    return dataclasses.replace(base, **extra)  # type: ignore[arg-type]


def _types(luns: tuple[SanlunLun, ...]) -> dict[str, str]:
    return {p.device: p.path_type for lun in luns for p in lun.paths}


EKS = _sanlun("eks_fsxn_cdot_show_p.txt")  # real: primary sda up, secondary sdb up
TWO_LUNS = _sanlun("invented_two_luns_path_down.txt")  # invented: lun1's primary sdc down


# --- queue_without_daemon unset means "no" ------------------------------------------------------


def test_queue_without_daemon_unset_is_no() -> None:
    # multipath.conf(5): queue_without_daemon "The default is: no".
    unset = parse_multipath_conf("defaults {\n no_path_retry queue\n}\n")
    assert "MP031" not in _ids(check_multipath_conf(unset))
    explicit_no = parse_multipath_conf(
        "defaults {\n no_path_retry queue\n queue_without_daemon no\n}\n"
    )
    assert "MP031" not in _ids(check_multipath_conf(explicit_no))
    yes = parse_multipath_conf("defaults {\n no_path_retry queue\n queue_without_daemon yes\n}\n")
    (finding,) = [f for f in check_multipath_conf(yes) if f.id == "MP031"]
    assert "defaults" in finding.message


def test_queue_if_no_path_counts_only_without_no_path_retry() -> None:
    feature = 'defaults {\n features "1 queue_if_no_path"\n queue_without_daemon yes\n}\n'
    assert "MP031" in _ids(check_multipath_conf(parse_multipath_conf(feature)))
    # no_path_retry takes precedence over the feature (multipath.conf(5)): bounded queueing
    bounded = feature.replace(
        "queue_without_daemon yes", "queue_without_daemon yes\n no_path_retry 12"
    )
    assert "MP031" not in _ids(check_multipath_conf(parse_multipath_conf(bounded)))


def test_real_rocky_conf_has_no_unbounded_queueing() -> None:
    # Real capture: defaults with features "1 queue_if_no_path" and no_path_retry 100.
    conf = parse_multipath_conf(
        (FIXTURES / "multipath" / "conf_stockage_rocky_duplicate_defaults.conf").read_text()
    )
    ids = _ids(check_multipath_conf(conf))
    assert "MP031" not in ids
    assert "MP032" in ids  # the deprecated feature is still reported


# --- find_multipaths greedy is not yes ---------------------------------------------------------


@pytest.mark.parametrize("value", ["greedy", "no", "off"])
def test_find_multipaths_values_that_multipath_every_path_are_quiet(value: str) -> None:
    conf = parse_multipath_conf(f"defaults {{\n find_multipaths {value}\n}}\n")
    assert "MP003" not in _ids(check_multipath_conf(conf, trident=True))


@pytest.mark.parametrize("value", ["yes", "on", "strict", "smart"])
def test_find_multipaths_values_that_leave_single_paths_bare_fire(value: str) -> None:
    conf = parse_multipath_conf(f"defaults {{\n find_multipaths {value}\n}}\n")
    (finding,) = [f for f in check_multipath_conf(conf, trident=True) if f.id == "MP003"]
    assert finding.severity is Severity.WARN


# --- the active group is the lower-priority one (I/O through the HA partner) -------------------


def test_mp021_fires_whatever_the_failback_when_the_state_is_wrong() -> None:
    # constructed: the ONTAP example shape (prio 50 / 10 groups) with I/O on the prio 10 group
    stuck = _map(
        _group(_path("sda"), prio=50, status="enabled"),
        _group(_path("sdb"), prio=10, status="active"),
    )
    (unknown,) = [f for f in check_multipath_map(stuck) if f.id == "MP021"]  # -ll: no failback
    assert unknown.severity is Severity.WARN
    assert "failback is unknown" in unknown.message
    immediate = [f for f in check_multipath_map(stuck, failback="immediate") if f.id == "MP021"]
    assert [f.severity for f in immediate] == [Severity.INFO]


def test_mp021_quiet_on_real_capture_with_a_dead_active_group() -> None:
    # Real capture: mpatha's active group holds only a failed path (MP010 says so), mpathb runs
    # on its best group. No I/O goes through a worse group while a better one works.
    for mpath in parse_multipath_ll(
        (FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt").read_text()
    ):
        ids = _ids(check_multipath_map(mpath, failback="manual"))
        assert "MP021" not in ids
        assert "MP010" in ids


def test_mp021_from_sanlun_types_when_priorities_are_equal() -> None:
    # constructed map over the real EKS sanlun paths: sda primary, sdb secondary
    on_partner = _map(
        _group(_path("sda"), prio=1, status="enabled"),
        _group(_path("sdb"), prio=1, status="active"),
    )
    (finding,) = [
        f for f in check_multipath_map(on_partner, path_types=_types(EKS)) if f.id == "MP021"
    ]
    assert "only secondary paths" in finding.message
    on_owner = dataclasses.replace(
        on_partner,
        path_groups=(
            _group(_path("sda"), prio=1, status="active"),
            _group(_path("sdb"), prio=1, status="enabled"),
        ),
    )
    assert "MP021" not in _ids(check_multipath_map(on_owner, path_types=_types(EKS)))


# --- one multibus group mixing primary and secondary paths -------------------------------------


def test_mp020_multibus_group_with_primary_and_secondary_paths() -> None:
    # constructed multibus map (one group) over the real EKS sanlun paths
    multibus = _map(_group(_path("sda"), _path("sdb"), prio=1))
    assert "MP020" not in _ids(check_multipath_map(multibus))  # nothing tells the paths apart
    (finding,) = [
        f for f in check_multipath_map(multibus, path_types=_types(EKS)) if f.id == "MP020"
    ]
    assert "primary and secondary" in finding.message
    grouped = _map(_group(_path("sda"), prio=50), _group(_path("sdb"), prio=10, status="enabled"))
    assert "MP020" not in _ids(check_multipath_map(grouped, path_types=_types(EKS)))


def test_mp020_ignores_the_priority_of_a_failed_path() -> None:
    # constructed symmetric array (all paths optimized): a failed path reports a low prio
    symmetric = _map(
        _group(
            _path("sda", prio=50),
            _path("sdb", prio=50),
            _path("sdc", dm="failed", chk="faulty", prio=0),
        )
    )
    assert "MP020" not in _ids(check_multipath_map(symmetric))
    asymmetric = _map(_group(_path("sda", prio=50), _path("sdb", prio=10)))
    assert "MP020" in _ids(check_multipath_map(asymmetric))


# --- sanlun path states and types feed the rules -----------------------------------------------


def test_sanlun_real_capture_with_both_paths_up_is_quiet() -> None:
    assert check_sanlun_luns(EKS) == []


def test_sanlun_down_primary_path() -> None:
    findings = check_sanlun_luns(TWO_LUNS)
    assert _ids(findings) == ["MP010", "MP016"]
    mp010, mp016 = findings
    assert "sdc (primary down)" in mp010.message
    assert "H1" in mp010.source
    assert mp016.severity is Severity.WARN
    assert "HA partner" in mp016.message


def test_sanlun_path_the_map_already_reports_is_not_repeated() -> None:
    (lun1,) = [lun for lun in TWO_LUNS if lun.lun == 1]
    mpath = _map(
        _group(_path("sdc", dm="failed", chk="faulty"), prio=50, status="enabled"),
        _group(_path("sdd"), prio=10, status="active"),
        wwid=lun1.host_device or "",
        dm=lun1.dm_device,
    )
    findings = check_sanlun_luns([lun1], [mpath])
    assert _ids(findings) == ["MP016"]  # MP010 comes from the map itself


def test_sanlun_no_path_up() -> None:
    (lun,) = EKS
    down = dataclasses.replace(
        lun, paths=tuple(dataclasses.replace(p, state="down") for p in lun.paths)
    )
    assert _ids(check_sanlun_luns([down])) == ["MP011"]


def test_evaluate_passes_sanlun_to_the_rules() -> None:
    assert "MP016" in _ids(evaluate_iscsi_node([], [], sanlun=TWO_LUNS))
    assert "MP016" not in _ids(evaluate_iscsi_node([], [], sanlun=EKS))
    multibus = _map(_group(_path("sda"), _path("sdb"), prio=1))
    assert "MP020" in _ids(evaluate_iscsi_node([], [multibus], sanlun=EKS))
    assert "MP020" not in _ids(evaluate_iscsi_node([], [multibus]))


# --- iscsid.conf replacement_timeout next to the live sessions ---------------------------------


def _session(sid: int, timeout: int | None, disk: str) -> IscsiSession:
    return IscsiSession(
        target="iqn.1992-08.com.netapp:sn.1:vs.4",
        current_portal=f"10.0.0.{sid}:3260",
        persistent_portal=f"10.0.0.{sid}:3260",
        tpgt=1,
        iface_name="default",
        sid=sid,
        connection_state="LOGGED IN",
        session_state="LOGGED_IN",
        internal_session_state="NO CHANGE",
        disks=(IscsiDisk(hctl=f"{sid}:0:0:0", lun=0, disk=disk, state="running"),),
        recovery_timeout_s=timeout,
        chap_enabled=True,
        chap_mutual=True,
    )


FAST = [_session(1, 5, "sda"), _session(2, 5, "sdb")]
MULTIPATHED = {1: True, 2: True}


def test_shipped_iscsid_conf_is_quiet_while_multipathd_sets_the_timeouts() -> None:
    # Real shipped open-iscsi iscsid.conf: replacement_timeout = 120. multipathd writes its
    # fast_io_fail_tmo into the recovery timeout of every session it maps (S75; the node lab shows
    # records at 120 and mapped sessions at 10), so new records holding 120 is the normal state.
    shipped = _iscsid("iscsid.conf.open-iscsi")
    assert check_iscsid_replacement_timeout(shipped, FAST, MULTIPATHED) == []
    assert (
        check_iscsid_replacement_timeout(shipped, FAST, MULTIPATHED, multipathd_running=True) == []
    )


def test_shipped_iscsid_conf_matters_where_multipathd_does_not_set_the_timeouts() -> None:
    shipped = _iscsid("iscsid.conf.open-iscsi")
    (stopped,) = check_iscsid_replacement_timeout(
        shipped, FAST, MULTIPATHED, multipathd_running=False
    )
    assert (stopped.id, stopped.severity) == ("ISCSI004", Severity.WARN)
    assert "node.session.timeo.replacement_timeout = 120" in stopped.message
    assert "5s" in stopped.message
    assert "multipathd is not running" in stopped.message
    assert "S75" in stopped.source
    # fast_io_fail_tmo off cannot be set on an iSCSI session: the record's 120 stays
    maps = [_map(_group(_path("sda"), _path("sdb")))]
    off = parse_multipath_conf(
        'devices {\n device {\n vendor "NETAPP"\n product "LUN.*"\n fast_io_fail_tmo off\n }\n}\n'
    )
    (finding,) = check_iscsid_replacement_timeout(
        shipped, FAST, MULTIPATHED, maps=maps, multipath_conf=off, multipathd_running=True
    )
    assert finding.id == "ISCSI004"
    assert "fast_io_fail_tmo off for NETAPP,LUN C-Mode" in finding.message
    five = parse_multipath_conf("defaults {\n fast_io_fail_tmo 5\n}\n")
    assert (
        check_iscsid_replacement_timeout(
            shipped, FAST, MULTIPATHED, maps=maps, multipath_conf=five, multipathd_running=True
        )
        == []
    )


def test_matching_iscsid_conf_is_quiet() -> None:
    trident = _iscsid("iscsid.conf.invented-trident")
    assert check_iscsid_replacement_timeout(trident, FAST, MULTIPATHED) == []
    assert (
        check_iscsid_replacement_timeout(trident, FAST, MULTIPATHED, multipathd_running=False) == []
    )
    # without multipath the conf-side ISCSI004 does not apply
    single = {1: False, 2: False}
    assert "ISCSI004" not in _ids(
        check_iscsid_replacement_timeout(
            _iscsid("iscsid.conf.open-iscsi"), FAST, single, multipathd_running=False
        )
    )


def test_conf_value_differing_from_unmapped_sessions_is_iscsi014() -> None:
    # iscsid.conf says 10 (the HPE value); sessions without a map run their record's 5.
    hpe = _iscsid("iscsid.conf.invented-hpe")
    (finding,) = check_iscsid_replacement_timeout(hpe, FAST, {1: False, 2: False})
    assert (finding.id, finding.severity) == ("ISCSI014", Severity.INFO)
    assert "1: 5s" in finding.message
    assert "-v 10" in finding.fix
    # a file that does not set the key seeds the default; nothing was edited
    assert check_iscsid_replacement_timeout(parse_iscsid_conf(""), FAST, {1: False, 2: False}) == []


def test_mapped_sessions_run_multipathds_value_not_their_records() -> None:
    # The same sessions mapped: their 5 s is multipathd's fast_io_fail_tmo, not their records'
    # value, so nothing says the records predate the file (the false ISCSI014 of the node lab).
    hpe = _iscsid("iscsid.conf.invented-hpe")
    assert check_iscsid_replacement_timeout(hpe, FAST, MULTIPATHED) == []
    mixed = check_iscsid_replacement_timeout(hpe, FAST, {1: True, 2: False})
    assert [(f.id, "2: 5s" in f.message, "1: 5s" in f.message) for f in mixed] == [
        ("ISCSI014", True, False)
    ]


def test_real_sessions_with_120s_and_an_updated_conf_get_the_record_fix() -> None:
    # Real iscsiadm -P 3 capture: four multipathed sessions with recovery timeout 120.
    sessions = parse_iscsiadm_session_detail(
        (FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt").read_text()
    )
    trident = _iscsid("iscsid.conf.invented-trident")  # sets 5
    (finding,) = check_replacement_timeout(sessions[0], True, conf=trident)
    assert finding.id == "ISCSI004"
    assert "(iscsid.conf: 5)" in finding.message
    assert "already sets 5" in finding.fix
    shipped = _iscsid("iscsid.conf.open-iscsi")
    (finding,) = check_replacement_timeout(sessions[0], True, conf=shipped)
    assert "Set node.session.timeo.replacement_timeout (NetApp 5, HPE 10)" in finding.fix
    # the session-level findings already say it: no conf-side ISCSI004 or ISCSI014 on top
    per_session = {s.sid: True for s in sessions}
    assert check_iscsid_replacement_timeout(trident, sessions, per_session) == []
    assert check_iscsid_replacement_timeout(shipped, sessions, per_session) == []


def test_evaluate_reads_the_conf_replacement_timeout() -> None:
    maps = [_map(_group(_path("sda"), _path("sdb"), prio=50))]
    shipped = _iscsid("iscsid.conf.open-iscsi")
    findings = evaluate_iscsi_node(FAST, maps, iscsid_conf=shipped, multipathd_running=False)
    assert "ISCSI004" in _ids(findings)
    running = evaluate_iscsi_node(FAST, maps, iscsid_conf=shipped, multipathd_running=True)
    assert "ISCSI004" not in _ids(running)
    quiet = evaluate_iscsi_node(
        FAST, maps, iscsid_conf=_iscsid("iscsid.conf.invented-trident"), multipathd_running=False
    )
    assert "ISCSI004" not in _ids(quiet)
    assert "ISCSI014" not in _ids(quiet)
