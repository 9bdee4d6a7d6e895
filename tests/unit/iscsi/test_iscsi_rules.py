"""iSCSI / multipath rules: each rule has a case that fires and one that does not."""

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
    parse_multipathd_json,
)
from kubectl_storage.core.iscsi.multipath_conf import parse_multipath_conf
from kubectl_storage.core.iscsi.node_report import build_node_report
from kubectl_storage.core.iscsi.rules import evaluate_iscsi_node
from kubectl_storage.core.iscsi.rules.config import (
    check_multipath_conf,
    check_multipathd_presence,
    check_pure_detect_prio,
    unjudged_defaults,
)
from kubectl_storage.core.iscsi.rules.iscsid import (
    check_hpe_iscsid_conf,
    check_iscsid_noop_out,
    check_iscsid_scan,
)
from kubectl_storage.core.iscsi.rules.maps import check_multipath_map
from kubectl_storage.core.iscsi.rules.sessions import (
    check_chap,
    check_duplicate_sessions,
    check_initiator_is_not_a_target,
    check_portal_redundancy,
    check_session_state,
    check_unique_initiator_names,
    check_unmultipathed_disks,
)
from kubectl_storage.core.iscsi.rules.timeouts import check_replacement_timeout
from kubectl_storage.core.iscsi.sessions import (
    IscsiDisk,
    IscsiSession,
    parse_iscsi_sysfs_dump,
    parse_iscsiadm_node,
    parse_iscsiadm_session,
    parse_iscsiadm_session_detail,
)
from kubectl_storage.core.nodes.capture import NodeCapture
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.core.report.findings import Finding, Severity

FIXTURES = Path(__file__).parents[2] / "fixtures"


def _ids(findings: list[Finding]) -> list[str]:
    return [f.id for f in findings]


def _ll(name: str) -> tuple[MultipathMap, ...]:
    return parse_multipath_ll((FIXTURES / "multipath" / name).read_text())


def _path(
    dev: str,
    *,
    dm: str = "active",
    chk: str = "ready",
    online: str = "running",
    prio: int | None = None,
) -> MultipathPath:
    return MultipathPath(
        hctl=f"3:0:0:{ord(dev[-1]) - 97}",
        dev=dev,
        major_minor="8:16",
        dm_state=dm,
        path_state=chk,
        online_state=online,
        prio=prio,
    )


def _map(
    *groups: PathGroup,
    vendor: str = "NETAPP",
    product: str = "LUN C-Mode",
    hwhandler: str = "1 alua",
    **extra: object,
) -> MultipathMap:
    base = MultipathMap(
        wwid="3600a0980000000000000000000000001",
        alias="mpatha",
        dm="dm-0",
        vendor=vendor,
        product=product,
        size="10G",
        features="0",
        hwhandler=hwhandler,
        wp="rw",
        path_groups=groups,
    )
    return dataclasses.replace(base, **extra)  # type: ignore[arg-type]


def _group(*paths: MultipathPath, prio: int = 50, status: str = "active") -> PathGroup:
    return PathGroup(policy="service-time 0", prio=prio, status=status, paths=paths)


def _session(**changes: object) -> IscsiSession:
    base = IscsiSession(
        target="iqn.1992-08.com.netapp:sn.1:vs.4",
        current_portal="10.0.0.1:3260",
        persistent_portal="10.0.0.1:3260",
        tpgt=1,
        iface_name="default",
        sid=1,
        connection_state="LOGGED IN",
        session_state="LOGGED_IN",
        internal_session_state="NO CHANGE",
        disks=(IscsiDisk(hctl="3:0:0:0", lun=0, disk="sdb", state="running"),),
        recovery_timeout_s=5,
        chap_enabled=True,
        chap_mutual=True,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


HEALTHY = _map(
    _group(_path("sdb"), _path("sdc")),
    _group(_path("sdd"), _path("sde"), prio=10, status="enabled"),
)


def test_healthy_map_has_no_findings() -> None:
    assert check_multipath_map(HEALTHY) == []


# --- MP010 / MP011 / MP012 / MP013 / MP014 / MP015 --------------------------------------------


def test_mp010_failed_faulty_paths_from_capture() -> None:
    mpatha, _ = _ll("stockage_path_down_failed_faulty.txt")
    findings = check_multipath_map(mpatha)
    assert "MP010" in _ids(findings)
    mp010 = next(f for f in findings if f.id == "MP010")
    assert mp010.severity is Severity.ERROR
    assert "sdd" in mp010.message
    assert "S51" in mp010.source


def test_mp010_not_on_healthy_capture_nor_on_multipath_l_undef() -> None:
    assert "MP010" not in _ids(check_multipath_map(_ll("stockage_lio_alua_config_warning.txt")[0]))
    assert _ids(check_multipath_map(_ll("osbrick_ibm_svc_no_alias_undef.txt")[0])) == []


def test_mp011_all_paths_down() -> None:
    (mpath,) = parse_multipathd_json(
        (FIXTURES / "multipathd" / "ubiquity_list_maps_json_with_prompt.txt").read_text()
    )
    ids = _ids(check_multipath_map(mpath))
    assert "MP011" in ids
    assert "MP010" in ids
    assert "MP012" in ids
    assert "MP011" not in _ids(check_multipath_map(HEALTHY))
    down = _map(_group(_path("sdb", dm="failed", chk="faulty"), _path("sdc", chk="faulty")))
    assert "MP011" in _ids(check_multipath_map(down))


def test_mp012_single_path() -> None:
    single = _map(_group(_path("sdb")))
    assert _ids(check_multipath_map(single)) == ["MP012"]
    assert "MP012" not in _ids(check_multipath_map(_ll("osbrick_3par_alias.txt")[0]))


def test_mp013_netapp_more_than_four_paths() -> None:
    many = _map(
        _group(*(_path(f"sd{c}") for c in "bcd")),
        _group(*(_path(f"sd{c}") for c in "efg"), prio=10, status="enabled"),
    )
    assert "MP013" in _ids(check_multipath_map(many))
    assert "MP013" not in _ids(check_multipath_map(HEALTHY))
    other_vendor = dataclasses.replace(many, vendor="DELL", product="MD36xxi")
    assert "MP013" not in _ids(check_multipath_map(other_vendor))


def test_mp014_transient_states() -> None:
    netapp, _ = _ll("invented_edge_cases.txt")
    mp014 = [f for f in check_multipath_map(netapp) if f.id == "MP014"]
    assert len(mp014) == 1
    assert "sdh" in mp014[0].message
    assert mp014[0].severity is Severity.INFO
    assert "MP014" not in _ids(check_multipath_map(HEALTHY))


def test_mp015_all_standby() -> None:
    ghosts = _map(_group(_path("sdb", chk="ghost"), _path("sdc", chk="ghost")))
    assert "MP015" in _ids(check_multipath_map(ghosts))
    assert "MP015" not in _ids(check_multipath_map(HEALTHY))


# --- MP020 / MP021 ------------------------------------------------------------------------------


def test_mp020_one_group_with_different_path_priorities() -> None:
    flat = _map(_group(_path("sdb", prio=50), _path("sdc", prio=10)))
    assert "MP020" in _ids(check_multipath_map(flat))
    symmetric = _map(_group(_path("sdb", prio=50), _path("sdc", prio=50)))
    assert "MP020" not in _ids(check_multipath_map(symmetric))
    assert "MP020" not in _ids(check_multipath_map(HEALTHY))


def test_mp020_from_sysfs_access_states() -> None:
    flat = _map(_group(_path("sdb"), _path("sdc")))
    states = {"sdb": "active/optimized", "sdc": "active/non-optimized"}
    assert "MP020" in _ids(check_multipath_map(flat, access_states=states))
    same = {"sdb": "active/optimized", "sdc": "active/optimized"}
    assert "MP020" not in _ids(check_multipath_map(flat, access_states=same))


def test_mp021_io_stays_on_lower_priority_group() -> None:
    stuck = _map(
        _group(_path("sdb"), prio=10, status="active"),
        _group(_path("sdc"), prio=50, status="enabled"),
        failback="manual",
    )
    (finding,) = [f for f in check_multipath_map(stuck) if f.id == "MP021"]
    assert finding.severity is Severity.WARN
    # failback immediate: the state is still reported, as a transient (re-sample)
    immediate = check_multipath_map(dataclasses.replace(stuck, failback="immediate"))
    assert [f.severity for f in immediate if f.id == "MP021"] == [Severity.INFO]
    assert "MP021" not in _ids(check_multipath_map(dataclasses.replace(HEALTHY, failback="manual")))


def test_mp021_names_the_failback_behind_multipathds_dash() -> None:
    # multipathd JSON prints "-" for failback manual and for an idle deferred failback N
    # (print.c snprint_failback): the configured value tells which; manual (the default) if none.
    stuck = _map(
        _group(_path("sdb"), prio=10, status="active"),
        _group(_path("sdc"), prio=50, status="enabled"),
        failback="-",
    )
    (manual,) = [f for f in check_multipath_map(stuck) if f.id == "MP021"]
    assert manual.message.endswith("failback is manual")
    (deferred,) = [f for f in check_multipath_map(stuck, failback="15") if f.id == "MP021"]
    assert deferred.message.endswith("failback is 15")
    named = dataclasses.replace(stuck, failback="followover")
    (shown,) = [f for f in check_multipath_map(named, failback="manual") if f.id == "MP021"]
    assert shown.message.endswith("failback is followover")


def test_mp010_a_path_dm_still_uses_whose_scsi_device_is_blocked() -> None:
    # constructed; the real case (tests/nodelab portal-drop) is in test_iscsi_lab_verdicts.py
    blocked = _map(_group(_path("sdb", online="blocked"), _path("sdc")))
    (finding,) = [f for f in check_multipath_map(blocked) if f.id == "MP010"]
    assert "sdb (active ready blocked: dm-multipath still sends I/O down it" in finding.message
    assert "S75" in finding.source
    offline = _map(_group(_path("sdb", dm="failed", chk="faulty", online="transport-offline")))
    (failed,) = [f for f in check_multipath_map(offline) if f.id == "MP010"]
    assert "sdb (failed faulty transport-offline)" in failed.message
    assert "MP010" not in _ids(check_multipath_map(_map(_group(_path("sdb"), _path("sdc")))))


# --- MP000 / MP001 ------------------------------------------------------------------------------


def test_mp000_multipathd_not_running_or_not_installed() -> None:
    assert _ids(check_multipathd_presence(iscsi_in_use=True, multipathd_running=False)) == ["MP000"]
    not_installed = check_multipathd_presence(
        iscsi_in_use=True, multipathd_running=None, multipath_installed=False
    )
    assert "not installed" in not_installed[0].message
    assert check_multipathd_presence(iscsi_in_use=True, multipathd_running=True) == []
    assert check_multipathd_presence(iscsi_in_use=False, multipathd_running=False) == []
    assert check_multipathd_presence(iscsi_in_use=True, multipathd_running=None) == []


def test_mp001_missing_conf() -> None:
    # multipathd stopped without the file (RHEL's unit needs it): MP000 and MP001 say why
    assert _ids(
        check_multipathd_presence(iscsi_in_use=True, multipathd_running=False, conf_present=False)
    ) == ["MP000", "MP001"]
    # Debian's default: multipathd runs on its built-in configuration, no file: quiet
    assert (
        check_multipathd_presence(iscsi_in_use=True, multipathd_running=True, conf_present=False)
        == []
    )
    assert (
        check_multipathd_presence(iscsi_in_use=True, multipathd_running=True, conf_present=True)
        == []
    )


# --- configuration rules ------------------------------------------------------------------------

STOCKAGE_CONF = parse_multipath_conf(
    (FIXTURES / "multipath" / "conf_stockage_rocky_duplicate_defaults.conf").read_text()
)
TRIDENT_CONF = parse_multipath_conf(
    (FIXTURES / "multipath" / "conf_invented_trident_netapp.conf").read_text()
)


def test_legacy_defaults_are_not_judged_for_netapp_from_the_file_alone() -> None:
    # The file sets user_friendly_names yes and no_path_retry 100 in defaults only: the built-in
    # NETAPP entry (no / queue) wins over defaults, so from the file alone they are not judged
    # (MP002 holds for overrides only) and the report says so.
    findings = check_multipath_conf(STOCKAGE_CONF, [HEALTHY], trident=True)
    ids = _ids(findings)
    assert ids == ["MP003", "MP032"]
    assert next(f for f in findings if f.id == "MP003").severity is Severity.WARN
    (note,) = unjudged_defaults(STOCKAGE_CONF, [HEALTHY])
    assert "user_friendly_names, no_path_retry" in note
    assert "multipathd show config" in note


def test_legacy_defaults_quiet_with_the_real_merged_config() -> None:
    # multipath -t of the same file (multipath-tools 0.9.4, tests/fixtures/multipath_config).
    merged = parse_multipath_conf(
        (
            FIXTURES / "multipath_config" / "stockage-rocky-duplicate-defaults.multipath-t.txt"
        ).read_text()
    )
    assert merged.merged
    findings = check_multipath_conf(STOCKAGE_CONF, [HEALTHY], trident=True, effective=merged)
    assert _ids(findings) == ["MP003", "MP032"]
    assert unjudged_defaults(merged, [HEALTHY]) == []


def test_conf_rules_quiet_on_recommended_trident_conf() -> None:
    assert check_multipath_conf(TRIDENT_CONF, [HEALTHY], trident=True) == []


def test_mp002_needs_a_builtin_vendor_and_mp003_is_info_off_trident() -> None:
    lio = _ll("stockage_lio_alua_config_warning.txt")
    ids = _ids(check_multipath_conf(STOCKAGE_CONF, lio))
    assert "MP002" not in ids
    assert "MP030" not in ids
    mp003 = next(f for f in check_multipath_conf(STOCKAGE_CONF, lio) if f.id == "MP003")
    assert mp003.severity is Severity.INFO


def test_mp022_non_tur_checker() -> None:
    conf = parse_multipath_conf(
        'devices {\n device {\n vendor "PURE"\n product "FlashArray"\n'
        " path_checker directio\n no_path_retry 0\n }\n}\n"
        "defaults {\n user_friendly_names no\n}\n"
    )
    pure = _map(
        _group(_path("sdb"), _path("sdc")), vendor="PURE", product="FlashArray", hwhandler="0"
    )
    assert _ids(check_multipath_conf(conf, [pure])) == ["MP022"]
    assert check_multipath_conf(TRIDENT_CONF, [pure]) == []
    # ALUA (hwhandler 1 alua) with detect_checker unset (built-in yes): multipathd uses tur
    alua = dataclasses.replace(pure, hwhandler="1 alua")
    assert check_multipath_conf(conf, [alua]) == []
    no_detect = parse_multipath_conf(
        'devices {\n device {\n vendor "PURE"\n product "FlashArray"\n'
        " path_checker directio\n detect_checker no\n no_path_retry 0\n }\n}\n"
    )
    assert _ids(check_multipath_conf(no_detect, [alua])) == ["MP022"]


def test_mp030_from_live_queueing() -> None:
    netapp_not_queueing = dataclasses.replace(HEALTHY, queueing="off")
    findings = evaluate_iscsi_node([], [netapp_not_queueing])
    assert _ids(findings) == ["MP030"]
    assert evaluate_iscsi_node([], [dataclasses.replace(HEALTHY, queueing="on")]) == []


# --- session rules ------------------------------------------------------------------------------


def test_iscsi001_and_iscsi002_from_p1_capture() -> None:
    sessions = parse_iscsiadm_session_detail(
        (FIXTURES / "iscsiadm" / "yast_session_P1_ipv6_transport_wait.txt").read_text()
    )
    ids = _ids(check_session_state(sessions[1]))
    assert ids == ["ISCSI001", "ISCSI002"]
    assert "TRANSPORT WAIT" in check_session_state(sessions[1])[0].message
    assert check_session_state(_session()) == []


def test_iscsi003_and_iscsi013_from_sysfs_dump() -> None:
    first, second = parse_iscsi_sysfs_dump(
        (FIXTURES / "iscsiadm" / "invented_sysfs_dump.txt").read_text()
    )
    assert _ids(check_session_state(first)) == ["ISCSI013"]
    assert "sdc" in check_session_state(first)[0].message
    assert _ids(check_session_state(second)) == ["ISCSI001", "ISCSI003"]
    up = dataclasses.replace(second, session_state="LOGGED_IN", connection_state="up")
    assert check_session_state(up) == []


def test_iscsi004_long_replacement_timeout_on_multipathed_session() -> None:
    (finding,) = check_replacement_timeout(_session(recovery_timeout_s=120), multipathed=True)
    assert finding.id == "ISCSI004"
    assert "120s" in finding.message
    assert "S61" in finding.source
    assert check_replacement_timeout(_session(recovery_timeout_s=5), multipathed=True) == []
    assert check_replacement_timeout(_session(recovery_timeout_s=15), multipathed=True) == []


def test_iscsi005_short_timeout_without_multipath() -> None:
    assert _ids(check_replacement_timeout(_session(recovery_timeout_s=5), multipathed=False)) == [
        "ISCSI005"
    ]
    assert check_replacement_timeout(_session(recovery_timeout_s=120), multipathed=False) == []


def test_iscsi007_chap() -> None:
    (off,) = check_chap(_session(chap_enabled=False, chap_mutual=False))
    assert (off.id, off.severity) == ("ISCSI007", Severity.WARN)
    (one_way,) = check_chap(_session(chap_enabled=True, chap_mutual=False))
    assert one_way.severity is Severity.INFO
    assert check_chap(_session()) == []
    assert check_chap(_session(chap_enabled=None, chap_mutual=None)) == []


def test_iscsi008_disk_without_multipath() -> None:
    sessions = [_session(), _session(sid=2, disks=(IscsiDisk("4:0:0:0", 0, "sdz", "running"),))]
    findings = check_unmultipathed_disks(sessions, [HEALTHY])
    assert _ids(findings) == ["ISCSI008"]
    assert "sdz" in findings[0].message
    assert findings[0].severity is Severity.WARN
    in_use = check_unmultipathed_disks(sessions, [HEALTHY], in_use_devices={"sdz"})
    assert in_use[0].severity is Severity.ERROR
    assert check_unmultipathed_disks(sessions, [HEALTHY], in_use_devices={"sdq"}) == []
    assert check_unmultipathed_disks([_session()], [HEALTHY]) == []


def test_iscsi009_duplicate_sessions() -> None:
    twice = [_session(), _session(sid=2)]
    (finding,) = check_duplicate_sessions(twice)
    assert finding.id == "ISCSI009"
    assert "sids 1, 2" in finding.message
    assert check_duplicate_sessions(twice, nr_sessions=2) == []
    chunk1 = parse_iscsiadm_session_detail(
        (FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt").read_text()
    )
    assert check_duplicate_sessions(chunk1) == []


def test_iscsi010_single_portal_while_several_known() -> None:
    records = parse_iscsiadm_node((FIXTURES / "iscsiadm" / "stockage_node_chunk1.txt").read_text())
    one = [_session(target="iqn.2024-12.tp2.b3:data-chunk1", persistent_portal="10.3.1.1:3260")]
    assert _ids(check_portal_redundancy(one, records)) == ["ISCSI010"]
    chunk1 = parse_iscsiadm_session_detail(
        (FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt").read_text()
    )
    assert check_portal_redundancy(chunk1, records) == []


def test_iscsi011_duplicate_initiator_names() -> None:
    (finding,) = check_unique_initiator_names({"n1": "iqn.a", "n2": "iqn.a", "n3": "iqn.b"})
    assert finding.id == "ISCSI011"
    assert "n1, n2" in finding.message
    assert check_unique_initiator_names({"n1": "iqn.a", "n2": "iqn.b"}) == []


def test_iscsi018_initiator_named_as_its_target() -> None:
    """The libvirt session (real iscsiadm output): the node's InitiatorName copied from the
    target's IQN fires; its own name (Debian's generated one) stays quiet."""
    sessions = parse_iscsiadm_session((FIXTURES / "iscsiadm" / "libvirt_session.txt").read_text())
    target = sessions[0].target
    (finding,) = check_initiator_is_not_a_target(target, sessions)
    assert (finding.id, finding.severity) == ("ISCSI018", Severity.WARN)
    assert check_initiator_is_not_a_target("iqn.1993-08.org.debian:01:dac6f6a0c217", sessions) == []
    assert check_initiator_is_not_a_target(None, sessions) == []


def test_iscsi015_iscsid_not_running() -> None:
    assert "ISCSI015" in _ids(evaluate_iscsi_node([_session()], [HEALTHY], iscsid_running=False))
    assert "ISCSI015" not in _ids(evaluate_iscsi_node([_session()], [HEALTHY], iscsid_running=True))
    assert "ISCSI015" not in _ids(evaluate_iscsi_node([], [], iscsid_running=False))


# --- the node entry point -----------------------------------------------------------------------


def test_evaluate_real_node_chunk1() -> None:
    sessions = parse_iscsiadm_session_detail(
        (FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt").read_text()
    )
    maps = _ll("stockage_lio_alua_config_warning.txt")
    findings = evaluate_iscsi_node(
        sessions, maps, STOCKAGE_CONF, multipathd_running=True, multipath_conf_present=True
    )
    ids = _ids(findings)
    # replacement_timeout 120 on multipathed sessions, no CHAP, find_multipaths yes
    assert ids.count("ISCSI004") == 4
    assert ids.count("ISCSI007") == 4
    assert "MP003" in ids
    assert "MP010" not in ids
    assert "ISCSI008" not in ids
    ranks = [f.severity.rank for f in findings]
    assert ranks == sorted(ranks, reverse=True)
    for finding in findings:
        assert set(finding.to_dict()) == {"id", "severity", "message", "fix", "source"}
        assert finding.source
        assert finding.fix


def test_evaluate_clean_node_is_quiet() -> None:
    sessions = [
        _session(sid=1, disks=(IscsiDisk("3:0:0:0", 0, "sdb", "running"),)),
        _session(
            sid=2,
            persistent_portal="10.0.0.2:3260",
            disks=(IscsiDisk("4:0:0:0", 0, "sdd", "running"),),
        ),
    ]
    assert (
        evaluate_iscsi_node(
            sessions,
            [HEALTHY],
            TRIDENT_CONF,
            multipathd_running=True,
            multipath_conf_present=True,
            iscsid_running=True,
            trident=True,
        )
        == []
    )


@pytest.mark.parametrize("running", [False])
def test_evaluate_without_multipathd(running: bool) -> None:
    findings = evaluate_iscsi_node([_session()], [], multipathd_running=running)
    assert _ids(findings)[:2] == ["MP000", "ISCSI008"]


LONGHORN = _session(
    target="iqn.2019-10.io.longhorn:pvc-0b3e1c7a",
    current_portal="10.42.1.7:3260",
    persistent_portal="10.42.1.7:3260",
    chap_enabled=False,
    chap_mutual=False,
)


def test_longhorn_local_iscsi_is_not_a_san() -> None:
    # Longhorn's engine logs in to its own tgt: no multipathd wanted, disks stay bare (S78)
    findings = evaluate_iscsi_node(
        [LONGHORN], [], multipathd_running=False, multipath_installed=False
    )
    assert not {"MP000", "MP001", "ISCSI007", "ISCSI008"} & set(_ids(findings))
    # a loopback portal alone is no proof (the node lab's SAN paths include 127.0.0.1)
    loopback = _session(current_portal="127.0.0.1:3260", persistent_portal="127.0.0.1:3260")
    assert "MP000" in _ids(evaluate_iscsi_node([loopback], [], multipathd_running=False))
    # a SAN session next to Longhorn's still needs multipathd
    both = evaluate_iscsi_node([LONGHORN, _session(sid=2)], [], multipathd_running=False)
    assert {"MP000", "ISCSI008"} <= set(_ids(both))
    assert [f.id for f in both].count("ISCSI007") == 0  # the SAN session has CHAP


def test_mp017_local_disk_multipathed_instead_of_mp012() -> None:
    ata, openfiler = _ll("blog_orl6_ata_vbox_and_openfiler.txt")
    (finding,) = check_multipath_map(ata)
    assert finding.id == "MP017"
    assert "ATA,VBOX HARDDISK" in finding.message
    assert check_multipath_map(openfiler) == []
    # tgt's IET,VIRTUAL-DISK over two portals is a SAN map, not a local disk
    iet = [m for m in _ll("insights_rhel6_v4_ll.txt") if m.vendor.strip() == "IET"]
    assert iet
    assert all("MP017" not in _ids(check_multipath_map(m)) for m in iet)


def test_iscsi009_honours_nr_sessions_in_iscsid_conf() -> None:
    twice = [_session(), _session(sid=2)]
    assert "ISCSI009" in _ids(evaluate_iscsi_node(twice, [HEALTHY]))
    two = parse_iscsid_conf("node.session.nr_sessions = 2\n")
    assert "ISCSI009" not in _ids(evaluate_iscsi_node(twice, [HEALTHY], iscsid_conf=two))
    thrice = [*twice, _session(sid=3)]
    (finding,) = [
        f for f in evaluate_iscsi_node(thrice, [HEALTHY], iscsid_conf=two) if f.id == "ISCSI009"
    ]
    assert "nr_sessions 2" in finding.message


# --- iscsid.conf rules (ISCSI006, ISCSI012, ISCSI016) and MP023 -------------------------------


def _iscsid(name: str) -> IscsidConf:
    return parse_iscsid_conf((FIXTURES / "iscsid" / name).read_text(encoding="utf-8"))


SHIPPED_ISCSID = _iscsid("iscsid.conf.open-iscsi")
TRIDENT_ISCSID = _iscsid("iscsid.conf.invented-trident")
HPE_ISCSID = _iscsid("iscsid.conf.invented-hpe")
NOOP_OFF_ISCSID = _iscsid("iscsid.conf.invented-noop-off")
NIMBLE = _map(_group(_path("sdb"), _path("sdc")), vendor="Nimble", product="Server")
PURE = _map(_group(_path("sdb"), _path("sdc")), vendor="PURE", product="FlashArray")


def test_iscsi012_shipped_scan_auto_on_trident_node() -> None:
    findings = check_iscsid_scan(SHIPPED_ISCSID, trident=True)
    assert _ids(findings) == ["ISCSI012"]
    assert findings[0].severity is Severity.WARN
    assert "node.session.scan = auto" in findings[0].message
    assert "(default)" not in findings[0].message
    assert "S63" in findings[0].source
    # a missing key reads as the default auto, and says so
    assert (
        "node.session.scan = auto (default)"
        in check_iscsid_scan(parse_iscsid_conf("node.startup = manual\n"), trident=True)[0].message
    )


def test_iscsi012_quiet_off_trident_or_with_manual_scan() -> None:
    assert check_iscsid_scan(SHIPPED_ISCSID, trident=False) == []
    assert check_iscsid_scan(TRIDENT_ISCSID, trident=True) == []


def test_iscsi006_noop_out_off_with_multipathed_sessions() -> None:
    findings = check_iscsid_noop_out(NOOP_OFF_ISCSID, multipathed=True)
    assert _ids(findings) == ["ISCSI006"]
    assert findings[0].severity is Severity.WARN
    assert "new node records get" in findings[0].message
    assert "noop_out_interval, node.conn[0].timeo.noop_out_timeout" in findings[0].message
    only_timeout = parse_iscsid_conf("node.conn[0].timeo.noop_out_timeout = 0\n")
    message = check_iscsid_noop_out(only_timeout, multipathed=True)[0].message
    assert "sets node.conn[0].timeo.noop_out_timeout to 0" in message


def test_iscsi006_quiet_without_multipath_or_with_shipped_values() -> None:
    assert check_iscsid_noop_out(NOOP_OFF_ISCSID, multipathed=False) == []
    assert check_iscsid_noop_out(SHIPPED_ISCSID, multipathed=True) == []


def test_iscsi016_shipped_values_below_hpe_conformance() -> None:
    findings = check_hpe_iscsid_conf(SHIPPED_ISCSID, [NIMBLE])
    assert _ids(findings) == ["ISCSI016"]
    assert findings[0].severity is Severity.INFO
    message = findings[0].message
    assert "node.session.queue_depth = 32" in message
    assert "node.session.cmds_max = 128" in message
    # shipped login_timeout 15 and node.startup manual meet the HPE values
    assert "login_timeout" not in message
    assert "node.startup" not in message


def test_iscsi016_flags_automatic_startup_and_short_login_timeout() -> None:
    conf = parse_iscsid_conf("node.conn[0].timeo.login_timeout = 5\nnode.startup = automatic\n")
    message = check_hpe_iscsid_conf(conf, [NIMBLE])[0].message
    assert "node.conn[0].timeo.login_timeout = 5 (HPE: >= 15)" in message
    assert "node.startup = automatic (HPE: manual)" in message
    assert "node.session.queue_depth = 32 (default)" in message


def test_iscsi016_quiet_when_conformant_or_without_hpe_luns() -> None:
    assert check_hpe_iscsid_conf(HPE_ISCSID, [NIMBLE]) == []
    assert check_hpe_iscsid_conf(SHIPPED_ISCSID, [HEALTHY, PURE]) == []
    assert check_hpe_iscsid_conf(SHIPPED_ISCSID, []) == []


def test_mp023_pure_with_detect_prio_yes() -> None:
    conf = parse_multipath_conf(
        'devices {\n device {\n vendor "PURE"\n product "FlashArray"\n detect_prio yes\n }\n}\n'
    )
    findings = check_pure_detect_prio(conf, [PURE, PURE])
    assert _ids(findings) == ["MP023"]
    assert findings[0].severity is Severity.INFO
    assert "devices stanza" in findings[0].message
    assert "S65" in findings[0].source
    from_defaults = check_pure_detect_prio(
        parse_multipath_conf("defaults {\n detect_prio yes\n}\n"), [PURE]
    )
    assert "defaults" in from_defaults[0].message
    # overrides beat the device stanza
    overridden = parse_multipath_conf(
        "overrides {\n detect_prio no\n}\n"
        'devices {\n device {\n vendor "PURE"\n detect_prio yes\n }\n}\n'
    )
    assert check_pure_detect_prio(overridden, [PURE]) == []


def test_mp023_quiet_for_no_unset_or_other_vendors() -> None:
    yes = parse_multipath_conf("defaults {\n detect_prio yes\n}\n")
    assert check_pure_detect_prio(yes, [HEALTHY, NIMBLE]) == []
    no = parse_multipath_conf('devices {\n device {\n vendor "PURE"\n detect_prio "no"\n }\n}\n')
    assert check_pure_detect_prio(no, [PURE]) == []
    assert check_pure_detect_prio(TRIDENT_CONF, [PURE]) == []


def test_evaluate_runs_the_iscsid_rules() -> None:
    session = _session(recovery_timeout_s=10)
    findings = evaluate_iscsi_node(
        [session],
        [dataclasses.replace(NIMBLE, queueing=None)],
        iscsid_conf=NOOP_OFF_ISCSID,
        trident=True,
    )
    assert {"ISCSI006", "ISCSI012", "ISCSI016"} <= set(_ids(findings))
    # without the iscsid.conf the three rules cannot fire
    without = _ids(evaluate_iscsi_node([session], [NIMBLE], trident=True))
    assert not {"ISCSI006", "ISCSI012", "ISCSI016"} & set(without)


def _trident_objects(driver: str) -> VolumeObjects:
    pod = {
        "metadata": {"name": "db-0", "namespace": "team-a", "uid": "u1"},
        "spec": {
            "nodeName": "w1",
            "containers": [{"name": "main", "image": "postgres"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}],
        },
    }
    claim = {
        "metadata": {"name": "data-db-0", "namespace": "team-a"},
        "spec": {"volumeName": "pvc-1"},
    }
    volume = {"metadata": {"name": "pvc-1"}, "spec": {"csi": {"driver": driver}}}
    return VolumeObjects(pods=(pod,), pvs=(volume,), pvcs=(claim,))


def test_node_report_passes_iscsid_conf_and_trident_pv_to_the_rules() -> None:
    text = (FIXTURES / "iscsid" / "iscsid.conf.open-iscsi").read_text(encoding="utf-8")
    capture = NodeCapture(node="w1", texts={"iscsid-conf": (text,)})
    trident = build_node_report(capture, _trident_objects("csi.trident.netapp.io"))
    assert "ISCSI012" in [finding.id for finding in trident.findings]
    other = build_node_report(capture, _trident_objects("ebs.csi.aws.com"))
    assert "ISCSI012" not in [finding.id for finding in other.findings]


# --- iscsid unreachable: "Unknown" is not "down" ---------------------------------------------

LAB_CAPTURE = (
    Path(__file__).resolve().parents[2] / "nodelab/captures/iscsi/healthy/collect-iscsi.txt"
)


def _lab_iscsiadm_session(*, iscsid_answers: bool) -> tuple[IscsiSession, ...]:
    """The node lab's real ``iscsiadm -m session -P 3`` of two healthy sessions.

    Without iscsid the states are what iscsiadm printed on the lab's real node from a pod
    outside the host's network namespace (open-iscsi usr/session_info.c prints ``Unknown``
    when iscsid cannot be asked): derived from the real capture by changing those two lines.
    """
    text = LAB_CAPTURE.read_text()
    section = text.split("==> kubectl-storage:iscsiadm-session\n", 1)[1].split("==> ", 1)[0]
    if not iscsid_answers:
        section = section.replace(
            "iSCSI Connection State: LOGGED IN", "iSCSI Connection State: Unknown"
        ).replace(
            "Internal iscsid Session State: NO CHANGE", "Internal iscsid Session State: Unknown"
        )
    return parse_iscsiadm_session_detail(section)


def test_iscsid_unreachable_is_a_warning_not_a_session_down() -> None:
    sessions = _lab_iscsiadm_session(iscsid_answers=False)

    assert len(sessions) >= 2
    for session in sessions:
        findings = check_session_state(session)
        assert [(f.id, f.severity) for f in findings] == [("ISCSI017", Severity.WARN)]
        assert "LOGGED_IN" in findings[0].message


def test_iscsid_answering_gives_no_state_finding() -> None:
    sessions = _lab_iscsiadm_session(iscsid_answers=True)

    assert sessions
    assert all(check_session_state(session) == [] for session in sessions)


def test_a_connection_really_down_is_still_iscsi001() -> None:
    (session, *_) = _lab_iscsiadm_session(iscsid_answers=True)
    down = dataclasses.replace(session, connection_state="FAILED")

    assert _ids(check_session_state(down)) == ["ISCSI001"]


def _lab_node_report(*, multipathd_answers: bool):  # type: ignore[no-untyped-def]
    from kubectl_storage.core.nodes.collect import split_sections

    text = LAB_CAPTURE.read_text()
    if not multipathd_answers:  # derived: the section as a pod outside the host network got it
        head, rest = text.split("==> kubectl-storage:multipathd-json\n", 1)
        text = head + "==> kubectl-storage:multipathd-json\n" + "==> " + rest.split("==> ", 1)[1]
    capture = NodeCapture.from_sections("nodelab", split_sections(text))
    return build_node_report(capture, None)


def test_multipathd_answering_nothing_is_said_not_silently_replaced() -> None:
    quiet = _lab_node_report(multipathd_answers=False)
    answered = _lab_node_report(multipathd_answers=True)

    assert quiet.maps_source == "multipath-ll"
    assert any("multipathd answered nothing" in w for w in quiet.warnings)
    assert answered.maps_source == "multipathd-json"
    assert not any("multipathd answered nothing" in w for w in answered.warnings)
