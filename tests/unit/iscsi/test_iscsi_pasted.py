"""Issue 22 item 3, iSCSI side: what people paste is read, and what cannot be read is named.

Each tolerance has a case where the pasted line is read and one where a line that still cannot
be read is named (line number and text) and counted, never dropped without a word. The captures
are in tests/fixtures/iscsi/pasted (sources in its SOURCES.md).
"""

from __future__ import annotations

import io

from kubectl_storage.core.iscsi.multipath import parse_multipath_ll
from kubectl_storage.core.iscsi.rules.maps import check_multipath_map
from kubectl_storage.core.iscsi.sanlun import parse_sanlun_lun_show_p
from kubectl_storage.core.iscsi.sanlun_table import (
    looks_like_sanlun_table,
    parse_sanlun_lun_show,
)
from kubectl_storage.core.iscsi.sessions import IscsiInputFormat, detect_iscsi_format
from kubectl_storage.core.nodes.paste import SKIPPED, TRIMMED, LineNote
from kubectl_storage.operations.iscsi import iscsi_files
from kubectl_storage.render.iscsi import write_iscsi_table
from tests.conftest import FIXTURES

PASTED = FIXTURES / "iscsi" / "pasted"


def read(name: str) -> str:
    return (PASTED / name).read_text()


def spans(notes: list[LineNote]) -> list[tuple[str, int]]:
    return sorted((note.action, note.line) for note in notes)


def ids(findings: object) -> list[str]:
    return sorted(finding.id for finding in findings)  # type: ignore[attr-defined]


# --- trailing annotations ----------------------------------------------------------------------


def test_a_path_line_with_a_trailing_annotation_is_read_and_its_mp010_stays() -> None:
    notes: list[LineNote] = []
    mpatha, _ = parse_multipath_ll(read("invented_stockage_annotated_glued_bold.txt"), notes)
    assert [(p.dev, p.dm_state, p.path_state) for p in mpatha.paths] == [
        ("sdd", "failed", "faulty"),
        ("sde", "active", "ready"),
    ]
    annotated = [note for note in notes if note.line == 5]
    assert [(n.action, n.reason) for n in annotated] == [
        (TRIMMED, "read without the annotation '<----'")
    ]
    assert mpatha.unread_lines == ()
    assert "MP010" in ids(check_multipath_map(mpatha))
    assert "MP012" not in ids(check_multipath_map(mpatha))


def test_a_path_line_that_cannot_be_read_is_named_counted_and_the_finding_says_so() -> None:
    notes: list[LineNote] = []
    _, mpathb = parse_multipath_ll(read("invented_stockage_annotated_glued_bold.txt"), notes)
    # Line 11 lost its states (cut off): not read, but named and counted on its map.
    assert [p.dev for p in mpathb.paths] == ["sdb"]
    assert mpathb.unread_lines == (11,)
    (skipped,) = [note for note in notes if note.line == 11]
    assert skipped.action == SKIPPED
    assert "8:0:0:0 sdc 8:32" in skipped.describe("f")
    findings = {finding.id: finding for finding in check_multipath_map(mpathb)}
    assert "depends on 1 line(s) of this map that could not be read: line 11" in (
        findings["MP012"].message
    )
    assert "a path may be missing" in findings["MP010"].message


# --- glued lines and flattened columns --------------------------------------------------------


def test_a_multipath_l_a_guide_flattened_onto_one_line_is_read_apart() -> None:
    # Red Hat's RHEL 5 DM Multipath guide, section 5.5, as the web page prints it.
    notes: list[LineNote] = []
    (mpath,) = parse_multipath_ll(read("rhel5_guide_multipath_l_flattened.txt"), notes)
    assert (mpath.alias, mpath.wwid, mpath.dm, mpath.size) == (
        "mpath1",
        "3600d0230003228bc000339414edb8101",
        None,
        "10 GB",
    )
    assert (mpath.features, mpath.hwhandler) == ("0", "0")
    assert [(g.status, [p.dev for p in g.paths]) for g in mpath.path_groups] == [
        ("active", ["sdb"]),
        ("enabled", ["sdc"]),
    ]
    assert [(n.action, n.reason) for n in notes] == [
        (TRIMMED, "6 lines glued into one, read apart")
    ]


def test_glued_header_and_properties_keep_the_product_clean_and_the_path() -> None:
    notes: list[LineNote] = []
    _, mpathb = parse_multipath_ll(read("invented_stockage_annotated_glued_bold.txt"), notes)
    # "… LIO-ORG,data-chunk2 size=1022M features=…" on one line: the product stays the product.
    assert (mpathb.vendor, mpathb.product, mpathb.size) == ("LIO-ORG", "data-chunk2", "1022M")
    assert mpathb.features == "1 queue_if_no_path"
    # A group line and its path glued: the path is not lost.
    assert mpathb.path_groups[0].paths[0].dev == "sdb"
    assert (TRIMMED, 8) in spans(notes)
    assert (TRIMMED, 9) in spans(notes)


def test_a_glued_line_whose_pieces_are_not_all_readable_is_named_whole() -> None:
    text = (
        "mpatha (36001405) dm-2 LIO-ORG,disk\n"
        "size=1G features='0' hwhandler='1 alua' wp=rw\n"
        "`-+- policy='service-time 0' prio=50 status=active\n"
        "  |- 5:0:0:0 sdd 8:48 active ready running `- 6:0:0:0 sde 8:64 garbled\n"
    )
    notes: list[LineNote] = []
    (mpath,) = parse_multipath_ll(text, notes)
    assert mpath.paths == ()
    assert mpath.unread_lines == (4,)
    assert spans(notes) == [(SKIPPED, 4)]


def test_path_lines_outside_any_map_are_named_not_dropped() -> None:
    # dell/csm#296: `multipath -ll | grep fault`; before, no map and no word about the paths.
    notes: list[LineNote] = []
    assert parse_multipath_ll(read("dell_csm_296_grep_fault.txt"), notes) == ()
    assert [note.line for note in notes] == list(range(1, 11))
    assert notes[0].reason == "a shell prompt, not output"
    assert all(note.action == SKIPPED for note in notes)
    assert "sdaq 66:160  failed faulty running" in notes[1].text


# --- Markdown emphasis, prompts ---------------------------------------------------------------


def test_markdown_bold_leaves_the_size_and_is_noted() -> None:
    notes: list[LineNote] = []
    mpatha, _ = parse_multipath_ll(read("invented_stockage_annotated_glued_bold.txt"), notes)
    assert mpatha.size == "1022M"
    (bold,) = [note for note in notes if note.line == 3]
    assert (bold.action, bold.reason) == (TRIMMED, "Markdown emphasis removed")


def test_emphasis_that_is_not_a_pair_stays_and_the_line_is_named() -> None:
    text = (
        "mpatha (36001405) dm-2 LIO-ORG,disk\n"
        "size=1G features='0' hwhandler='1 alua' wp=rw\n"
        "`-+- policy='service-time 0' prio=50 status=active\n"
        "  |- 5:0:0:0 sdd 8:48 active ready running\n"
        "  `- 6:0:0:0 **sde 8:64 active ready running\n"
    )
    notes: list[LineNote] = []
    (mpath,) = parse_multipath_ll(text, notes)
    assert [p.dev for p in mpath.paths] == ["sdd"]
    assert spans(notes) == [(SKIPPED, 5)]
    assert "MP012" in ids(check_multipath_map(mpath))


def test_sudo_password_prompt_is_named_as_a_prompt() -> None:
    notes: list[LineNote] = []
    parse_multipath_ll(read("invented_stockage_annotated_glued_bold.txt"), notes)
    (prompt,) = [note for note in notes if note.line == 1]
    assert (prompt.action, prompt.reason) == (SKIPPED, "a shell prompt, not output")


# --- sanlun lun show [all] and -wwpn ----------------------------------------------------------


def test_sanlun_lun_show_all_is_read() -> None:
    text = read("demosmbc_sanlun_lun_show.txt")
    assert looks_like_sanlun_table(text)
    assert detect_iscsi_format(text) is IscsiInputFormat.SANLUN
    notes: list[LineNote] = []
    devices = parse_sanlun_lun_show(text, notes)
    assert len(devices) == 8
    first = devices[0]
    assert (first.vserver, first.lun_path, first.device, first.adapter) == (
        "SVM_SAN_S",
        "/vol/LUN01_S/LUN01",
        "sdi",
        "host71",
    )
    assert (first.protocol, first.size, first.product, first.wwpn) == ("iSCSI", "9g", "cDOT", None)
    assert {d.ontap_path for d in devices} == {
        "SVM_SAN_S:/vol/LUN01_S/LUN01",
        "SVM_SAN_P:/vol/LUN01_P/LUN01",
    }
    assert spans(notes) == [(SKIPPED, 1)]  # the prompt line, named


def test_sanlun_lun_show_wwpn_is_read() -> None:
    text = read("netapp_docs_sanlun_lun_show_wwpn.txt")
    assert detect_iscsi_format(text) is IscsiInputFormat.SANLUN
    notes: list[LineNote] = []
    devices = parse_sanlun_lun_show(text, notes)
    assert [(d.device, d.lun_path, d.wwpn, d.protocol, d.size) for d in devices][:2] == [
        ("sdlo", "/vol/VOL_8g_169_2_8/lun", "202cd039ea1308e5", None, "10g"),
        ("sdlp", "/vol/VOL_8g_169_2_9/lun", "202cd039ea1308e5", None, "10g"),
    ]
    assert len(devices) == 4
    assert notes == []


def test_a_sanlun_row_that_does_not_fit_the_header_is_named() -> None:
    lines = read("netapp_docs_sanlun_lun_show_wwpn.txt").splitlines()
    lines[4] = "vs_169_16gEmu   202cd039ea1308e5   /vol/VOL_8g_169_2_9/lun   /dev/sdlp"  # cut short
    notes: list[LineNote] = []
    devices = parse_sanlun_lun_show("\n".join(lines), notes)
    assert [d.device for d in devices] == ["sdlo", "sdln", "sdll"]
    assert [(n.action, n.line, n.reason) for n in notes] == [
        (SKIPPED, 5, "not a sanlun lun show row")
    ]


def test_sanlun_lun_show_p_v_seven_columns_are_read() -> None:
    notes: list[LineNote] = []
    (lun,) = parse_sanlun_lun_show_p(read("netapp_docs_sanlun_lun_show_p_v.txt"), notes)
    assert len(lun.paths) == 8
    assert (lun.paths[0].device, lun.paths[0].host_adapter, lun.paths[0].lif) == (
        "sdq",
        "host15",
        "lif_18",
    )
    assert [p.path_type for p in lun.paths].count("primary") == 4
    assert notes == []  # "DM-MP Features:" and "Hardware Handler:" are Key: value lines


def test_sanlun_rows_pair_with_the_multipath_map_by_device() -> None:
    report = iscsi_files(
        [PASTED / "demosmbc_multipath_ll.txt", PASTED / "demosmbc_sanlun_lun_show.txt"], "centos1"
    )
    (node,) = report.nodes
    (row,) = node.luns
    # One map, eight paths; SnapMirror active sync presents it from both clusters' vservers.
    assert row.ontap_path == "SVM_SAN_P:/vol/LUN01_P/LUN01, SVM_SAN_S:/vol/LUN01_S/LUN01"
    assert len(node.sanlun_devices) == 8
    assert "1 multipath map(s)" in (node.status or "")
    assert "2 ONTAP LUN(s) on 8 device(s) in sanlun output" in (node.status or "")
    document = report.to_dict()
    assert document["nodes"][0]["sanlun_devices"][0]["device"] == "sdi"
    # Both prompt lines are named.
    assert sum("a shell prompt" in warning for warning in node.warnings) == 2


# --- the report counts what it could not read -------------------------------------------------


def test_the_report_counts_unread_lines_and_maps_that_may_miss_a_path() -> None:
    report = iscsi_files([PASTED / "invented_stockage_annotated_glued_bold.txt"], "chunk1")
    (node,) = report.nodes
    assert node.unread_lines == 2  # the sudo prompt and the cut path line
    assert [m.name for m in node.incomplete_maps] == ["mpathb"]
    summary = report.to_dict()["summary"]
    assert (summary["unread_lines"], summary["incomplete_maps"]) == (2, 1)
    assert report.to_dict()["nodes"][0]["incomplete_maps"] == ["mpathb"]
    line_11 = [w for w in node.warnings if "line 11:" in w]
    assert len(line_11) == 1
    assert "8:0:0:0 sdc" in line_11[0]
    mp012 = [f for f in node.findings if f.id == "MP012"]
    assert [f.message.split(":")[0] for f in mp012] == ["mpathb (dm-3, LIO-ORG,data-chunk2)"]
    assert "could not be read: line 11" in mp012[0].message
    out = io.StringIO()
    write_iscsi_table(report, out, wide=False)
    assert "2 captured line(s) not understood, 1 multipath map(s) may miss a path" in out.getvalue()


def test_a_clean_capture_reports_no_unread_lines() -> None:
    report = iscsi_files([FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt"], "n")
    assert report.summary.unread_lines == 0
    assert report.summary.incomplete_maps == 0
    out = io.StringIO()
    write_iscsi_table(report, out, wide=False)
    assert "not understood" not in out.getvalue()


def test_path_lines_without_their_map_are_not_refused_and_each_is_named() -> None:
    path = PASTED / "dell_csm_296_grep_fault.txt"
    assert detect_iscsi_format(path.read_text()) is IscsiInputFormat.MULTIPATH_LL
    report = iscsi_files([path], "worker")
    (node,) = report.nodes
    assert node.multipath_maps == ()
    assert node.unread_lines == 10
    assert len(node.warnings) == 10
    assert all(str(path) in warning for warning in node.warnings)
