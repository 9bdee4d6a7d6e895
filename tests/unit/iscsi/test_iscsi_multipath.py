"""multipath -ll / multipathd JSON parsers, checked field by field on captured outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.iscsi.multipath import (
    MultipathParseError,
    merge_multipath_views,
    parse_multipath_ll,
    parse_multipathd_json,
)
from kubectl_storage.core.iscsi.sessions import (
    parse_iscsi_sysfs_dump,
    parse_iscsiadm_session_detail,
    scsi_device_states,
)
from kubectl_storage.core.nodes.collect import split_sections

FIXTURES = Path(__file__).parents[2] / "fixtures"
LAB = Path(__file__).resolve().parents[2] / "nodelab" / "captures" / "iscsi"


def _ll(name: str):
    return parse_multipath_ll((FIXTURES / "multipath" / name).read_text())


def _json(name: str):
    return parse_multipathd_json((FIXTURES / "multipathd" / name).read_text())


def test_map_without_alias_and_two_groups_with_undef_states() -> None:
    (mpath,) = _ll("osbrick_ibm_svc_no_alias_undef.txt")
    assert mpath.to_dict() == {
        "wwid": "36005076da00638089c000000000004d5",
        "alias": None,
        "dm": "dm-2",
        "vendor": "IBM",
        "product": "2145",
        "size": "954M",
        "features": "1 queue_if_no_path",
        "hwhandler": "0",
        "wp": "rw",
        "path_groups": [
            {
                "policy": "round-robin 0",
                "prio": -1,
                "status": "active",
                "paths": [
                    {
                        "hctl": "6:0:2:0",
                        "dev": "sde",
                        "major_minor": "8:64",
                        "dm_state": "active",
                        "path_state": "undef",
                        "online_state": "running",
                    },
                    {
                        "hctl": "6:0:4:0",
                        "dev": "sdg",
                        "major_minor": "8:96",
                        "dm_state": "active",
                        "path_state": "undef",
                        "online_state": "running",
                    },
                ],
            },
            {
                "policy": "round-robin 0",
                "prio": -1,
                "status": "enabled",
                "paths": [
                    {
                        "hctl": "6:0:3:0",
                        "dev": "sdf",
                        "major_minor": "8:80",
                        "dm_state": "active",
                        "path_state": "undef",
                        "online_state": "running",
                    },
                    {
                        "hctl": "6:0:5:0",
                        "dev": "sdh",
                        "major_minor": "8:112",
                        "dm_state": "active",
                        "path_state": "undef",
                        "online_state": "running",
                    },
                ],
            },
        ],
    }


def test_map_with_alias() -> None:
    (mpath,) = _ll("osbrick_3par_alias.txt")
    assert (mpath.alias, mpath.wwid, mpath.dm) == ("mpath6", "350002ac20398383d", "dm-3")
    assert (mpath.vendor, mpath.product, mpath.size) == ("3PARdata", "VV", "2.0G")
    assert [p.dev for p in mpath.paths] == ["sde", "sdf"]


def test_warning_lines_are_skipped_and_padded_vendor_is_trimmed() -> None:
    (mpath,) = _ll("osbrick_pure_warnings.txt")
    assert (mpath.wwid, mpath.dm, mpath.vendor, mpath.product) == (
        "3624a93707edcfde1127040370004ee62",
        "dm-84",
        "PURE",
        "FlashArray",
    )
    assert mpath.path_groups[0].policy == "queue-length 0"
    assert [(p.hctl, p.dev, p.major_minor) for p in mpath.paths] == [
        ("8:0:0:9", "sdaa", "65:160"),
        ("8:0:1:9", "sdac", "65:192"),
    ]


def test_syslog_style_error_before_map() -> None:
    (mpath,) = _ll("osbrick_ds8000_scsi_id_error.txt")
    assert mpath.wwid == "36005076303ffc48e0000000000000101"
    assert [p.hctl for p in mpath.paths] == ["6:0:2:0", "6:1:0:3"]


def test_sosreport_v4_output_with_paths_list_and_odd_maps() -> None:
    maps = _ll("insights_rhel6_v4_ll.txt")
    assert [m.name for m in maps] == [
        "mpathg",
        "mpathe",
        "36001405b1629f80d52a4c898f8856e43",
        "mpatha",
        "1IET     00080001",
        "mpathb",
        "1IET     00080007",
        "mpathc",
    ]
    mpathg, mpathe, lio, mpatha, bare_iet, mpathb, _, mpathc = maps
    assert mpathg.features == "3 queue_if_no_path pg_init_retries 50"
    assert mpathg.hwhandler == "1 rdac"
    assert len(mpathg.paths) == 8
    assert mpathg.paths[-1].to_dict() == {
        "hctl": "18:0:0:1",
        "dev": "sdx",
        "major_minor": "65:112",
        "dm_state": "active",
        "path_state": "ready",
        "online_state": "running",
    }
    assert (mpathe.wp, mpathe.hwhandler) == ("rx", "2 rdac")
    assert (lio.alias, lio.vendor, lio.product) == (None, "LIO-ORG", "block0_sdb")
    assert (mpatha.alias, mpatha.wwid) == ("mpatha", "1IET     00080001")
    assert (bare_iet.alias, bare_iet.wwid) == (None, "1IET     00080001")
    assert (mpathb.vendor, mpathb.product) == ("COMPELNT", "Compellent Vol")
    # the paths-list table at the top must not create paths or maps
    assert all(p.dev != "sda" for m in maps for p in m.paths)
    assert (mpathc.wwid, mpathc.vendor, mpathc.size, mpathc.path_groups) == (
        "test_with_no_devs",
        "",
        "10G",
        (),
    )


def test_old_bracket_format() -> None:
    (mpath,) = _ll("insights_rhel5_bracket.txt")
    assert mpath.to_dict()["path_groups"][0] == {
        "policy": "round-robin 0",
        "prio": 1,
        "status": "active",
        "paths": [
            {
                "hctl": "3:0:1:4",
                "dev": "sdk",
                "major_minor": "8:160",
                "dm_state": "active",
                "path_state": "ready",
                "online_state": None,
            },
            {
                "hctl": "5:0:0:4",
                "dev": "sdp",
                "major_minor": "8:240",
                "dm_state": "active",
                "path_state": "ready",
                "online_state": None,
            },
        ],
    }
    assert (mpath.alias, mpath.wwid, mpath.dm) == (
        "L004",
        "360060160ade32800f2e3baf47665e211",
        "dm-9",
    )
    assert (mpath.vendor, mpath.product, mpath.size) == ("DGC", "RAID 5", "100G")
    assert (mpath.features, mpath.hwhandler, mpath.wp) == ("1 queue_if_no_path", "1 emc", "rw")
    assert mpath.path_groups[1].prio == 0
    assert [p.dev for p in mpath.path_groups[1].paths] == ["sdf", "sdu"]


def test_monotonic_timestamp_warning_and_lio_alua() -> None:
    maps = _ll("stockage_lio_alua_config_warning.txt")
    assert [(m.alias, m.dm, m.hwhandler) for m in maps] == [
        ("mpatha", "dm-2", "1 alua"),
        ("mpathb", "dm-3", "1 alua"),
    ]
    assert [g.status for g in maps[0].path_groups] == ["active", "enabled"]


def test_failed_faulty_path() -> None:
    mpatha, mpathb = _ll("stockage_path_down_failed_faulty.txt")
    assert (mpatha.paths[0].dm_state, mpatha.paths[0].path_state) == ("failed", "faulty")
    assert mpatha.path_groups[0].prio == 0
    assert mpathb.path_groups[1].status == "active"


def test_apostrophe_tree_prefix() -> None:
    mpathj, mpathi = _ll("ubiquity_ibm_apostrophe_tree_warnings.txt")
    assert [(p.hctl, p.dev, p.dm_state) for p in mpathj.paths] == [
        ("39:0:0:1", "sde", "failed"),
        ("40:0:0:1", "sdd", "failed"),
    ]
    assert [g.prio for g in mpathi.path_groups] == [50, 10]
    assert (mpathi.vendor, mpathi.product) == ("IBM", "2145")


def test_flattened_pdf_copy_of_multipath_l() -> None:
    (mpath,) = _ll("hp3par_multipath_l_flattened.txt")
    assert [p.dev for p in mpath.paths] == ["sdaf", "sdai", "sdao", "sdal"]
    assert {p.path_state for p in mpath.paths} == {"undef"}


def test_placeholder_path_becomes_nulls() -> None:
    _, broken = _ll("osbrick_dgc_orphan_placeholder.txt")
    (path,) = broken.paths
    assert path.to_dict() == {
        "hctl": None,
        "dev": None,
        "major_minor": None,
        "dm_state": "active",
        "path_state": "faulty",
        "online_state": "running",
    }


def test_invented_edge_cases() -> None:
    netapp, old = _ll("invented_edge_cases.txt")
    assert (netapp.action, netapp.alias, netapp.vendor, netapp.product) == (
        "create",
        "netapp_db",
        "NETAPP",
        "LUN C-Mode",
    )
    assert [(p.dev, p.path_state, p.online_state) for p in netapp.paths] == [
        ("sdh", "i/o pending", "running"),
        ("sdi", "ready", "running"),
        ("sdj", "ghost", "running"),
        ("sdk", "i/o timeout", "offline"),
        ("sdl", "shaky", "unknown"),
    ]
    assert (old.size, old.wp, old.features, old.hwhandler) == (
        "10G",
        None,
        "1 queue_if_no_path",
        "0",
    )
    assert [p.path_state for p in old.paths] == ["ready", "ghost", "faulty"]


def test_empty_and_noise_only_text() -> None:
    assert parse_multipath_ll("") == ()
    assert parse_multipath_ll("Dec 01 10:00:00 | sda: no usable path checker\n") == ()


def test_multipathd_show_maps_json_with_prompt() -> None:
    (mpath,) = _json("ubiquity_list_maps_json_with_prompt.txt")
    assert mpath.to_dict() == {
        "wwid": "360050768029b8168e000000000006247",
        "alias": "mpathp",
        "dm": "dm-3",
        "vendor": "IBM",
        "product": "2145",
        "size": None,
        "features": "0",
        "hwhandler": "0",
        "wp": "rw",
        "path_groups": [
            {
                "policy": "round-robin 0",
                "prio": 0,
                "status": "active",
                "paths": [
                    {
                        "hctl": None,
                        "dev": "sdb",
                        "major_minor": "8:16",
                        "dm_state": "failed",
                        "path_state": "faulty",
                        "online_state": "running",
                    }
                ],
            }
        ],
    }
    assert (mpath.failback, mpath.queueing, mpath.active_paths, mpath.action) == (
        "immediate",
        "5 chk",
        0,
        "create",
    )
    path = mpath.paths[0]
    assert (path.prio, path.checker, path.host_adapter, path.target) == (
        50,
        "tur",
        "9.115.240.253",
        "iqn.1986-03.com.ibm:2145.v7k60.node1",
    )


def test_multipathd_show_map_json_single() -> None:
    (mpath,) = _json("ubiquity_list_map_json_with_prompt.txt")
    assert mpath.alias == "mpathp"
    assert mpath.to_dict() == _json("ubiquity_list_maps_json_with_prompt.txt")[0].to_dict()


def test_multipathd_json_name_equal_to_uuid_has_no_alias() -> None:
    (mpath,) = _json("vexxhost_pure_assembled.json")
    assert (mpath.alias, mpath.wwid, mpath.dm) == (
        None,
        "3624a9370e92ace0b12e941bf000cb4d5",
        "dm-31",
    )
    assert (mpath.queueing, mpath.hwhandler) == ("off", "1 alua")
    assert mpath.paths[0].to_dict()["major_minor"] == "66:0"
    json.dumps(mpath.to_dict())  # serialisable


@pytest.mark.parametrize("text", ["", "multipathd> fail\n", '{"something": 1}', "{not json}"])
def test_multipathd_json_errors(text: str) -> None:
    with pytest.raises(MultipathParseError):
        parse_multipathd_json(text)


# --- merge_multipath_views, on the node lab's real captures (tests/nodelab/captures) ----------


def _lab(phase: str) -> dict[str, str]:
    return split_sections((LAB / phase / "collect-iscsi.txt").read_text())


def _lab_views(phase: str):
    sections = _lab(phase)
    return (
        parse_multipathd_json(sections["multipathd-json"]),
        parse_multipath_ll(sections["multipath-ll"]),
        scsi_device_states(parse_iscsiadm_session_detail(sections["iscsiadm-session"])),
    )


def test_merge_completes_json_with_size_and_hctl() -> None:
    from_json, from_text, states = _lab_views("healthy")
    merged = merge_multipath_views(from_json, from_text, states)
    assert [m.size for m in from_json] == [None, None]
    assert [(m.alias, m.size, m.failback) for m in merged] == [
        ("mpatha", "64M", "-"),
        ("mpathb", "64M", "-"),
    ]
    assert [(p.dev, p.hctl, p.prio) for p in merged[1].paths] == [
        ("sdc", "4:0:0:0", 50),
        ("sdd", "5:0:0:0", 10),
    ]
    # every disk running: nothing of the kernel's view changes the maps
    assert merge_multipath_views(from_json, from_text, states) == merge_multipath_views(
        from_json, from_text
    )


def test_merge_gives_a_path_dm_still_uses_its_blocked_device_state() -> None:
    from_json, from_text, states = _lab_views("portal-drop")
    assert states == {
        "sda": "running",
        "sdb": "blocked",
        "sdc": "running",
        "sdd": "running",
        "sde": "running",
    }
    merged = merge_multipath_views(from_json, from_text, states)
    paths = {p.dev: (p.dm_state, p.path_state, p.online_state) for p in merged[0].paths}
    assert paths == {"sda": ("active", "ready", "running"), "sdb": ("active", "ready", "blocked")}
    # the sysfs dump of the same capture says the same
    sysfs = scsi_device_states(parse_iscsi_sysfs_dump(_lab("portal-drop")["iscsi-sysfs"]))
    assert sysfs == states
    # multipath -ll alone (no multipathd answer): its own check says "i/o pending"
    (text_only, _) = merge_multipath_views([], from_text, states)
    assert {p.dev: (p.path_state, p.online_state) for p in text_only.paths} == {
        "sda": ("ready", "running"),
        "sdb": ("i/o pending", "blocked"),
    }


def test_merge_keeps_multipaths_view_of_a_path_dm_has_failed() -> None:
    from_json, from_text, states = _lab_views("portal-drop-timeout")
    assert states["sdb"] == "transport-offline"
    merged = merge_multipath_views(from_json, from_text, states)
    sdb = next(p for p in merged[0].paths if p.dev == "sdb")
    assert (sdb.dm_state, sdb.path_state, sdb.online_state) == ("failed", "faulty", "running")
    assert merge_multipath_views(from_json, from_text, states) == merge_multipath_views(
        from_json, from_text
    )


def test_merge_without_inputs() -> None:
    assert merge_multipath_views([], [], {"sda": "blocked"}) == ()
