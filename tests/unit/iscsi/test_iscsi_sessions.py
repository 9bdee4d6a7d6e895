"""iscsiadm and sysfs-dump parsers and the input-format detector."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.iscsi.sessions import (
    IscsiInputFormat,
    detect_iscsi_format,
    parse_iscsi_sysfs_dump,
    parse_iscsiadm_node,
    parse_iscsiadm_session,
    parse_iscsiadm_session_detail,
    split_portal,
)

FIXTURES = Path(__file__).parents[2] / "fixtures"


def _text(path: str) -> str:
    return (FIXTURES / path).read_text()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10.0.0.1:3260,1", ("10.0.0.1:3260", 1)),
        ("[fd00::1]:3260,1", ("[fd00::1]:3260", 1)),
        (
            "[2620:113:80c0:8080:e051:f9ea:73c7:9171]:3260,1",
            ("[2620:113:80c0:8080:e051:f9ea:73c7:9171]:3260", 1),
        ),
        ("161.26.110.17:3260,1027", ("161.26.110.17:3260", 1027)),
        ("target.example.com:3260", ("target.example.com:3260", None)),
        ("garbage", ("garbage", None)),
    ],
)
def test_split_portal(text: str, expected: tuple[str, int | None]) -> None:
    assert split_portal(text) == expected


def test_session_flat_listing() -> None:
    sessions = parse_iscsiadm_session(_text("iscsiadm/libvirt_session.txt"))
    assert [s.sid for s in sessions] == [1, 2, 3, 5, 6, 7]
    first = sessions[0]
    assert (first.transport, first.persistent_portal, first.tpgt, first.target, first.flash) == (
        "tcp",
        "10.20.30.40:3260",
        1,
        "iqn.2004-06.example:example1:iscsi.test",
        None,
    )
    assert first.current_portal is None
    assert first.session_state is None
    assert first.source == "iscsiadm-session"


def test_session_flat_listing_non_flash() -> None:
    sessions = parse_iscsiadm_session(_text("iscsiadm/libvirt_session_nonflash.txt"))
    assert [s.target for s in sessions][-1] == "iqn.2009-04.example:example1:iscsi.seven"
    assert {s.flash for s in sessions} == {False}
    chunk1 = parse_iscsiadm_session(_text("iscsiadm/stockage_session_chunk1.txt"))
    assert [(s.sid, s.persistent_portal) for s in chunk1] == [
        (18, "10.3.1.1:3260"),
        (21, "10.3.2.1:3260"),
        (22, "10.3.1.2:3260"),
        (23, "10.3.2.2:3260"),
    ]


def test_node_and_discovery_listing() -> None:
    records = parse_iscsiadm_node(_text("iscsiadm/stockage_node_chunk1.txt"))
    assert len(records) == 12
    assert records[0].to_dict() == {
        "portal": "10.3.1.1:3260",
        "tpgt": 1,
        "target": "iqn.2024-12.tp2.b3:data-chunk1",
    }
    assert {r.target for r in records} == {f"iqn.2024-12.tp2.b3:data-chunk{i}" for i in (1, 2, 3)}
    discovery = parse_iscsiadm_node(_text("iscsiadm/libvirt_sendtargets.txt"))
    assert {r.portal for r in discovery} == {"10.20.30.40:3260"}
    assert parse_iscsiadm_node("[fd00::1]:3260,1 iqn.x:y\n")[0].portal == "[fd00::1]:3260"


def test_session_detail_p3_space_indented() -> None:
    sessions = parse_iscsiadm_session_detail(
        _text("iscsiadm/stockage_session_P3_chunk1_spaces.txt")
    )
    assert [s.sid for s in sessions] == [18, 21, 22, 23]
    first = sessions[0]
    assert first.to_dict() == {
        "target": "iqn.2024-12.tp2.b3:data-chunk1",
        "current_portal": "10.3.1.1:3260",
        "persistent_portal": "10.3.1.1:3260",
        "tpgt": 1,
        "iface_name": "default",
        "sid": 18,
        "connection_state": "LOGGED IN",
        "session_state": "LOGGED_IN",
        "internal_session_state": "NO CHANGE",
        "disks": [{"hctl": "3:0:0:0", "lun": 0, "disk": "sdb", "state": "running"}],
        "transport": "tcp",
        "initiator_name": "iqn.2024-12.tp2.b3:data-chunk1:chunk1-initiator",
        "iface_ip": "10.3.1.101",
        "recovery_timeout_s": 120,
        "chap_enabled": False,
        "chap_mutual": False,
        "negotiated": {
            "HeaderDigest": "None",
            "DataDigest": "None",
            "MaxRecvDataSegmentLength": "262144",
            "MaxXmitDataSegmentLength": "262144",
            "FirstBurstLength": "65536",
            "MaxBurstLength": "262144",
            "ImmediateData": "Yes",
            "InitialR2T": "Yes",
            "MaxOutstandingR2T": "1",
        },
        "source": "iscsiadm-detail",
    }
    assert first.host_number == 3
    assert first.flash is False
    assert [s.disks[0].disk for s in sessions] == ["sdb", "sde", "sdd", "sdc"]


def test_session_detail_p3_tab_indented() -> None:
    sessions = parse_iscsiadm_session_detail(_text("iscsiadm/stockage_session_P3_chunk3_tabs.txt"))
    assert [(s.sid, s.recovery_timeout_s, s.disks[0].hctl) for s in sessions] == [
        (11, 5, "13:0:0:0"),
        (12, 5, "14:0:0:0"),
        (3, 5, "5:0:0:0"),
        (4, 5, "6:0:0:0"),
    ]


def test_session_detail_flat_netapp_with_chap_username() -> None:
    sessions = parse_iscsiadm_session_detail(_text("iscsiadm/ibmcloud_session_P3_netapp_chap.txt"))
    assert [(s.sid, s.current_portal, s.tpgt) for s in sessions] == [
        (1, "161.26.110.17:3260", 1027),
        (3, "161.26.110.43:3260", 1041),
    ]
    second = sessions[1]
    assert (second.chap_enabled, second.chap_mutual) == (True, False)
    assert second.disks[0].to_dict() == {
        "hctl": "3:0:0:1",
        "lun": 1,
        "disk": "sdd",
        "state": "running",
    }
    assert second.negotiated[-3:] == (
        ("ImmediateData", "Yes"),
        ("InitialR2T", "No"),
        ("MaxOutstandingR2T", "1"),
    )
    # neither the username nor a password value is kept anywhere
    assert "IBM02SU1575811" not in repr(sessions)
    assert "********" not in repr(sessions)


def test_session_detail_p1_ipv6_and_recovery_states() -> None:
    first, second = parse_iscsiadm_session_detail(
        _text("iscsiadm/yast_session_P1_ipv6_transport_wait.txt")
    )
    assert (first.current_portal, first.persistent_portal) == (
        "10.13.67.182:3260",
        "10.120.66.182:3260",
    )
    assert (first.connection_state, first.session_state, first.internal_session_state) == (
        "TRANSPORT WAIT",
        "FREE",
        "REOPEN",
    )
    assert second.target == "iqn.2013-10.de.suse:test_file2"
    assert second.current_portal == "[2620:113:80c0:890:e051:56:73c7:9171]:3260"
    assert second.persistent_portal == "[2620:113:80c0:8080:e051:f9ea:73c7:9171]:3260"
    assert (second.iface_ip, second.disks, second.recovery_timeout_s) == (None, (), None)


def test_lun_without_disk_line() -> None:
    text = (
        "Target: iqn.2015-02.oracle.boot:uefi (non-flash)\nCurrent Portal: 169.254.0.2:3260,1\n"
        "SID: 1\nHost Number: 0 State: running\nscsi0 Channel 00 Id 0 Lun: 0\n"
        "scsi0 Channel 00 Id 0 Lun: 1\nAttached scsi disk sda State: running\n"
    )
    (session,) = parse_iscsiadm_session_detail(text)
    assert [d.to_dict() for d in session.disks] == [
        {"hctl": "0:0:0:0", "lun": 0, "disk": None, "state": None},
        {"hctl": "0:0:0:1", "lun": 1, "disk": "sda", "state": "running"},
    ]


def test_sysfs_dump() -> None:
    first, second = parse_iscsi_sysfs_dump(_text("iscsiadm/invented_sysfs_dump.txt"))
    assert first.to_dict()["disks"] == [
        {"hctl": "2:0:0:0", "lun": 0, "disk": "sdb", "state": "running"},
        {"hctl": "2:0:0:1", "lun": 1, "disk": "sdc", "state": "offline"},
    ]
    assert (first.sid, first.target, first.session_state, first.connection_state) == (
        1,
        "iqn.1992-08.com.netapp:sn.0123456789abcdef:vs.4",
        "LOGGED_IN",
        "up",
    )
    assert (first.persistent_portal, first.current_portal, first.tpgt) == (
        "[fd00::10]:3260",
        "[fd00::10]:3260",
        1027,
    )
    assert (first.recovery_timeout_s, first.chap_enabled, first.source) == (120, False, "sysfs")
    assert (second.session_state, second.connection_state, second.persistent_portal) == (
        "FAILED",
        "failed",
        "10.0.0.11:3260",
    )
    assert (second.chap_enabled, second.chap_mutual) == (True, True)
    assert "NEVER" not in repr((first, second))
    assert "node-a-chap" not in repr((first, second))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("multipath/osbrick_ibm_svc_no_alias_undef.txt", IscsiInputFormat.MULTIPATH_LL),
        ("multipath/insights_rhel5_bracket.txt", IscsiInputFormat.MULTIPATH_LL),
        ("multipath/hp3par_multipath_l_flattened.txt", IscsiInputFormat.MULTIPATH_LL),
        ("multipath/conf_invented_trident_netapp.conf", IscsiInputFormat.MULTIPATH_CONF),
        ("multipathd/ubiquity_list_maps_json_with_prompt.txt", IscsiInputFormat.MULTIPATHD_JSON),
        ("multipathd/vexxhost_pure_assembled.json", IscsiInputFormat.MULTIPATHD_JSON),
        ("iscsiadm/libvirt_session.txt", IscsiInputFormat.ISCSIADM_SESSION),
        (
            "iscsiadm/stockage_session_P3_chunk1_spaces.txt",
            IscsiInputFormat.ISCSIADM_SESSION_DETAIL,
        ),
        (
            "iscsiadm/yast_session_P1_ipv6_transport_wait.txt",
            IscsiInputFormat.ISCSIADM_SESSION_DETAIL,
        ),
        ("iscsiadm/stockage_node_chunk1.txt", IscsiInputFormat.ISCSIADM_NODE),
        ("iscsiadm/invented_sysfs_dump.txt", IscsiInputFormat.ISCSI_SYSFS),
        ("sanlun/eks_fsxn_cdot_show_p.txt", IscsiInputFormat.SANLUN),
    ],
)
def test_detect_format(path: str, expected: IscsiInputFormat) -> None:
    assert detect_iscsi_format(_text(path)) is expected


def test_detect_unknown() -> None:
    assert detect_iscsi_format("hello world\n") is IscsiInputFormat.UNKNOWN
    assert IscsiInputFormat.SANLUN == "sanlun"
