"""NFS on a real kernel: each phase of guest/nfs.sh through mount-audit's live code path.

Every mount sits at a kubelet pod-volume path and has a PV whose mountOptions are the options it
was mounted with, so the audit compares requested with effective options as it does on a node.
Each phase states, per PV: the findings (rule id and severity, each occurrence), the effective
options the kernel shows (``None``: not shown), and the number of transports (``xprt:`` lines in
mountstats) of the client the mount uses; and per server address the TCP connections to port
2049 that ``ss`` saw in the guest, the kernel's own count to hold the transports against.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.nodelab.conftest import LabRun
from tests.nodelab.reports import read_tsv

pytestmark = pytest.mark.nodelab


@dataclass(frozen=True)
class Mount:
    """What the audit must report for one mount."""

    findings: tuple[str, ...]  # "NFS003 info", one entry per occurrence
    options: dict[str, Any] = field(default_factory=dict)  # effective; None = not shown
    xprts: int = 1


@dataclass(frozen=True)
class Phase:
    mounts: dict[str, Mount]
    connections: dict[str, int]  # server address -> established TCP connections to :2049


V3 = {"vers": "3", "proto": "tcp", "hard": True}
SYS = "NFS100 info"  # sec=sys on every mount: the server trusts client UIDs, data in clear
V3_LOCKS = "NFS003 info"  # NFSv3: NLM/NSM side-band locking


def _expect(mounts: dict[str, Mount], connections: dict[str, int]) -> Phase:
    return Phase(mounts, connections)


PHASES: dict[str, Phase] = {
    # One mount per NFS version, each on its own server address. The mount without vers
    # negotiates 4.2, and v4.1+ trunking detection puts it on the client of 10.10.0.3 (the same
    # server): the kernel shows addr=10.10.0.3 and there is no connection to 10.10.0.4.
    "versions": _expect(
        {
            "nfs-v3": Mount(
                (V3_LOCKS, SYS), {**V3, "timeo": "600", "retrans": "2", "addr": "127.0.0.1"}
            ),
            "nfs-v40": Mount(("NFS002 warn", SYS), {"vers": "4.0", "addr": "10.10.0.1"}),
            "nfs-v41": Mount((SYS,), {"vers": "4.1", "addr": "10.10.0.2"}),
            "nfs-v42": Mount((SYS,), {"vers": "4.2", "addr": "10.10.0.3"}),
            "nfs-unpinned": Mount(
                ("NFS004 info", "NFS037 info", "NFSK8S003 info", SYS),
                {"vers": "4.2", "addr": "10.10.0.3", "rsize": "1048576", "wsize": "1048576"},
            ),
        },
        {"127.0.0.1": 1, "10.10.0.1": 1, "10.10.0.2": 1, "10.10.0.3": 1},
    ),
    # nconnect 1/4/8/16, each the first mount of its address: the kernel shows the value and
    # opens that many transports, each connected once I/O has gone round them.
    "nconnect": _expect(
        {
            "nc-1": Mount((V3_LOCKS, SYS), {**V3, "nconnect": "1"}, xprts=1),
            "nc-4": Mount((SYS,), {"vers": "4.1", "nconnect": "4"}, xprts=4),
            "nc-8": Mount((SYS,), {"vers": "4.2", "nconnect": "8"}, xprts=8),
            "nc-16": Mount((V3_LOCKS, SYS), {**V3, "nconnect": "16"}, xprts=16),
        },
        {"10.10.0.5": 1, "10.10.0.6": 4, "10.10.0.7": 8, "10.10.0.8": 16},
    ),
    # rsize/wsize below and above 256 KiB; 2 MiB requested is capped to 1 MiB by the client.
    "rwsize": _expect(
        {
            "rw-64k": Mount((V3_LOCKS, SYS), {**V3, "rsize": "65536", "wsize": "65536"}),
            "rw-1m": Mount((SYS,), {"vers": "4.1", "rsize": "1048576", "wsize": "1048576"}),
            "rw-2m": Mount(
                ("NFSK8S001 warn", "NFS022 info", SYS),
                {"vers": "4.2", "rsize": "1048576", "wsize": "1048576"},
            ),
            "rw-32k": Mount(
                (V3_LOCKS, "NFS023 info", SYS), {**V3, "rsize": "32768", "wsize": "32768"}
            ),
        },
        {"10.10.0.9": 1, "10.10.0.10": 1, "10.10.0.11": 1, "10.10.0.12": 1},
    ),
    # hard and soft (rw and ro), nocto with a long actimeo on a PV two nodes mount rw, actimeo=0.
    "hard-soft-cache": _expect(
        {
            "hard": Mount((SYS,), {"vers": "4.1", "hard": True, "soft": None, "timeo": "600"}),
            "soft-rw": Mount(
                ("NFS010 error", "NFS013 warn", V3_LOCKS, SYS),
                {"vers": "3", "soft": True, "hard": None, "timeo": "100", "retrans": "3"},
            ),
            "soft-ro": Mount(("NFS011 warn", V3_LOCKS, SYS), {"ro": True, "soft": True}),
            "nocto-actimeo": Mount(
                ("NFS051 warn", "NFS052 warn", SYS),
                {
                    "nocto": True,
                    "acregmin": "120",
                    "acregmax": "120",
                    "acdirmin": "120",
                    "acdirmax": "120",
                },
            ),
            "actimeo-0": Mount(
                ("NFS050 warn", V3_LOCKS, SYS),
                {"acregmin": "0", "acregmax": "0", "acdirmin": "0", "acdirmax": "0"},
            ),
        },
        {"10.10.0.13": 1, "10.10.0.14": 1, "10.10.0.15": 1, "10.10.0.16": 1, "10.10.0.17": 1},
    ),
    # The first mount of an endpoint decides nconnect, both ways. NFSv4.1: 10.10.0.18 first
    # without nconnect, then nconnect=8 (not used), then the same server through 10.10.0.19 with
    # nconnect=4, merged into the 10.10.0.18 client (addr=10.10.0.18, no connection to .19).
    # NFSv4.2: 10.10.0.20 first with nconnect=8, then without: both run 8.
    "inherit-v4": _expect(
        {
            "v41-first": Mount(("NFS031 warn", SYS), {"nconnect": None, "addr": "10.10.0.18"}),
            "v41-second": Mount(
                ("NFS031 warn", "NFSK8S001 warn", SYS), {"nconnect": None, "addr": "10.10.0.18"}
            ),
            "v41-other-address": Mount(
                ("NFS031 warn", "NFS037 info", "NFSK8S001 warn", SYS),
                {"nconnect": None, "addr": "10.10.0.18"},
            ),
            "v42-first": Mount(
                ("NFS031 warn", SYS), {"nconnect": "8", "addr": "10.10.0.20"}, xprts=8
            ),
            "v42-second": Mount(
                ("NFS031 warn", SYS), {"nconnect": "8", "addr": "10.10.0.20"}, xprts=8
            ),
        },
        {"10.10.0.18": 1, "10.10.0.20": 8},
    ),
    # The same with NFSv3 (one client per server address).
    "inherit-v3": _expect(
        {
            "v3-first": Mount(("NFS031 warn", V3_LOCKS, SYS), {"nconnect": None}),
            "v3-second": Mount(
                ("NFS031 warn", "NFSK8S001 warn", V3_LOCKS, SYS), {"nconnect": None}
            ),
            "v3-rev-first": Mount(("NFS031 warn", V3_LOCKS, SYS), {"nconnect": "4"}, xprts=4),
            "v3-rev-second": Mount(("NFS031 warn", V3_LOCKS, SYS), {"nconnect": "4"}, xprts=4),
        },
        {"10.10.0.21": 1, "10.10.0.22": 4},
    ),
    # One NFS client for two security flavours (the server: NFS-Ganesha, see guest/nfs.sh; the
    # client: the kernel's, with rpc.gssd and the guest's KDC). NFSv4.1 10.10.0.23: sec=sys with
    # nconnect=4 first, then sec=krb5p asking for nconnect=2: the kernel shows nconnect=4 on both
    # and the krb5p mount runs the same 4 transports, so NFS031 on both, and the krb5p mount also
    # NFSK8S001 (nconnect requested 2, effective 4) and NFS033 (nconnect=4 with krb5p).
    "krb5-inherit": _expect(
        {
            "krb5-sys-first": Mount(
                ("NFS031 warn", SYS),
                {"vers": "4.1", "sec": "sys", "nconnect": "4", "addr": "10.10.0.23"},
                xprts=4,
            ),
            "krb5p-second": Mount(
                ("NFS031 warn", "NFS033 warn", "NFSK8S001 warn"),
                {"vers": "4.1", "sec": "krb5p", "nconnect": "4", "addr": "10.10.0.23"},
                xprts=4,
            ),
        },
        {"10.10.0.23": 4},
    ),
    # The quiet case: NFSv4.2 10.10.0.24, sec=krb5p first, then sec=sys, neither with nconnect:
    # one client, one connection, nothing inconsistent; the krb5p mount has no finding at all.
    "krb5-quiet": _expect(
        {
            "krb5p-first": Mount(
                (), {"vers": "4.2", "sec": "krb5p", "nconnect": None, "addr": "10.10.0.24"}
            ),
            "krb5-sys-second": Mount(
                (SYS,), {"vers": "4.2", "sec": "sys", "nconnect": None, "addr": "10.10.0.24"}
            ),
        },
        {"10.10.0.24": 1},
    ),
}

# A hard NFSv4.1 mount (timeo=20 over TCP: NFS013) whose server stops answering, captured
# while it does not, then after it answers again (guest/nfs.sh; the kernel-log part is
# test_a_server_that_stops_answering_is_an_error_until_it_answers_again).
STALLED = Mount(("NFS013 warn", SYS), {"vers": "4.1", "timeo": "20", "hard": True})
PHASES["server-stops"] = _expect({"stalled": STALLED}, {"10.10.0.25": 1})
PHASES["server-back"] = _expect({"stalled": STALLED}, {"10.10.0.25": 1})

#: Phases whose mounts of one server address must share one NFS client whatever their security
#: flavour: the kernel's own client list (/proc/fs/nfsfs/servers) has one client for the address,
#: used by both superblocks (USE 2), and both mounts' mountstats show the same transports.
ONE_CLIENT_PHASES = {"krb5-inherit": "10.10.0.23", "krb5-quiet": "10.10.0.24"}

#: The same captures judged with the Azure NetApp Files profile (--profile anf): rsize/wsize above
#: 256 KiB warn, nconnect above 8 is noted, NFSv3 warns, and NFSv3 with more than 128 RPC slots
#: per connection (the kernel's tcp_max_slot_table_entries is 65536) is noted.
ANF = "anf"
V3_ANF = ("NFS003 warn", "NFS111 info")
ANF_PHASES: dict[str, dict[str, tuple[str, ...]]] = {
    "nconnect": {
        "nc-1": (*V3_ANF, "NFS021 warn", SYS),
        "nc-4": ("NFS021 warn", SYS),
        "nc-8": ("NFS021 warn", SYS),
        "nc-16": (*V3_ANF, "NFS021 warn", "NFS032 info", SYS),
    },
    "rwsize": {
        "rw-64k": (*V3_ANF, SYS),
        "rw-1m": ("NFS021 warn", SYS),
        "rw-2m": ("NFS021 warn", "NFSK8S001 warn", "NFS022 info", SYS),
        "rw-32k": (*V3_ANF, SYS),
    },
}


def _findings(mount: dict[str, Any]) -> Counter[str]:
    return Counter(f"{f['id']} {f['severity']}" for f in mount["findings"])


def _check(lab: LabRun, name: str, phase: Phase) -> None:
    report = lab.mount_report(name)
    problems: list[str] = []
    assert report["error"] is None, report["error"]
    assert report["warnings"] == []
    assert report["kernel"] == lab.facts.get("kernel", report["kernel"])
    mounts = {mount["pv"]: mount for mount in report["mounts"]}
    assert sorted(mounts) == sorted(phase.mounts), "the audit must see every mount, by its PV"
    requested = {row[0]: row[5] for row in read_tsv(lab.phase("nfs", name) / "volumes.tsv")}
    for pv, want in phase.mounts.items():
        got = mounts[pv]
        wanted_options = requested[pv].split(",") if requested[pv] else []
        if got["requested_options"] != wanted_options:
            problems.append(f"{pv}: requested {got['requested_options']} != {wanted_options}")
        if _findings(got) != Counter(want.findings):
            problems.append(
                f"{pv}: findings {sorted(_findings(got).elements())}, "
                f"expected {sorted(want.findings)}"
            )
        for key, value in want.options.items():
            if got["options"].get(key) != value:
                problems.append(
                    f"{pv}: effective {key}={got['options'].get(key)!r}, expected {value!r}"
                )
        if got["xprt_count"] != want.xprts or (got["stats"] or {}).get("xprt_count") != want.xprts:
            problems.append(f"{pv}: xprt_count {got['xprt_count']}, expected {want.xprts}")
    connections = {
        addr: int(count)
        for addr, count in (
            line.split()
            for line in (lab.phase("nfs", name) / "connection-counts.txt").read_text().splitlines()
        )
    }
    if connections != phase.connections:
        problems.append(f"TCP connections to :2049 {connections}, expected {phase.connections}")
    assert not problems, f"nfs/{name}:\n  " + "\n  ".join(problems)


def test_phases_ran(lab: LabRun) -> None:
    assert lab.phases("nfs") == list(PHASES)


@pytest.mark.parametrize("name", list(PHASES))
def test_phase(lab: LabRun, name: str) -> None:
    _check(lab, name, PHASES[name])


@pytest.mark.parametrize("name", list(ONE_CLIENT_PHASES))
def test_phase_one_client_for_both_flavours(lab: LabRun, name: str) -> None:
    address = ONE_CLIENT_PHASES[name]
    servers_table = (lab.phase("nfs", name) / "nfsfs.txt").read_text().split("\n\n")[0]
    servers = [line.split() for line in servers_table.splitlines()[1:] if line.strip()]
    assert [(row[0], row[3], row[4]) for row in servers] == [("v4", "2", address)], servers_table
    report = lab.mount_report(name)
    flavours = {mount["options"].get("sec") for mount in report["mounts"]}
    assert flavours == {"sys", "krb5p"}
    assert {mount["options"].get("addr") for mount in report["mounts"]} == {address}
    # The same transports: mountstats' xprt lines (counters included) are one list for both.
    stats = _xprt_lines(lab.phase("nfs", name) / "collect-mount.txt")
    assert len(stats) == 2, stats
    assert stats[0] == stats[1], stats


def _xprt_lines(collect: Path) -> list[list[str]]:
    """The ``xprt:`` lines of each NFS mount in the capture's mountstats, in order."""
    mounts: list[list[str]] = []
    for line in collect.read_text().splitlines():
        if line.startswith("device ") and re.search(r" with fstype nfs4? statvers=", line):
            mounts.append([])
        elif line.strip().startswith("xprt:") and mounts:
            mounts[-1].append(line.strip())
    return mounts


@pytest.mark.parametrize("name", list(ANF_PHASES))
def test_phase_anf_profile(lab: LabRun, name: str) -> None:
    report = lab.mount_report(name, profile=ANF)
    got = {mount["pv"]: _findings(mount) for mount in report["mounts"]}
    want = {pv: Counter(findings) for pv, findings in ANF_PHASES[name].items()}
    assert got == want
    assert {mount["profile"] for mount in report["mounts"]} == {ANF}


def test_a_server_that_stops_answering_is_an_error_until_it_answers_again(lab: LabRun) -> None:
    """Issue 22 item 4 on a real kernel: while 10.10.0.25 drops every packet, its last word in
    the kernel log is "not responding" (KLOG030, an error, on the stalled claim's mount) and a
    writer is blocked (KLOG040); once it answers, "OK" (KLOG031, a warning while recent)."""
    down = lab.mount_report("server-stops")
    assert down["kernel_log"]["source"] == "kmsg", down["kernel_log"]
    servers = {server["subject"]: server for server in down["nfs_servers"]}
    stalled = servers["NFS server 10.10.0.25"]
    assert stalled["state"] == "not-responding", stalled
    assert [(f["id"], f["severity"]) for f in stalled["findings"]] == [("KLOG030", "error")]
    assert [v["pvc"] for v in stalled["volumes"]] == ["stalled-claim"], stalled
    assert any(event["kind"] == "hung-task" for event in down["kernel_events"])
    back = lab.mount_report("server-back")
    servers = {server["subject"]: server for server in back["nfs_servers"]}
    recovered = servers["NFS server 10.10.0.25"]
    assert recovered["state"] == "ok", recovered
    assert [(f["id"], f["severity"]) for f in recovered["findings"]] == [("KLOG031", "warn")]
