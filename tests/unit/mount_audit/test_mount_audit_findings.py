"""Issue 11 part 2 (NFS): findings made right. Each change has a case that fires and one that
stays quiet, on real captures where one exists (tests/fixtures/mounts/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.mount_audit.rules import (
    MountAudit,
    NodeFacts,
    audit_mounts,
    requested_vs_effective,
)
from kubectl_storage.core.nodes.kubelet_paths import parse_kubelet_path
from kubectl_storage.core.nodes.mount_model import MountEntry, parse_options
from kubectl_storage.core.nodes.mounts import parse_mounts
from kubectl_storage.core.nodes.volume_owners import VolumeContext, resolve_volume
from kubectl_storage.core.report.findings import Severity

MOUNTS = Path(__file__).resolve().parents[2] / "fixtures" / "mounts"
GOOD_V41 = (
    "rw,relatime,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,"
    "retrans=2,sec=sys,local_lock=none,addr=10.0.0.5"
)


def nfs_mount(options: str, *, server: str = "10.0.0.5", mountpoint: str = "/mnt/a") -> MountEntry:
    parsed = parse_options(options)
    return MountEntry(
        source=f"{server}:/export",
        mountpoint=mountpoint,
        fstype="nfs4" if str(parsed.get("vers", "4.1")).startswith("4") else "nfs",
        options=parsed,
        server=server,
        export="/export",
        major_minor="0:50",
    )


def fixture(name: str) -> list[MountEntry]:
    return [m for m in parse_mounts((MOUNTS / name).read_text()) if m.is_nfs]


def audit_one(
    mount: MountEntry,
    context: VolumeContext | None = None,
    *,
    profile: str | None = None,
    node: NodeFacts | None = None,
) -> MountAudit:
    contexts = {mount.mountpoint: context} if context else None
    (audit,) = audit_mounts([mount], contexts=contexts, profile=profile, node=node)
    return audit


def ids(audit: MountAudit) -> dict[str, Severity]:
    return {finding.id: finding.severity for finding in audit.findings}


# --- the vendor profile from the StorageClass --------------------------------------------------

KUBELET = "/var/lib/kubelet/pods/0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a/volumes/kubernetes.io~csi"


def context_from_objects(
    provisioner: str, parameters: dict[str, str], driver: str | None = None
) -> VolumeContext:
    """The VolumeContext operations builds: resolve_volume + VolumeOwner.volume_context()."""
    pv = {
        "metadata": {"name": "pvc-1"},
        "spec": {
            "storageClassName": "nfs",
            "mountOptions": ["nfsvers=4.1"],
            **({"csi": {"driver": driver, "volumeHandle": "h"}} if driver else {}),
        },
    }
    storage_class = {
        "metadata": {"name": "nfs"},
        "provisioner": provisioner,
        "parameters": parameters,
    }
    path = parse_kubelet_path(f"{KUBELET}/pvc-1/mount")
    assert path is not None
    owner = resolve_volume(path, pvs=[pv], storage_classes=[storage_class])
    return owner.volume_context()


def test_anf_is_detected_from_the_trident_storage_class() -> None:
    # Trident StorageClass attribute backendType (NetAppDocs/trident objects.adoc).
    context = context_from_objects(
        "csi.trident.netapp.io",
        {"backendType": "azure-netapp-files"},
        driver="csi.trident.netapp.io",
    )
    assert context.backend_type == "azure-netapp-files"
    audit = audit_one(nfs_mount(GOOD_V41, mountpoint=f"{KUBELET}/pvc-1/mount"), context)
    assert (audit.profile, audit.profile_reason) == ("anf", "storage-class")
    assert ids(audit)["NFS021"] is Severity.WARN  # rsize 1 MiB above ANF's 256 KiB


def test_ontap_backend_type_and_unknown_class_stay_ontap() -> None:
    context = context_from_objects(
        "csi.trident.netapp.io", {"backendType": "ontap-nas"}, driver="csi.trident.netapp.io"
    )
    audit = audit_one(nfs_mount(GOOD_V41, mountpoint=f"{KUBELET}/pvc-1/mount"), context)
    assert (audit.profile, audit.profile_reason) == ("ontap", "storage-class")
    assert "NFS021" not in ids(audit)
    plain = context_from_objects("csi.trident.netapp.io", {}, driver="csi.trident.netapp.io")
    audit = audit_one(nfs_mount(GOOD_V41, mountpoint=f"{KUBELET}/pvc-1/mount"), plain)
    assert (audit.profile, audit.profile_reason) == ("ontap", "csi-driver")


@pytest.mark.parametrize(
    ("provisioner", "parameters"),
    [
        ("netapp.io/trident", {"backendType": "azure-netapp-files"}),  # pre-CSI Trident classes
        ("csi.trident.netapp.io", {"trident.netapp.io/backendType": "azure-netapp-files"}),
    ],
)
def test_class_provisioner_stands_in_for_a_pv_without_csi_driver(
    provisioner: str, parameters: dict[str, str]
) -> None:
    context = context_from_objects(provisioner, parameters)
    assert context.csi_driver == provisioner
    audit = audit_one(nfs_mount(GOOD_V41, mountpoint=f"{KUBELET}/pvc-1/mount"), context)
    assert audit.profile == "anf"


def test_filestore_nconnect_is_judged_only_for_a_tier_with_a_recommendation() -> None:
    # Google: nconnect=2 (zonal/regional < 10 TiB, enterprise) or 7 (larger, high scale SSD);
    # nothing for the basic tiers (S27). nconnect=1 is every default mount.
    default = nfs_mount(GOOD_V41)
    enterprise = context_from_objects(
        "filestore.csi.storage.gke.io",
        {"tier": "enterprise"},
        driver="filestore.csi.storage.gke.io",
    )
    (finding,) = [f for f in audit_one(default, enterprise).findings if f.id == "NFS032"]
    assert finding.severity is Severity.INFO
    assert "nconnect=2" in finding.fix
    assert "S27" in finding.source
    assert "G1" in finding.source
    for tier in ({}, {"tier": "standard"}, {"tier": "BASIC_SSD"}):
        context = context_from_objects(
            "filestore.csi.storage.gke.io", tier, driver="filestore.csi.storage.gke.io"
        )
        audit = audit_one(default, context)
        assert audit.profile == "filestore"
        assert "NFS032" not in ids(audit), tier
    assert "NFS032" not in ids(audit_one(nfs_mount(GOOD_V41 + ",nconnect=2"), enterprise))


# --- nconnect is shared by the kernel's client identity, not the security flavour ------------


def two(first: str, second: str, requests: tuple[tuple[str, ...], ...]) -> list[MountAudit]:
    mounts = [nfs_mount(first, mountpoint="/mnt/one"), nfs_mount(second, mountpoint="/mnt/two")]
    contexts = {
        m.mountpoint: VolumeContext(requested_options=r)
        for m, r in zip(mounts, requests, strict=True)
    }
    return audit_mounts(mounts, contexts=contexts)


def nfs031(audits: list[MountAudit]) -> list[str]:
    return [f.message for a in audits for f in a.findings if f.id == "NFS031"]


def test_sec_sys_and_krb5p_mounts_of_one_server_share_one_nconnect() -> None:
    # Linux fs/nfs/client.c nfs_match_client(): the flavour is not part of the client identity,
    # so the krb5p mount runs the sys mount's nconnect=4 (the kernel prints it on both).
    audits = two(
        GOOD_V41 + ",nconnect=4",
        GOOD_V41.replace("sec=sys", "sec=krb5p") + ",nconnect=4",
        (("nfsvers=4.1", "nconnect=4"), ("nfsvers=4.1",)),
    )
    messages = nfs031(audits)
    assert len(messages) == 2
    assert "request nconnect [1, 4]" in messages[0]
    assert "sec=krb5p/sys share it" in messages[0]
    krb5p = {f.id for f in audits[1].findings}
    assert "NFS033" in krb5p  # the Kerberos mount runs nconnect=4 it never asked for
    assert "K1" in next(f.source for f in audits[0].findings if f.id == "NFS031")


@pytest.mark.parametrize(
    "other",
    [
        GOOD_V41.replace("vers=4.1", "vers=4.2"),  # another minor version: another client
        GOOD_V41 + ",port=2050",  # another port
        GOOD_V41 + ",xprtsec=tls",  # another transport security policy
        GOOD_V41.replace("addr=10.0.0.5", "addr=10.0.0.6"),  # another address
    ],
)
def test_another_client_identity_keeps_its_own_nconnect(other: str) -> None:
    audits = two(GOOD_V41 + ",nconnect=4", other, (("nconnect=4",), ()))
    assert nfs031(audits) == []


def test_tcp6_is_the_same_transport_as_tcp() -> None:
    v6 = GOOD_V41.replace("proto=tcp", "proto=tcp6").replace("addr=10.0.0.5", "addr=fd00::1")
    mounts = [
        nfs_mount(v6 + ",nconnect=4", server="fd00::1", mountpoint="/mnt/one"),
        nfs_mount(v6, server="fd00::1", mountpoint="/mnt/two"),
    ]
    assert len(nfs031(audit_mounts(mounts))) == 2


# --- requested vs effective: what the kernel merely spells differently -----------------------


def test_tcp_requested_shows_as_tcp6_on_ipv6_real_capture() -> None:
    # Real `mount` output: localhost resolved to ::1, the kernel printed proto=tcp6.
    (mount,) = fixture("blog-localhost-tcp6.mount-output")
    quiet = audit_one(mount, VolumeContext(requested_options=("tcp", "vers=4.2")))
    assert "NFSK8S001" not in ids(quiet)
    quiet = audit_one(mount, VolumeContext(requested_options=("proto=tcp",)))
    assert "NFSK8S001" not in ids(quiet)
    fires = audit_one(mount, VolumeContext(requested_options=("proto=udp", "vers=4.2")))
    (finding,) = [f for f in fires.findings if f.id == "NFSK8S001"]
    assert "proto: requested udp, effective tcp6" in finding.message


def test_lookupcache_positive_shows_as_pos_real_capture() -> None:
    # Real /proc/mounts line (EL9 client): the kernel prints lookupcache=pos.
    (mount,) = fixture("linux-nfs-el9-lookupcache-pos.proc-mounts")
    asked = ("vers=4.2", "lookupcache=positive", "actimeo=1")
    assert "NFSK8S001" not in ids(audit_one(mount, VolumeContext(requested_options=asked)))
    fires = audit_one(mount, VolumeContext(requested_options=("vers=4.2", "lookupcache=none")))
    (finding,) = [f for f in fires.findings if f.id == "NFSK8S001"]
    assert "lookupcache: requested none, effective pos" in finding.message


def test_defaults_the_kernel_does_not_print_and_helper_only_options() -> None:
    effective = parse_options(GOOD_V41)
    quiet = "lookupcache=all,write=lazy,sloppy,_netdev,noauto,nofail,x-systemd.automount,comment=x"
    assert requested_vs_effective(parse_options(quiet), effective) == []
    # lookupcache=all is the default only when nothing else is printed
    with_pos = parse_options(GOOD_V41 + ",lookupcache=pos")
    assert requested_vs_effective(parse_options("lookupcache=all"), with_pos) == [
        "lookupcache: requested all, effective pos"
    ]
    assert requested_vs_effective(parse_options("nosharecache"), effective) == [
        "nosharecache: requested set, effective absent"
    ]


def test_efs_utils_options_are_not_kernel_options_on_efs_only() -> None:
    (mount,) = fixture("eks-efs-csi-stunnel.mount-output")
    asked = ("tls", "iam", "accesspoint=fsap-0123456789abcdef0", "nfsvers=4.1")
    audit = audit_one(mount, VolumeContext(requested_options=asked, csi_driver="efs.csi.aws.com"))
    assert audit.profile == "efs"
    assert "NFSK8S001" not in ids(audit)
    generic = audit_one(nfs_mount(GOOD_V41), VolumeContext(requested_options=("tls",)))
    (finding,) = [f for f in generic.findings if f.id == "NFSK8S001"]
    assert "tls: requested set, effective absent" in finding.message


# --- EFS through the efs-utils TLS tunnel ------------------------------------------------------


def test_efs_tls_tunnel_is_not_data_in_clear_real_capture() -> None:
    # Real EKS node: an efs.csi.aws.com PV on 127.0.0.1:20149 (efs-utils stunnel, TLS).
    (mount,) = fixture("eks-efs-csi-stunnel.mount-output")
    detected = audit_one(mount)  # no cluster objects: the server and port tell
    assert (detected.profile, detected.profile_reason) == ("efs", "server-name")
    assert "NFS100" not in ids(detected)
    with_driver = audit_one(mount, VolumeContext(csi_driver="efs.csi.aws.com"))
    assert "NFS100" not in ids(with_driver)


def test_efs_without_tls_is_data_in_clear_real_capture() -> None:
    # Real EC2 mount by the file system's DNS name: no tunnel.
    (mount,) = fixture("ec2-efs-plain.mount-output")
    audit = audit_one(mount)
    assert audit.profile == "efs"
    (finding,) = [f for f in audit.findings if f.id == "NFS100"]
    assert "efs-utils" in finding.fix
    # A tunnel the PV says is plain (encryptInTransit: "false") is not TLS either.
    (tunnel,) = fixture("eks-efs-csi-stunnel.mount-output")
    plain = VolumeContext(
        csi_driver="efs.csi.aws.com", volume_attributes=(("encryptInTransit", "false"),)
    )
    assert "NFS100" in ids(audit_one(tunnel, plain))


def test_port_20049_on_a_remote_server_is_rdma_not_efs_real_capture() -> None:
    (mount,) = fixture("blog-rdma-port20049.mount-output")
    audit = audit_one(mount)
    assert (audit.profile, audit.profile_reason) == ("generic", "default")
    assert "NFS100" in ids(audit)


# --- max_connect advice only where the kernel can use it -------------------------------------


def test_no_max_connect_advice_before_linux_5_18() -> None:
    mount = nfs_mount(GOOD_V41)
    old = audit_one(mount, profile="ontap", node=NodeFacts(kernel_release="5.14.0-284.30.1.el9_2"))
    assert "NFS036" not in ids(old)
    new = audit_one(mount, profile="ontap", node=NodeFacts(kernel_release="6.1.0-18-amd64"))
    (finding,) = [f for f in new.findings if f.id == "NFS036"]
    assert finding.fix == "max_connect=16"
    unknown = audit_one(mount, profile="ontap")
    (finding,) = [f for f in unknown.findings if f.id == "NFS036"]
    assert "5.18" in finding.fix
    assert "NFS036" not in ids(
        audit_one(nfs_mount(GOOD_V41 + ",max_connect=16"), profile="ontap", node=NodeFacts("6.1.0"))
    )


# --- no INFO on every default mount of a vendor ----------------------------------------------


def test_azure_files_default_attribute_cache_is_not_reported() -> None:
    default = nfs_mount(GOOD_V41, server="acct.file.core.windows.net")
    assert "NFS053" not in ids(audit_one(default))
    low = nfs_mount(
        GOOD_V41 + ",acregmin=10,acregmax=10,acdirmin=10,acdirmax=10",
        server="acct.file.core.windows.net",
    )
    (finding,) = [f for f in audit_one(low).findings if f.id == "NFS053"]
    assert "acregmin=10" in finding.message
    assert "acdirmax" in finding.message
    assert "acregmax" in finding.message


def test_azure_files_noresvport_only_before_linux_5_18() -> None:
    # Azure Files mount-option table: noresvport "Recommended for kernels before 5.18" (S22).
    mount = nfs_mount(GOOD_V41, server="acct.file.core.windows.net")
    assert "NFS040" in ids(audit_one(mount, node=NodeFacts(kernel_release="5.15.0-91-generic")))
    assert "NFS040" in ids(audit_one(mount))  # unknown kernel: still advised
    assert "NFS040" not in ids(audit_one(mount, node=NodeFacts(kernel_release="6.8.0-45")))
    efs = nfs_mount(GOOD_V41, server="fs-0123abcd.efs.us-east-1.amazonaws.com")
    assert "NFS040" in ids(audit_one(efs, node=NodeFacts(kernel_release="6.8.0-45")))


def test_slot_tables_are_judged_against_anf_only() -> None:
    v3 = GOOD_V41.replace("vers=4.1", "vers=3")
    node = NodeFacts(tcp_max_slot_table_entries=65536)
    assert "NFS111" in ids(audit_one(nfs_mount(v3), profile="anf", node=node))
    assert "NFS111" not in ids(audit_one(nfs_mount(v3), node=node))


def test_rpc_with_tls_is_not_data_in_clear() -> None:
    assert "NFS100" in ids(audit_one(nfs_mount(GOOD_V41)))
    tls = audit_one(nfs_mount(GOOD_V41 + ",xprtsec=tls"))
    assert "NFS100" not in ids(tls)
    assert "NFS101" in ids(tls)


def test_the_profile_choice_lists_every_vendor_table() -> None:
    from kubectl_storage.core.mount_audit.vendors import PROFILES, VendorProfile

    assert tuple(p.value for p in VendorProfile) == PROFILES
