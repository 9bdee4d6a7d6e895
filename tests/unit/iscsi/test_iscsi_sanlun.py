"""sanlun lun show -p parser."""

from __future__ import annotations

from pathlib import Path

from kubectl_storage.core.iscsi.sanlun import parse_sanlun_lun_show_p

FIXTURES = Path(__file__).parents[2] / "fixtures" / "sanlun"


def test_cdot_lun_primary_sda_secondary_sdb() -> None:
    (lun,) = parse_sanlun_lun_show_p((FIXTURES / "eks_fsxn_cdot_show_p.txt").read_text())
    assert lun.to_dict() == {
        "vserver": "eks-storage-svm",
        "lun_path": "/vol/trident_lun_pool_trident_DTZIQSCCRL/"
        "trident_pvc_701a8a72_1ffd_4db3_b060_4aa473220449",
        "lun": 2,
        "lun_size": "100g",
        "product": "cDOT",
        "host_device": "3600a09806c574230475d537a77624479",
        "dm_device": None,
        "multipath_policy": "service-time 0",
        "multipath_provider": "Native",
        "paths": [
            {
                "state": "up",
                "path_type": "primary",
                "device": "sda",
                "host_adapter": "host0",
                "lif": "iscsi_1",
            },
            {
                "state": "up",
                "path_type": "secondary",
                "device": "sdb",
                "host_adapter": "host1",
                "lif": "iscsi_2",
            },
        ],
    }


def test_two_luns_with_dm_device_and_down_path() -> None:
    first, second = parse_sanlun_lun_show_p(
        (FIXTURES / "invented_two_luns_path_down.txt").read_text()
    )
    assert (first.host_device, first.dm_device, first.lun) == (
        "3600a0980383030523424457a4a695266",
        "dm-0",
        0,
    )
    assert (second.lun_path, second.dm_device) == ("/vol/trident_pvc_2/lun1", "dm-1")
    assert [(p.state, p.path_type, p.device) for p in second.paths] == [
        ("down", "primary", "sdc"),
        ("up", "secondary", "sdd"),
    ]


def test_empty() -> None:
    assert parse_sanlun_lun_show_p("") == ()
