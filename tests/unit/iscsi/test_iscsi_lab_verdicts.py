"""The iSCSI verdicts the node lab found wrong, checked on its real captures without booting it.

Each phase's ``collect-iscsi.txt`` (tests/nodelab/captures/iscsi/*/, see captures/SOURCES.md) is
the raw output of the project's collection script on a real kernel (Debian 6.1, LIO target,
open-iscsi 2.1.8, multipath-tools 0.9.4). It goes through the core parsers, the merge of the
multipath views and the rules here, as the live path does. Two inputs come from the phase's
evidence files because the collection did not have them yet: the node database
(``iscsiadm-node.txt``, the output of the ``iscsiadm -m node`` the collection now runs) and the
disks kubelet uses bare (``volumes.tsv``). Variants marked "constructed" change one line of a
real capture.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from kubectl_storage.core.iscsi.iscsid_conf import parse_iscsid_conf
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
    merge_multipath_views,
    parse_multipath_ll,
    parse_multipathd_json,
)
from kubectl_storage.core.iscsi.multipath_conf import parse_multipath_conf
from kubectl_storage.core.iscsi.rules import evaluate_iscsi_node
from kubectl_storage.core.iscsi.rules.maps import check_multipath_map
from kubectl_storage.core.iscsi.sessions import (
    IscsiSession,
    parse_iscsiadm_node,
    parse_iscsiadm_session_detail,
    scsi_device_states,
)
from kubectl_storage.core.nodes.collect import (
    ISCSI_SECTIONS,
    collection_script,
    parse_tools_section,
    split_sections,
)
from kubectl_storage.core.report.findings import Finding, Severity

LAB = Path(__file__).resolve().parents[2] / "nodelab" / "captures" / "iscsi"
PHASES = (
    "healthy",
    "path-offline",
    "path-restored",
    "portal-drop",
    "portal-drop-timeout",
    "portal-restored",
)
ONE_GROUP = "iqn.2003-01.org.nodelab:one-group"
ONE_PORTAL = "iqn.2003-01.org.nodelab:one-portal"


@dataclasses.dataclass(frozen=True)
class Capture:
    sections: dict[str, str]
    records_text: str
    bare_disks: frozenset[str]

    def replace_section(self, name: str, old: str, new: str) -> Capture:
        """A constructed variant: one line of a real section changed."""
        assert old in self.sections[name], (name, old)
        sections = {**self.sections, name: self.sections[name].replace(old, new)}
        return dataclasses.replace(self, sections=sections)


def _capture(phase: str) -> Capture:
    folder = LAB / phase
    sections = split_sections((folder / "collect-iscsi.txt").read_text())
    bare = {
        row.split("\t")[4].removeprefix("/dev/")
        for row in (folder / "volumes.tsv").read_text().splitlines()
        if row.split("\t")[4].startswith("/dev/sd")
    }
    return Capture(sections, (folder / "iscsiadm-node.txt").read_text(), frozenset(bare))


def _sessions(capture: Capture) -> tuple[IscsiSession, ...]:
    return parse_iscsiadm_session_detail(capture.sections["iscsiadm-session"])


def _maps(capture: Capture, *, with_kernel_states: bool = True) -> tuple[MultipathMap, ...]:
    states = scsi_device_states(_sessions(capture)) if with_kernel_states else None
    return merge_multipath_views(
        parse_multipathd_json(capture.sections["multipathd-json"]),
        parse_multipath_ll(capture.sections["multipath-ll"]),
        states,
    )


def _findings(capture: Capture, *, records: bool = True) -> list[Finding]:
    tools = parse_tools_section(capture.sections["tools"])
    return evaluate_iscsi_node(
        _sessions(capture),
        _maps(capture),
        parse_multipath_conf(capture.sections["multipath-conf"]),
        node_records=parse_iscsiadm_node(capture.records_text) if records else (),
        multipathd_running=tools["daemon:multipathd"] == "running",
        multipath_installed=True,
        multipath_conf_present=True,
        iscsid_running=tools["daemon:iscsid"] == "running",
        in_use_devices=capture.bare_disks,
        iscsid_conf=parse_iscsid_conf(capture.sections["iscsid-conf"]),
    )


def _by_id(findings: list[Finding], rule: str) -> list[Finding]:
    return [finding for finding in findings if finding.id == rule]


#: What every phase reports (tests/nodelab/test_iscsi.py BASELINE), as (id, severity) counts.
BASELINE = Counter(
    {
        ("ISCSI007", Severity.WARN): 5,
        ("MP003", Severity.INFO): 1,
        ("ISCSI008", Severity.ERROR): 1,
        ("ISCSI010", Severity.WARN): 1,
    }
)
EXTRA = {
    "healthy": Counter(),
    "path-offline": Counter({("MP010", Severity.ERROR): 2, ("ISCSI013", Severity.ERROR): 2}),
    "path-restored": Counter({("MP021", Severity.WARN): 1}),
    "portal-drop": Counter(
        {
            ("MP010", Severity.ERROR): 1,
            ("ISCSI001", Severity.ERROR): 1,
            ("ISCSI002", Severity.WARN): 1,
            ("ISCSI013", Severity.ERROR): 1,
        }
    ),
    "portal-drop-timeout": Counter(
        {
            ("MP010", Severity.ERROR): 1,
            ("ISCSI001", Severity.ERROR): 1,
            ("ISCSI002", Severity.WARN): 1,
            ("ISCSI013", Severity.ERROR): 1,
        }
    ),
    "portal-restored": Counter(),
}


@pytest.mark.parametrize("phase", PHASES)
def test_each_lab_phase_gets_the_nodelab_verdict(phase: str) -> None:
    findings = _findings(_capture(phase))
    got = Counter((finding.id, finding.severity) for finding in findings)
    assert got == BASELINE + EXTRA[phase], [f"{f.id}: {f.message}" for f in findings]


# --- ISCSI004 / ISCSI014: multipathd sets the recovery timeout of the sessions it maps ---------


def test_lab_facts_records_120_mapped_sessions_10() -> None:
    """The capture behind the fix: iscsid.conf (and every node record, node-record-timeouts.txt)
    hold 120; the four mapped sessions run multipath.conf's fast_io_fail_tmo 10; only the
    unmapped one-portal session runs its record's 120."""
    capture = _capture("healthy")
    conf = parse_iscsid_conf(capture.sections["iscsid-conf"])
    assert conf.int_value("node.session.timeo.replacement_timeout") == 120
    assert conf.from_file("node.session.timeo.replacement_timeout")
    records = (LAB / "healthy" / "node-record-timeouts.txt").read_text().split()
    assert set(records[2::3]) == {"120"}
    assert "fast_io_fail_tmo 10" in capture.sections["multipath-conf"]
    running = {(s.target, s.persistent_portal): s.recovery_timeout_s for s in _sessions(capture)}
    assert sorted(running.values()) == [10, 10, 10, 10, 120]
    assert running[(ONE_PORTAL, "10.20.0.4:3260")] == 120


@pytest.mark.parametrize("phase", PHASES)
def test_iscsi004_is_quiet_while_multipathd_runs(phase: str) -> None:
    findings = _findings(_capture(phase))
    assert _by_id(findings, "ISCSI004") == []
    assert _by_id(findings, "ISCSI014") == []


def test_iscsi004_fires_when_multipathd_is_not_running() -> None:
    # constructed: the healthy capture with the daemon probe saying multipathd is stopped
    capture = _capture("healthy").replace_section(
        "tools", "daemon multipathd: running", "daemon multipathd: stopped"
    )
    findings = _findings(capture)
    (finding,) = _by_id(findings, "ISCSI004")
    assert finding.severity == Severity.WARN
    assert "multipathed sessions run 10s, but multipathd is not running" in finding.message
    assert "node.session.timeo.replacement_timeout = 120" in finding.message
    assert "S75" in finding.source
    assert _by_id(findings, "MP000")


def test_iscsi004_fires_when_fast_io_fail_tmo_is_off() -> None:
    # constructed: multipathd cannot give an iSCSI session fast_io_fail_tmo off (S75)
    capture = _capture("healthy").replace_section(
        "multipath-conf", "fast_io_fail_tmo 10", "fast_io_fail_tmo off"
    )
    (finding,) = _by_id(_findings(capture), "ISCSI004")
    assert "multipath.conf sets fast_io_fail_tmo off for LIO-ORG,FILEIO" in finding.message


def test_iscsi004_fires_on_a_mapped_session_that_runs_120() -> None:
    # constructed: one-group's 10.20.0.1 session running its record's 120 instead of 10
    capture = _capture("healthy")
    lines = capture.sections["iscsiadm-session"].split("\n")
    sid = lines.index("\t\tSID: 2")
    timeout = next(i for i in range(sid, len(lines)) if "Recovery Timeout:" in lines[i])
    assert lines[timeout] == "\t\tRecovery Timeout: 10"
    lines[timeout] = "\t\tRecovery Timeout: 120"
    slow = dataclasses.replace(
        capture, sections={**capture.sections, "iscsiadm-session": "\n".join(lines)}
    )
    (finding,) = _by_id(_findings(slow), "ISCSI004")
    assert finding.message.startswith(f"session 2 {ONE_GROUP} @ 10.20.0.1:3260")
    assert "replacement_timeout 120s delays multipath failover" in finding.message
    assert "fast_io_fail_tmo" in finding.fix


def test_iscsi014_names_only_the_unmapped_session_after_an_edit() -> None:
    # constructed: iscsid.conf edited to 15 after the logins (the earlier lab run): the mapped
    # sessions' 10 is multipathd's, not their records'; only one-portal's 120 shows an old record
    capture = _capture("healthy").replace_section(
        "iscsid-conf",
        "node.session.timeo.replacement_timeout = 120",
        "node.session.timeo.replacement_timeout = 15",
    )
    findings = _findings(capture)
    (finding,) = _by_id(findings, "ISCSI014")
    assert "sessions without a multipath map run other values (5: 120s)" in finding.message
    for sid in (1, 2, 3, 4):
        assert f"{sid}: 10s" not in finding.message
    assert _by_id(findings, "ISCSI004") == []


# --- ISCSI010: the node database is collected --------------------------------------------------


def test_collection_lists_the_node_database_without_secrets() -> None:
    assert "iscsiadm-node" in ISCSI_SECTIONS
    script = collection_script(ISCSI_SECTIONS)
    assert "iscsiadm -m node 2>&1" in script
    assert "-o show" not in script


def test_iscsi010_one_portal_of_two_is_a_warning() -> None:
    findings = _findings(_capture("healthy"))
    (finding,) = _by_id(findings, "ISCSI010")
    assert finding.severity == Severity.WARN
    assert finding.message == (
        f"{ONE_PORTAL}: every session uses portal 10.20.0.4:3260 while the node database lists "
        "2 portals"
    )
    # without the node database (the collection before) it cannot fire
    assert _by_id(_findings(_capture("healthy"), records=False), "ISCSI010") == []


def test_iscsi010_quiet_when_every_listed_portal_has_a_session() -> None:
    capture = _capture("healthy")
    used = "\n".join(
        line for line in capture.records_text.splitlines() if "10.20.0.5:3260" not in line
    )
    assert _by_id(_findings(dataclasses.replace(capture, records_text=used)), "ISCSI010") == []


# --- MP010: a path whose SCSI device is blocked --------------------------------------------------


def test_portal_drop_blocked_path_is_failed() -> None:
    """multipathd's JSON still says active/ready/running for sdb (10.20.0.1) while sysfs and
    iscsiadm say the disk is blocked (session FAILED, in recovery) and ``multipath -ll`` says
    ``i/o pending``: the merged view carries the kernel's state and MP010 reports the path."""
    capture = _capture("portal-drop")
    assert "3:0:0:0 sdb 8:16 active i/o pending running" in capture.sections["multipath-ll"]
    raw = {p.dev: p for m in _maps(capture, with_kernel_states=False) for p in m.paths}
    assert (raw["sdb"].dm_state, raw["sdb"].path_state, raw["sdb"].online_state) == (
        "active",
        "ready",
        "running",
    )
    merged = {p.dev: p for m in _maps(capture) for p in m.paths}
    assert (merged["sdb"].dm_state, merged["sdb"].path_state, merged["sdb"].online_state) == (
        "active",
        "ready",
        "blocked",
    )
    assert merged["sda"].online_state == "running"
    (finding,) = _by_id(_findings(capture), "MP010")
    assert finding.message.startswith("mpatha (dm-0, LIO-ORG,FILEIO): 1 of 2 paths failed: sdb ")
    assert "its SCSI device is blocked and services none" in finding.message
    assert "S58" in finding.source


def test_portal_drop_timeout_keeps_multipaths_view_of_the_failed_path() -> None:
    capture = _capture("portal-drop-timeout")
    assert scsi_device_states(_sessions(capture))["sdb"] == "transport-offline"
    (finding,) = _by_id(_findings(capture), "MP010")
    assert finding.message.endswith("1 of 2 paths failed: sdb (failed faulty running)")


@pytest.mark.parametrize("phase", ["healthy", "path-restored", "portal-restored"])
def test_running_devices_leave_the_maps_as_multipath_shows_them(phase: str) -> None:
    capture = _capture(phase)
    assert _maps(capture) == _maps(capture, with_kernel_states=False)
    assert _by_id(_findings(capture), "MP010") == []


# --- MP021: multipathd's "-" failback -------------------------------------------------------------


def test_mp021_names_failback_manual_not_dash() -> None:
    capture = _capture("path-restored")
    assert '"failback" : "-"' in capture.sections["multipathd-json"]
    (finding,) = _by_id(_findings(capture), "MP021")
    assert finding.severity == Severity.WARN
    assert finding.message.endswith("failback is manual")


# --- MP011: a map with no path left ---------------------------------------------------------


def test_a_map_left_with_no_path_is_mp011_not_mp012() -> None:
    """map-no-paths: two-groups' sessions logged out while mpathb was held open. multipathd keeps
    the map with 0 paths (``paths 0``, queueing counting down), ``multipath -ll`` prints its two
    header lines and nothing under them, vendor and product ``##,##``."""
    capture = _capture("map-no-paths")
    assert (
        "mpathb (36001405deab200000000000000000000) dm-1 ##,##" in capture.sections["multipath-ll"]
    )
    findings = _findings(capture)
    (mp011,) = _by_id(findings, "MP011")
    assert mp011.severity == Severity.ERROR
    assert mp011.message.startswith("mpathb ")
    assert "no path left under the map" in mp011.message
    assert _by_id(findings, "MP012") == []
    assert _by_id(findings, "MP010") == []


def test_a_pathless_map_from_multipath_ll_alone_is_mp011_too() -> None:
    """Without multipathd's JSON (a pasted ``multipath -ll``): the same map, from the text."""
    capture = _capture("map-no-paths")
    (mpathb,) = [m for m in parse_multipath_ll(capture.sections["multipath-ll"]) if m.dm == "dm-1"]
    assert mpathb.paths == ()
    assert mpathb.active_paths is None
    assert [f.id for f in check_multipath_map(mpathb)] == ["MP011"]
    # constructed: a line of that map we could not read: its paths may be in it, no MP011
    unread = dataclasses.replace(mpathb, unread_lines=(9,))
    assert check_multipath_map(unread) == []


def test_a_healthy_map_with_paths_is_not_pathless() -> None:
    (mpatha,) = [m for m in _maps(_capture("map-no-paths")) if m.dm == "dm-0"]
    assert len(mpatha.paths) == 2
    assert check_multipath_map(mpatha) == []
