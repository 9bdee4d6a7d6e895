"""multipath.conf reader."""

from __future__ import annotations

from pathlib import Path

from kubectl_storage.core.iscsi.multipath_conf import parse_multipath_conf

FIXTURES = Path(__file__).parents[2] / "fixtures" / "multipath"


def test_duplicate_defaults_merge_and_commented_sections_are_ignored() -> None:
    conf = parse_multipath_conf(
        (FIXTURES / "conf_stockage_rocky_duplicate_defaults.conf").read_text()
    )
    assert conf.defaults.as_dict() == {
        "user_friendly_names": "yes",
        "find_multipaths": "yes",
        "path_grouping_policy": "failover",
        "features": "1 queue_if_no_path",
        "no_path_retry": "100",
    }
    assert conf.devices == ()
    assert conf.blacklist == ()
    assert conf.multipaths == ()


def test_all_sections() -> None:
    conf = parse_multipath_conf((FIXTURES / "conf_invented_trident_netapp.conf").read_text())
    assert conf.defaults.get("find_multipaths") == "no"
    assert conf.defaults.get("queue_without_daemon") == "no"
    (device,) = conf.devices
    assert device.get("vendor") == "NETAPP"
    assert device.get("no_path_retry") == "queue"  # the '!' comment is dropped
    assert device.get("path_selector") == "service-time 0"
    assert conf.blacklist == (
        ("devnode", "^(ram|raw|loop|fd|md|dm-|sr|scd|st)[0-9]*"),
        ("wwid", "3600508b1001c5a1b2c3d4e5f60718293"),
    )
    assert conf.blacklist_devices[0].as_dict() == {"vendor": "HP", "product": "LOGICAL VOLUME"}
    assert conf.blacklist_exceptions == (("property", "(SCSI_IDENT_|ID_WWN)"),)
    assert conf.multipaths[0].as_dict() == {
        "wwid": "3600a0980383030523424457a4a695266",
        "alias": "pgdata",
    }
    assert conf.device_for("NETAPP", "LUN C-Mode") is device
    assert conf.device_for("PURE", "FlashArray") is None


def test_one_line_sections_backslashes_and_empty_file() -> None:
    conf = parse_multipath_conf(
        "defaults { polling_interval 10 }\n"
        'blacklist {\n devnode "^nvme\\d"\n}\nmystery {\n a b\n}\n'
    )
    assert conf.defaults.get("polling_interval") == "10"
    assert conf.blacklist == (("devnode", "^nvme\\d"),)
    assert conf.other_sections == ("mystery",)
    assert parse_multipath_conf("").to_dict()["defaults"] == {}
