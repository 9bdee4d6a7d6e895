"""mountstats parser, checked field by field on captured and invented fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.mount_audit.mountstats import MountstatsParseError, parse_mountstats

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mountstats"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_kubelet_nfs4_capture() -> None:
    (stats,) = parse_mountstats(read("procfs-kubelet-nfs4-v1.1.mountstats"), strict=True)
    assert stats.server == "fs.example.com"
    assert stats.export == "/volume4/apps/home-automation/node-red-data"
    assert stats.mountpoint.endswith("kubernetes.io~nfs/home-automation--node-red-data--pv0001")
    assert (stats.fstype, stats.statvers, stats.rpc_iostats_version) == ("nfs4", "1.1", "1.1")
    assert stats.program_version == "100003/4"
    assert stats.age_seconds == 83520
    assert stats.options["vers"] == "4.1"
    assert stats.options["clientaddr"] == "192.168.1.191"
    assert stats.sec == {"flavor": "1", "pseudoflavor": "1"}
    assert stats.caps["wtmult"] == "512"
    assert len(stats.events) == 27
    assert stats.events[0] == 52472
    assert stats.bytes["server_read"] == 1788561151
    assert stats.xprt_count == 1
    xprt = stats.transports[0]
    assert xprt.protocol == "tcp"
    assert xprt.port == 940
    assert xprt.fields["connect_count"] == 2
    assert xprt.fields["pending_queue"] == 10823602

    read_op = stats.op("READ")
    assert read_op is not None
    assert (read_op.ops, read_op.transmissions, read_op.retransmissions) == (34096, 34096, 0)
    assert read_op.avg_rtt_ms == pytest.approx(464840 / 34096)
    assert read_op.avg_execute_ms == pytest.approx(467945 / 34096)
    assert read_op.errors == 0
    write_op = stats.op("write")
    assert write_op is not None
    assert write_op.avg_rtt_ms == pytest.approx(10139998 / 322308)
    getattr_op = stats.op("GETATTR")
    assert getattr_op is not None
    assert getattr_op.avg_execute_ms == pytest.approx(34502 / 52480)
    # Op lines with uneven tab indentation are all read, including the last one.
    assert len(stats.ops) == 63
    assert "LAYOUTERROR" in stats.ops
    assert stats.op("FREE_STATEID") is not None
    assert stats.ops["FREE_STATEID"].errors == 10413


def test_rdma_nconnect_16_transports() -> None:
    (stats,) = parse_mountstats(read("procfs-rdma-nconnect16.mountstats"), strict=True)
    assert stats.xprt_count == 16
    assert {t.protocol for t in stats.transports} == {"rdma"}
    assert stats.transports[0].fields["connect_count"] == 5808
    assert len(stats.transports[0].values) == 27  # rdma adds its own counters after the common ten
    assert stats.options["nconnect"] == "16"
    assert stats.options["proto"] == "rdma"
    assert "ro" in stats.options
    getattr_op = stats.op("GETATTR")
    assert getattr_op is not None
    assert getattr_op.avg_rtt_ms == pytest.approx(612667 / 512052)
    write_op = stats.op("WRITE")
    assert write_op is not None
    assert write_op.avg_rtt_ms is None


def test_iostats_1_0_eight_columns_and_non_nfs_skipped() -> None:
    mounts = parse_mountstats(read("procfs-fixture-26231-v1.0.mountstats"), strict=True)
    assert len(mounts) == 1  # rootfs, sysfs, proc and ext4 blocks are skipped
    (stats,) = mounts
    assert stats.rpc_iostats_version == "1.0"
    read_op = stats.op("READ")
    assert read_op is not None
    assert (read_op.ops, read_op.bytes_received, read_op.errors) == (1298, 1210292152, None)
    access = stats.op("ACCESS")
    # This capture has trans < ops (counters raced); retransmissions never go negative.
    assert access is not None
    assert access.transmissions < access.ops
    assert access.retransmissions == 0
    assert access.queue_ms == 18446743919241604546  # a wrapped u64 kept as printed
    assert stats.transports[0].fields["max_slots"] == 24


def test_kerberos_sample_statvers_with_trailing_spaces() -> None:
    (stats,) = parse_mountstats(read("procfs-rs-krb5.mountstats"), strict=True)
    assert stats.statvers == "1.1"
    assert stats.options["sec"] == "krb5"
    assert stats.sec["flavor"] == "6"
    assert stats.op("OPEN") is not None
    assert stats.ops["OPEN"].execute_ms == 124


def test_invented_edge_cases() -> None:
    mounts = parse_mountstats(read("invented-edge-cases.mountstats"), strict=True)
    assert [m.mountpoint.rsplit("/", 1)[-1] for m in mounts] == ["mount", "v6", "dup", "dup"]
    nconnect, v6, dup_one, dup_two = mounts
    assert nconnect.xprt_count == 4
    assert [t.port for t in nconnect.transports] == [901, 902, 903, 904]
    read_op = nconnect.op("READ")
    assert read_op is not None
    assert (read_op.retransmissions, read_op.avg_rtt_ms, read_op.avg_execute_ms) == (10, 4.0, 5.0)
    assert read_op.errors == 1
    assert v6.server == "fd00::1"
    assert v6.transports[0].protocol == "udp"
    assert v6.transports[0].fields["sends"] == 40  # udp has no connect counters
    assert "connect_count" not in v6.transports[0].fields
    getattr_op = v6.op("GETATTR")
    assert getattr_op is not None
    assert getattr_op.retransmissions == 2
    # The same mount point twice stays two entries with their own numbers.
    assert (dup_one.export, dup_two.export) == ("/vol1", "/vol2")
    assert dup_one.ops["READ"].ops == 1
    assert dup_two.ops["READ"].ops == 4


def test_this_vm_has_no_nfs() -> None:
    assert parse_mountstats(read("this-vm-self.mountstats")) == []


def test_strict_rejects_short_op_line() -> None:
    text = (
        "device s:/e mounted on /m with fstype nfs statvers=1.1\n"
        "\tper-op statistics\n"
        "\t        READ: 1 2 3\n"
    )
    assert parse_mountstats(text)[0].ops == {}
    with pytest.raises(MountstatsParseError, match="line 3"):
        parse_mountstats(text, strict=True)


def test_to_dict_lists_only_ops_that_ran() -> None:
    (stats,) = parse_mountstats(read("procfs-rdma-nconnect16.mountstats"))
    data = stats.to_dict()
    assert data["xprt_count"] == 16
    assert "WRITE" not in data["ops"]
    assert data["ops"]["READ"]["retransmissions"] == 0
    assert data["ops"]["GETATTR"]["avg_rtt_ms"] == round(612667 / 512052, 3)


def test_strict_rejects_bad_counter_lines() -> None:
    text = "device s:/e mounted on /m with fstype nfs4 statvers=1.1\n\tevents:\t1 x 3\n"
    (stats,) = parse_mountstats(text)
    assert stats.events == ()
    with pytest.raises(MountstatsParseError, match="events"):
        parse_mountstats(text, strict=True)
    bad_xprt = "device s:/e mounted on /m with fstype nfs4 statvers=1.1\n\txprt:\ttcp 1 two\n"
    assert parse_mountstats(bad_xprt)[0].transports == ()
    with pytest.raises(MountstatsParseError, match="line 2"):
        parse_mountstats(bad_xprt, strict=True)
