"""`mount-audit` and `iscsi` with --from-file: the real CLI on captured outputs, no cluster.

Checks the JSON contract (apiVersion/kind first, the fixed keys), facts read from the fixtures,
findings where a fixture deserves them, --fail-on exit codes and usage errors (exit 2, nothing
on stdout); how files make nodes (one node unless NODE=FILE), Kubernetes object captures next
to node files, and captures with a broken line audited with a warning instead of refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, run_cli

NO_CLUSTER = {"KUBECONFIG": "/nonexistent/kubeconfig", "KUBERNETES_SERVICE_HOST": ""}

MOUNTINFO = FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo"
MOUNTSTATS = FIXTURES / "mountstats" / "invented-edge-cases.mountstats"
KUBELET_NFS_STATS = FIXTURES / "mountstats" / "procfs-kubelet-nfs4-v1.1.mountstats"
NO_NFS_STATS = FIXTURES / "mountstats" / "this-vm-self.mountstats"
NFSSTAT = FIXTURES / "nfsstat" / "index-two-mounts.nfsstat"
MOUNT_OUTPUT = FIXTURES / "mounts" / "helm-charts-23304.mount-output"
PROC_MOUNTS = FIXTURES / "mounts" / "invented-mixed.proc-mounts"

SESSIONS_P3 = FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt"
SESSIONS_FLAT = FIXTURES / "iscsiadm" / "libvirt_session.txt"
SYSFS_DUMP = FIXTURES / "iscsiadm" / "invented_sysfs_dump.txt"
PATH_DOWN = FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt"
HEALTHY_MAPS = FIXTURES / "multipath" / "stockage_lio_alua_config_warning.txt"
ROCKY_CONF = FIXTURES / "multipath" / "conf_stockage_rocky_duplicate_defaults.conf"
MULTIPATHD_JSON = FIXTURES / "multipathd" / "ubiquity_list_maps_json_with_prompt.txt"
SANLUN = FIXTURES / "sanlun" / "eks_fsxn_cdot_show_p.txt"
NODE_RECORDS = FIXTURES / "iscsiadm" / "stockage_node_chunk1.txt"
BUNDLE = FIXTURES / "kubernetes" / "constructed-anf-bundle.pv-pvc-sc.json"
PODS = FIXTURES / "kubernetes" / "constructed-anf-bundle.pods.json"

MOUNT_REPORT_KEYS = [
    "apiVersion",
    "kind",
    "verdict",
    "reasons",
    "source",
    "profile",
    "nodes",
    "cluster_findings",
    "summary",
]
MOUNT_NODE_KEYS = [
    "node",
    "error",
    "kernel",
    "inputs",
    "nfs_parameters",
    "mounts",
    "volumes",
    "warnings",
    "unread_lines",  # issue 22: lines of captured files not read (each a warning)
    "kernel_log",  # issue 22 item 4: the kernel log read (null when none), its events
    "kernel_events",
    "nfs_servers",
    "nfs_client_identity",  # issue 22 item 2: NFS120 across nodes (null offline)
]
MOUNT_KEYS = [
    "server",
    "export",
    "source",
    "mountpoint",
    "fstype",
    "visible",
    "options",
    "requested_options",
    "profile",
    "profile_reason",
    "xprt_count",
    "namespace",
    "pod",
    "pvc",
    "pv",
    "storage_class",
    "driver",
    "kind",
    "volume",
    "stats",
    "findings",
]
VOLUME_KEYS = [
    "namespace",
    "pod",
    "pvc",
    "pv",
    "storage_class",
    "driver",
    "kind",
    "volume",
    "mountpoint",
    "fstype",
    "source",
    "pod_uid",
    "read_only",
]
FINDING_KEYS = ["id", "severity", "message", "fix", "source"]

ISCSI_REPORT_KEYS = [
    "apiVersion",
    "kind",
    "verdict",
    "reasons",
    "source",
    "nodes",
    "cluster_findings",
    "summary",
]
ISCSI_NODE_KEYS = [
    "node",
    "error",
    "kernel",
    "inputs",
    "status",
    "tools",
    "sessions",
    "node_records",
    "multipath_maps",
    "maps_source",
    "luns",
    "sanlun",
    "findings",
    "warnings",
    # issue 22: sanlun lun show [all]/-wwpn rows, and what a pasted capture left unread
    "sanlun_devices",
    "unread_lines",
    "incomplete_maps",
    "kernel_log",  # issue 22 item 4, as in mount-audit
    "kernel_events",
    "nfs_servers",
    "initiator_name",  # issue 22 item 2: ISCSI011 across nodes
]
SESSION_CONTRACT = [
    "target",
    "current_portal",
    "persistent_portal",
    "tpgt",
    "iface_name",
    "sid",
    "connection_state",
    "session_state",
    "internal_session_state",
    "disks",
]
MAP_CONTRACT = [
    "wwid",
    "alias",
    "dm",
    "vendor",
    "product",
    "size",
    "features",
    "hwhandler",
    "wp",
    "path_groups",
]
GROUP_KEYS = ["policy", "prio", "status", "paths"]
PATH_KEYS = ["hctl", "dev", "major_minor", "dm_state", "path_state", "online_state"]


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli(*args, "-o", "json", env=NO_CLUSTER)
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, result.json()


def by_mountpoint(node: dict[str, Any], mountpoint: str) -> list[dict[str, Any]]:
    return [m for m in node["mounts"] if m["mountpoint"] == mountpoint]


# ---------------------------------------------------------------------------------------------
# mount-audit
# ---------------------------------------------------------------------------------------------


def test_mount_audit_json_contract_on_mountinfo() -> None:
    code, report = run_json("mount-audit", "--from-file", str(MOUNTINFO))
    assert code == 0  # warnings and info only; --fail-on defaults to error
    assert list(report) == MOUNT_REPORT_KEYS
    assert report["apiVersion"] == "kubectl-storage/v1alpha1"
    assert report["kind"] == "MountAuditReport"
    assert report["source"] == "files"
    (node,) = report["nodes"]
    assert list(node) == MOUNT_NODE_KEYS
    assert node["node"] == "node"  # without --node-name or NODE=, the neutral name
    assert node["error"] is None
    assert len(node["mounts"]) == 7  # NFS only: the CIFS, ext4 and root mounts are left out
    for mount in node["mounts"]:
        assert list(mount) == MOUNT_KEYS
        for finding in mount["findings"]:
            assert list(finding) == FINDING_KEYS
    for volume in node["volumes"]:
        assert list(volume) == VOLUME_KEYS
    assert report["summary"]["nfs_mounts"] == 7


def test_mount_audit_facts_from_mountinfo() -> None:
    _, report = run_json("mount-audit", "--from-file", str(MOUNTINFO), "--node-name", "w1")
    (node,) = report["nodes"]
    assert node["node"] == "w1"
    pod_path = (
        "/var/lib/kubelet/pods/0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a/volumes/"
        "kubernetes.io~csi/pvc-3c1d2e4f-1111-4222-8333-944455556666/mount"
    )
    (azure,) = by_mountpoint(node, pod_path)
    assert azure["server"] == "acct01.file.core.windows.net"
    assert azure["export"] == "/acct01/share01"
    assert azure["fstype"] == "nfs4"
    assert azure["options"]["nconnect"] == "4"  # key=value keeps the printed string
    assert azure["options"]["hard"] is True  # a flag maps to true
    assert azure["profile"] == "azure-files"
    assert azure["kind"] == "pod-volume"
    assert azure["volume"] == "pvc-3c1d2e4f-1111-4222-8333-944455556666"
    assert azure["stats"] is None  # no mountstats given

    (nfs3,) = [m for m in node["mounts"] if m["server"] == "10.0.0.7"]
    assert nfs3["driver"] == "kubernetes.io/nfs"
    nfs060 = [f for f in nfs3["findings"] if f["id"] == "NFS060"]
    assert nfs060, nfs3["findings"]
    assert nfs060[0]["severity"] == "warn"
    assert "nolock" in nfs060[0]["message"]
    assert nfs060[0]["fix"]
    assert nfs060[0]["source"]

    stacked = by_mountpoint(node, "/mnt/stack")
    assert [m["visible"] for m in stacked] == [False, True]
    assert by_mountpoint(node, "/mnt/my share")[0]["profile"] == "efs"

    kinds = {(v["kind"], v["volume"]) for v in node["volumes"]}
    assert ("pod-volume", "pvc-3c1d2e4f-1111-4222-8333-944455556666") in kinds
    assert ("global-mount", "pvc-block-legacy") in kinds  # an ext4 CSI volume is listed too


def test_mount_audit_counters_and_errors_from_mountstats() -> None:
    code, report = run_json("mount-audit", "--from-file", str(MOUNTSTATS))
    assert code == 1  # NFS080 (proto=udp6) is an error
    (node,) = report["nodes"]
    (csi,) = [m for m in node["mounts"] if m["export"] == "/vol1" and "pvc-aaaa" in m["mountpoint"]]
    stats = csi["stats"]
    assert stats["xprt_count"] == 4  # one xprt: line per nconnect connection
    assert stats["retransmissions"] == 10  # READ 110 transmissions for 100 ops
    assert stats["ops"]["READ"]["ops"] == 100
    assert stats["ops"]["READ"]["avg_rtt_ms"] == 4.0
    assert stats["ops"]["READ"]["avg_execute_ms"] == 5.0
    assert stats["ops"]["WRITE"]["avg_rtt_ms"] == 20.0
    assert stats["ops"]["GETATTR"]["ops"] == 0
    (udp,) = by_mountpoint(node, "/mnt/v6")
    assert [f["id"] for f in udp["findings"] if f["severity"] == "error"] == ["NFS080"]
    # The two stacked /mnt/dup mounts each get their own block (vol1 then vol2).
    assert [m["stats"]["ops"]["READ"]["ops"] for m in by_mountpoint(node, "/mnt/dup")] == [1, 4]
    assert report["summary"]["findings"]["error"] == 1


def test_mount_audit_mountinfo_and_mountstats_of_one_node() -> None:
    code, report = run_json(
        "mount-audit",
        "--from-file",
        str(KUBELET_NFS_STATS),
        "--from-file",
        str(NO_NFS_STATS),
        "--node-name",
        "n1",
    )
    assert code == 0
    (node,) = report["nodes"]
    (mount,) = node["mounts"]
    assert mount["server"] == "fs.example.com"
    assert mount["driver"] == "kubernetes.io/nfs"
    assert mount["stats"]["ops"]["READ"]["ops"] > 0


@pytest.mark.parametrize(
    ("path", "code", "first"),
    [
        (NFSSTAT, 0, ("kvm-demo-support.dev.cpanel.net", "/volumes/kvm-demo", "4.2", "/mnt/phil")),
        (
            MOUNT_OUTPUT,
            0,
            (
                "10.0.0.47",
                "/data/k8s/default-home-assistant-pvc-c43bea52-2426-4c34-9fe6-5a46f7e6ff1c",
                "4.2",
                "/var/lib/kubelet/pods/0d17f909-e116-4abe-8343-a2af68026364/volumes/"
                "kubernetes.io~nfs/pvc-c43bea52-2426-4c34-9fe6-5a46f7e6ff1c",
            ),
        ),
        (
            PROC_MOUNTS,
            1,  # nas:/music is soft over UDP: NFS010 and NFS080 are errors
            ("us-west-2a.fs-0123abcd.efs.us-west-2.amazonaws.com", "/", "4.1", "/exports"),
        ),
    ],
)
def test_mount_audit_reads_other_mount_tables(
    path: Any, code: int, first: tuple[str, str, str, str]
) -> None:
    exit_code, report = run_json("mount-audit", "--from-file", str(path))
    assert exit_code == code
    (node,) = report["nodes"]
    mount = node["mounts"][0]
    assert (
        mount["server"],
        mount["export"],
        mount["options"]["vers"],
        mount["mountpoint"],
    ) == first


def test_mount_audit_proc_mounts_findings() -> None:
    _, report = run_json("mount-audit", "--from-file", str(PROC_MOUNTS))
    node = report["nodes"][0]
    (music,) = by_mountpoint(node, "/mnt/music share")  # \040 decoded
    errors = {f["id"] for f in music["findings"] if f["severity"] == "error"}
    assert errors == {"NFS010", "NFS080"}
    (efs,) = [m for m in node["mounts"] if m["profile"] == "efs"]
    assert "NFS040" in [f["id"] for f in efs["findings"]]  # EFS wants noresvport
    assert len(node["mounts"]) == 5  # the CIFS and ext4 mounts are not NFS


def test_mount_audit_node_without_nfs() -> None:
    code, report = run_json("mount-audit", "--from-file", str(NO_NFS_STATS))
    assert code == 0
    assert report["nodes"][0]["mounts"] == []
    table = run_cli("mount-audit", "--from-file", str(NO_NFS_STATS), env=NO_CLUSTER)
    assert table.exit_code == 0
    assert "no NFS mounts" in table.stdout


def test_mount_audit_profile_override() -> None:
    _, report = run_json("mount-audit", "--from-file", str(MOUNTINFO), "--profile", "anf")
    assert report["profile"] == "anf"
    assert {m["profile"] for m in report["nodes"][0]["mounts"]} == {"anf"}
    assert {m["profile_reason"] for m in report["nodes"][0]["mounts"]} == {"override"}


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warn", 1)])
def test_mount_audit_fail_on(fail_on: str, code: int) -> None:
    result = run_cli("mount-audit", "--from-file", str(MOUNTINFO), "--fail-on", fail_on)
    assert result.exit_code == code, result.stderr
    assert "Nodes" in result.stdout  # the report is written before the exit code says why
    if code == 1:
        assert "at or above --fail-on warn" in result.stderr


def test_mount_audit_yaml_output() -> None:
    result = run_cli("mount-audit", "--from-file", str(MOUNTINFO), "-o", "yaml")
    document = yaml.safe_load(result.stdout)
    assert list(document)[:2] == ["apiVersion", "kind"]
    assert document["kind"] == "MountAuditReport"


def test_mount_audit_wide_table_shows_options_and_counters() -> None:
    result = run_cli("mount-audit", "--from-file", str(MOUNTSTATS), "-o", "wide")
    assert result.exit_code == 1
    assert "nconnect=4" in result.stdout
    assert "100/50/0" in result.stdout  # READ/WRITE/GETATTR ops of the CSI mount
    assert "ERROR NFS080" in result.stdout


# ---------------------------------------------------------------------------------------------
# iscsi
# ---------------------------------------------------------------------------------------------


def test_iscsi_json_contract_and_facts() -> None:
    code, report = run_json(
        "iscsi",
        "--from-file",
        str(SESSIONS_P3),
        "--from-file",
        str(PATH_DOWN),
        "--from-file",
        str(ROCKY_CONF),
        "--node-name",
        "chunk1",
    )
    assert code == 1  # MP010: a failed path in each map
    assert list(report) == ISCSI_REPORT_KEYS
    assert report["kind"] == "IscsiReport"
    assert report["apiVersion"] == "kubectl-storage/v1alpha1"
    (node,) = report["nodes"]
    assert list(node) == ISCSI_NODE_KEYS
    assert node["node"] == "chunk1"
    assert node["status"] == "4 iSCSI session(s), 2 multipath map(s)"

    assert len(node["sessions"]) == 4
    session = node["sessions"][0]
    assert list(session)[: len(SESSION_CONTRACT)] == SESSION_CONTRACT
    assert session["target"] == "iqn.2024-12.tp2.b3:data-chunk1"
    assert session["current_portal"] == "10.3.1.1:3260"
    assert session["tpgt"] == 1
    assert session["sid"] == 18
    assert session["session_state"] == "LOGGED_IN"
    assert session["disks"] == [{"hctl": "3:0:0:0", "lun": 0, "disk": "sdb", "state": "running"}]

    maps = {m["wwid"]: m for m in node["multipath_maps"]}
    mpatha = maps["3600140557c66dd047214999a651eb037"]
    assert list(mpatha)[: len(MAP_CONTRACT)] == MAP_CONTRACT
    assert (mpatha["alias"], mpatha["dm"], mpatha["vendor"], mpatha["size"]) == (
        "mpatha",
        "dm-2",
        "LIO-ORG",
        "1022M",
    )
    assert list(mpatha["path_groups"][0]) == GROUP_KEYS
    down = mpatha["path_groups"][0]["paths"][0]
    assert list(down) == PATH_KEYS
    assert (down["dev"], down["dm_state"], down["path_state"], down["online_state"]) == (
        "sdd",
        "failed",
        "faulty",
        "running",
    )
    assert mpatha["path_groups"][1]["paths"][0]["path_state"] == "ready"

    ids = [f["id"] for f in node["findings"]]
    assert ids.count("MP010") == 2
    assert "ISCSI004" in ids  # replacement_timeout 120 on multipathed sessions
    # The conf's no_path_retry 100 overrides features queue_if_no_path, and an unset
    # queue_without_daemon means "no" (multipath.conf(5)): nothing to report there.
    assert "MP031" not in ids
    for finding in node["findings"]:
        assert list(finding) == FINDING_KEYS
    assert report["summary"]["failed_paths"] == 2

    (lun,) = [row for row in node["luns"] if row["wwid"] == mpatha["wwid"]]
    roles = {p["dev"]: p["role"] for p in lun["paths"]}
    assert roles == {"sdd": "failed", "sde": "passive"}
    assert lun["target"] == "iqn.2024-12.tp2.b3:data-chunk1"


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warn", 0)])
def test_iscsi_healthy_maps_exit_0(fail_on: str, code: int) -> None:
    result = run_cli("iscsi", "--from-file", str(HEALTHY_MAPS), "--fail-on", fail_on)
    assert result.exit_code == code, result.stdout + result.stderr


@pytest.mark.parametrize(("fail_on", "code"), [("error", 0), ("warn", 1)])
def test_iscsi_fail_on_warnings(fail_on: str, code: int) -> None:
    # ISCSI007 (no CHAP) is a warning, and nothing is an error.
    result = run_cli("iscsi", "--from-file", str(SESSIONS_P3), "--fail-on", fail_on)
    assert result.exit_code == code, result.stdout + result.stderr


def test_iscsi_multipathd_json_trims_padding() -> None:
    code, report = run_json("iscsi", "--from-file", str(MULTIPATHD_JSON))
    (node,) = report["nodes"]
    (mpath,) = node["multipath_maps"]
    assert (mpath["wwid"], mpath["alias"], mpath["dm"]) == (
        "360050768029b8168e000000000006247",
        "mpathp",
        "dm-3",
    )
    assert (mpath["vendor"], mpath["product"]) == ("IBM", "2145")
    assert mpath["queueing"] == "5 chk"
    assert node["maps_source"] == "multipathd-json"
    assert code == 1  # the only path is failed/faulty: MP010 and MP011


def test_iscsi_sysfs_dump_never_shows_chap_secrets() -> None:
    result = run_cli("iscsi", "--from-file", str(SYSFS_DUMP), "-o", "json")
    assert result.exit_code == 1  # ISCSI001: session 2 FAILED
    assert "NEVER" not in result.stdout
    node = result.json()["nodes"][0]
    assert [s["session_state"] for s in node["sessions"]] == ["LOGGED_IN", "FAILED"]
    assert node["sessions"][0]["current_portal"] == "[fd00::10]:3260"
    # Without multipath input, unmultipathed disks are not guessed at.
    assert "ISCSI008" not in [f["id"] for f in node["findings"]]
    assert node["warnings"] == ["no multipath output given: LUNs were not checked for multipathing"]


def test_iscsi_flat_session_listing() -> None:
    code, report = run_json("iscsi", "--from-file", str(SESSIONS_FLAT))
    assert code == 0
    sessions = report["nodes"][0]["sessions"]
    assert len(sessions) == 6
    assert all(s["sid"] is not None and s["persistent_portal"] for s in sessions)


def test_iscsi_sanlun_table_and_wide_view() -> None:
    code, report = run_json("iscsi", "--from-file", str(SANLUN))
    assert code == 0
    (lun,) = report["nodes"][0]["sanlun"]
    assert lun["host_device"] == "3600a09806c574230475d537a77624479"
    assert [(p["device"], p["path_type"]) for p in lun["paths"]] == [
        ("sda", "primary"),
        ("sdb", "secondary"),
    ]
    table = run_cli("iscsi", "--from-file", str(SANLUN), env=NO_CLUSTER)
    assert "secondary" in table.stdout


def test_iscsi_wide_shows_the_lun_view() -> None:
    result = run_cli(
        "iscsi", "--from-file", str(SESSIONS_P3), "--from-file", str(PATH_DOWN), "-o", "wide"
    )
    assert "LUNs (claim → LUN → dm device → paths)" in result.stdout
    assert "passive" in result.stdout
    assert "failed" in result.stdout
    plain = run_cli("iscsi", "--from-file", str(SESSIONS_P3), "--from-file", str(PATH_DOWN))
    assert "LUNs (claim" not in plain.stdout


# ---------------------------------------------------------------------------------------------
# Usage errors: exit 2, an error paragraph on stderr, nothing on stdout
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["mount-audit", "--from-file", str(FIXTURES / "fio" / "fio-3.33-sigint.fio")],
            "not a mount table",
        ),
        (["mount-audit", "--from-file", str(PATH_DOWN)], "not a mount table"),
        (["iscsi", "--from-file", str(MOUNTSTATS)], "not iSCSI or multipath output"),
        (["iscsi", "--from-file", "/nonexistent/file"], "cannot read it"),
        (["mount-audit", "--from-file", str(FIXTURES)], "is a directory"),
        (["mount-audit", "--from-file", str(MOUNTINFO), "node-a"], "--from-file reads"),
        (["iscsi", "--from-file", str(SANLUN), "--all-nodes"], "--from-file reads"),
        (["mount-audit", "--from-file", str(MOUNTINFO), "--profile", "nas"], "--profile"),
        (["iscsi", "--from-file", str(SANLUN), "--fail-on", "info"], "--fail-on"),
        (["mount-audit", "--from-file", str(MOUNTINFO), "--fail-on", "bad"], "--fail-on"),
        (["mount-audit", "--node-name", "x"], "--node-name only goes with --from-file"),
        (["iscsi"], "no nodes chosen"),
        (["iscsi", "a", "--all-nodes"], "choose nodes one way"),
        (["mount-audit", "--all-nodes", "--parallel", "0"], "--parallel"),
    ],
)
def test_usage_errors_exit_2_with_empty_stdout(args: list[str], message: str) -> None:
    result = run_cli(*args, env=NO_CLUSTER)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert message in result.stderr
    assert "Traceback" not in result.stderr


KERNEL_LOG = FIXTURES / "kernel_log"


def test_a_kernel_log_beside_the_mount_table_shows_a_volume_still_read_only() -> None:
    """Captured together on this machine's 6.18 kernel: an ext4 error under errors=remount-ro
    (kmsg and dmesg) and the mountinfo after it (rw, emergency_ro). A file has no clock, so the
    age is unknown; the state now decides the severity."""
    table = KERNEL_LOG / "this-vm-ext4-trigger-after-error.mountinfo"
    for log in ("this-vm-ext4-trigger.kmsg", "this-vm-ext4-trigger.dmesg"):
        code, report = run_json(
            "mount-audit", "--from-file", str(table), "--from-file", str(KERNEL_LOG / log)
        )
        assert code == 1, report  # an error finding: --fail-on error
        (node,) = report["nodes"]
        assert node["kernel_log"]["source"] == "file"
        (event,) = node["kernel_events"]
        assert (event["subject"], event["state"]) == ("loop0", "still-read-only")
        assert [f["id"] for f in event["findings"]] == ["KLOG001"]
        assert report["verdict"] == "fail"
    # Mounted again since: information only, exit 0.
    again = KERNEL_LOG / "this-vm-ext4-trigger-after-mount-again.mountinfo"
    code, report = run_json(
        "mount-audit",
        "--from-file",
        str(again),
        "--from-file",
        str(KERNEL_LOG / "this-vm-ext4-trigger.kmsg"),
    )
    assert code == 0
    (event,) = report["nodes"][0]["kernel_events"]
    assert [(f["id"], f["severity"]) for f in event["findings"]] == [("KLOG004", "info")]


INITIATOR_1 = FIXTURES / "iscsiadm" / "debian_initiatorname_node1.iscsi"
INITIATOR_2 = FIXTURES / "iscsiadm" / "debian_initiatorname_node2.iscsi"


def test_one_initiator_name_on_two_nodes_is_iscsi011_and_two_names_are_quiet() -> None:
    """Two nodes from one cloned image keep one /etc/iscsi/initiatorname.iscsi: the target
    takes them for one initiator, so both can log in to (and mount) one RWO LUN."""
    code, report = run_json(
        "iscsi", "--from-file", f"w1={INITIATOR_1}", "--from-file", f"w2={INITIATOR_1}"
    )
    assert code == 1, report
    assert [n["initiator_name"] for n in report["nodes"]] == [
        "iqn.1993-08.org.debian:01:dac6f6a0c217"
    ] * 2
    (finding,) = report["cluster_findings"]
    assert (finding["id"], finding["severity"]) == ("ISCSI011", "error")
    assert "w1, w2" in finding["message"]
    code, report = run_json(
        "iscsi", "--from-file", f"w1={INITIATOR_1}", "--from-file", f"w2={INITIATOR_2}"
    )
    assert code == 0, report
    assert report["cluster_findings"] == []


def test_dry_run_with_named_nodes_needs_no_cluster() -> None:
    result = run_cli("iscsi", "node-a", "node-b", "--dry-run", "-n", "ops", env=NO_CLUSTER)
    assert result.exit_code == 0, result.stderr
    pods = list(yaml.safe_load_all(result.stdout))
    assert [p["spec"]["nodeName"] for p in pods] == ["node-a", "node-b"]
    assert {p["metadata"]["namespace"] for p in pods} == {"ops"}
    assert all(p["spec"]["containers"][0]["securityContext"]["privileged"] for p in pods)
    assert all(
        p["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kubectl-storage" for p in pods
    )
    audit = run_cli("mount-audit", "node-a", "--dry-run", env=NO_CLUSTER)
    (pod,) = yaml.safe_load_all(audit.stdout)
    assert "privileged" not in pod["spec"]["containers"][0]["securityContext"]
    assert pod["spec"]["hostPID"] is True


# ---------------------------------------------------------------------------------------------
# Files → nodes: one node unless NODE=FILE
# ---------------------------------------------------------------------------------------------

# INVENTED: the mountinfo line of the NFS mount whose mountstats block is the procfs fixture
# (same source and mount point, the options the kernel prints in mountinfo).
KUBELET_NFS_MOUNTINFO = (
    "25 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/root rw\n"
    "3021 25 0:345 / /var/lib/kubelet/pods/1c2215a7-0d92-4df5-83ce-a807bcc2f8c8/volumes/"
    "kubernetes.io~nfs/home-automation--node-red-data--pv0001 rw,relatime shared:900 - nfs4 "
    "fs.example.com:/volume4/apps/home-automation/node-red-data rw,vers=4.1,rsize=131072,"
    "wsize=131072,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,"
    "clientaddr=192.168.1.191,local_lock=none,addr=192.168.1.10\n"
)


def test_mountinfo_and_mountstats_given_together_are_one_node(tmp_path: Path) -> None:
    # The README's example: --from-file mountinfo.txt --from-file mountstats.txt.
    mountinfo = tmp_path / "mountinfo.txt"
    mountinfo.write_text(KUBELET_NFS_MOUNTINFO)
    code, report = run_json(
        "mount-audit", "--from-file", str(mountinfo), "--from-file", str(KUBELET_NFS_STATS)
    )
    assert code == 0
    (node,) = report["nodes"]
    assert node["node"] == "node"
    (mount,) = node["mounts"]
    assert mount["server"] == "fs.example.com"
    assert mount["stats"]["xprt_count"] == 1  # the mountstats block met the mount table
    assert mount["stats"]["ops"]["READ"]["ops"] > 0
    assert mount["options"]["acregmax"] == "60"  # defaulted options printed by mountstats only
    assert node["warnings"] == []


def test_node_equals_file_makes_several_nodes_in_one_run() -> None:
    code, report = run_json(
        "mount-audit", "--from-file", f"w1={MOUNTINFO}", "--from-file", f"w2={MOUNTSTATS}"
    )
    assert code == 1  # w2 has the UDP mount (NFS080)
    assert [node["node"] for node in report["nodes"]] == ["w1", "w2"]
    assert report["summary"]["nodes"] == 2
    w1, w2 = report["nodes"]
    assert all(m["stats"] is None for m in w1["mounts"])
    assert all(m["stats"] is not None for m in w2["mounts"])


def test_mountstats_of_another_node_is_warned_about() -> None:
    _, report = run_json(
        "mount-audit", "--from-file", str(MOUNTINFO), "--from-file", str(MOUNTSTATS)
    )
    (node,) = report["nodes"]
    (warning,) = node["warnings"]
    assert warning.startswith("3 NFS mount(s) in mountstats are not in the mount table")
    assert "NODE=FILE" in warning


def test_a_file_whose_name_holds_an_equals_sign_is_read_as_a_file(tmp_path: Path) -> None:
    odd = tmp_path / "w1=mountinfo"
    odd.write_text(MOUNTINFO.read_text())
    code, report = run_json("mount-audit", "--from-file", str(odd))
    assert code == 0
    assert [node["node"] for node in report["nodes"]] == ["node"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["mount-audit", "--from-file", f"w1={MOUNTINFO}", "--node-name", "w2"],
            "every --from-file names its node",
        ),
        (["mount-audit", "--from-file", "w1=/nonexistent/mountinfo"], "cannot read"),
        (["mount-audit", "--from-file", str(BUNDLE)], "only Kubernetes objects"),
    ],
)
def test_offline_grouping_usage_errors(args: list[str], message: str) -> None:
    result = run_cli(*args, env=NO_CLUSTER)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert message in result.stderr


# ---------------------------------------------------------------------------------------------
# kubectl get -o json next to node files
# ---------------------------------------------------------------------------------------------


def test_kubernetes_objects_give_requested_options_and_the_class_profile() -> None:
    code, report = run_json(
        "mount-audit",
        "--from-file",
        str(MOUNTINFO),
        "--from-file",
        str(BUNDLE),
        "--from-file",
        str(PODS),
        "--fail-on",
        "warn",
    )
    assert code == 1
    (node,) = report["nodes"]
    assert node["inputs"][-1].startswith("kubernetes objects (1 PersistentVolume")
    (mount,) = [m for m in node["mounts"] if m["pvc"]]
    assert (mount["namespace"], mount["pod"], mount["pvc"], mount["storage_class"]) == (
        "team-a",
        "web-0",
        "shared",
        "anf-premium",
    )
    assert (mount["profile"], mount["profile_reason"]) == ("anf", "storage-class")
    ids = [f["id"] for f in mount["findings"]]
    assert "NFSK8S001" in ids  # nconnect=8 requested, 4 in effect
    assert "NFS021" in ids  # 1 MiB rsize/wsize above ANF's 256 KiB


# ---------------------------------------------------------------------------------------------
# iscsiadm -m node on its own
# ---------------------------------------------------------------------------------------------


def test_iscsiadm_node_alone_shows_its_records() -> None:
    code, report = run_json("iscsi", "--from-file", str(NODE_RECORDS))
    assert code == 0
    (node,) = report["nodes"]
    assert node["status"] == "12 iSCSI node record(s)"
    assert len(node["node_records"]) == 12
    assert node["node_records"][0] == {
        "portal": "10.3.1.1:3260",
        "tpgt": 1,
        "target": "iqn.2024-12.tp2.b3:data-chunk1",
    }
    table = run_cli("iscsi", "--from-file", str(NODE_RECORDS), env=NO_CLUSTER)
    assert "12 iSCSI node record(s)" in table.stdout


# ---------------------------------------------------------------------------------------------
# Captures from bug reports and mailing lists, with a broken line: audited, with a warning
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "relative", "warnings", "check"),
    [
        (
            "mount-audit",
            "mountinfo/kubernetes-64324-prompts.mountinfo",
            [f"line {n}: a shell prompt" for n in (1, 2, 3, 5)],
            lambda node: node["error"] is None,
        ),
        (
            "mount-audit",
            "mountinfo/linuxkit-2131-elided.mountinfo",
            ["line 2: not a mountinfo line; skipped: '...'"],
            lambda node: node["error"] is None,
        ),
        (
            "mount-audit",
            "mounts/linux-nfs-el9-flowed-wrap.proc-mounts",
            ["lines 1-3: one line wrapped over 3; rejoined"],
            lambda node: node["mounts"][0]["options"]["lookupcache"] == "pos",
        ),
        (
            "mount-audit",
            "nfsstat/linux-nfs-quoted-reply.nfsstat",
            [
                "the e-mail quote prefix (>) was removed from every line",
                "line 1: a shell prompt",
                "lines 3-5: the Flags: line wrapped over 3; rejoined",
                "line 6: a shell prompt",
            ],
            lambda node: node["mounts"][0]["options"]["addr"] == "10.80.111.94",
        ),
        (
            "iscsi",
            "iscsiadm/trident_998_session_redacted.txt",
            ["line 1: a shell prompt", "no multipath output given"],
            lambda node: [s["tpgt"] for s in node["sessions"]] == [1072, 1071],
        ),
        (
            "iscsi",
            "multipath/qemu_devel_props_wrapped.txt",
            # issue 22: the prompt line before the map is named as well
            ["line 1: a shell prompt", "lines 3-4: one line wrapped over 2; rejoined"],
            lambda node: node["multipath_maps"][0]["hwhandler"] == "1 alua",
        ),
    ],
)
def test_pasted_capture_with_a_broken_line_is_audited_with_a_warning(
    command: str, relative: str, warnings: list[str], check: Any
) -> None:
    result = run_cli(command, "--from-file", str(FIXTURES / relative), "-o", "json", env=NO_CLUSTER)
    assert result.exit_code == 0, result.stderr
    (node,) = result.json()["nodes"]
    assert len(node["warnings"]) == len(warnings), node["warnings"]
    for warning, expected in zip(node["warnings"], warnings, strict=True):
        assert expected in warning
        if "e-mail" not in expected and "multipath output" not in expected:
            assert warning.startswith(str(FIXTURES / relative)), warning
    assert check(node)
    table = run_cli(command, "--from-file", str(FIXTURES / relative), env=NO_CLUSTER)
    assert "Warnings:" in table.stdout
    assert warnings[0] in table.stdout
