"""Kernel-log events against the mount table now: the device's mounts, whether a filesystem is
still read-only (node-problem-detector's check_ro_filesystem, with superblock options and ext4's
emergency_ro), and each NFS server's last word.

The ext4 and XFS pairs (events + mountinfo) were captured together on this machine
(tests/fixtures/kernel_log/SOURCES.md). Pairings of a public log with another table, and the
mountinfo lines written here, are INVENTED and say so.
"""

from __future__ import annotations

from kubectl_storage.core.nodes.kernel_log import (
    BUFFER_IO_ERROR,
    FS_REMOUNTED_RO,
    HUNG_TASK,
    ISCSI_CONN_ERROR,
    KernelEvent,
    parse_kernel_log,
)
from kubectl_storage.core.nodes.kernel_log_mounts import (
    NO_LONGER_READ_ONLY,
    NOT_MOUNTED,
    STILL_MOUNTED,
    STILL_READ_ONLY,
    UNKNOWN,
    VIA_ALIAS,
    VIA_MAJOR_MINOR,
    VIA_PARTITION,
    VIA_SERVER,
    VIA_SOURCE,
    LocatedEvent,
    locate_events,
    nfs_server_states,
)
from kubectl_storage.core.nodes.mount_model import MountEntry
from kubectl_storage.core.nodes.mounts import parse_mounts
from kubectl_storage.core.nodes.volume_owners import resolve_mountpoints
from tests.conftest import FIXTURES

KERNEL_LOG = FIXTURES / "kernel_log"
TRIGGER_MOUNT = "/tmp/kl/ext4-trigger/mnt"


def events(name: str) -> list[KernelEvent]:
    return parse_kernel_log((KERNEL_LOG / name).read_text())


def table(name: str, folder: str = "kernel_log") -> list[MountEntry]:
    return parse_mounts((FIXTURES / folder / name).read_text())


def fs_states(located: tuple[LocatedEvent, ...]) -> list[str | None]:
    return [item.state for item in located if item.event.kind == FS_REMOUNTED_RO]


# ---------------------------------------------------------------------------------------------
# Still read-only? (captured together on this machine's 6.18 kernel)
# ---------------------------------------------------------------------------------------------


def test_ext4_error_is_still_read_only_while_emergency_ro_is_shown() -> None:
    """6.18 keeps the superblock ``rw`` after the error and adds ``emergency_ro``: a check for
    ``ro`` alone (check_ro_filesystem.sh) would call this filesystem writable."""
    after = table("this-vm-ext4-trigger-after-error.mountinfo")
    assert after[0].options.get("rw") is True
    assert "ro" not in after[0].options
    located = locate_events(events("this-vm-ext4-trigger.kmsg"), after)
    assert fs_states(located) == [STILL_READ_ONLY, STILL_READ_ONLY]
    assert located[0].mountpoints == (TRIGGER_MOUNT,)
    assert located[0].via == VIA_SOURCE
    assert located[0].reason == "mounted with emergency_ro now"


def test_a_remount_rw_does_not_clear_it_and_mounting_again_does() -> None:
    found = events("this-vm-ext4-trigger.dmesg")
    remounted = locate_events(found, table("this-vm-ext4-trigger-after-remount-rw.mountinfo"))
    assert fs_states(remounted) == [STILL_READ_ONLY, STILL_READ_ONLY]
    again = locate_events(found, table("this-vm-ext4-trigger-after-mount-again.mountinfo"))
    assert fs_states(again) == [NO_LONGER_READ_ONLY, NO_LONGER_READ_ONLY]


def test_proc_mounts_shows_the_flag_too() -> None:
    located = locate_events(
        events("this-vm-ext4-trigger.kmsg"), table("this-vm-ext4-trigger-after-error.proc-mounts")
    )
    assert fs_states(located) == [STILL_READ_ONLY, STILL_READ_ONLY]


def test_an_ext4_error_alone_made_it_read_only() -> None:
    """The journal aborted during writeback; the later error came with no "Remounting" line, yet
    the filesystem refused the write and showed emergency_ro."""
    found = events("this-vm-ext4-enospc.kmsg")
    assert [e.cause for e in found if e.kind == FS_REMOUNTED_RO] == ["ext4-error"]
    located = locate_events(found, table("this-vm-ext4-enospc-after-touch.mountinfo"))
    assert fs_states(located) == [STILL_READ_ONLY]
    io = [item for item in located if item.event.kind == BUFFER_IO_ERROR]
    assert io
    assert all(item.mountpoints == ("/tmp/kl/ext4-enospc/mnt",) for item in io)


def test_ext4_on_6_12_to_6_14_cannot_tell_read_write_from_read_only() -> None:
    """The capture's error paired with its table from before the error (rw, no flag): on a
    kernel that sets neither ro nor emergency_ro the state is unknown. The pairing is
    INVENTED; the two texts are real."""
    found = events("this-vm-ext4-trigger.kmsg")
    before = table("this-vm-ext4-trigger-before.mountinfo")
    assert fs_states(locate_events(found, before, kernel_release="6.13.7-generic")) == [
        UNKNOWN,
        UNKNOWN,
    ]
    assert fs_states(locate_events(found, before, kernel_release="6.18.44-fc-v1272")) == [
        NO_LONGER_READ_ONLY,
        NO_LONGER_READ_ONLY,
    ]
    assert fs_states(locate_events(found, before, kernel_release="5.15.0-91-generic")) == [
        NO_LONGER_READ_ONLY,
        NO_LONGER_READ_ONLY,
    ]


def test_xfs_shutdown_lasts_while_mounted() -> None:
    found = events("this-vm-xfs-shutdown.kmsg")
    mounted = locate_events(found, table("this-vm-xfs-shutdown-after.mountinfo"))
    assert fs_states(mounted) == [STILL_MOUNTED]
    assert mounted[0].mountpoints == ("/tmp/kl/xfs/mnt1",)
    assert fs_states(locate_events(found, [])) == [NOT_MOUNTED]


def test_superblock_options_decide_not_a_read_only_bind() -> None:
    """INVENTED mountinfo: a pod's readOnly bind of a read-write ext4 (mount ro, super rw), and
    the same filesystem remounted read-only as kernels before 6.12 did (super ro)."""
    bind = parse_mounts(
        "45 27 7:0 / /pod/data ro,relatime - ext4 /dev/loop0 rw,errors=remount-ro\n"
    )
    old = parse_mounts("45 27 7:0 / /pod/data rw,relatime - ext4 /dev/loop0 ro,errors=remount-ro\n")
    found = events("this-vm-ext4-trigger.kmsg")
    assert fs_states(locate_events(found, bind)) == [NO_LONGER_READ_ONLY] * 2
    assert fs_states(locate_events(found, old)) == [STILL_READ_ONLY] * 2


def test_an_unrelated_table_means_not_mounted() -> None:
    located = locate_events(
        events("this-vm-ext4-trigger.kmsg"), table("this-vm-self.mountinfo", "mountinfo")
    )
    assert fs_states(located) == [NOT_MOUNTED, NOT_MOUNTED]
    assert located[0].mountpoints == ()
    assert located[0].via is None


# ---------------------------------------------------------------------------------------------
# Device → mount point → PV (public logs with an INVENTED node's table)
# ---------------------------------------------------------------------------------------------


def test_sdb_of_the_openebs_log_maps_to_its_pv_through_the_mount_point() -> None:
    """The OpenEBS blog's node (public) paired with invented-kubelet-node.mountinfo, whose
    /dev/sdb is a CSI staging mount (INVENTED pairing)."""
    mounts = table("invented-kubelet-node.mountinfo", "mountinfo")
    located = locate_events(events("openebs-blog-iscsi-node-down.syslog"), mounts)
    remount = [item for item in located if item.event.cause == "ext4-remount-ro"]
    assert {item.state for item in remount} == {NO_LONGER_READ_ONLY}
    (mountpoint,) = remount[0].mountpoints
    owners = resolve_mountpoints([mountpoint], pvs=[{"metadata": {"name": "pvc-block-legacy"}}])
    assert owners[mountpoint].pv_name == "pvc-block-legacy"


def test_aliases_map_dm_names_and_iscsi_connections() -> None:
    """INVENTED table: a multipath map mounted by its /dev/mapper name, a disk of an iSCSI
    session; the aliases are what the node's block-device and iSCSI sections would give."""
    mounts = parse_mounts(
        "50 25 253:3 / /var/lib/kubelet/plugins/kubernetes.io/csi/pv/pvc-mp/globalmount rw - "
        "ext4 /dev/mapper/mpatha rw\n"
        "51 25 8:16 / /mnt/iscsi rw - ext4 /dev/sdb rw\n"
    )
    found = events("invented-edge-cases.kmsg") + events("lore-siw-iser-conn-error-1011.dmesg")
    aliases = {"dm-3": ["/dev/mapper/mpatha"], "connection26:0": ["sdb"]}
    located = {item.event.kind: item for item in locate_events(found, mounts, aliases=aliases)}
    assert located[HUNG_TASK].via == VIA_ALIAS  # jbd2/dm-3-8
    assert located[HUNG_TASK].mountpoints == (
        "/var/lib/kubelet/plugins/kubernetes.io/csi/pv/pvc-mp/globalmount",
    )
    assert (located[ISCSI_CONN_ERROR].via, located[ISCSI_CONN_ERROR].mountpoints) == (
        VIA_ALIAS,
        ("/mnt/iscsi",),
    )
    without = locate_events(found, mounts)
    assert all(item.via is None for item in without if item.event.kind == ISCSI_CONN_ERROR)


def test_whole_disk_errors_reach_partitions_and_kmsg_device_numbers_match() -> None:
    """INVENTED table: sdc1 mounted by a by-uuid path (only its 8:33 says it is sdc1), and
    nvme1n1p2."""
    mounts = parse_mounts(
        "60 25 8:33 / /data rw - ext4 /dev/disk/by-uuid/0f0e rw\n"
        "61 25 259:2 / /scratch rw - xfs /dev/nvme1n1p2 rw\n"
    )
    located = locate_events(events("invented-edge-cases.kmsg"), mounts)
    by_device = {(item.event.device, item.event.cause): item for item in located}
    assert by_device[("sdc1", "buffer-io")].via == VIA_MAJOR_MINOR  # DEVICE=b8:33
    assert by_device[("sdc1", "buffer-io")].mountpoints == ("/data",)
    assert by_device[("nvme1n1", "block-layer")].via == VIA_PARTITION
    assert by_device[("nvme1n1", "block-layer")].mountpoints == ("/scratch",)
    assert by_device[("nvme1n1p2", "xfs-shutdown")].state == STILL_MOUNTED
    # sdc (whole disk, DEVICE=b8:32) has no partition mounted by a sdc name: no guess.
    assert by_device[("sdc", "block-layer")].mountpoints == ()


# ---------------------------------------------------------------------------------------------
# NFS servers
# ---------------------------------------------------------------------------------------------


def test_nfs_last_word_per_server() -> None:
    (state,) = nfs_server_states(events("nfs-ganesha-1295.dmesg"))
    assert (state.server, state.state, state.not_responding) == (
        "100.73.159.36",
        "not-responding",
        3,
    )
    assert state.still_not_responding
    assert state.last.line_number == 18
    states = {s.server: s for s in nfs_server_states(events("invented-edge-cases.kmsg"))}
    assert states["fd00::5"].state == "not-responding"
    # lockd said "not responding", then nfs said "OK": the server answers again.
    assert (
        states["nfs.example.internal"].state,
        states["nfs.example.internal"].not_responding,
    ) == (
        "ok",
        1,
    )


def test_nfs_events_find_the_server_s_mounts() -> None:
    """INVENTED pairing: the invented kubelet node mounts [fd00::1] and 10.0.0.7."""
    mounts = table("invented-kubelet-node.mountinfo", "mountinfo")
    text = "nfs: server fd00::1 not responding, still trying\nnfs: server 10.0.0.9 OK\n"
    located = locate_events(parse_kernel_log(text), mounts)
    assert (located[0].via, located[0].mountpoints) == (VIA_SERVER, ("/mnt/v6",))
    assert located[1].mountpoints == ()
    assert located[1].via is None
    (state, other) = nfs_server_states(parse_kernel_log(text), mounts)
    assert [m.mountpoint for m in state.mounts] == ["/mnt/v6"]
    assert other.mounts == ()
    assert state.to_dict()["mountpoints"] == ["/mnt/v6"]
