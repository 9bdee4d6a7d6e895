"""Kernel-log health: the debug pod's section (its script run here, its prefilter run by the real
awk on every captured log) and the findings, each with a case that fires and one that stays
quiet.

The logs and tables are the captures of tests/fixtures/kernel_log (SOURCES.md: this machine's
loop devices, and public logs); a public log paired with another node's table is INVENTED and
says so. The clock headers are written here: they give each event an age.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kubectl_storage.core.nodes.collect import collection_script, split_sections
from kubectl_storage.core.nodes.kernel_health import (
    HEADER,
    SECTION,
    device_aliases,
    kernel_log_section,
)
from kubectl_storage.core.nodes.kernel_log import parse_kernel_log
from kubectl_storage.core.nodes.kernel_log_rules import RECENT_S, assess_kernel_log
from kubectl_storage.core.nodes.mounts import parse_mounts
from kubectl_storage.core.nodes.volume_owners import resolve_mountpoints
from kubectl_storage.core.report.findings import Severity
from tests.conftest import FIXTURES

KERNEL_LOG = FIXTURES / "kernel_log"
LOGS = sorted(
    path
    for path in KERNEL_LOG.iterdir()
    if path.is_file() and path.suffix not in (".md", ".mountinfo", ".proc-mounts")
)


@pytest.fixture
def awk() -> str:
    """The awk the pod's prefilter runs (mawk is in every Debian, the toolbox image's base): a
    machine without it fails these tests rather than skipping them."""
    path = shutil.which("awk")
    assert path, "awk is missing: the node script's prefilter needs it"
    return path


def prefilter_script() -> str:
    """The awk stage of the node script, exactly as the pod runs it."""
    script = collection_script((SECTION,))
    start = script.index("awk -v p=")
    return script[start : script.rindex("'") + 1]


def prefiltered(text: str) -> str:
    result = subprocess.run(
        ["sh", "-c", prefilter_script()], input=text, capture_output=True, text=True, check=True
    )
    return result.stdout


def signature(text: str) -> list[tuple[str, str, str | None, str | None, str]]:
    return [
        (event.kind, event.cause, event.device, event.server, event.message)
        for event in parse_kernel_log(text)
    ]


def table(name: str, folder: str = "kernel_log") -> list:
    return parse_mounts((FIXTURES / folder / name).read_text())


def header(uptime: float, btime: int = 1_796_537_598, source: str = "kmsg") -> str:
    return f"{HEADER} source={source} uptime={uptime} btime={btime}\n"


# ---------------------------------------------------------------------------------------------
# The section: script and prefilter
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("log", LOGS, ids=lambda path: path.name)
def test_the_prefilter_keeps_every_event_of_every_capture(log, awk: str) -> None:
    text = log.read_text()
    kept = prefiltered(text)
    assert signature(kept) == signature(text)
    assert len(kept) <= len(text)


def test_the_prefilter_drops_other_lines_and_keeps_a_record_s_properties(awk: str) -> None:
    text = (
        "6,1,10,-;usb 1-1: new high-speed USB device\n"
        " SUBSYSTEM=usb\n"
        "3,2,20,-;Buffer I/O error on dev sdc1, logical block 0, async page read\n"
        " SUBSYSTEM=block\n"
        " DEVICE=b8:33\n"
    )
    assert prefiltered(text) == "".join(text.splitlines(keepends=True)[2:])


def test_the_section_script_runs_and_says_its_source() -> None:
    """The pod's script, run on this machine: whatever source answers, the header reads and
    its clock is this machine's."""
    output = subprocess.run(
        ["sh", "-c", collection_script((SECTION,))], capture_output=True, text=True, check=True
    ).stdout
    section = kernel_log_section(split_sections(output)[SECTION])
    assert section.source in ("kmsg", "journal", "dmesg", "none")
    assert section.uptime_s is not None
    assert section.uptime_s > 0
    assert section.btime is not None
    assert section.btime > 1_600_000_000
    assert (section.error is None) == (section.source != "none")


def test_a_header_without_a_source_says_why() -> None:
    text = f"{HEADER} source=none uptime=5.0 btime=1 error=dmesg: read kernel buffer failed\n"
    health = assess_kernel_log(text, [], {})
    (finding,) = health.findings
    assert (finding.id, finding.severity) == ("KLOG000", Severity.INFO)
    assert "read kernel buffer failed" in finding.message
    assert health.to_dict()["kernel_log"]["source"] == "none"


# ---------------------------------------------------------------------------------------------
# Findings, both ways
# ---------------------------------------------------------------------------------------------


def test_ext4_still_read_only_is_an_error_and_remounted_is_information() -> None:
    """Captured together on this machine's 6.18: the error, then the table with emergency_ro;
    then the table after the filesystem was mounted again."""
    log = header(uptime=1090.0) + (KERNEL_LOG / "this-vm-ext4-trigger.kmsg").read_text()
    now = assess_kernel_log(
        log, table("this-vm-ext4-trigger-after-error.mountinfo"), {}, kernel_release="6.18.44"
    )
    assert {(f.id, f.severity) for f in now.findings} == {("KLOG001", Severity.ERROR)}
    (group,) = now.events
    assert (group.subject, group.count, group.state) == ("loop0", 2, "still-read-only")
    assert group.last_age_s == pytest.approx(1090.0 - 1081.673074)
    assert group.last_at is not None
    assert group.last_at.endswith("Z")
    later = assess_kernel_log(
        log, table("this-vm-ext4-trigger-after-mount-again.mountinfo"), {}, kernel_release="6.18"
    )
    assert {(f.id, f.severity) for f in later.findings} == {("KLOG004", Severity.INFO)}


def test_xfs_shut_down_and_mounted_is_an_error() -> None:
    log = header(uptime=5000.0) + (KERNEL_LOG / "this-vm-xfs-shutdown.kmsg").read_text()
    mounted = assess_kernel_log(log, table("this-vm-xfs-shutdown-after.mountinfo"), {})
    assert "KLOG002" in {f.id for f in mounted.findings}
    unmounted = assess_kernel_log(log, [], {})
    assert {f.severity for f in unmounted.findings} == {Severity.INFO}


def test_io_errors_on_a_volume_name_its_claim_and_pod_and_age_into_information() -> None:
    """The OpenEBS blog's node (public) on invented-kubelet-node.mountinfo, whose /dev/sdb is
    a CSI staging mount, with a pod mount of the same claim (INVENTED pairing)."""
    mounts = table("invented-kubelet-node.mountinfo", "mountinfo")
    staging = "/var/lib/kubelet/plugins/kubernetes.io/csi/pv/pvc-block-legacy/globalmount"
    owners = resolve_mountpoints(
        [staging],
        pvs=[
            {
                "metadata": {"name": "pvc-block-legacy"},
                "spec": {"claimRef": {"namespace": "db", "name": "data-0"}},
            }
        ],
    )
    text = (KERNEL_LOG / "openebs-blog-iscsi-node-down.syslog").read_text()
    # The log's last line is at 28598.7 s since boot: an hour later, then two days later.
    fresh = assess_kernel_log(header(uptime=28598.7 + 3600) + text, mounts, owners)
    io = [group for group in fresh.events if group.kind == "buffer-io-error"]
    assert io
    assert io[0].subject == "sdb"
    (finding,) = io[0].findings
    assert (finding.id, finding.severity) == ("KLOG010", Severity.WARN)
    assert "db/data-0" in finding.message
    old = assess_kernel_log(header(uptime=28598.7 + 2 * RECENT_S) + text, mounts, owners)
    old_io = [group for group in old.events if group.kind == "buffer-io-error"]
    assert {f.severity for group in old_io for f in group.findings} == {Severity.INFO}
    # The filesystem was remounted read-only then, and it is read-write in this table now.
    assert "KLOG004" in {f.id for f in fresh.findings}
    assert "KLOG001" not in {f.id for f in fresh.findings}


def test_an_nfs_server_not_responding_now_is_an_error_and_one_that_came_back_is_not() -> None:
    """INVENTED pairing: the invented kubelet node mounts [fd00::1]."""
    mounts = table("invented-kubelet-node.mountinfo", "mountinfo")
    down = header(uptime=100.0, source="dmesg") + (
        "[   50.000000] nfs: server fd00::1 not responding, still trying\n"
        "[   60.000000] INFO: task dd:4242 blocked for more than 10 seconds.\n"
    )
    health = assess_kernel_log(down, mounts, {})
    (server,) = health.nfs_servers
    assert (server.state, server.mountpoints) == ("not-responding", ("/mnt/v6",))
    assert [(f.id, f.severity) for f in server.findings] == [("KLOG030", Severity.ERROR)]
    # The hung task names no device: information beside the server's error.
    assert [(f.id, f.severity) for g in health.events for f in g.findings] == [
        ("KLOG040", Severity.INFO)
    ]
    back = down + "[   70.000000] nfs: server fd00::1 OK\n"
    (server,) = assess_kernel_log(back, mounts, {}).nfs_servers
    assert [(f.id, f.severity) for f in server.findings] == [("KLOG031", Severity.WARN)]


def test_a_quiet_log_raises_nothing() -> None:
    health = assess_kernel_log(
        header(uptime=10.0) + "6,1,1000,-;EXT4-fs (vda1): mounted filesystem r/w\n",
        table("this-vm-ext4-trigger-before.mountinfo"),
        {},
    )
    assert health.findings == ()
    assert health.events == ()
    assert health.to_dict()["kernel_events"] == []


def test_iscsi_connections_and_multipath_maps_reach_the_volume_through_aliases() -> None:
    """INVENTED table and names: session 26's disk sdb and map mpatha (dm-3) mounted by kubelet;
    the logs are the lore iSER capture (connection26:0, error 1011) and the invented edge
    cases (a hung jbd2/dm-3 and an ext4 error on dm-3)."""
    mounts = parse_mounts(
        "50 25 253:3 / /var/lib/kubelet/plugins/kubernetes.io/csi/pv/pvc-mp/globalmount rw - "
        "ext4 /dev/mapper/mpatha rw,errors=remount-ro\n"
        "51 25 8:16 / /var/lib/kubelet/plugins/kubernetes.io/csi/pv/pvc-sdb/globalmount rw - "
        "ext4 /dev/sdb rw\n"
    )
    owners = resolve_mountpoints(
        [entry.mountpoint for entry in mounts],
        pvs=[{"metadata": {"name": "pvc-mp"}}, {"metadata": {"name": "pvc-sdb"}}],
    )
    aliases = device_aliases({"mpatha": "dm-3"}, {26: ["sdb"]})
    assert aliases == {"dm-3": ("/dev/mapper/mpatha", "mpatha"), "connection26:0": ("sdb",)}
    log = (KERNEL_LOG / "lore-siw-iser-conn-error-1011.dmesg").read_text() + (
        KERNEL_LOG / "invented-edge-cases.kmsg"
    ).read_text()
    placed = assess_kernel_log(log, mounts, owners, aliases=aliases)
    by_subject = {(g.kind, g.subject): g for g in placed.events}
    connection = by_subject[("iscsi-conn-error", "connection26:0")]
    assert [v.pv for v in connection.volumes] == ["pvc-sdb"]
    assert [f.id for f in connection.findings] == ["KLOG020"]
    hung = by_subject[("hung-task", "dm-3")]
    assert [v.pv for v in hung.volumes] == ["pvc-mp"]
    assert [(f.id, f.severity) for f in hung.findings] == [("KLOG040", Severity.WARN)]
    # Without the aliases neither is placed: the hung task stays information.
    bare = assess_kernel_log(log, mounts, owners)
    bare_hung = {(g.kind, g.subject): g for g in bare.events}[("hung-task", "dm-3")]
    assert bare_hung.volumes == ()
    assert [f.severity for f in bare_hung.findings] == [Severity.INFO]


def test_a_refused_write_zeroes_is_information_and_failed_writes_to_a_claim_are_warned() -> None:
    """The node lab's real 6.1 kernel: mkfs.ext4 on a LIO LUN made the kernel log a "critical
    target error" for WRITE_ZEROES on the healthy map dm-0 (it falls back; nothing is lost),
    and lun3's lost path failed real writes on sde, which lun3-pv mounts."""
    mounts = table("nodelab-iscsi-lun-lost.mountinfo")
    owners = resolve_mountpoints(
        [entry.mountpoint for entry in mounts],
        pvs=[{"metadata": {"name": "lun1-pv"}}, {"metadata": {"name": "lun3-pv"}}],
    )
    log = (KERNEL_LOG / "nodelab-iscsi-lun-lost.kmsg").read_text()
    health = assess_kernel_log(
        log, mounts, owners, aliases=device_aliases({"mpatha": "dm-0"}, {5: ["sde"]})
    )
    judged = {(g.kind, g.subject): [(f.id, f.severity) for f in g.findings] for g in health.events}
    assert judged[("buffer-io-error", "dm-0")] == [("KLOG010", Severity.INFO)]
    assert judged[("buffer-io-error", "sde")] == [("KLOG010", Severity.WARN)]
    assert judged[("iscsi-conn-error", "connection5:0")] == [("KLOG020", Severity.WARN)]
    placed = {(g.kind, g.subject): {v.pv for v in g.volumes} for g in health.events}
    assert placed[("buffer-io-error", "sde")] == {"lun3-pv"}
    assert placed[("iscsi-conn-error", "connection5:0")] == {"lun3-pv"}
