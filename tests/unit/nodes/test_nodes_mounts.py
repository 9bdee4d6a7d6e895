"""Mount-table parsers, checked field by field on captured and invented fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.mount_audit.mountstats import parse_mountstats
from kubectl_storage.core.nodes.mount_model import (
    MountParseError,
    parse_options,
    split_network_source,
    unescape_octal,
)
from kubectl_storage.core.nodes.mounts import (
    detect_mount_format,
    parse_mountinfo,
    parse_mounts,
    parse_mountstats_mounts,
    parse_nfsstat_m,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def read(relative: str) -> str:
    return (FIXTURES / relative).read_text()


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("mountinfo/this-vm-self.mountinfo", "mountinfo"),
        ("mountinfo/linuxkit-2251-nfs4.mountinfo", "mountinfo"),
        ("mountinfo/invented-kubelet-node.mountinfo", "mountinfo"),
        ("mounts/this-vm.proc-mounts", "proc-mounts"),
        ("mounts/invented-mixed.proc-mounts", "proc-mounts"),
        ("mounts/this-vm.mount-output", "mount"),
        ("mounts/helm-charts-23304.mount-output", "mount"),
        ("nfsstat/index-two-mounts.nfsstat", "nfsstat"),
        ("nfsstat/index-rdma-wrapped.nfsstat", "nfsstat"),
        ("nfsstat/index-serverb.nfsstat", "nfsstat"),
        ("nfsstat/invented-ipv6-nconnect.nfsstat", "nfsstat"),
        ("mountstats/procfs-kubelet-nfs4-v1.1.mountstats", "mountstats"),
        ("mountstats/this-vm-self.mountstats", "mountstats"),
    ],
)
def test_detects_each_fixture_format(relative: str, expected: str) -> None:
    assert detect_mount_format(read(relative)) == expected


def test_unknown_text_is_refused() -> None:
    assert detect_mount_format("hello world\n") == "unknown"
    with pytest.raises(MountParseError):
        parse_mounts("hello world\n")


def test_real_nfs4_mountinfo_line_fields() -> None:
    (entry,) = parse_mounts(read("mountinfo/linuxkit-2251-nfs4.mountinfo"))
    assert entry.mount_id == 263
    assert entry.parent_id == 121
    assert entry.major_minor == "0:46"
    assert entry.root == "/"
    assert entry.mountpoint == "/root/nfs"
    assert entry.fstype == "nfs4"
    assert entry.source == "192.168.122.80:/home/ubuntu"
    assert entry.server == "192.168.122.80"
    assert entry.export == "/home/ubuntu"
    assert entry.optional_fields == ()
    assert entry.is_nfs
    assert entry.is_network
    assert entry.visible
    # Per-mount options first, then super-options, values exactly as printed, in order.
    assert list(entry.options)[:5] == ["rw", "relatime", "vers", "rsize", "wsize"]
    assert entry.options["vers"] == "4.2"
    assert entry.options["rsize"] == "524288"
    assert entry.options["hard"] is True
    assert entry.options["port"] == "0"
    assert entry.options["addr"] == "192.168.122.80"
    assert entry.mount_options == {"rw": True, "relatime": True}


def test_optional_fields_and_separator() -> None:
    entries = parse_mountinfo(read("mountinfo/procfs-optional-fields.mountinfo"))
    assert [e.optional_fields for e in entries] == [
        ("shared:7",),
        ("shared:177",),
        ("shared:177", "master:8"),
        ("shared:177", "master:8", "foo:bar"),
    ]
    assert entries[1].options == {
        "rw": True,
        "nosuid": True,
        "nodev": True,
        "relatime": True,
        "size": "405096k",
        "mode": "700",
        "uid": "112",
        "gid": "116",
    }
    assert entries[0].server is None
    assert entries[0].export is None


def test_this_vm_mountinfo_marks_stacked_mounts() -> None:
    entries = parse_mounts(read("mountinfo/this-vm-self.mountinfo"))
    assert len(entries) == 20
    pts = [e for e in entries if e.mountpoint == "/dev/pts"]
    assert [(e.mount_id, e.parent_id, e.visible) for e in pts] == [(26, 24, False), (29, 26, True)]
    shm = [e for e in entries if e.mountpoint == "/dev/shm"]
    assert [(e.mount_id, e.visible) for e in shm] == [(25, False), (30, True)]
    root = next(e for e in entries if e.mountpoint == "/")
    assert root.source == "/dev/vda"
    assert root.fstype == "ext4"
    assert root.major_minor == "254:0"
    assert root.visible
    read_only = next(e for e in entries if e.mountpoint.endswith("/python"))
    assert read_only.read_only
    assert "rw" not in read_only.options


def test_this_vm_three_formats_agree() -> None:
    mountinfo = parse_mounts(read("mountinfo/this-vm-self.mountinfo"))
    proc_mounts = parse_mounts(read("mounts/this-vm.proc-mounts"))
    mount_output = parse_mounts(read("mounts/this-vm.mount-output"))

    def summary(entries: list) -> list[tuple[str, str, str, bool]]:
        return [(e.source, e.mountpoint, e.fstype, e.visible) for e in entries]

    assert summary(mountinfo) == summary(proc_mounts) == summary(mount_output)


def test_kubelet_node_mountinfo_fields() -> None:
    entries = {
        e.mountpoint: e for e in parse_mounts(read("mountinfo/invented-kubelet-node.mountinfo"))
    }
    v6 = entries["/mnt/v6"]
    assert (v6.server, v6.export, v6.options["proto"]) == ("fd00::1", "/export", "tcp6")
    spaced = entries["/mnt/my share"]  # \040 decoded
    assert spaced.server == "fs-0123456789abcdef0.efs.us-east-1.amazonaws.com"
    assert spaced.export == "/"
    smb = entries["/mnt/smb"]
    assert (smb.fstype, smb.server, smb.export, smb.is_nfs) == (
        "cifs",
        "fileserver",
        "/share",
        False,
    )
    assert smb.options["soft"] is True
    assert smb.options["actimeo"] == "1"
    block = entries["/var/lib/kubelet/plugins/kubernetes.io/csi/pv/pvc-block-legacy/globalmount"]
    assert block.server is None
    assert block.major_minor == "8:16"


def test_stacked_nfs_mounts_keep_both_and_mark_top() -> None:
    entries = parse_mounts(read("mountinfo/invented-kubelet-node.mountinfo"))
    stack = [e for e in entries if e.mountpoint == "/mnt/stack"]
    assert [(e.server, e.visible) for e in stack] == [
        ("nfs-a.example.com", False),
        ("nfs-b.example.com", True),
    ]


def test_proc_mounts_file_order_decides_visibility_without_ids() -> None:
    entries = parse_mounts(read("mounts/invented-mixed.proc-mounts"))
    stack = [e for e in entries if e.mountpoint == "/mnt/stack"]
    assert [(e.export, e.visible) for e in stack] == [("/a", False), ("/b", True)]
    music = next(e for e in entries if e.server == "nas" and e.export == "/music")
    assert music.mountpoint == "/mnt/music share"
    assert music.options["proto"] == "udp"
    assert music.options["soft"] is True
    efs = entries[1]
    assert efs.server == "us-west-2a.fs-0123abcd.efs.us-west-2.amazonaws.com"
    assert efs.mount_id is None
    assert efs.source_format == "proc-mounts"


def test_real_mount_command_line() -> None:
    (entry,) = parse_mounts(read("mounts/helm-charts-23304.mount-output"))
    assert entry.server == "10.0.0.47"
    assert (
        entry.export == "/data/k8s/default-home-assistant-pvc-c43bea52-2426-4c34-9fe6-5a46f7e6ff1c"
    )
    assert entry.mountpoint.endswith(
        "/volumes/kubernetes.io~nfs/pvc-c43bea52-2426-4c34-9fe6-5a46f7e6ff1c"
    )
    assert entry.fstype == "nfs4"
    assert entry.options["vers"] == "4.2"
    assert entry.options["clientaddr"] == "10.0.0.76"
    assert list(entry.options)[-1] == "addr"


def test_nfsstat_two_mounts() -> None:
    first, second = parse_nfsstat_m(read("nfsstat/index-two-mounts.nfsstat"))
    assert first.mountpoint == "/mnt/phil"
    assert first.server == "kvm-demo-support.dev.cpanel.net"
    assert first.export == "/volumes/kvm-demo"
    assert first.fstype == "nfs4"
    assert first.options["addr"] == "10.0.32.83"
    assert second.server == "10.2.71.6"
    assert second.options["addr"] == "10.2.71.6"


def test_nfsstat_wrapped_flags_are_joined() -> None:
    (entry,) = parse_mounts(read("nfsstat/index-rdma-wrapped.nfsstat"))
    assert entry.fstype == "nfs"  # vers=3
    assert entry.options["proto"] == "rdma"
    assert entry.options["fatal_neterrors"] == "none"
    assert entry.options["local_lock"] == "none"
    assert entry.options["addr"] == "192.168.2.55"
    assert "" not in entry.options


def test_nfsstat_ipv6_server() -> None:
    v6, efs = parse_mounts(read("nfsstat/invented-ipv6-nconnect.nfsstat"))
    assert (v6.server, v6.export, v6.options["nconnect"], v6.options["sec"]) == (
        "fd00::1",
        "/export",
        "8",
        "krb5p",
    )
    assert efs.server == "fs-0123456789abcdef0.efs.eu-west-1.amazonaws.com"


def test_mountstats_headers_and_opts_give_mounts() -> None:
    entries = parse_mounts(read("mountstats/invented-edge-cases.mountstats"))
    assert [e.fstype for e in entries] == ["proc", "nfs4", "nfs", "nfs4", "nfs4", "cifs"]
    dup = [e for e in entries if e.mountpoint == "/mnt/dup"]
    assert [(e.export, e.visible) for e in dup] == [("/vol1", False), ("/vol2", True)]
    assert entries[1].options["nconnect"] == "4"


def test_mountstats_mount_list_and_counters_read_the_same_blocks() -> None:
    # A header cut beyond repair: its block is skipped whole by both readers of mountstats;
    # its opts: line must not become the options of the mount before it.
    text = (
        "device a:/x mounted on /m1 with fstype nfs4 statvers=1.1\n"
        "\topts:\trw,vers=4.1\n"
        "device b:/y mounted on /m2 wi\n"
        "th fstype nfs4 statvers=1.1\n"
        "\topts:\tro,vers=3\n"
    )
    entries = parse_mountstats_mounts(text, strict=True)
    assert [(e.mountpoint, e.options) for e in entries] == [("/m1", {"rw": True, "vers": "4.1"})]
    assert [(s.mountpoint, s.options) for s in parse_mountstats(text)] == [
        ("/m1", {"rw": True, "vers": "4.1"})
    ]


def test_strict_mode_reports_bad_lines() -> None:
    text = "36 35 0:42 / /mnt rw shared:1 - nfs4 srv:/x rw\nnot a mountinfo line\n"
    assert len(parse_mountinfo(text)) == 1
    with pytest.raises(MountParseError, match="line 2"):
        parse_mountinfo(text, strict=True)


def test_option_and_escape_helpers() -> None:
    assert parse_options('rw,context="a,b",vers=4.1') == {
        "rw": True,
        "context": '"a,b"',
        "vers": "4.1",
    }
    assert unescape_octal(r"/mnt/a\040b\134c\011d") == "/mnt/a b\\c\td"
    assert split_network_source("[fd00::1]:/export", "nfs") == ("fd00::1", "/export")
    assert split_network_source("mon1,mon2:/vol", "ceph") == ("mon1,mon2", "/vol")
    assert split_network_source("/dev/sda1", "ext4") == (None, None)


def test_to_dict_shape() -> None:
    (entry,) = parse_mounts(read("mountinfo/linuxkit-2251-nfs4.mountinfo"))
    data = entry.to_dict()
    assert list(data)[:5] == ["server", "export", "source", "mountpoint", "fstype"]
    assert data["options"]["vers"] == "4.2"
    assert data["visible"] is True
