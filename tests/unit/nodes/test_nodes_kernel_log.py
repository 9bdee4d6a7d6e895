"""Kernel-log health (issue 22 item 4, the pure part): kmsg, dmesg and journalctl lines read,
one event per family, and each event joined with the mount table now.

The fixtures are real (tests/fixtures/kernel_log/SOURCES.md): captured on this machine's kernel
(ext4 and XFS on loop devices, a hung task on a frozen ext4) or quoted from public reports;
``invented-edge-cases.kmsg`` and the one-line texts written here are INVENTED and say so.
"""

from __future__ import annotations

import pytest

from kubectl_storage.core.nodes.kernel_log import (
    BUFFER_IO_ERROR,
    FORMAT_DMESG,
    FORMAT_JOURNAL,
    FORMAT_KMSG,
    FORMAT_PLAIN,
    FS_REMOUNTED_RO,
    HUNG_TASK,
    ISCSI_CONN_ERROR,
    NFS_NOT_RESPONDING,
    NFS_OK,
    KernelEvent,
    parse_kernel_log,
    read_kernel_log,
)
from tests.conftest import FIXTURES

KERNEL_LOG = FIXTURES / "kernel_log"


def events(name: str) -> list[KernelEvent]:
    return parse_kernel_log((KERNEL_LOG / name).read_text())


def kinds(found: list[KernelEvent]) -> list[tuple[str, str, str | None]]:
    return [(event.kind, event.cause, event.device or event.server) for event in found]


# ---------------------------------------------------------------------------------------------
# Line formats
# ---------------------------------------------------------------------------------------------


def test_kmsg_records_keep_priority_time_and_their_property_lines() -> None:
    records = read_kernel_log((KERNEL_LOG / "invented-edge-cases.kmsg").read_text())
    first = records[0]
    assert first.source_format == FORMAT_KMSG
    assert first.level == 3
    assert first.monotonic == pytest.approx(5004.000123)
    assert first.properties == (("SUBSYSTEM", "block"), ("DEVICE", "b8:33"))
    assert first.property("DEVICE") == "b8:33"
    assert records[1].line_number == 4  # the property lines belong to the record before


def test_the_same_real_error_reads_alike_in_every_format() -> None:
    """The ext4 error of this machine's capture, as kmsg, dmesg, dmesg -T and journalctl -k."""
    wanted = "EXT4-fs error (device loop0): trigger_test_error:129: comm ext4_trigger.sh: "
    formats = {
        "this-vm-ext4-trigger.kmsg": (FORMAT_KMSG, 1081.670601, None),
        "this-vm-ext4-trigger.dmesg": (FORMAT_DMESG, 1081.670601, None),
        "this-vm-ext4-trigger-ctime.dmesg": (FORMAT_DMESG, None, "Sun Dec  6 06:31:19 2026"),
    }
    for name, (fmt, monotonic, wall) in formats.items():
        (error, _remount) = events(name)
        assert error.message.startswith(wanted), name
        assert error.record.source_format == fmt, name
        assert error.monotonic == (pytest.approx(monotonic) if monotonic else None), name
        assert error.wall_time == wall, name


@pytest.mark.parametrize(
    ("suffix", "monotonic", "wall"),
    [
        ("short-iso", None, "2026-12-06T06:35:42+0000"),
        ("short-iso-precise", None, "2026-12-06T06:35:42.573161+0000"),
        ("short-precise", None, "Dec 06 06:35:42.573161"),
        ("short-monotonic", 1053.558821, None),
    ],
)
def test_journalctl_outputs_are_read(suffix: str, monotonic: float | None, wall: str) -> None:
    found = events(f"this-vm-journalctl-k.{suffix}")
    first = found[0]
    assert first.record.source_format == FORMAT_JOURNAL
    assert (first.kind, first.cause, first.device) == (FS_REMOUNTED_RO, "ext4-error", "loop0")
    assert first.monotonic == (pytest.approx(monotonic) if monotonic else None)
    assert first.wall_time == wall
    # Every experiment of the window is there, in every output form alike.
    assert len(found) == 69
    assert sum(event.kind == HUNG_TASK for event in found) == 1


def test_syslog_keeps_printk_time_and_leaves_other_programs_out() -> None:
    found = events("openebs-blog-iscsi-node-down.syslog")
    first = found[0]
    assert first.wall_time == "Aug 28 18:13:29"
    assert first.monotonic == pytest.approx(28477.898809)
    # iscsid's own "Kernel reported iSCSI connection 12:0 error (1020 ...)" is not the kernel's.
    assert all("iscsid" not in event.raw for event in found)
    assert [event.line_number for event in found if event.kind == ISCSI_CONN_ERROR] == [1, 16, 33]


def test_bare_messages_are_read_without_time() -> None:
    (event,) = [e for e in events("lore-xfs-log-error-shutdown.txt") if e.kind == FS_REMOUNTED_RO]
    assert event.record.source_format == FORMAT_PLAIN
    assert event.monotonic is None
    assert event.wall_time is None


# ---------------------------------------------------------------------------------------------
# Families: one line that fires, one alike that stays quiet
# ---------------------------------------------------------------------------------------------


def test_ext4_error_and_remount_fire_a_mount_message_does_not() -> None:
    found = events("this-vm-ext4-trigger.kmsg")
    assert kinds(found) == [
        (FS_REMOUNTED_RO, "ext4-error", "loop0"),
        (FS_REMOUNTED_RO, "ext4-remount-ro", "loop0"),
    ]
    assert found[0].detail("function") == "trigger_test_error"
    quiet = "6,354,1081288877,-;EXT4-fs (loop0): mounted filesystem 65311fd3 r/w"
    assert parse_kernel_log(quiet) == []  # (the start of the capture's first line)


def test_ext4_warning_and_the_older_mount_message_stay_quiet() -> None:
    found = events("longhorn-kb-volume-readonly.dmesg")
    assert kinds(found) == [
        (FS_REMOUNTED_RO, "ext4-error", "sdc"),
        (FS_REMOUNTED_RO, "ext4-error", "sdc"),
        (FS_REMOUNTED_RO, "ext4-remount-ro", "sdc"),
    ]


def test_ext4_error_in_the_std_error_form() -> None:
    """``EXT4-fs error (device dm-3) in ext4_reserve_inode_write:5812: ...`` (INVENTED line of
    fs/ext4/super.c __ext4_std_error's format)."""
    found = [e for e in events("invented-edge-cases.kmsg") if e.cause == "ext4-error"]
    assert [(e.device, e.detail("function")) for e in found] == [
        ("dm-3", "ext4_reserve_inode_write")
    ]


def test_xfs_shutdowns_of_this_kernel_and_of_5_19() -> None:
    (user,) = events("this-vm-xfs-shutdown.kmsg")
    assert (user.cause, user.device, user.detail("why")) == (
        "xfs-shutdown",
        "loop0",
        "Log I/O Error",
    )
    io = [e for e in events("this-vm-xfs-enospc.kmsg") if e.kind == FS_REMOUNTED_RO]
    assert [(e.device, e.detail("why")) for e in io] == [("loop0", "Metadata I/O Error")]
    log = [e for e in events("lore-xfs-log-error-shutdown.txt") if e.kind == FS_REMOUNTED_RO]
    assert [(e.device, e.detail("why")) for e in log] == [("dm-0", "log error")]
    # "User initiated shutdown received." and "Please unmount ..." are not a second event.
    assert all("Please unmount" not in e.message for e in io + log)


def test_xfs_corruption_of_the_older_format() -> None:
    found = [e for e in events("invented-edge-cases.kmsg") if e.cause == "xfs-shutdown"]
    assert [(e.device, e.detail("why")) for e in found] == [
        ("nvme1n1p2", "Corruption of in-memory data")
    ]


def test_buffer_io_and_block_layer_errors_fire_callbacks_suppressed_does_not() -> None:
    found = events("this-vm-ext4-enospc.kmsg")
    buffer = [e for e in found if e.cause == "buffer-io"]
    block = [e for e in found if e.cause == "block-layer"]
    assert len(buffer) == 10
    assert len(block) == 10
    assert (buffer[0].device, buffer[0].detail("block")) == ("loop0", "28673")
    assert (block[0].detail("status"), block[0].detail("sector")) == (
        "critical space allocation",
        "57346",
    )
    assert block[0].detail("op") == "0x1:(WRITE)"
    suppressed = [e for e in events("this-vm-xfs-enospc.kmsg") if "suppressed" in e.message]
    assert suppressed == []
    assert parse_kernel_log("[28598.737364] buffer_io_error: 19448 callbacks suppressed") == []
    assert parse_kernel_log("[ 1.0] loop0: writeback error on inode 131, offset 0") == []


def test_block_errors_of_4_x_and_5_x_kernels() -> None:
    found = events("openebs-blog-iscsi-node-down.syslog")
    old = [e for e in found if e.cause == "block-layer"]
    assert next((e.device, e.detail("status"), e.detail("sector")) for e in old) == (
        "sdb",
        "I/O",
        "642376",
    )
    lost = [e.detail("what") for e in found if e.cause == "buffer-io"]
    assert "lost sync page write" in lost
    invented = [e for e in events("invented-edge-cases.kmsg") if e.cause == "block-layer"]
    assert [e.device for e in invented] == ["sdc", "nvme1n1"]


def test_iscsi_conn_errors_1011_and_1020_fire_iser_lines_do_not() -> None:
    found = events("lore-siw-iser-conn-error-1011.dmesg")
    assert kinds(found) == [(ISCSI_CONN_ERROR, "conn-error", "connection26:0")]
    assert found[0].detail("code") == "1011"
    assert found[0].detail("session") == "26"
    assert found[0].detail("error") == "ISCSI_ERR_CONN_FAILED: iSCSI connection failed"
    longhorn = events("longhorn-kb-instance-manager-restarted.syslog")
    assert len(longhorn) == 8  # the "...." line is no event
    assert {e.detail("code") for e in longhorn} == {"1020"}
    assert longhorn[-1].device == "connection275:0"
    assert parse_kernel_log("session13: session recovery timed out after 300 secs") == []


def test_nfs_not_responding_and_ok() -> None:
    found = events("nfs-ganesha-1295.dmesg")
    assert [(e.kind, e.server) for e in found] == [
        (NFS_OK, "100.73.159.36"),
    ] * 3 + [(NFS_NOT_RESPONDING, "100.73.159.36")] * 3
    invented = [e for e in events("invented-edge-cases.kmsg") if e.server]
    assert [(e.kind, e.cause, e.server, e.detail("program")) for e in invented] == [
        (NFS_NOT_RESPONDING, "timed-out", "fd00::5", "nfs"),
        (NFS_NOT_RESPONDING, "still-trying", "nfs.example.internal", "lockd"),
        (NFS_OK, "ok", "nfs.example.internal", "nfs"),
    ]
    # Quiet: the NFS client's other messages (INVENTED lines of real formats).
    assert parse_kernel_log("NFS: Registering the id_resolver key type") == []
    assert parse_kernel_log("nfs: server 10.0.0.5 not responding, giving up") == []


def test_hung_task_fires_its_report_lines_do_not() -> None:
    found = events("this-vm-hung-task.kmsg")
    assert kinds(found) == [(HUNG_TASK, "blocked", None)]
    event = found[0]
    assert (event.detail("task"), event.detail("pid"), event.detail("seconds")) == (
        "kl-writer",
        "8324",
        "120",
    )
    (jbd2,) = [e for e in events("invented-edge-cases.kmsg") if e.kind == HUNG_TASK]
    assert jbd2.device == "dm-3"  # jbd2/<device>-<inode>: the journal thread's device


def test_every_event_carries_its_line() -> None:
    for event in events("this-vm-ext4-enospc.dmesg"):
        assert event.raw.endswith(event.message)
        assert event.to_dict()["line"] == event.line_number
    assert BUFFER_IO_ERROR in {e.kind for e in events("this-vm-ext4-enospc.dmesg")}
