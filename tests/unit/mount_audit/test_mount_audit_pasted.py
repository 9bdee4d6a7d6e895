"""Issue 22 item 3, mount-audit side: what people paste is read, and what cannot be read is named.

Each tolerance has a case where the pasted line is read and one where a line that still cannot
be read is named (line number and text) and counted, never dropped without a word. The captures
are in tests/fixtures/mount_audit/pasted (sources in its SOURCES.md).
"""

from __future__ import annotations

import io

from kubectl_storage.core.mount_audit.mountstats import annotated_number, parse_mountstats
from kubectl_storage.core.nodes.mount_model import (
    FORMAT_MOUNT_COMMAND,
    FORMAT_NFSSTAT,
    parse_options,
)
from kubectl_storage.core.nodes.mounts import detect_mount_format, parse_mounts, parse_proc_mounts
from kubectl_storage.core.nodes.paste import REJOINED, SKIPPED, TRIMMED, LineNote
from kubectl_storage.operations.mount_audit import audit_files
from kubectl_storage.render.mount_audit import write_mount_audit_table
from tests.conftest import FIXTURES

PASTED = FIXTURES / "mount_audit" / "pasted"
EFS_LINE = (FIXTURES / "mounts" / "ec2-efs-plain.mount-output").read_text().strip()


def read(name: str) -> str:
    return (PASTED / name).read_text()


def actions(notes: list[LineNote]) -> list[tuple[str, int, str]]:
    return sorted((note.action, note.line, note.reason) for note in notes)


# --- wrapped mount lines ----------------------------------------------------------------------


def test_a_mount_line_wrapped_over_seven_lines_is_read() -> None:
    text = read("invented_ec2_efs_wrapped_blanks.mount-output")
    assert detect_mount_format(text) == FORMAT_MOUNT_COMMAND  # was refused whole
    notes: list[LineNote] = []
    (entry,) = parse_mounts(text, notes=notes)
    assert (entry.source, entry.mountpoint, entry.fstype) == (
        "fs-e08e4503.efs.us-east-1.amazonaws.com:/",
        "/mnt/efs",
        "nfs4",
    )
    (expected,) = parse_mounts(EFS_LINE)
    assert entry.options == expected.options
    assert (REJOINED, 2, "one line wrapped over 7") in actions(notes)


def test_a_mount_line_wrapped_beyond_repair_is_named_piece_by_piece() -> None:
    pieces = [EFS_LINE[i : i + 20] for i in range(0, len(EFS_LINE), 20)]  # 12 pieces
    text = EFS_LINE + "\n" + "\n".join(pieces) + "\n"
    notes: list[LineNote] = []
    assert len(parse_mounts(text, notes=notes)) == 1
    assert [(n.action, n.line) for n in notes] == [(SKIPPED, i) for i in range(2, 14)]


# --- blanks after commas ----------------------------------------------------------------------


def test_options_with_a_blank_after_each_comma_are_read() -> None:
    assert parse_options("rw, vers=4.1, hard") == {"rw": True, "vers": "4.1", "hard": True}
    notes: list[LineNote] = []
    (entry,) = parse_mounts(read("invented_ec2_efs_wrapped_blanks.mount-output"), notes=notes)
    assert " relatime" not in entry.options
    assert entry.options["relatime"] is True


def test_proc_mounts_options_split_by_blanks_are_joined_or_the_line_named() -> None:
    text = (
        "proc /proc proc rw,nosuid 0 0\n"
        "srv:/a /mnt/a nfs4 rw, vers=4.1, hard 0 0\n"
        "srv:/b /mnt/b nfs4 rw, vers=4.1 and more 0 0\n"
        "srv:/c /mnt/c nfs4 rw,vers=4.2 0 0   <-- this one\n"
    )
    notes: list[LineNote] = []
    entries = {entry.mountpoint: entry for entry in parse_proc_mounts(text, notes=notes)}
    assert entries["/mnt/a"].options == {"rw": True, "vers": "4.1", "hard": True}
    assert entries["/mnt/c"].options == {"rw": True, "vers": "4.2"}
    assert "/mnt/b" not in entries
    assert actions(notes) == [
        (SKIPPED, 3, "more fields than a /proc/mounts line has"),
        (TRIMMED, 2, "blanks after commas in the options"),
        (TRIMMED, 4, "read without the annotation '<-- this one'"),
    ]


# --- prompts ----------------------------------------------------------------------------------


def test_a_sudo_password_prompt_is_named_and_not_glued_to_the_mount() -> None:
    notes: list[LineNote] = []
    (entry,) = parse_mounts(read("invented_ec2_efs_wrapped_blanks.mount-output"), notes=notes)
    assert entry.source.startswith("fs-e08e4503")
    assert (SKIPPED, 1, "a shell prompt, not output") in actions(notes)


# --- nfsstat -m without "<mount point> from", comments, emphasis ------------------------------


def test_nfsstat_entry_without_its_header_is_named_and_the_rest_read() -> None:
    text = read("invented_two_mounts_no_header_comment.nfsstat")
    assert detect_mount_format(text) == FORMAT_NFSSTAT
    notes: list[LineNote] = []
    (entry,) = parse_mounts(text, notes=notes)
    assert (entry.mountpoint, entry.server, entry.export) == ("/mnt/felipe", "10.2.71.6", "/home")
    assert actions(notes) == [
        (SKIPPED, 1, "a Flags: line without its '<mount point> from' line"),
        (SKIPPED, 3, "a shell prompt, not output"),  # the "# …" comment: named, not read
        (TRIMMED, 5, "Markdown emphasis removed"),
    ]


def test_markdown_bold_on_an_option_is_read_as_the_option() -> None:
    notes: list[LineNote] = []
    (entry,) = parse_mounts(read("invented_two_mounts_no_header_comment.nfsstat"), notes=notes)
    assert entry.options["hard"] is True
    assert "**hard**" not in entry.options


def test_flags_only_nfsstat_is_not_refused_and_every_line_is_named() -> None:
    text = "Flags:\trw,vers=4.2,hard\nFlags:\trw,vers=3,soft\n"
    assert detect_mount_format(text) == FORMAT_NFSSTAT
    notes: list[LineNote] = []
    assert parse_mounts(text, notes=notes) == []
    assert [(n.action, n.line) for n in notes] == [(SKIPPED, 1), (SKIPPED, 2)]


def test_a_separator_line_after_flags_is_named_not_glued_to_the_last_option() -> None:
    text = "/mnt/a from srv:/a\nFlags:\trw,vers=4.2,addr=10.0.0.1\n----------\n"
    notes: list[LineNote] = []
    (entry,) = parse_mounts(text, notes=notes)
    assert entry.options["addr"] == "10.0.0.1"
    assert [(n.action, n.line) for n in notes] == [(SKIPPED, 3)]


# --- annotated numbers (mountstats) -----------------------------------------------------------


def test_an_annotated_age_is_read() -> None:
    notes: list[LineNote] = []
    (stats,) = parse_mountstats(read("invented_kubelet_annotated_age.mountstats"), notes=notes)
    assert stats.age_seconds == 83520
    assert actions(notes) == [
        (TRIMMED, 3, "read without the note '(time, in seconds, since the volume was mounted)'")
    ]
    assert annotated_number(" 19 (time, in seconds)") == (19, "(time, in seconds)")


def test_an_age_without_a_number_is_named() -> None:
    text = read("invented_kubelet_annotated_age.mountstats").replace(
        "age:    83520 (time, in seconds, since the volume was mounted)", "age:    (see above)"
    )
    notes: list[LineNote] = []
    (stats,) = parse_mountstats(text, notes=notes)
    assert stats.age_seconds is None
    assert actions(notes) == [(SKIPPED, 3, "unreadable age: line")]


# --- the report counts what it could not read -------------------------------------------------


def test_the_mount_audit_report_counts_and_names_unread_lines() -> None:
    report = audit_files([PASTED / "invented_two_mounts_no_header_comment.nfsstat"], "n1", None)
    (node,) = report.nodes
    assert node.unread_lines == 2
    assert report.to_dict()["summary"]["unread_lines"] == 2
    assert report.to_dict()["nodes"][0]["unread_lines"] == 2
    assert any("line 1: a Flags: line without" in warning for warning in node.warnings)
    out = io.StringIO()
    write_mount_audit_table(report, out)
    assert "2 captured line(s) not understood" in out.getvalue()


def test_a_clean_capture_reports_no_unread_lines() -> None:
    report = audit_files([FIXTURES / "nfsstat" / "index-two-mounts.nfsstat"], "n1", None)
    assert report.summary.unread_lines == 0
    out = io.StringIO()
    write_mount_audit_table(report, out)
    assert "not understood" not in out.getvalue()
