"""NFS rules: every rule id has a case that fires and one that does not."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kubectl_storage.core.mount_audit.mountstats import parse_mountstats
from kubectl_storage.core.mount_audit.rules import (
    RULE_IDS,
    MountAudit,
    NodeFacts,
    VolumeContext,
    audit_mounts,
    detect_profile,
    normalize_options,
    requested_vs_effective,
)
from kubectl_storage.core.nodes.mount_model import MountEntry, parse_options
from kubectl_storage.core.nodes.mounts import parse_mounts
from kubectl_storage.core.report.findings import Severity

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GOOD_V41 = "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,local_lock=none,addr=10.0.0.5"


def nfs_mount(options: str, *, server: str = "10.0.0.5", mountpoint: str = "/mnt/a") -> MountEntry:
    parsed = parse_options(options)
    version = str(parsed.get("vers", "4.1"))
    return MountEntry(
        source=f"{server}:/export",
        mountpoint=mountpoint,
        fstype="nfs4" if version.startswith("4") else "nfs",
        options=parsed,
        server=server,
        export="/export",
        major_minor="0:50",
    )


def ids_for(
    options: str,
    *,
    server: str = "10.0.0.5",
    profile: str | None = None,
    context: VolumeContext | None = None,
    node: NodeFacts | None = None,
) -> dict[str, Severity]:
    mount = nfs_mount(options, server=server)
    contexts = {mount.mountpoint: context} if context else None
    (audit,) = audit_mounts([mount], profile=profile, contexts=contexts, node=node)
    return {finding.id: finding.severity for finding in audit.findings}


def swap(option: str, replacement: str, base: str = GOOD_V41) -> str:
    items = base.split(",")
    return ",".join(replacement if item.split("=")[0] == option else item for item in items)


@dataclass(frozen=True)
class Case:
    rule: str
    fires: dict[str, object]
    quiet: dict[str, object]
    severity: Severity = Severity.WARN
    extra: dict[str, object] = field(default_factory=dict)


def req(*options: str) -> VolumeContext:
    return VolumeContext(requested_options=options)


SHARED = VolumeContext(rw_node_count=2)

CASES = [
    Case("NFS001", {"options": swap("vers", "vers=2")}, {"options": GOOD_V41}, Severity.ERROR),
    Case("NFS002", {"options": swap("vers", "vers=4.0")}, {"options": GOOD_V41}),
    Case("NFS003", {"options": swap("vers", "vers=3")}, {"options": GOOD_V41}, Severity.INFO),
    Case("NFS004", {"options": GOOD_V41, "context": req("hard")},
         {"options": GOOD_V41, "context": req("nfsvers=4.1")}, Severity.INFO),
    Case("NFS010", {"options": swap("hard", "soft")}, {"options": GOOD_V41}, Severity.ERROR),
    Case("NFS011", {"options": swap("rw", "ro", swap("hard", "softerr"))},
         {"options": swap("rw", "ro")}),
    Case("NFS012", {"options": swap("timeo", "timeo=100", swap("hard", "soft")), "profile": "efs"},
         {"options": swap("hard", "soft"), "profile": "efs"}),
    Case("NFS013", {"options": swap("timeo", "timeo=30")}, {"options": GOOD_V41}),
    Case("NFS014", {"options": swap("retrans", "retrans=5"), "profile": "efs"},
         {"options": GOOD_V41 + ",noresvport", "profile": "efs"}, Severity.INFO),
    Case("NFS020", {"options": swap("rsize", "rsize=65536"), "profile": "azure-files"},
         {"options": GOOD_V41, "profile": "azure-files"}),
    Case("NFS021", {"options": GOOD_V41, "profile": "anf"},
         {"options": swap("rsize", "rsize=262144", swap("wsize", "wsize=262144")),
          "profile": "anf"}),
    Case("NFS022", {"options": GOOD_V41, "context": req("rsize=4194304")},
         {"options": GOOD_V41, "context": req("rsize=1048576")}, Severity.INFO),
    Case("NFS023", {"options": swap("wsize", "wsize=32768")}, {"options": GOOD_V41},
         Severity.INFO),
    Case("NFS030", {"options": GOOD_V41, "context": req("nconnect=32")},
         {"options": GOOD_V41, "context": req("nconnect=16")}, Severity.ERROR),
    Case("NFS032", {"options": GOOD_V41 + ",nconnect=8", "profile": "azure-files"},
         {"options": GOOD_V41 + ",nconnect=4", "profile": "azure-files"}),
    Case("NFS033", {"options": swap("sec", "sec=krb5p") + ",nconnect=4"},
         {"options": swap("sec", "sec=krb5p")}),
    Case("NFS034", {"options": swap("vers", "vers=4.0") + ",nconnect=4"},
         {"options": GOOD_V41 + ",nconnect=4"}),
    Case("NFS035", {"options": GOOD_V41, "context": req("nconnect=4"),
                    "node": NodeFacts(kernel_release="4.18.0-372.el8.x86_64")},
         {"options": GOOD_V41, "context": req("nconnect=4"),
          "node": NodeFacts(kernel_release="5.14.0-70.el9.x86_64")}, Severity.INFO),
    Case("NFS036", {"options": GOOD_V41, "profile": "ontap"},
         {"options": GOOD_V41 + ",max_connect=16", "profile": "ontap"}, Severity.INFO),
    # The source's address is not addr=: trunking put the mount on another address's client.
    Case("NFS037", {"options": swap("addr", "addr=10.0.0.3")}, {"options": GOOD_V41},
         Severity.INFO),
    Case("NFS040", {"options": GOOD_V41, "profile": "efs"},
         {"options": GOOD_V41 + ",noresvport", "profile": "efs"}),
    Case("NFS041", {"options": GOOD_V41 + ",noresvport"}, {"options": GOOD_V41}, Severity.INFO),
    Case("NFS050", {"options": GOOD_V41 + ",noac"}, {"options": GOOD_V41}),
    # On a PV several nodes write, noac is how they see each other's changes: information.
    Case("NFS050", {"options": GOOD_V41 + ",noac", "context": SHARED},
         {"options": GOOD_V41, "context": SHARED}, Severity.INFO),
    Case("NFS051", {"options": GOOD_V41 + ",nocto", "context": SHARED},
         {"options": GOOD_V41, "context": SHARED}),
    Case("NFS052", {"options": GOOD_V41 + ",acregmax=600", "context": SHARED},
         {"options": GOOD_V41 + ",acregmax=60", "context": SHARED}),
    # Only timers set away from the kernel defaults are judged (the defaults are on every mount).
    Case("NFS053", {"options": GOOD_V41 + ",acregmin=10,acregmax=10,acdirmin=10,acdirmax=10",
                    "profile": "azure-files"},
         {"options": GOOD_V41, "profile": "azure-files"}, Severity.INFO),
    Case("NFS054", {"options": GOOD_V41 + ",lookupcache=none"},
         {"options": GOOD_V41 + ",lookupcache=all"}, Severity.INFO),
    Case("NFS055", {"options": GOOD_V41 + ",nosharecache"}, {"options": GOOD_V41}),
    Case("NFS060", {"options": swap("vers", "vers=3", swap("local_lock", "local_lock=all"))},
         {"options": swap("vers", "vers=3")}),
    Case("NFS070", {"options": swap("relatime", "sync")}, {"options": GOOD_V41}, Severity.INFO),
    Case("NFS080", {"options": swap("proto", "proto=udp", swap("vers", "vers=3"))},
         {"options": swap("vers", "vers=3")}, Severity.ERROR),
    Case("NFS081", {"options": swap("vers", "vers=3") + ",mountproto=udp", "profile": "filestore"},
         {"options": swap("vers", "vers=3") + ",mountproto=tcp", "profile": "filestore"},
         Severity.INFO),
    Case("NFS090", {"options": GOOD_V41, "context": req("vers=4.1", "intr")},
         {"options": GOOD_V41, "context": req("vers=4.1")}, Severity.INFO),
    Case("NFS091", {"options": GOOD_V41, "context": req("vers=4.1", "noatime")},
         {"options": GOOD_V41, "context": req("vers=4.1")}, Severity.INFO),
    Case("NFS092", {"options": GOOD_V41, "context": req("vers=4.1", "bg")},
         {"options": GOOD_V41, "context": req("vers=4.1", "fg")}, Severity.ERROR),
    Case("NFS093",
         {"options": GOOD_V41, "context": req("vers=4.1", "_netdev", "x-systemd.automount")},
         {"options": GOOD_V41, "context": req("vers=4.1")}, Severity.INFO),
    Case("NFS100", {"options": GOOD_V41}, {"options": swap("sec", "sec=krb5p")}, Severity.INFO),
    Case("NFS101", {"options": GOOD_V41 + ",xprtsec=tls"}, {"options": GOOD_V41}, Severity.INFO),
    Case("NFS110", {"options": GOOD_V41, "profile": "anf",
                    "node": NodeFacts(read_ahead_kb={"0:50": 128})},
         {"options": GOOD_V41, "profile": "anf", "node": NodeFacts(read_ahead_kb={"0:50": 15360})},
         Severity.INFO),
    Case("NFS111", {"options": swap("vers", "vers=3"), "profile": "anf",
                    "node": NodeFacts(tcp_max_slot_table_entries=65536)},
         {"options": swap("vers", "vers=3"), "profile": "anf",
          "node": NodeFacts(tcp_max_slot_table_entries=128)},
         Severity.INFO),
    Case("NFSK8S001", {"options": GOOD_V41, "context": req("nfsvers=4.1", "nconnect=8")},
         {"options": GOOD_V41, "context": req("nfsvers=4.1", "hard", "tcp", "noatime")}),
    Case("NFSK8S002",
         {"options": GOOD_V41, "context": VolumeContext(requested_options=("nfsvers=4.1",),
                                                        storage_class_options=("nfsvers=4.2",))},
         {"options": GOOD_V41, "context": VolumeContext(requested_options=("nfsvers=4.1",),
                                                        storage_class_options=("vers=4.1",))},
         Severity.INFO),
    Case("NFSK8S003", {"options": GOOD_V41, "context": req()},
         {"options": GOOD_V41, "context": req("nfsvers=4.1")}, Severity.INFO),
    Case("NFSK8S004",
         {"options": GOOD_V41, "context": VolumeContext(mount_events=(
             "MountVolume.SetUp failed ... mount.nfs: an incorrect mount option was specified",))},
         {"options": GOOD_V41, "context": VolumeContext(mount_events=(
             "mount.nfs: access denied by server while mounting",))}, Severity.INFO),
    Case("NFSK8S005", {"options": GOOD_V41, "context": VolumeContext(legacy_annotation=True)},
         {"options": GOOD_V41}, Severity.INFO),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[case.rule for case in CASES])
def test_rule_fires_and_stays_quiet(case: Case) -> None:
    fired = ids_for(**case.fires)  # type: ignore[arg-type]
    assert case.rule in fired, f"{case.rule} did not fire: {fired}"
    assert fired[case.rule] == case.severity
    quiet = ids_for(**case.quiet)  # type: ignore[arg-type]
    assert case.rule not in quiet, f"{case.rule} fired on the quiet case"


def test_every_rule_id_has_a_case() -> None:
    # NFS031 needs two mounts, NFS120 two nodes (test_mount_audit_client_identity.py).
    covered = {case.rule for case in CASES} | {"NFS031", "NFS120"}
    assert covered == set(RULE_IDS)


def test_severity_escalations() -> None:
    # NFS003 warns on ANF (Azure Policy audits v3); NFS060 is an error on shared rw data.
    assert ids_for(swap("vers", "vers=3"), profile="anf")["NFS003"] is Severity.WARN
    shared_v3 = swap("vers", "vers=3") + ",nolock"
    assert ids_for(shared_v3, context=SHARED)["NFS060"] is Severity.ERROR
    assert ids_for(GOOD_V41 + ",nocto")["NFS051"] is Severity.INFO  # not known to be shared
    assert ids_for(GOOD_V41 + ",nconnect=2", profile="efs")["NFS032"] is Severity.WARN
    assert ids_for(GOOD_V41 + ",nconnect=16", profile="anf")["NFS032"] is Severity.INFO
    assert "NFS100" not in ids_for(GOOD_V41, profile="azure-files")  # sec=sys is required there


def two_mounts(first: str, second: str, requested: tuple[tuple[str, ...], ...]) -> list[MountAudit]:
    mounts = [
        nfs_mount(first, mountpoint="/mnt/one"),
        nfs_mount(second, mountpoint="/mnt/two"),
    ]
    contexts = {
        mount.mountpoint: VolumeContext(requested_options=options)
        for mount, options in zip(mounts, requested, strict=True)
    }
    return audit_mounts(mounts, contexts=contexts)


def test_nfs031_mismatched_nconnect_requests_on_one_endpoint() -> None:
    audits = two_mounts(GOOD_V41, GOOD_V41, (("nfsvers=4.1",), ("nfsvers=4.1", "nconnect=8")))
    fired = [[f for f in audit.findings if f.id == "NFS031"] for audit in audits]
    assert all(len(found) == 1 for found in fired)
    assert "requested nconnect=8 but the endpoint runs 1" in fired[1][0].message
    assert "[1, 8]" in fired[0][0].message


def test_nfs031_quiet_when_consistent_or_other_endpoint() -> None:
    audits = two_mounts(
        GOOD_V41 + ",nconnect=4",
        GOOD_V41 + ",nconnect=4",
        (("nconnect=4", "nfsvers=4.1"), ("nconnect=4", "nfsvers=4.1")),
    )
    assert not [f for audit in audits for f in audit.findings if f.id == "NFS031"]
    other = swap("addr", "addr=10.0.0.6")
    audits = two_mounts(GOOD_V41, other + ",nconnect=8", ((), ("nconnect=8",)))
    assert not [f for audit in audits for f in audit.findings if f.id == "NFS031"]


def test_nfs031_effective_values_differ_without_requests() -> None:
    mounts = [
        nfs_mount(GOOD_V41 + ",nconnect=4", mountpoint="/mnt/one"),
        nfs_mount(GOOD_V41, mountpoint="/mnt/two"),
    ]
    audits = audit_mounts(mounts)
    assert all(any(f.id == "NFS031" for f in audit.findings) for audit in audits)


def test_mountstats_xprt_count_feeds_nconnect_rules() -> None:
    text = (FIXTURES / "mountstats" / "procfs-rdma-nconnect16.mountstats").read_text()
    stats = parse_mountstats(text)
    (audit,) = audit_mounts(
        parse_mounts(text), stats=stats, requested={"<mountpoint>": ["vers=3", "nconnect=8"]}
    )
    assert audit.xprt_count == 16
    by_id = {f.id: f for f in audit.findings}
    assert "endpoint runs 16" in by_id["NFS031"].message
    assert "nconnect: requested 8, effective 16" in by_id["NFSK8S001"].message
    assert "NFS030" not in by_id
    # mountstats opts: adds the defaulted attribute-cache values (acregmax=120 here).
    assert audit.effective_options["acregmax"] == "120"
    assert by_id["NFS052"].severity is Severity.INFO


def test_stacked_mounts_get_their_own_stats() -> None:
    text = (FIXTURES / "mountstats" / "invented-edge-cases.mountstats").read_text()
    mounts = [m for m in parse_mounts(text) if m.mountpoint == "/mnt/dup"]
    audits = audit_mounts(mounts, stats=parse_mountstats(text))
    assert [a.effective_options.get("nconnect") for a in audits] == ["4", None]
    assert [a.mount.visible for a in audits] == [False, True]


def test_non_nfs_mounts_are_skipped() -> None:
    mounts = parse_mounts((FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo").read_text())
    audits = audit_mounts(mounts)
    assert "cifs" not in {audit.mount.fstype for audit in audits}
    assert len(audits) == 7


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"server": "fs-0123abcd.efs.us-east-1.amazonaws.com"}, ("efs", "server-name")),
        ({"server": "us-west-2a.fs-0123abcd.efs.us-west-2.amazonaws.com"}, ("efs", "server-name")),
        ({"server": "127.0.0.1", "options": {"port": "20049"}}, ("efs", "server-name")),
        ({"server": "127.0.0.1", "options": {"port": "2049"}}, ("generic", "default")),
        ({"server": "acct.file.core.windows.net"}, ("azure-files", "server-name")),
        ({"csi_driver": "efs.csi.aws.com", "server": "10.0.0.1"}, ("efs", "csi-driver")),
        ({"csi_driver": "file.csi.azure.com"}, ("azure-files", "csi-driver")),
        ({"csi_driver": "csi.trident.netapp.io"}, ("ontap", "csi-driver")),
        (
            {"csi_driver": "csi.trident.netapp.io", "backend_type": "azure-netapp-files"},
            ("anf", "storage-class"),
        ),
        (
            {"csi_driver": "netapp.io/trident", "backend_type": "azure-netapp-files"},
            ("anf", "storage-class"),
        ),
        (
            {"csi_driver": "csi.trident.netapp.io", "backend_type": "ontap-nas"},
            ("ontap", "storage-class"),
        ),
        (
            {"csi_driver": "csi.trident.netapp.io", "backend_type": "google-cloud-netapp-volumes"},
            ("generic", "storage-class"),
        ),
        # a backend type means nothing without Trident
        (
            {"csi_driver": "nfs.csi.k8s.io", "backend_type": "azure-netapp-files"},
            ("generic", "default"),
        ),
        ({"server": "192.168.122.47", "options": {"port": "20049"}}, ("generic", "default")),
        ({"csi_driver": "filestore.csi.storage.gke.io"}, ("filestore", "csi-driver")),
        (
            {"csi_driver": "nfs.csi.k8s.io", "server": "x.file.core.windows.net"},
            ("azure-files", "server-name"),
        ),
        ({"server": "nas.example.com"}, ("generic", "default")),
        ({"server": "acct.file.core.windows.net", "override": "anf"}, ("anf", "override")),
    ],
)
def test_detect_profile(kwargs: dict[str, object], expected: tuple[str, str]) -> None:
    assert detect_profile(**kwargs) == expected  # type: ignore[arg-type]


def test_unknown_profile_override_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown NFS profile"):
        audit_mounts([nfs_mount(GOOD_V41)], profile="netapp-cloud")


def test_normalization_and_requested_comparison() -> None:
    assert normalize_options(parse_options("nfsvers=4,minorversion=1,tcp,actimeo=30")) == {
        "vers": "4.1",
        "proto": "tcp",
        "actimeo": "30",
        "acregmin": "30",
        "acregmax": "30",
        "acdirmin": "30",
        "acdirmax": "30",
    }
    effective = parse_options(GOOD_V41)
    assert requested_vs_effective(parse_options("vers=4,hard,tcp,port=2049,lock"), effective) == []
    # actimeo=30 shows as acregmin/acregmax/acdirmax=30 (acdirmin=30 is the default, not printed).
    printed = parse_options(GOOD_V41 + ",acregmin=30,acregmax=30,acdirmax=30")
    assert requested_vs_effective(parse_options("actimeo=30"), printed) == []
    assert requested_vs_effective(parse_options("actimeo=30"), effective) == [
        "acregmin: requested 30, effective 3",
        "acregmax: requested 30, effective 60",
        "acdirmax: requested 30, effective 60",
    ]
    assert requested_vs_effective(parse_options("rsize=262144,nosharecache"), effective) == [
        "rsize: requested 262144, effective 1048576",
        "nosharecache: requested set, effective absent",
    ]


def test_audit_to_dict_contract() -> None:
    mount = nfs_mount(swap("hard", "soft"))
    (audit,) = audit_mounts([mount], requested={"/mnt/a": ["soft", "nfsvers=4.1"]})
    data = audit.to_dict()
    for key in ("server", "export", "mountpoint", "fstype", "options", "findings"):
        assert key in data
    assert data["server"] == "10.0.0.5"
    assert data["requested_options"] == ["soft", "nfsvers=4.1"]
    first = data["findings"][0]
    assert list(first) == ["id", "severity", "message", "fix", "source"]
    assert (first["id"], first["severity"]) == ("NFS010", "error")  # most severe first
    assert "nfs(5)" in first["source"]
