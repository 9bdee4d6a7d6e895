"""MP002/MP004/MP022/MP030 judged on the configuration multipathd uses (overrides > matching
device entry, the built-in hardware table included > defaults; libmultipath propsel.c), read
from real ``multipath -t`` output of Debian bookworm's multipath-tools 0.9.4
(tests/fixtures/multipath_config/SOURCES.md), for a NetApp ONTAP LUN."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.iscsi.multipath import MultipathMap, MultipathPath, PathGroup
from kubectl_storage.core.iscsi.multipath_conf import parse_multipath_conf, setting
from kubectl_storage.core.iscsi.node_parse import parse_node
from kubectl_storage.core.iscsi.node_report import build_node_report
from kubectl_storage.core.iscsi.rules.config import check_multipath_conf, unjudged_defaults
from kubectl_storage.core.nodes.capture import NodeCapture

CONFIGS = Path(__file__).resolve().parents[2] / "fixtures" / "multipath_config"


def _path(dev: str) -> MultipathPath:
    return MultipathPath(
        hctl="3:0:0:1",
        dev=dev,
        major_minor="8:16",
        dm_state="active",
        path_state="ready",
        online_state="running",
        prio=50,
    )


def _netapp(hwhandler: str = "1 alua") -> MultipathMap:
    group = PathGroup(
        policy="service-time 0", prio=50, status="active", paths=(_path("sdb"), _path("sdc"))
    )
    return MultipathMap(
        wwid="3600a0980000000000000000000000001",
        alias=None,
        dm="dm-0",
        vendor="NETAPP",
        product="LUN C-Mode",
        size="10G",
        features="3 queue_if_no_path pg_init_retries 50",
        hwhandler=hwhandler,
        wp="rw",
        path_groups=(group,),
    )


def _findings(name: str, hwhandler: str = "1 alua") -> list[str]:
    conf_file = CONFIGS / f"{name}.conf"
    conf = parse_multipath_conf(conf_file.read_text() if conf_file.exists() else "")
    merged = parse_multipath_conf((CONFIGS / f"{name}.multipath-t.txt").read_text())
    assert merged.merged
    assert not conf.merged
    maps = [_netapp(hwhandler)]
    found = sorted(f.id for f in check_multipath_conf(conf, maps, effective=merged))
    # find_multipaths: none of these files sets it; the built-in default strict (multipath -t)
    # keeps a one-path LUN bare, MP003 (info)
    assert "MP003" in found
    return [rule for rule in found if rule != "MP003"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # quiet: the built-in NETAPP entry (no_path_retry queue, user_friendly_names no) beats
        # defaults; detect_checker yes gives an ALUA device tur whatever path_checker says
        ("no-conf", []),
        ("defaults-no-path-retry-30", []),
        ("defaults-user-friendly-names", []),
        ("defaults-path-checker-directio", []),
        # fires: overrides beat the built-in entry (and MP002 names the overrides)
        ("overrides-no-path-retry-30", ["MP002", "MP030"]),
        ("overrides-user-friendly-names", ["MP004"]),
        ("overrides-path-checker-directio", ["MP002", "MP022"]),
    ],
)
def test_rules_on_the_merged_configuration(name: str, expected: list[str]) -> None:
    assert _findings(name) == expected


def test_mp022_fires_from_defaults_when_the_device_is_not_alua() -> None:
    # The NETAPP entry sets no path_checker: defaults give directio, and without ALUA
    # detect_checker does not pick tur.
    assert _findings("defaults-path-checker-directio", hwhandler="0") == ["MP022"]
    assert _findings("no-conf", hwhandler="0") == []


def test_the_users_device_stanza_is_merged_into_the_builtin_entry() -> None:
    # defaults { no_path_retry 30 } and a NETAPP/LUN device stanza with no_path_retry 12:
    # multipath -t prints the built-in entry with the user's value, last (hwtable.c entry first).
    name = "device-netapp-no-path-retry-12"
    merged = parse_multipath_conf((CONFIGS / f"{name}.multipath-t.txt").read_text())
    assert setting(merged, "no_path_retry", "NETAPP", "LUN C-Mode") == (
        "12",
        "device entry NETAPP/LUN",
    )
    assert setting(merged, "prio", "NETAPP", "LUN C-Mode")[0] == "ontap"
    assert _findings(name) == ["MP030"]


def test_file_only_judges_overrides_and_says_what_it_left_out() -> None:
    maps = [_netapp()]
    defaults = parse_multipath_conf((CONFIGS / "defaults-no-path-retry-30.conf").read_text())
    assert check_multipath_conf(defaults, maps) == []
    (note,) = unjudged_defaults(defaults, maps)
    assert note.startswith("judged from /etc/multipath.conf only: no_path_retry")
    overrides = parse_multipath_conf((CONFIGS / "overrides-no-path-retry-30.conf").read_text())
    assert sorted(f.id for f in check_multipath_conf(overrides, maps)) == ["MP002", "MP030"]
    assert unjudged_defaults(overrides, maps) == []


def test_parse_node_reads_the_collected_merged_config() -> None:
    capture = NodeCapture(
        node="n1",
        texts={
            "multipath-conf": ((CONFIGS / "defaults-no-path-retry-30.conf").read_text(),),
            "multipath-config": (
                (CONFIGS / "defaults-no-path-retry-30.multipath-t.txt").read_text(),
            ),
        },
    )
    facts = parse_node(capture)
    assert facts.conf is not None
    assert not facts.conf.merged
    assert facts.effective_conf is not None
    assert facts.effective_conf.merged
    assert facts.conf_present is True
    # given as a file, multipath -t output is recognised as the merged configuration
    offline = parse_node(
        NodeCapture(
            node="n1",
            texts={"multipath-conf": ((CONFIGS / "no-conf.multipath-t.txt").read_text(),)},
        )
    )
    assert offline.effective_conf is not None
    assert offline.effective_conf.merged


def test_the_node_report_says_what_a_file_only_audit_left_out() -> None:
    netapp_ll = (CONFIGS.parent / "multipath" / "qemu_devel_props_wrapped.txt").read_text()
    file_only = NodeCapture(
        node="n1",
        texts={
            "multipath-ll": (netapp_ll,),
            "multipath-conf": ((CONFIGS / "defaults-no-path-retry-30.conf").read_text(),),
        },
    )
    report = build_node_report(file_only, None)
    assert [f.id for f in report.findings if f.id == "MP030"] == []
    assert any(w.startswith("judged from /etc/multipath.conf only") for w in report.warnings)
    with_config = NodeCapture(
        node="n1",
        texts={
            **file_only.texts,
            "multipath-config": (
                (CONFIGS / "defaults-no-path-retry-30.multipath-t.txt").read_text(),
            ),
        },
    )
    report = build_node_report(with_config, None)
    assert not any("judged from" in w for w in report.warnings)
