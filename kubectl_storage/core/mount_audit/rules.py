"""NFS mount-option rules (rules.md section A) evaluated on parsed mounts.

Every rule is a pure function of one :class:`MountFacts` returning :class:`Finding` objects; the
per-client nconnect rule (NFS031) looks at all mounts at once. The entry point is
:func:`audit_mounts`::

    audits = audit_mounts(
        parse_mounts(mountinfo_text),
        stats=parse_mountstats(mountstats_text),      # effective defaults + xprt count
        contexts={mountpoint: VolumeContext(...)},   # requested options, PV and class facts
        profile=None,                                # or "efs", "azure-files", "anf", ...
        kernel_release="5.15.0-91-generic",
    )
    [audit.to_dict() for audit in audits]

Rules look at **effective** options (the kernel's) unless rules.md says they concern the
**requested** list (``PV.spec.mountOptions``): NFS004, NFS022, NFS023, NFS030, NFS035, NFS090-093
and NFSK8S*. Vendor thresholds live in one table per vendor (:mod:`.vendors`); a rule reads the
table entry of the mount's profile and never tests a profile name. Each rule's sources are in
:data:`RULES` (the catalogue, also in docs/commands/mount-audit.md) and in every finding's
``source``.

Pure: dataclasses in, dataclasses out, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.mount_audit.mountstats import NfsMountStats
from kubectl_storage.core.mount_audit.vendors import (
    PROFILE_ANF,
    PROFILE_AZURE_FILES,
    PROFILE_EFS,
    PROFILE_FILESTORE,
    PROFILE_GENERIC,
    PROFILE_ONTAP,
    PROFILES,
    VENDORS,
    NfsVendor,
    detect_vendor,
    is_local_tunnel,
    vendor,
)
from kubectl_storage.core.nodes.kubelet_paths import VolumeContext
from kubectl_storage.core.nodes.mounts import MountEntry, OptionValue, options_from_list
from kubectl_storage.core.report.findings import Finding, RuleSpec, Severity

__all__ = [
    "PROFILES",
    "PROFILE_ANF",
    "PROFILE_AZURE_FILES",
    "PROFILE_EFS",
    "PROFILE_FILESTORE",
    "PROFILE_GENERIC",
    "PROFILE_ONTAP",
    "RULES",
    "RULE_IDS",
    "SOURCE_REFS",
    "VENDORS",
    "MountAudit",
    "MountFacts",
    "NodeFacts",
    "RuleSpec",
    "VolumeContext",
    "audit_mounts",
    "build_facts",
    "client_key",
    "detect_profile",
    "evaluate_mount",
    "evaluate_nconnect_consistency",
    "kernel_version",
    "nfs_version",
    "normalize_options",
    "requested_vs_effective",
    "rule_catalogue",
]

# Short references for rules.md section 0 keys (S..) and for the sources this module adds (K..
# kernel, E.. EFS, G.. Google, T.. Trident); a finding's ``source`` joins the ones it cites.
SOURCE_REFS: dict[str, str] = {
    "S1": "nfs(5) https://man7.org/linux/man-pages/man5/nfs.5.html",
    "S2": "Linux fs/nfs/super.c nfs_show_mount_options(), nfs_show_options()",
    "S3": "Linux net/sunrpc/stats.c rpc_clnt_show_stats()",
    "S6": "Linux fs/nfs/Kconfig NFS_DISABLE_UDP_SUPPORT",
    "S7": "RHEL 9 Managing file systems, ch. 3 Mounting NFS shares",
    "S8": "mount(8) https://man7.org/linux/man-pages/man8/mount.8.html",
    "S10": "AWS EFS Recommended NFS mount options "
    "https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-nfs-mount-settings.html",
    "S11": "AWS EFS mount helper settings "
    "https://docs.aws.amazon.com/efs/latest/ug/mount-helper-setting.html",
    "S12": "AWS EFS Using NFS to mount https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-old.html",
    "S13": "aws/efs-utils src/efs_utils_common/mount_options.py, mount_utils.py (TLS mounts use "
    "127.0.0.1 and port=<tlsport>), constants.py NON_NFS_OPTIONS",
    "S15": "Azure NetApp Files Linux NFS mount options best practices "
    "(azure-netapp-files/performance-linux-mount-options.md)",
    "S16": "ANF nconnect + krb5 performance warning (includes/kerberos-nconnect-performance.md)",
    "S17": "ANF Linux concurrency best practices (performance-linux-concurrency-session-slots.md)",
    "S18": "ANF Create an NFS volume / mount volumes (ports 111/635/2049/4045/4046)",
    "S19": "Azure Policy: ANF volumes should not use NFSv3 protocol type",
    "S20": "ANF Understand file locking https://learn.microsoft.com/azure/azure-netapp-files/"
    "understand-file-locks",
    "S22": "Azure Files Mount NFS file share on Linux (storage-files-how-to-mount-nfs-shares.md; "
    "mount options: actimeo 30-60, nconnect 4, noresvport recommended for kernels before 5.18)",
    "S23": "Azure Files Improve NFS performance (nfs-performance.md)",
    "S24": "Azure Files NFS large directories (nfs-large-directories.md)",
    "S25": "AKS mountOptions settings in Azure Files "
    "https://learn.microsoft.com/troubleshoot/azure/azure-kubernetes/storage/"
    "mountoptions-settings-azure-files",
    "S26": "Google Filestore supported protocols "
    "https://cloud.google.com/filestore/docs/about-supported-protocols",
    "S27": "Google Filestore test performance (nconnect 2 or 7 by tier) "
    "https://cloud.google.com/filestore/docs/testing-performance",
    "S28": "Google Filestore mount latency https://cloud.google.com/filestore/docs/mount-latency",
    "S29": "NetApp ONTAP Learn about nconnect "
    "https://docs.netapp.com/us-en/ontap/nfs-admin/nconnect-concept.html",
    "S30": "NetApp ONTAP Considerations for stateless protocols (hard vs soft)",
    "S32": "NetApp KB maximum number of trunked connections for NFS in ONTAP 9",
    "S40": "Kubernetes Persistent Volumes, Mount Options",
    "S41": "Kubernetes Storage Classes, Mount options "
    "https://kubernetes.io/docs/concepts/storage/storage-classes/#mount-options",
    "S42": "kubernetes-csi/csi-driver-nfs pkg/nfs/nodeserver.go",
    "S43": "NetAppDocs/trident ontap-nas-examples.adoc",
    "K1": "Linux fs/nfs/client.c nfs_match_client(): mounts share one nfs_client (and its "
    "nconnect) when address and port, NFS version, minor version, transport and xprtsec policy "
    "match; the security flavour is not compared",
    "K2": "Linux fs/nfs/fs_context.c nfs_fs_parameters (sloppy, lookupcache=all|none|pos|"
    "positive, write=lazy|eager|wait; trunkdiscovery on newer kernels) with S2, which prints "
    "lookupcache=pos and omits the defaults lookupcache=all and write=lazy",
    "K3": "Linux commits 7e134205f629 'NFSv4 introduce max_connect mount options' (v5.15) and "
    "'NFSv4.1 test and add 4.1 trunking transport' (nfs-for-5.17); NetAppDocs/ontap "
    "nfs-trunking/client-mount-task.adoc (max_connect on each trunked mount)",
    "E1": "kubernetes-sigs/aws-efs-csi-driver pkg/driver/node.go (encryptInTransit defaults to "
    "true and adds tls)",
    "G1": "kubernetes-sigs/gcp-filestore-csi-driver pkg/csi_driver/controller.go (StorageClass "
    "parameter tier)",
    "T1": "NetAppDocs/trident trident-reference/objects.adoc (StorageClass attribute backendType)",
}


#: The NFS rule catalogue (rules.md A.1, with this project's changes): what each rule checks and
#: the documents it rests on. Vendor-scoped rules also cite the vendor table's source keys.
RULES: dict[str, RuleSpec] = {
    spec.id: spec
    for spec in (
        RuleSpec("NFS001", "error", "NFSv2 mount", "S7 S1"),
        RuleSpec("NFS002", "warn", "NFSv4.0 mount (no sessions)", "S1 S29 S12 S18 S22"),
        RuleSpec(
            "NFS003",
            "info (warn on ANF)",
            "NFSv3 mount (NLM/NSM side-band locking)",
            "S1 S20 S19 S26",
        ),
        RuleSpec("NFS004", "info", "no nfsvers/vers requested", "S1 S7 S22"),
        RuleSpec("NFS010", "error", "soft/softerr on a read-write mount", "S1 S30 S10 S11 S15"),
        RuleSpec("NFS011", "warn", "soft/softerr on a read-only mount", "S30 S1"),
        RuleSpec("NFS012", "warn", "soft mount with timeo below the vendor minimum", "S10"),
        RuleSpec("NFS013", "warn", "timeo below 150 over TCP", "S1 S10"),
        RuleSpec("NFS014", "info", "timeo/retrans differ from the vendor helper", "S10 S11 S13"),
        RuleSpec("NFS020", "warn", "rsize/wsize below the vendor value", "S10 S11 S22"),
        RuleSpec("NFS021", "warn", "rsize/wsize above the vendor limit", "S15"),
        RuleSpec("NFS022", "info", "requested rsize/wsize differ from the negotiated", "S1 S2"),
        RuleSpec("NFS023", "info", "explicit rsize/wsize below 64 KiB over TCP", "S1 S15"),
        RuleSpec("NFS030", "error", "nconnect above 16 requested", "S1 S29 S40"),
        RuleSpec(
            "NFS031",
            "warn",
            "nconnect inconsistent within one NFS client (server identity)",
            "S15 S23 S2 S3 K1",
        ),
        RuleSpec(
            "NFS032",
            "warn/info",
            "nconnect against the vendor's range",
            "S12 S23 S25 S15 S27 G1",
        ),
        RuleSpec("NFS033", "warn", "nconnect with sec=krb5*", "S16 K1"),
        RuleSpec("NFS034", "warn", "nconnect on NFSv4.0", "S29"),
        RuleSpec("NFS035", "info", "nconnect requested on a kernel before 5.3", "S23 S15"),
        RuleSpec(
            "NFS036",
            "info",
            "ONTAP NFSv4.1+ without max_connect=16 (kernel 5.18 or later)",
            "S32 S1 K3",
        ),
        RuleSpec(
            "NFS040", "warn", "no noresvport where the vendor asks for it", "S10 S11 S13 S22 S25"
        ),
        RuleSpec("NFS041", "info", "noresvport against a generic server", "S1 S10"),
        RuleSpec("NFS050", "warn", "attribute cache disabled (noac, actimeo=0)", "S1 S10"),
        RuleSpec("NFS051", "warn/info", "nocto", "S1 S15"),
        RuleSpec("NFS052", "warn/info", "attribute cache timers above 60 s", "S1 S15"),
        RuleSpec(
            "NFS053",
            "info",
            "attribute cache timeout set below the vendor minimum",
            "S22 S24 S25",
        ),
        RuleSpec("NFS054", "info", "lookupcache=none or pos", "S1 S2"),
        RuleSpec("NFS055", "warn", "nosharecache", "S1"),
        RuleSpec("NFS060", "warn/error", "NFSv3 with nolock/local_lock", "S1 S18 S20"),
        RuleSpec("NFS070", "info", "sync", "S1 S2"),
        RuleSpec("NFS080", "error", "NFS over UDP", "S1 S6"),
        RuleSpec("NFS081", "info", "NFSv3 without tcp where mountd has no UDP", "S28 S1"),
        RuleSpec("NFS090", "info", "intr/nointr requested", "S1"),
        RuleSpec("NFS091", "info", "atime options requested", "S1"),
        RuleSpec("NFS092", "error", "bg requested", "S1"),
        RuleSpec("NFS093", "info", "fstab-only options requested", "S8 S10"),
        RuleSpec(
            "NFS100",
            "info",
            "sec=sys without an encrypting tunnel",
            "S1 S19 S26 S10 S13 S22 E1",
        ),
        RuleSpec("NFS101", "info", "RPC-with-TLS in use", "S1 S2"),
        RuleSpec("NFS110", "info", "128 KiB read-ahead on a cloud file service", "S23 S12"),
        RuleSpec("NFS111", "info", "RPC slots above what the server accepts", "S17"),
        RuleSpec(
            "NFSK8S001",
            "warn",
            "requested options not in effect",
            "S40 S1 S15 S2 S8 K2 S13",
        ),
        RuleSpec("NFSK8S002", "info", "StorageClass mountOptions differ from the PV's", "S41"),
        RuleSpec("NFSK8S003", "info", "NFS PV without mountOptions", "S42 S43 S1"),
        RuleSpec("NFSK8S004", "info", "FailedMount events with option errors", "S40"),
        RuleSpec("NFSK8S005", "info", "legacy mount-options annotation", "S40"),
    )
}


def rule_catalogue() -> list[dict[str, Any]]:
    """Every NFS rule with its severity, title and resolved sources (JSON shape)."""
    return [spec.to_dict(SOURCE_REFS) for spec in RULES.values()]


# Options that never reach the kernel (mount(8), mount.nfs(8) and fstab options, S8) or that the
# kernel accepts but never prints (K2). They are not "requested but missing".
USERSPACE_ONLY = frozenset(
    {
        "bg",
        "fg",
        "retry",
        "_netdev",
        "nofail",
        "auto",
        "noauto",
        "user",
        "nouser",
        "users",
        "owner",
        "group",
        "defaults",
        "comment",
        "sloppy",
        "intr",
        "nointr",
        "mounthost",
        "trunkdiscovery",
        "notrunkdiscovery",
    }
)
_ATIME_OPTIONS = frozenset({"noatime", "nodiratime", "relatime", "strictatime", "atime"})
# Values the kernel does not print when they are in force (S2, K2).
_DEFAULTS_NOT_PRINTED: dict[str, OptionValue] = {
    "async": True,
    "lock": True,
    "cto": True,
    "ac": True,
    "sharecache": True,
    "resvport": True,
    "rdirplus": True,
    "acl": True,
    "exec": True,
    "suid": True,
    "dev": True,
    "nosoftreval": True,
    "noposix": True,
    "nofsc": True,
    "nomigration": True,
    "alignwrite": True,
    "port": "2049",
    "nconnect": "1",
    "max_connect": "1",
    "lookupcache": "all",
    "write": "lazy",
    "rw": True,
}
_ATTRIBUTE_CACHE_DEFAULTS = {"acregmin": 3, "acregmax": 60, "acdirmin": 30, "acdirmax": 60}
# Option values the kernel spells its own way (S2, K2).
_SPELLINGS: dict[str, dict[str, str]] = {"lookupcache": {"positive": "pos"}}

#: The first kernel where the ONTAP max_connect advice (NFS036) is given (see K3).
MAX_CONNECT_MIN_KERNEL = (5, 18)


@dataclass(frozen=True)
class NodeFacts:
    """Node-wide tunables some rules read (NFS035, NFS036, NFS040, NFS110, NFS111); optional."""

    kernel_release: str | None = None
    read_ahead_kb: Mapping[str, int] = field(default_factory=dict)  # keyed by "maj:min"
    tcp_max_slot_table_entries: int | None = None
    max_session_slots: int | None = None

    @property
    def kernel(self) -> tuple[int, int] | None:
        """``(major, minor)`` of the kernel release, when known."""
        return kernel_version(self.kernel_release)


@dataclass(frozen=True)
class MountFacts:
    """Everything one mount's rules need, normalized (built by :func:`build_facts`)."""

    mount: MountEntry
    effective: dict[str, OptionValue]
    requested: dict[str, OptionValue] | None
    profile: str
    profile_reason: str
    xprt_count: int | None
    context: VolumeContext
    node: NodeFacts

    @property
    def vendor(self) -> NfsVendor:
        """The vendor table entry of this mount's profile."""
        return vendor(self.profile)

    @property
    def version(self) -> str | None:
        """Effective NFS version as ``"2"``, ``"3"``, ``"4.0"``, ``"4.1"``, ``"4.2"``."""
        return nfs_version(self.effective, self.mount.fstype)

    @property
    def read_write(self) -> bool:
        """Whether the mount is writable."""
        return "ro" not in self.effective

    @property
    def proto(self) -> str | None:
        """Effective transport (``tcp``, ``tcp6``, ``udp``, ``udp6``, ``rdma``)."""
        return _text(self.effective.get("proto"))

    @property
    def address(self) -> str:
        """The server address the kernel connected to (``addr=``), else the source's server."""
        return _text(self.effective.get("addr")) or self.mount.server or ""

    @property
    def nconnect(self) -> int:
        """Connections per server: effective ``nconnect``, else the ``xprt:`` count, else 1."""
        value = _int(self.effective.get("nconnect"))
        if value is not None:
            return value
        return self.xprt_count or 1

    @property
    def sec(self) -> str:
        """Effective security flavour (``sys`` when not printed)."""
        return _text(self.effective.get("sec")) or "sys"

    @property
    def shared_writable(self) -> bool:
        """The PV is mounted read-write on two or more nodes (so caches can disagree)."""
        return self.read_write and (self.context.rw_node_count or 0) >= 2

    @property
    def local_tls_tunnel(self) -> bool:
        """The mount goes through the vendor's local TLS tunnel (efs-utils: 127.0.0.1 on a local
        port, S13), and nothing says the tunnel is plain: the PV's CSI attribute
        ``encryptInTransit`` is not false (the EFS CSI driver defaults it to true, E1) and
        ``notls`` was not requested.

        Caveat: efs-utils 2.x (efs-proxy) routes plain mounts through 127.0.0.1 as well; only the
        CSI attribute or the requested options tell them apart.
        """
        if not self.vendor.local_tls_tunnel:
            return False
        if not is_local_tunnel(self.address, _text(self.effective.get("port"))):
            return False
        if (self.context.volume_attribute("encryptInTransit") or "").lower() == "false":
            return False
        return "notls" not in (self.requested or {})


@dataclass(frozen=True)
class MountAudit:
    """The audit of one NFS mount: what was found and what it was judged against."""

    mount: MountEntry
    profile: str
    profile_reason: str
    effective_options: dict[str, OptionValue]
    requested_options: tuple[str, ...] | None
    xprt_count: int | None
    pv_name: str | None
    findings: tuple[Finding, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: the mount's identity, the options compared and the findings."""
        return {
            "server": self.mount.server,
            "export": self.mount.export,
            "source": self.mount.source,
            "mountpoint": self.mount.mountpoint,
            "fstype": self.mount.fstype,
            "visible": self.mount.visible,
            "options": dict(self.effective_options),
            "requested_options": (
                None if self.requested_options is None else list(self.requested_options)
            ),
            "profile": self.profile,
            "profile_reason": self.profile_reason,
            "xprt_count": self.xprt_count,
            "pv_name": self.pv_name,
            "findings": [finding.to_dict() for finding in self.findings],
        }


# ---------------------------------------------------------------------------------------------
# Normalization and vendor detection
# ---------------------------------------------------------------------------------------------


def normalize_options(options: Mapping[str, OptionValue]) -> dict[str, OptionValue]:
    """Rewrite option spellings to the kernel's (rules.md C.1 "requested options").

    ``nfsvers``→``vers``, ``vers=4,minorversion=1``→``vers=4.1``, ``tcp``/``udp``/``rdma``→
    ``proto=``, ``lookupcache=positive``→``pos``, ``actimeo=N``→the four ``ac*`` values.
    """
    result: dict[str, OptionValue] = {}
    for key, value in options.items():
        if key == "nfsvers":
            result["vers"] = value
        elif key in ("tcp", "udp", "rdma") and value is True:
            result["proto"] = key
        elif key == "minorversion":
            continue
        elif isinstance(value, str) and value in _SPELLINGS.get(key, {}):
            result[key] = _SPELLINGS[key][value]
        else:
            result[key] = value
    minor = options.get("minorversion")
    if isinstance(minor, str) and str(result.get("vers")) == "4":
        result["vers"] = f"4.{minor}"
    if isinstance(result.get("actimeo"), str):
        for name in _ATTRIBUTE_CACHE_DEFAULTS:
            result.setdefault(name, result["actimeo"])
    return result


def nfs_version(options: Mapping[str, OptionValue], fstype: str = "nfs") -> str | None:
    """The NFS version as the kernel prints it, from ``vers``/``nfsvers`` (+ ``minorversion``)."""
    normalized = normalize_options(options)
    version = normalized.get("vers")
    if isinstance(version, str):
        return version
    del fstype  # nfsstat -m and friends always print vers=; no guessing from the fstype
    return None


def detect_profile(
    *,
    server: str | None = None,
    csi_driver: str | None = None,
    backend_type: str | None = None,
    options: Mapping[str, OptionValue] | None = None,
    override: str | None = None,
) -> tuple[str, str]:
    """Pick the vendor profile for a mount (rules.md A.2 detection order; :mod:`.vendors`).

    Args:
        server: the mount's server name or address.
        csi_driver: the PV's CSI driver or the StorageClass provisioner.
        backend_type: what the StorageClass says about the backend (Trident ``backendType``).
        options: effective options (``port=`` tells EFS TLS mounts on 127.0.0.1).
        override: an explicit profile that wins over detection.

    Returns:
        ``(profile, reason)`` where reason is ``override``, ``storage-class``, ``csi-driver``,
        ``server-name`` or ``default``.

    Raises:
        ValueError: the override is not a known profile.
    """
    port = _text((options or {}).get("port"))
    entry, reason = detect_vendor(
        server=server,
        port=port,
        csi_driver=csi_driver,
        backend_type=backend_type,
        override=override,
    )
    return entry.name, reason


# ---------------------------------------------------------------------------------------------
# Rules: one function per rule id, each pure over MountFacts
# ---------------------------------------------------------------------------------------------


def _finding(
    rule_id: str, severity: Severity, message: str, fix: str, keys: str | None = None
) -> Finding:
    """A finding citing ``keys`` (default: the rule's catalogue sources)."""
    cited = keys if keys is not None else RULES[rule_id].sources
    unique = list(dict.fromkeys(cited.split()))
    source = "; ".join(f"{key} {SOURCE_REFS[key]}" for key in unique if key in SOURCE_REFS)
    return Finding(rule_id, severity, message, fix, source)


def rule_nfs001_nfsv2(facts: MountFacts) -> list[Finding]:
    """NFS001: NFSv2 is no longer supported."""
    if facts.version != "2":
        return []
    return [
        _finding(
            "NFS001",
            Severity.ERROR,
            "NFSv2 mount (vers=2): no longer supported",
            "use nfsvers=4.1 (4.2 if the server supports it; 3 only if it must)",
        )
    ]


def rule_nfs002_nfsv40(facts: MountFacts) -> list[Finding]:
    """NFS002: NFSv4.0 has no sessions and needs server-to-client callbacks."""
    if facts.version != "4.0":
        return []
    return [
        _finding(
            "NFS002",
            Severity.WARN,
            "NFSv4.0 mount: no sessions; delegation callbacks need a server-to-client "
            "connection, fragile behind NAT or pod networking",
            "use nfsvers=4.1",
        )
    ]


def rule_nfs003_nfsv3(facts: MountFacts) -> list[Finding]:
    """NFS003: NFSv3 locking is side-band (NLM/NSM); warn where a vendor policy audits v3."""
    if facts.version != "3":
        return []
    return [
        _finding(
            "NFS003",
            facts.vendor.v3_severity,
            "NFSv3 mount: locks use the NLM/NSM side-band protocols (stale locks after "
            "network failures) without RPCSEC_GSS protection",
            "move to NFSv4.1 where the service supports it",
        )
    ]


def rule_nfs004_version_not_pinned(facts: MountFacts) -> list[Finding]:
    """NFS004: the requested options do not pin a version (requested list only)."""
    if facts.requested is None or "vers" in facts.requested:
        return []
    fix = "pin nfsvers= in PV/StorageClass mountOptions"
    if facts.vendor.version_fix:
        fix += f" ({facts.vendor.version_fix})"
    return [
        _finding(
            "NFS004",
            Severity.INFO,
            f"no nfsvers/vers requested; the client negotiated {facts.version or 'a version'}"
            " and can fall back silently",
            fix,
        )
    ]


def rule_nfs010_soft_rw(facts: MountFacts) -> list[Finding]:
    """NFS010: soft/softerr on a writable mount risks silent data corruption."""
    if not facts.read_write or not _soft(facts.effective):
        return []
    return [
        _finding(
            "NFS010",
            Severity.ERROR,
            "soft/softerr on a read-write mount: a timeout can cause silent data corruption",
            "remove soft/softerr (hard is the default); size timeo instead",
        )
    ]


def rule_nfs011_soft_ro(facts: MountFacts) -> list[Finding]:
    """NFS011: soft/softerr on a read-only mount is still unreliable."""
    if facts.read_write or not _soft(facts.effective):
        return []
    return [
        _finding(
            "NFS011",
            Severity.WARN,
            "soft/softerr on a read-only mount is unreliable",
            "prefer hard",
        )
    ]


def rule_nfs012_soft_timeo(facts: MountFacts) -> list[Finding]:
    """NFS012: a vendor's soft mounts need a minimum timeo (EFS: 150)."""
    minimum = facts.vendor.soft_min_timeo
    timeo = _int(facts.effective.get("timeo"))
    if minimum is None or not _soft(facts.effective) or timeo is None or timeo >= minimum:
        return []
    return [
        _finding(
            "NFS012",
            Severity.WARN,
            f"{facts.vendor.title} soft mount with timeo={timeo} (< {minimum})",
            f"timeo=600 (at least {minimum})",
            facts.vendor.source("soft_min_timeo"),
        )
    ]


def rule_nfs013_tcp_short_timeo(facts: MountFacts) -> list[Finding]:
    """NFS013: over TCP a timeo under 15 s retransmits needlessly."""
    timeo = _int(facts.effective.get("timeo"))
    if not (facts.proto or "tcp").startswith("tcp") or timeo is None or timeo >= 150:
        return []
    return [
        _finding(
            "NFS013",
            Severity.WARN,
            f"timeo={timeo} deciseconds over TCP: aggressive retransmits are unnecessary",
            "timeo=600",
        )
    ]


def rule_nfs014_vendor_timeo_retrans(facts: MountFacts) -> list[Finding]:
    """NFS014: the vendor's mount helper uses fixed timeo/retrans (EFS: 600 and 2)."""
    entry = facts.vendor
    if entry.expected_timeo is None or entry.expected_retrans is None:
        return []
    timeo, retrans = _text(facts.effective.get("timeo")), _text(facts.effective.get("retrans"))
    if timeo in (None, str(entry.expected_timeo)) and retrans in (
        None,
        str(entry.expected_retrans),
    ):
        return []
    return [
        _finding(
            "NFS014",
            Severity.INFO,
            f"{entry.title} mount with timeo={timeo},retrans={retrans} ({entry.title} uses "
            f"{entry.expected_timeo} and {entry.expected_retrans})",
            f"timeo={entry.expected_timeo},retrans={entry.expected_retrans}",
            entry.source("expected_timeo"),
        )
    ]


def rule_nfs020_small_rwsize(facts: MountFacts) -> list[Finding]:
    """NFS020: rsize/wsize below the vendor's recommendation (EFS, Azure Files: 1 MiB)."""
    minimum = facts.vendor.min_rwsize
    if minimum is None:
        return []
    small = _sizes(facts.effective, lambda size: size < minimum)
    if not small:
        return []
    return [
        _finding(
            "NFS020",
            Severity.WARN,
            f"{small} below {minimum} on {facts.profile}",
            f"rsize={minimum},wsize={minimum} (or leave unset)",
            facts.vendor.source("min_rwsize"),
        )
    ]


def rule_nfs021_large_rwsize(facts: MountFacts) -> list[Finding]:
    """NFS021: rsize/wsize above the vendor's limit (ANF: 256 KiB)."""
    maximum = facts.vendor.max_rwsize
    if maximum is None:
        return []
    large = _sizes(facts.effective, lambda size: size > maximum)
    if not large:
        return []
    return [
        _finding(
            "NFS021",
            Severity.WARN,
            f"{large} above {maximum} on {facts.vendor.title}",
            f"rsize={maximum},wsize={maximum}",
            facts.vendor.source("max_rwsize"),
        )
    ]


def rule_nfs022_rwsize_negotiated(facts: MountFacts) -> list[Finding]:
    """NFS022: requested rsize/wsize differ from the negotiated ones (requested list)."""
    if facts.requested is None:
        return []
    differences = [
        f"{name} requested {facts.requested[name]}, effective {facts.effective.get(name)}"
        for name in ("rsize", "wsize")
        if name in facts.requested
        and _int(facts.requested[name]) != _int(facts.effective.get(name))
    ]
    if not differences:
        return []
    return [
        _finding(
            "NFS022",
            Severity.INFO,
            "; ".join(differences),
            "report both; raise the server cap if it is lower than expected",
        )
    ]


def rule_nfs023_small_rwsize_tcp(facts: MountFacts) -> list[Finding]:
    """NFS023: explicit rsize/wsize under 64 KiB over TCP multiplies RPCs (not ANF)."""
    if facts.vendor.small_rwsize_ok or not (facts.proto or "tcp").startswith("tcp"):
        return []
    options = facts.requested if facts.requested is not None else facts.effective
    small = _sizes(options, lambda size: size < 65536)
    if not small:
        return []
    return [
        _finding(
            "NFS023",
            Severity.INFO,
            f"{small} below 65536 over TCP",
            "drop the option (negotiate the largest) or raise it",
        )
    ]


def rule_nfs030_nconnect_limit(facts: MountFacts) -> list[Finding]:
    """NFS030: nconnect above 16 makes the mount fail (requested list)."""
    requested = _int((facts.requested or {}).get("nconnect"))
    if requested is None or requested <= 16:
        return []
    return [
        _finding(
            "NFS030",
            Severity.ERROR,
            f"nconnect={requested} requested; the limit is 16",
            "nconnect <= 16",
        )
    ]


def rule_nfs032_vendor_nconnect(facts: MountFacts) -> list[Finding]:
    """NFS032: vendor-documented nconnect ranges (one table entry per vendor).

    A default mount (nconnect 1) is judged only where the vendor's value is known for it: a
    Filestore mount is judged only when its StorageClass names a tier with a recommendation.
    """
    entry, nconnect = facts.vendor, facts.nconnect
    if not entry.nconnect_supported and nconnect > 1:
        return [
            _finding(
                "NFS032",
                Severity.WARN,
                f"nconnect={nconnect} on {entry.title}, which does not support nconnect",
                "remove nconnect",
                entry.source("nconnect_supported"),
            )
        ]
    if entry.nconnect_best is not None and nconnect > entry.nconnect_best:
        return [
            _finding(
                "NFS032",
                entry.nconnect_above_best,
                f"nconnect={nconnect} on {entry.title}: the vendor documents "
                f"nconnect={entry.nconnect_best} as the best value",
                f"nconnect={entry.nconnect_best}",
                entry.source("nconnect_best"),
            )
        ]
    if entry.nconnect_by_tier and entry.tier_parameter:
        tier = (facts.context.class_parameter(entry.tier_parameter) or "").lower()
        wanted = entry.nconnect_by_tier.get(tier)
        if wanted and nconnect not in wanted:
            values = " or ".join(str(value) for value in wanted)
            return [
                _finding(
                    "NFS032",
                    Severity.INFO,
                    f"nconnect={nconnect} on {entry.title} tier {tier}: the vendor recommends "
                    f"nconnect={values} for this tier",
                    f"nconnect={values} (by capacity where two values are given)",
                    entry.source("nconnect_by_tier"),
                )
            ]
    return []


def rule_nfs033_nconnect_krb5(facts: MountFacts) -> list[Finding]:
    """NFS033: nconnect with Kerberos shares one GSS context across connections."""
    if facts.nconnect <= 1 or not facts.sec.startswith("krb5"):
        return []
    return [
        _finding(
            "NFS033",
            Severity.WARN,
            f"nconnect={facts.nconnect} with sec={facts.sec}: the shared GSS context "
            "forces renegotiation and resends (all security flavours of a server share its "
            "nconnect)",
            "drop nconnect on every mount of this server",
        )
    ]


def rule_nfs034_nconnect_v40(facts: MountFacts) -> list[Finding]:
    """NFS034: nconnect is not recommended on NFSv4.0."""
    if facts.nconnect <= 1 or facts.version != "4.0":
        return []
    return [
        _finding(
            "NFS034",
            Severity.WARN,
            f"nconnect={facts.nconnect} on an NFSv4.0 mount",
            "nfsvers=4.1",
        )
    ]


def rule_nfs035_nconnect_old_kernel(facts: MountFacts) -> list[Finding]:
    """NFS035: nconnect needs kernel 5.3 or later (requested list)."""
    kernel = facts.node.kernel
    if kernel is None or kernel >= (5, 3) or "nconnect" not in (facts.requested or {}):
        return []
    return [
        _finding(
            "NFS035",
            Severity.INFO,
            f"nconnect requested on kernel {facts.node.kernel_release} (< 5.3)",
            "upgrade the kernel or drop nconnect",
        )
    ]


def rule_nfs036_max_connect(facts: MountFacts) -> list[Finding]:
    """NFS036: ONTAP NFSv4.1+ session trunking works best with max_connect=16.

    Not on kernels older than :data:`MAX_CONNECT_MIN_KERNEL` (the advice would not apply there);
    an unknown kernel gets the advice with the kernel requirement in the fix.
    """
    wanted = facts.vendor.max_connect
    if wanted is None or facts.version not in ("4.1", "4.2"):
        return []
    kernel = facts.node.kernel
    if kernel is not None and kernel < MAX_CONNECT_MIN_KERNEL:
        return []
    if _int(facts.effective.get("max_connect")) == wanted:
        return []
    need = ".".join(str(part) for part in MAX_CONNECT_MIN_KERNEL)
    return [
        _finding(
            "NFS036",
            Severity.INFO,
            f"{facts.vendor.title} NFSv4.1+ mount without max_connect={wanted} for session "
            "trunking",
            f"max_connect={wanted}" + ("" if kernel is not None else f" (Linux {need} or later)"),
            facts.vendor.source("max_connect"),
        )
    ]


def rule_nfs040_noresvport(facts: MountFacts) -> list[Finding]:
    """NFS040: the vendor wants noresvport for reconnection (EFS; Azure Files before 5.18)."""
    entry = facts.vendor
    if not entry.noresvport or "noresvport" in facts.effective:
        return []
    limit, kernel = entry.noresvport_before_kernel, facts.node.kernel
    if limit is not None and kernel is not None and kernel >= limit:
        return []
    keys = entry.source("noresvport") + " " + entry.source("noresvport_before_kernel")
    return [
        _finding(
            "NFS040",
            Severity.WARN,
            f"{facts.profile} mount without noresvport: reconnects may not recover",
            "add noresvport",
            keys,
        )
    ]


def rule_nfs041_noresvport_generic(facts: MountFacts) -> list[Finding]:
    """NFS041: noresvport on a generic server needs an ``insecure`` export."""
    if not facts.vendor.noresvport_needs_insecure_export or "noresvport" not in facts.effective:
        return []
    return [
        _finding(
            "NFS041",
            Severity.INFO,
            "noresvport: the server must accept non-privileged ports (export 'insecure');"
            " with sec=sys any local user could pose as another",
            "confirm the export policy",
        )
    ]


def rule_nfs050_noac(facts: MountFacts) -> list[Finding]:
    """NFS050: noac / actimeo=0 disable the attribute cache."""
    options = facts.effective
    all_zero = all(_text(options.get(name)) == "0" for name in _ATTRIBUTE_CACHE_DEFAULTS)
    if not ("noac" in options or _text(options.get("actimeo")) == "0" or all_zero):
        return []
    return [
        _finding(
            "NFS050",
            Severity.WARN,
            "attribute caching disabled (noac/actimeo=0): a significant performance "
            "penalty (noac also makes writes synchronous)",
            "remove noac; use locking or O_DIRECT in the app for coherence",
        )
    ]


def rule_nfs051_nocto_shared(facts: MountFacts) -> list[Finding]:
    """NFS051: nocto on data other nodes write gives stale reads."""
    if "nocto" not in facts.effective:
        return []
    severity = Severity.WARN if facts.shared_writable else Severity.INFO
    return [
        _finding(
            "NFS051",
            severity,
            "nocto: close-to-open consistency off; other clients' changes may stay "
            "invisible" + (" on a PV mounted rw by several nodes" if facts.shared_writable else ""),
            "remove nocto for shared writable data",
        )
    ]


def rule_nfs052_long_actimeo_shared(facts: MountFacts) -> list[Finding]:
    """NFS052: attribute cache timers above 60 s on shared writable data."""
    long_timers = [
        f"{name}={facts.effective[name]}"
        for name in ("actimeo", "acregmax", "acdirmax")
        if (_int(facts.effective.get(name)) or 0) > 60
    ]
    if not long_timers:
        return []
    severity = Severity.WARN if facts.shared_writable else Severity.INFO
    return [
        _finding(
            "NFS052",
            severity,
            f"{', '.join(long_timers)}: other clients' changes stay invisible that long",
            "use defaults (3/60/30/60) or <= 60 for shared read-write data",
        )
    ]


def rule_nfs053_vendor_actimeo(facts: MountFacts) -> list[Finding]:
    """NFS053: an attribute cache timeout set below the vendor's minimum (Azure Files: 30 s).

    Only timers set away from the kernel defaults are judged: the defaults are on every mount
    that asked for nothing, and a finding on each of them would not tell one mount from another.
    """
    minimum = facts.vendor.min_actimeo
    if minimum is None:
        return []
    explicit = {
        name: value
        for name, default in _ATTRIBUTE_CACHE_DEFAULTS.items()
        if (value := _int(facts.effective.get(name))) is not None and value != default
    }
    low = {name: value for name, value in explicit.items() if value < minimum}
    if not low:
        return []
    shown = ",".join(f"{name}={value}" for name, value in low.items())
    return [
        _finding(
            "NFS053",
            Severity.INFO,
            f"attribute cache timeout set below {minimum}s on {facts.vendor.title} ({shown}): "
            "the caches expire too quickly",
            f"actimeo={minimum} (between {minimum} and 60)",
            facts.vendor.source("min_actimeo"),
        )
    ]


def rule_nfs054_lookupcache(facts: MountFacts) -> list[Finding]:
    """NFS054: lookupcache=none/pos revalidates lookups (legitimate, reported)."""
    mode = _text(facts.effective.get("lookupcache"))
    if mode not in ("none", "pos", "positive"):
        return []
    return [
        _finding(
            "NFS054",
            Severity.INFO,
            f"lookupcache={mode}: lookups are revalidated (a cost, legitimate for "
            "shared directories)",
            "(informational)",
        )
    ]


def rule_nfs055_nosharecache(facts: MountFacts) -> list[Finding]:
    """NFS055: nosharecache keeps several cached copies of one file."""
    if "nosharecache" not in facts.effective:
        return []
    return [
        _finding(
            "NFS055",
            Severity.WARN,
            "nosharecache: several cached copies of one file can get out of sync",
            "remove nosharecache",
        )
    ]


def rule_nfs060_v3_local_locks(facts: MountFacts) -> list[Finding]:
    """NFS060: NFSv3 with nolock/local_lock only excludes processes on the same node."""
    if facts.version != "3":
        return []
    local_lock = _text(facts.effective.get("local_lock"))
    if "nolock" not in facts.effective and local_lock not in ("all", "flock", "posix"):
        return []
    severity = Severity.ERROR if facts.shared_writable else Severity.WARN
    what = "nolock" if "nolock" in facts.effective else f"local_lock={local_lock}"
    return [
        _finding(
            "NFS060",
            severity,
            f"NFSv3 with {what}: locks exclude only processes on this node",
            "remove nolock/local_lock and make NLM/NSM work, or move to NFSv4.1",
        )
    ]


def rule_nfs070_sync(facts: MountFacts) -> list[Finding]:
    """NFS070: the sync mount option flushes every write."""
    if "sync" not in facts.effective:
        return []
    return [
        _finding(
            "NFS070",
            Severity.INFO,
            "sync: every write waits for the server (a significant performance cost)",
            "remove sync unless the app needs it; apps can use O_SYNC/fsync",
        )
    ]


def rule_nfs080_udp(facts: MountFacts) -> list[Finding]:
    """NFS080: NFS over UDP can silently corrupt data on fast links."""
    if facts.proto not in ("udp", "udp6"):
        return []
    return [
        _finding(
            "NFS080",
            Severity.ERROR,
            f"proto={facts.proto}: NFS over UDP can cause silent data corruption on Gigabit+ links",
            "proto=tcp",
        )
    ]


def rule_nfs081_v3_tcp(facts: MountFacts) -> list[Finding]:
    """NFS081: NFSv3 mounts without tcp probe UDP first where mountd has none (Filestore)."""
    if not facts.vendor.v3_needs_tcp or facts.version != "3":
        return []
    if facts.requested is not None:
        has_tcp = (
            _netid(facts.requested.get("proto")) == "tcp"
            or _netid(facts.requested.get("mountproto")) == "tcp"
        )
    else:
        has_tcp = _netid(facts.effective.get("mountproto")) == "tcp"
    if has_tcp:
        return []
    return [
        _finding(
            "NFS081",
            Severity.INFO,
            f"NFSv3 {facts.vendor.title} mount without tcp: mountd discovery tries UDP first "
            "(+3 s)",
            "add tcp",
            facts.vendor.source("v3_needs_tcp") + " S1",
        )
    ]


def rule_nfs090_intr(facts: MountFacts) -> list[Finding]:
    """NFS090: intr/nointr are ignored since 2.6.25 (requested list)."""
    found = sorted({"intr", "nointr"} & set(facts.requested or {}))
    if not found:
        return []
    return [
        _finding(
            "NFS090",
            Severity.INFO,
            f"{','.join(found)} requested: ignored by the kernel",
            "remove it",
        )
    ]


def rule_nfs091_atime(facts: MountFacts) -> list[Finding]:
    """NFS091: atime options have no effect on NFS (requested list)."""
    found = [name for name in (facts.requested or {}) if name in _ATIME_OPTIONS]
    if not found:
        return []
    return [
        _finding(
            "NFS091",
            Severity.INFO,
            f"{','.join(found)} requested: no effect on NFS mounts",
            "(no-op)",
        )
    ]


def rule_nfs092_bg(facts: MountFacts) -> list[Finding]:
    """NFS092: bg makes mount return success while nothing is mounted (requested list)."""
    if "bg" not in (facts.requested or {}):
        return []
    return [
        _finding(
            "NFS092",
            Severity.ERROR,
            "bg requested: on failure mount(8) returns 0 and retries in the background, "
            "so the pod may write to the node's local directory",
            "remove bg (and retry=)",
        )
    ]


def rule_nfs093_fstab_only(facts: MountFacts) -> list[Finding]:
    """NFS093: fstab/boot options are meaningless for kubelet mounts (requested list)."""
    found = [
        name
        for name in (facts.requested or {})
        if name in ("_netdev", "nofail") or name.startswith("x-systemd.")
    ]
    if not found:
        return []
    return [
        _finding(
            "NFS093",
            Severity.INFO,
            f"{','.join(found)} requested: fstab/boot options, meaningless for kubelet "
            "and CSI mounts",
            "remove them (harmless)",
        )
    ]


def rule_nfs100_auth_sys(facts: MountFacts) -> list[Finding]:
    """NFS100: AUTH_SYS trusts client UIDs and, without a tunnel, sends data in the clear.

    Quiet where the service accepts only AUTH_SYS (Azure Files), where RPC-with-TLS is on
    (NFS101), and where the vendor's TLS tunnel carries the mount (efs-utils, see
    :attr:`MountFacts.local_tls_tunnel`).
    """
    entry = facts.vendor
    if facts.sec != "sys" or entry.requires_sec_sys:
        return []
    if _text(facts.effective.get("xprtsec")) in ("tls", "mtls") or facts.local_tls_tunnel:
        return []
    return [
        _finding(
            "NFS100",
            Severity.INFO,
            "sec=sys: the server trusts client-asserted UIDs and data travels in clear",
            entry.in_transit_fix,
        )
    ]


def rule_nfs101_xprtsec(facts: MountFacts) -> list[Finding]:
    """NFS101: RPC-with-TLS protection in use (a positive note)."""
    mode = _text(facts.effective.get("xprtsec"))
    if mode not in ("tls", "mtls"):
        return []
    return [
        _finding(
            "NFS101",
            Severity.INFO,
            f"xprtsec={mode}: RPC traffic is TLS-protected",
            "(informational)",
        )
    ]


def rule_nfs110_read_ahead(facts: MountFacts) -> list[Finding]:
    """NFS110: 128 KiB NFS read-ahead (kernel >= 5.4 default) where the vendor wants more."""
    wanted = facts.vendor.read_ahead_kb
    if wanted is None:
        return []
    read_ahead = facts.node.read_ahead_kb.get(facts.mount.major_minor or "")
    if read_ahead != 128:
        return []
    return [
        _finding(
            "NFS110",
            Severity.INFO,
            f"read_ahead_kb=128 for {facts.mount.major_minor}: sequential reads are throttled",
            f"set read_ahead_kb={wanted} with a udev rule",
            facts.vendor.source("read_ahead_kb"),
        )
    ]


def rule_nfs111_slot_tables(facts: MountFacts) -> list[Finding]:
    """NFS111: RPC slot tables above what the vendor's server accepts (ANF: 128 / 180)."""
    entry, node = facts.vendor, facts.node
    if (
        facts.version == "3"
        and entry.max_tcp_slots is not None
        and (node.tcp_max_slot_table_entries or 0) > entry.max_tcp_slots
    ):
        value = f"tcp_max_slot_table_entries={node.tcp_max_slot_table_entries}"
    elif (
        facts.version in ("4.1", "4.2")
        and entry.max_session_slots is not None
        and (node.max_session_slots or 0) > entry.max_session_slots
    ):
        value = f"max_session_slots={node.max_session_slots}"
    else:
        return []
    return [
        _finding(
            "NFS111",
            Severity.INFO,
            f"{value}: more slots than {entry.title} accepts",
            f"keep <= {entry.max_tcp_slots} per connection (NFSv3) / the default 64 session "
            "slots (v4.1)",
            entry.source("max_tcp_slots"),
        )
    ]


def rule_nfsk8s001_requested_vs_effective(facts: MountFacts) -> list[Finding]:
    """NFSK8S001: a requested option is missing from, or differs in, the effective options."""
    if facts.requested is None:
        return []
    differences = requested_vs_effective(
        facts.requested, facts.effective, helper_options=facts.vendor.helper_options
    )
    if not differences:
        return []
    return [
        _finding(
            "NFSK8S001",
            Severity.WARN,
            "requested options not in effect: " + "; ".join(differences),
            "compare requested and effective side by side; fix the root cause "
            "(nconnect inherited per server, negotiation, sharecache) and remount",
        )
    ]


def rule_nfsk8s002_storageclass_drift(facts: MountFacts) -> list[Finding]:
    """NFSK8S002: the class's mountOptions differ from the PV's (set at provisioning)."""
    class_options = facts.context.storage_class_options
    pv_options = facts.context.requested_options
    if class_options is None or pv_options is None:
        return []
    if normalize_options(options_from_list(class_options)) == normalize_options(
        options_from_list(pv_options)
    ):
        return []
    return [
        _finding(
            "NFSK8S002",
            Severity.INFO,
            f"StorageClass mountOptions {list(class_options)} differ from the PV's "
            f"{list(pv_options)}: class edits do not reach existing PVs",
            "patch the PV (and remount) or re-provision",
        )
    ]


def rule_nfsk8s003_no_mount_options(facts: MountFacts) -> list[Finding]:
    """NFSK8S003: the PV has no mountOptions, so kernel defaults apply."""
    if facts.context.requested_options != ():
        return []
    return [
        _finding(
            "NFSK8S003",
            Severity.INFO,
            "the PV has no mountOptions: kernel/nfs-utils defaults apply (version "
            "negotiated, rsize/wsize negotiated)",
            f"set the {facts.profile} options explicitly (rules.md A.2)",
        )
    ]


def rule_nfsk8s004_failed_mount_options(facts: MountFacts) -> list[Finding]:
    """NFSK8S004: FailedMount events complain about mount options."""
    pattern = re.compile(r"(incorrect|invalid|bad|unknown) (mount )?option", re.IGNORECASE)
    events = [message for message in facts.context.mount_events if pattern.search(message)]
    if not events:
        return []
    return [
        _finding(
            "NFSK8S004",
            Severity.INFO,
            f"FailedMount with an option error: {events[0][:200]}",
            "fix the option string (Kubernetes does not validate mount options)",
        )
    ]


def rule_nfsk8s005_legacy_annotation(facts: MountFacts) -> list[Finding]:
    """NFSK8S005: the PV uses the legacy mount-options annotation."""
    if not facts.context.legacy_annotation:
        return []
    return [
        _finding(
            "NFSK8S005",
            Severity.INFO,
            "the PV uses volume.beta.kubernetes.io/mount-options (legacy)",
            "move the options to spec.mountOptions",
        )
    ]


MOUNT_RULES: tuple[Callable[[MountFacts], list[Finding]], ...] = (
    rule_nfs001_nfsv2,
    rule_nfs002_nfsv40,
    rule_nfs003_nfsv3,
    rule_nfs004_version_not_pinned,
    rule_nfs010_soft_rw,
    rule_nfs011_soft_ro,
    rule_nfs012_soft_timeo,
    rule_nfs013_tcp_short_timeo,
    rule_nfs014_vendor_timeo_retrans,
    rule_nfs020_small_rwsize,
    rule_nfs021_large_rwsize,
    rule_nfs022_rwsize_negotiated,
    rule_nfs023_small_rwsize_tcp,
    rule_nfs030_nconnect_limit,
    rule_nfs032_vendor_nconnect,
    rule_nfs033_nconnect_krb5,
    rule_nfs034_nconnect_v40,
    rule_nfs035_nconnect_old_kernel,
    rule_nfs036_max_connect,
    rule_nfs040_noresvport,
    rule_nfs041_noresvport_generic,
    rule_nfs050_noac,
    rule_nfs051_nocto_shared,
    rule_nfs052_long_actimeo_shared,
    rule_nfs053_vendor_actimeo,
    rule_nfs054_lookupcache,
    rule_nfs055_nosharecache,
    rule_nfs060_v3_local_locks,
    rule_nfs070_sync,
    rule_nfs080_udp,
    rule_nfs081_v3_tcp,
    rule_nfs090_intr,
    rule_nfs091_atime,
    rule_nfs092_bg,
    rule_nfs093_fstab_only,
    rule_nfs100_auth_sys,
    rule_nfs101_xprtsec,
    rule_nfs110_read_ahead,
    rule_nfs111_slot_tables,
    rule_nfsk8s001_requested_vs_effective,
    rule_nfsk8s002_storageclass_drift,
    rule_nfsk8s003_no_mount_options,
    rule_nfsk8s004_failed_mount_options,
    rule_nfsk8s005_legacy_annotation,
)

#: Every rule id this module can emit (NFS031 is the cross-mount rule).
RULE_IDS: tuple[str, ...] = tuple(
    sorted(
        {fn.__name__.split("_")[1].upper() for fn in MOUNT_RULES} | {"NFS031"},
        key=lambda rid: (rid.startswith("NFSK8S"), rid),
    )
)


def requested_vs_effective(
    requested: Mapping[str, OptionValue],
    effective: Mapping[str, OptionValue],
    *,
    helper_options: Iterable[str] = (),
) -> list[str]:
    """Requested options that are missing from, or differ in, the effective options.

    Both sides are normalized. Not differences: options only mount helpers read (``sloppy``,
    ``_netdev``, ``noauto``... and the vendor helper's ``helper_options``, e.g. efs-utils'
    ``tls``), atime options (NFS091), defaults the kernel does not print (``lookupcache=all``,
    ``port=2049``, ``lock``...), the kernel's spellings (``positive`` shown as ``pos``) and the
    address family of the transport (``tcp`` shown as ``tcp6`` on IPv6).

    Returns:
        Human-readable differences such as ``"nconnect: requested 8, effective absent"``.
    """
    wanted = normalize_options(requested)
    actual = normalize_options(effective)
    skip = USERSPACE_ONLY | _ATIME_OPTIONS | frozenset(helper_options)
    differences: list[str] = []
    for key, value in wanted.items():
        if key in skip or key.startswith("x-"):
            continue
        if key in ("hard",) and "soft" not in actual and "softerr" not in actual:
            continue  # hard is the default and older kernels do not print it
        if _DEFAULTS_NOT_PRINTED.get(key) == value and key not in actual:
            continue
        if key == "vers" and _version_matches(str(value), actual.get("vers")):
            continue
        if key == "actimeo":
            continue  # expanded into the four ac* values, which the kernel prints instead
        have = actual.get(key)
        if have is None and key in _ATTRIBUTE_CACHE_DEFAULTS:
            have = str(_ATTRIBUTE_CACHE_DEFAULTS[key])  # printed only when not the default
        if have is None:
            differences.append(f"{key}: requested {_show(value)}, effective absent")
            continue
        if key in ("proto", "mountproto") and _netid(value) == _netid(have):
            continue  # the kernel prints tcp6/udp6/rdma6 for an IPv6 server
        both_numbers = _int(have) is not None and _int(value) is not None
        differ = _int(have) != _int(value) if both_numbers else _show(have) != _show(value)
        if differ:
            differences.append(f"{key}: requested {_show(value)}, effective {_show(have)}")
    return differences


# ---------------------------------------------------------------------------------------------
# The audit
# ---------------------------------------------------------------------------------------------


def build_facts(
    mount: MountEntry,
    *,
    stats: NfsMountStats | None = None,
    context: VolumeContext | None = None,
    profile: str | None = None,
    node: NodeFacts | None = None,
) -> MountFacts:
    """Gather and normalize what the rules need for one mount.

    Effective options are the mount's options overlaid with the mountstats ``opts:`` line (which
    also prints defaulted values); requested options come from ``context.requested_options``; the
    profile from the override, the context's driver and class, or the server (:mod:`.vendors`).
    """
    context = context or VolumeContext()
    effective: dict[str, OptionValue] = dict(mount.options)
    if stats is not None:
        effective.update(stats.options)
    effective = normalize_options(effective)
    requested = (
        None
        if context.requested_options is None
        else normalize_options(options_from_list(context.requested_options))
    )
    chosen, reason = detect_profile(
        server=_text(effective.get("addr")) if mount.server is None else mount.server,
        csi_driver=context.csi_driver,
        backend_type=context.backend_type,
        options=effective,
        override=profile,
    )
    return MountFacts(
        mount=mount,
        effective=effective,
        requested=requested,
        profile=chosen,
        profile_reason=reason,
        xprt_count=stats.xprt_count if stats is not None else None,
        context=context,
        node=node or NodeFacts(),
    )


def evaluate_mount(facts: MountFacts) -> list[Finding]:
    """Run every per-mount rule on one mount, in rule-id order."""
    findings: list[Finding] = []
    for rule in MOUNT_RULES:
        findings.extend(rule(facts))
    return findings


def client_key(facts: MountFacts) -> tuple[str, str, str, str, str]:
    """The kernel's NFS client identity (K1): mounts with the same key share one ``nfs_client``
    and therefore one nconnect.

    ``(address, port, transport, version, xprtsec)``: the ``addr=`` address and its port (2049
    when not printed), the transport without its address family (``tcp6`` is ``tcp`` to an IPv6
    address), the version with its minor version, and the RPC-with-TLS policy. The security
    flavour (``sec=``) is not part of it: a ``sec=sys`` and a ``sec=krb5p`` mount of one server
    share one client.
    """
    effective = facts.effective
    return (
        facts.address,
        _text(effective.get("port")) or "2049",
        _netid(effective.get("proto")) or "tcp",
        facts.version or "",
        _text(effective.get("xprtsec")) or "none",
    )


def evaluate_nconnect_consistency(all_facts: Sequence[MountFacts]) -> dict[int, list[Finding]]:
    """NFS031: nconnect must be the same on every mount that shares one NFS client.

    Mounts are grouped by :func:`client_key`. Flags a group whose PVs request different nconnect
    values, a PV whose requested nconnect differs from the group's effective one, or mounts of
    one client with different effective nconnect.

    Returns:
        Findings keyed by the index of the mount in ``all_facts``.
    """
    groups: dict[tuple[str, str, str, str, str], list[int]] = {}
    for index, facts in enumerate(all_facts):
        groups.setdefault(client_key(facts), []).append(index)
    results: dict[int, list[Finding]] = {}
    for key, indexes in groups.items():
        effective_values = {all_facts[i].nconnect for i in indexes}
        requested_values = {
            _int(requested.get("nconnect")) or 1
            for requested in (all_facts[i].requested for i in indexes)
            if requested is not None
        }
        flavours = sorted({all_facts[i].sec for i in indexes})
        for i in indexes:
            facts = all_facts[i]
            reasons: list[str] = []
            wanted = None if facts.requested is None else _int(facts.requested.get("nconnect"))
            if wanted is not None and wanted != facts.nconnect:
                reasons.append(
                    f"requested nconnect={wanted} but the endpoint runs {facts.nconnect}"
                )
            if len(requested_values) > 1:
                reasons.append(f"PVs of this endpoint request nconnect {sorted(requested_values)}")
            if len(effective_values) > 1:
                reasons.append(f"mounts of this endpoint run nconnect {sorted(effective_values)}")
            if reasons:
                shared = f", sec={'/'.join(flavours)} share it" if len(flavours) > 1 else ""
                tls = "" if key[4] == "none" else f", xprtsec={key[4]}"
                results.setdefault(i, []).append(
                    _finding(
                        "NFS031",
                        Severity.WARN,
                        f"inconsistent nconnect for {key[0]} ({key[2]}, vers {key[3]}{tls}"
                        f"{shared}): "
                        + "; ".join(reasons)
                        + " (the first mount of an endpoint sets it for all)",
                        "put the same nconnect on every PV/StorageClass for this server, "
                        "then remount (drain the node's pods using it)",
                    )
                )
    return results


def audit_mounts(
    mounts: Iterable[MountEntry],
    *,
    profile: str | None = None,
    requested: Mapping[str, Sequence[str]] | None = None,
    contexts: Mapping[str, VolumeContext] | None = None,
    stats: Sequence[NfsMountStats] | None = None,
    node: NodeFacts | None = None,
    kernel_release: str | None = None,
) -> list[MountAudit]:
    """Audit every NFS mount against the rules of rules.md section A.

    Args:
        mounts: parsed mounts (any format); non-NFS mounts are skipped.
        profile: vendor profile override for every mount (see :data:`PROFILES`); None detects
            per mount.
        requested: requested options by mount point (shorthand for contexts with only
            ``requested_options``).
        contexts: Kubernetes facts by mount point (see :class:`VolumeContext`); wins over
            ``requested`` for the same mount point.
        stats: parsed mountstats; matched by mount point and device, in order, so two mounts on
            one mount point each get their own block.
        node: node tunables; ``kernel_release`` is a shorthand for ``NodeFacts.kernel_release``.
        kernel_release: e.g. ``"5.15.0-91-generic"``.

    Returns:
        One :class:`MountAudit` per NFS mount, in input order.

    Raises:
        ValueError: ``profile`` is not a known profile.
    """
    if profile is not None:
        vendor(profile)  # unknown profiles are refused even when no mount is NFS
    node = node or NodeFacts(kernel_release=kernel_release)
    if kernel_release and node.kernel_release is None:
        node = NodeFacts(
            kernel_release,
            node.read_ahead_kb,
            node.tcp_max_slot_table_entries,
            node.max_session_slots,
        )
    nfs_mounts = [mount for mount in mounts if mount.is_nfs]
    stats_for = _match_stats(nfs_mounts, stats or ())
    all_facts = []
    for index, mount in enumerate(nfs_mounts):
        context = (contexts or {}).get(mount.mountpoint)
        if context is None and requested and mount.mountpoint in requested:
            context = VolumeContext(requested_options=tuple(requested[mount.mountpoint]))
        all_facts.append(
            build_facts(mount, stats=stats_for[index], context=context, profile=profile, node=node)
        )
    cross = evaluate_nconnect_consistency(all_facts)
    audits: list[MountAudit] = []
    for index, facts in enumerate(all_facts):
        findings = evaluate_mount(facts) + cross.get(index, [])
        findings.sort(key=lambda finding: (-finding.severity.rank, finding.id))
        audits.append(
            MountAudit(
                mount=facts.mount,
                profile=facts.profile,
                profile_reason=facts.profile_reason,
                effective_options=facts.effective,
                requested_options=facts.context.requested_options,
                xprt_count=facts.xprt_count,
                pv_name=facts.context.pv_name,
                findings=tuple(findings),
            )
        )
    return audits


def _match_stats(
    mounts: Sequence[MountEntry], stats: Sequence[NfsMountStats]
) -> list[NfsMountStats | None]:
    # Same mount point twice (stacked) must not share one block: consume blocks in order.
    pool: dict[tuple[str, str], list[NfsMountStats]] = {}
    for block in stats:
        pool.setdefault((block.mountpoint, block.device), []).append(block)
    matched: list[NfsMountStats | None] = []
    for mount in mounts:
        candidates = pool.get((mount.mountpoint, mount.source))
        matched.append(candidates.pop(0) if candidates else None)
    return matched


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """``(major, minor)`` from a kernel release string such as ``"5.3.0-18-generic"``."""
    if not release:
        return None
    match = re.match(r"^(\d+)\.(\d+)", release)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _version_matches(requested: str, effective: OptionValue | None) -> bool:
    if not isinstance(effective, str):
        return False
    if requested == effective:
        return True
    # "vers=4" asks for any 4.x; "4.0" is how the kernel prints plain v4.
    return requested == "4" and effective.startswith("4")


def _netid(value: OptionValue | None) -> str | None:
    """A transport without its address family: ``tcp6``→``tcp``, ``udp6``→``udp``."""
    if not isinstance(value, str):
        return None
    return value[:-1] if value.endswith("6") else value


def _soft(options: Mapping[str, OptionValue]) -> bool:
    return "soft" in options or "softerr" in options


def _sizes(options: Mapping[str, OptionValue], test: Callable[[int], bool]) -> str:
    hits = [
        f"{name}={options[name]}"
        for name in ("rsize", "wsize")
        if (size := _int(options.get(name))) is not None and test(size)
    ]
    return ",".join(hits)


def _int(value: OptionValue | None) -> int | None:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _text(value: OptionValue | None) -> str | None:
    return value if isinstance(value, str) else None


def _show(value: OptionValue) -> str:
    return "set" if value is True else str(value)
