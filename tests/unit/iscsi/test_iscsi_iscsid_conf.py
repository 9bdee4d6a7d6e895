"""iscsid.conf parser: the shipped open-iscsi file field by field, defaults and edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.iscsi.iscsid_conf import (
    DEFAULTS,
    REPLACEMENT_TIMEOUT,
    looks_like_iscsid_conf,
    parse_iscsid_conf,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "iscsid"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("key", "value", "line"),
    [
        ("node.startup", "manual", 54),
        ("node.leading_login", "No", 59),
        ("node.session.timeo.replacement_timeout", "120", 116),
        ("node.conn[0].timeo.login_timeout", "15", 120),
        ("node.conn[0].timeo.logout_timeout", "15", 124),
        ("node.conn[0].timeo.noop_out_interval", "5", 128),
        ("node.conn[0].timeo.noop_out_timeout", "5", 135),
        ("node.session.initial_login_retry_max", "8", 185),
        ("node.session.cmds_max", "128", 194),
        ("node.session.queue_depth", "32", 198),
        ("node.session.xmit_thread_priority", "-20", 218),
        ("node.conn[0].iscsi.MaxXmitDataSegmentLength", "0", 276),
        ("node.session.nr_sessions", "1", 315),
        ("node.session.iscsi.FastAbort", "Yes", 335),
        ("node.session.scan", "auto", 348),
    ],
)
def test_shipped_file_values_come_from_the_file(key: str, value: str, line: int) -> None:
    conf = parse_iscsid_conf(_read("iscsid.conf.open-iscsi"))
    setting = conf.get(key)
    assert setting is not None
    assert (setting.value, setting.origin, setting.line) == (value, "file", line)
    assert conf.from_file(key)


def test_shipped_file_commented_keys_are_not_settings() -> None:
    conf = parse_iscsid_conf(_read("iscsid.conf.open-iscsi"))
    # CHAP, digests and iscsid.startup only appear in comments there
    for key in (
        "node.session.auth.authmethod",
        "node.session.auth.username",
        "node.conn[0].iscsi.HeaderDigest",
        "iscsid.startup",
        "iscsid.safe_logout",
    ):
        assert conf.get(key) is None, key
    assert conf.ignored == ()
    # 26 uncommented assignments in the shipped file, all default keys among them
    assert len(conf.settings) == 26
    assert conf.int_value("node.session.queue_depth") == 32
    assert conf.int_value("node.session.xmit_thread_priority") == -20
    assert conf.int_value("node.session.scan") is None


def test_empty_file_reads_as_the_defaults() -> None:
    conf = parse_iscsid_conf("")
    assert conf.as_dict() == dict(DEFAULTS)
    assert conf.value("node.session.scan") == "auto"
    assert conf.value("node.startup") == "manual"
    assert conf.int_value("node.session.queue_depth") == 32
    assert conf.int_value("node.session.cmds_max") == 128
    assert conf.int_value("node.conn[0].timeo.login_timeout") == 15
    setting = conf.get("node.conn[0].timeo.noop_out_interval")
    assert setting is not None
    assert (setting.value, setting.origin, setting.line) == (
        "5",
        "default",
        None,
    )
    assert not conf.from_file("node.session.scan")


def test_last_assignment_wins_and_whitespace_variants() -> None:
    conf = parse_iscsid_conf(_read("iscsid.conf.invented-trident"))
    scan = conf.get("node.session.scan")
    assert scan is not None
    assert (scan.value, scan.line) == ("manual", 4)
    # tab separators and a trailing comment
    assert conf.value("node.session.timeo.replacement_timeout") == "5"
    # keys the file leaves out are defaults
    depth = conf.get("node.session.queue_depth")
    assert depth is not None
    assert (depth.value, depth.origin) == ("32", "default")


def test_noop_off_file_mixes_file_values_and_defaults() -> None:
    conf = parse_iscsid_conf(_read("iscsid.conf.invented-noop-off"))
    assert conf.int_value("node.conn[0].timeo.noop_out_interval") == 0
    assert conf.from_file("node.conn[0].timeo.noop_out_timeout")
    assert conf.value("node.startup") == "manual"
    assert conf.get("node.session.cmds_max") is not None
    assert not conf.from_file("node.session.cmds_max")


def test_odd_lines_quotes_and_empty_values() -> None:
    conf = parse_iscsid_conf(
        "  # indented comment\n"
        "garbage without equals\n"
        'node.session.auth.chap_algs = "SHA256,MD5"\n'
        "node.session.scan =\n"
        "bad key = 1\n"
    )
    assert conf.value("node.session.auth.chap_algs") == "SHA256,MD5"
    assert conf.value("node.session.scan") == ""
    assert conf.from_file("node.session.scan")
    assert conf.ignored == ("garbage without equals", "bad key = 1")
    assert conf.to_dict()["settings"]["node.session.scan"]["origin"] == "file"


def test_detection() -> None:
    assert looks_like_iscsid_conf(_read("iscsid.conf.open-iscsi"))
    assert looks_like_iscsid_conf(_read("iscsid.conf.invented-hpe"))
    assert not looks_like_iscsid_conf("defaults {\n    find_multipaths no\n}\n")
    assert not looks_like_iscsid_conf("# only a comment\n")
    assert not looks_like_iscsid_conf("foo = bar\n")


def test_replacement_timeout_is_read_with_its_default() -> None:
    # Shipped file: "node.session.timeo.replacement_timeout = 120" ("the default is 120 seconds").
    shipped = parse_iscsid_conf((FIXTURES / "iscsid.conf.open-iscsi").read_text(encoding="utf-8"))
    setting = shipped.get(REPLACEMENT_TIMEOUT)
    assert setting is not None
    assert (setting.as_int(), setting.origin) == (120, "file")
    empty = parse_iscsid_conf("")
    assert empty.int_value(REPLACEMENT_TIMEOUT) == 120
    assert not empty.from_file(REPLACEMENT_TIMEOUT)
    tabs = parse_iscsid_conf("\tnode.session.timeo.replacement_timeout\t=\t5   # NetApp\n")
    assert tabs.int_value(REPLACEMENT_TIMEOUT) == 5
