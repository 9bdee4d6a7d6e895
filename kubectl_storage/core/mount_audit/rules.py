"""NFS mount-option rules (rules.md section A) evaluated on parsed mounts.

Every rule is a pure function of one :class:`MountFacts` returning :class:`Finding` objects; the
per-endpoint nconnect rule (NFS031) looks at all mounts at once. The entry point is
:func:`audit_mounts`::

    audits = audit_mounts(
        parse_mounts(mountinfo_text),
        stats=parse_mountstats(mountstats_text),      # effective defaults + xprt count
        contexts={mountpoint: VolumeContext(...)},   # requested options, PV facts
        profile=None,                                # or "efs", "azure-files", "anf", ...
        kernel_release="5.15.0-91-generic",
    )
    [audit.to_dict() for audit in audits]

Rules look at **effective** options (the kernel's) unless rules.md says they concern the
**requested** list (``PV.spec.mountOptions``): NFS004, NFS022, NFS023, NFS030, NFS035, NFS090-093
and NFSK8S*. Vendor profiles (rules.md A.2) are detected from the CSI driver, then the server
name, with an explicit override.

Pure: dataclasses in, dataclasses out, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.mount_audit.mountstats import NfsMountStats
from kubectl_storage.core.nodes.kubelet_paths import VolumeContext
from kubectl_storage.core.nodes.mounts import MountEntry, OptionValue, options_from_list
from kubectl_storage.core.report.findings import Finding, Severity

PROFILE_EFS = "efs"
PROFILE_AZURE_FILES = "azure-files"
PROFILE_ANF = "anf"
PROFILE_FILESTORE = "filestore"
PROFILE_ONTAP = "ontap"
PROFILE_GENERIC = "generic"
PROFILES = (
    PROFILE_EFS,
    PROFILE_AZURE_FILES,
    PROFILE_ANF,
    PROFILE_FILESTORE,
    PROFILE_ONTAP,
    PROFILE_GENERIC,
)

# Short references for rules.md section 0 keys; a finding's ``source`` joins the ones it cites.
SOURCE_REFS: dict[str, str] = {
    "S1": "nfs(5) https://man7.org/linux/man-pages/man5/nfs.5.html",
    "S2": "Linux fs/nfs/super.c nfs_show_options()",
    "S3": "Linux net/sunrpc/stats.c rpc_clnt_show_stats()",
    "S6": "Linux fs/nfs/Kconfig NFS_DISABLE_UDP_SUPPORT",
    "S7": "RHEL 9 Managing file systems, ch. 3 Mounting NFS shares",
    "S8": "mount(8) https://man7.org/linux/man-pages/man8/mount.8.html",
    "S10": "AWS EFS Recommended NFS mount options "
    "https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-nfs-mount-settings.html",
    "S11": "AWS EFS mount helper settings "
    "https://docs.aws.amazon.com/efs/latest/ug/mount-helper-setting.html",
    "S12": "AWS EFS Using NFS to mount https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-old.html",
    "S13": "aws/efs-utils src/efs_utils_common/mount_options.py",
    "S15": "Azure NetApp Files Linux NFS mount options best practices "
    "(azure-netapp-files/performance-linux-mount-options.md)",
    "S16": "ANF nconnect + krb5 performance warning (includes/kerberos-nconnect-performance.md)",
    "S17": "ANF Linux concurrency best practices (performance-linux-concurrency-session-slots.md)",
    "S18": "ANF Create an NFS volume / mount volumes (ports 111/635/2049/4045/4046)",
    "S19": "Azure Policy: ANF volumes should not use NFSv3 protocol type",
    "S20": "ANF Understand file locking https://learn.microsoft.com/azure/azure-netapp-files/"
    "understand-file-locks",
    "S22": "Azure Files Mount NFS file share on Linux (storage-files-how-to-mount-nfs-shares.md)",
    "S23": "Azure Files Improve NFS performance (nfs-performance.md)",
    "S24": "Azure Files NFS large directories (nfs-large-directories.md)",
    "S25": "AKS mountOptions settings in Azure Files "
    "https://learn.microsoft.com/troubleshoot/azure/azure-kubernetes/storage/"
    "mountoptions-settings-azure-files",
    "S26": "Google Filestore supported protocols "
    "https://cloud.google.com/filestore/docs/about-supported-protocols",
    "S27": "Google Filestore test performance https://cloud.google.com/filestore/docs/testing-performance",
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
}

_CSI_DRIVER_PROFILES = {
    "efs.csi.aws.com": PROFILE_EFS,
    "file.csi.azure.com": PROFILE_AZURE_FILES,
    "filestore.csi.storage.gke.io": PROFILE_FILESTORE,
    "csi.trident.netapp.io": PROFILE_ONTAP,
}
_EFS_HOST = re.compile(r"(^|\.)fs-[0-9a-f]+\.efs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$")
_AZURE_FILES_HOST = re.compile(
    r"\.file\.core\.(windows\.net|chinacloudapi\.cn|usgovcloudapi\.net)$"
)

# Options that never reach the kernel or are not printed when at their default (rules.md A.0).
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
        "defaults",
        "intr",
        "nointr",
    }
)
_ATIME_OPTIONS = frozenset({"noatime", "nodiratime", "relatime", "strictatime", "atime"})
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
    "port": "2049",
    "nconnect": "1",
    "rw": True,
}
_ATTRIBUTE_CACHE_DEFAULTS = {"acregmin": 3, "acregmax": 60, "acdirmin": 30, "acdirmax": 60}


@dataclass(frozen=True)
class NodeFacts:
    """Node-wide tunables some rules read (NFS035, NFS110, NFS111); all optional."""

    kernel_release: str | None = None
    read_ahead_kb: Mapping[str, int] = field(default_factory=dict)  # keyed by "maj:min"
    tcp_max_slot_table_entries: int | None = None
    max_session_slots: int | None = None


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
    ``proto=``, ``actimeo=N``→the four ``ac*`` values, ``noac``→``sync`` + ``actimeo=0`` kept as is.
    """
    result: dict[str, OptionValue] = {}
    for key, value in options.items():
        if key == "nfsvers":
            result["vers"] = value
        elif key in ("tcp", "udp", "rdma") and value is True:
            result["proto"] = key
        elif key == "minorversion":
            continue
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
    """Pick the vendor profile for a mount (rules.md A.2 detection order).

    Args:
        server: the mount's server name or address.
        csi_driver: the PV's CSI driver or the StorageClass provisioner.
        backend_type: Trident backend type, when the driver is Trident.
        options: effective options (``port=`` tells EFS TLS mounts on 127.0.0.1).
        override: an explicit profile that wins over detection.

    Returns:
        ``(profile, reason)`` where reason is ``override``, ``csi-driver``, ``server-name`` or
        ``default``.

    Raises:
        ValueError: the override is not a known profile.
    """
    if override:
        if override not in PROFILES:
            raise ValueError(f"unknown NFS profile {override!r}; choose from {', '.join(PROFILES)}")
        return override, "override"
    if csi_driver in _CSI_DRIVER_PROFILES:
        profile = _CSI_DRIVER_PROFILES[csi_driver]
        if profile == PROFILE_ONTAP and backend_type == "azure-netapp-files":
            profile = PROFILE_ANF
        return profile, "csi-driver"
    host = (server or "").lower()
    if _EFS_HOST.search(host):
        return PROFILE_EFS, "server-name"
    port = _text((options or {}).get("port"))
    if host == "127.0.0.1" and port not in (None, "0", "2049"):
        return PROFILE_EFS, "server-name"  # efs-utils TLS tunnel: 127.0.0.1 plus a local port
    if _AZURE_FILES_HOST.search(host):
        return PROFILE_AZURE_FILES, "server-name"
    return PROFILE_GENERIC, "default"


# ---------------------------------------------------------------------------------------------
# Rules: one function per rule id, each pure over MountFacts
# ---------------------------------------------------------------------------------------------


def _finding(rule_id: str, severity: Severity, message: str, fix: str, keys: str) -> Finding:
    source = "; ".join(f"{key} {SOURCE_REFS[key]}" for key in keys.split() if key in SOURCE_REFS)
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
            "S7 S1",
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
            "S1 S29 S12 S18 S22",
        )
    ]


def rule_nfs003_nfsv3(facts: MountFacts) -> list[Finding]:
    """NFS003: NFSv3 locking is side-band (NLM/NSM); warn on ANF where policy audits v3."""
    if facts.version != "3":
        return []
    severity = Severity.WARN if facts.profile == PROFILE_ANF else Severity.INFO
    return [
        _finding(
            "NFS003",
            severity,
            "NFSv3 mount: locks use the NLM/NSM side-band protocols (stale locks after "
            "network failures) without RPCSEC_GSS protection",
            "move to NFSv4.1 where the service supports it",
            "S1 S20 S19 S26",
        )
    ]


def rule_nfs004_version_not_pinned(facts: MountFacts) -> list[Finding]:
    """NFS004: the requested options do not pin a version (requested list only)."""
    if facts.requested is None or "vers" in facts.requested:
        return []
    fix = "pin nfsvers= in PV/StorageClass mountOptions"
    if facts.profile == PROFILE_AZURE_FILES:
        fix += " (Azure Files: vers=4,minorversion=1)"
    return [
        _finding(
            "NFS004",
            Severity.INFO,
            f"no nfsvers/vers requested; the client negotiated {facts.version or 'a version'}"
            " and can fall back silently",
            fix,
            "S1 S7 S22",
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
            "S1 S30 S10 S11 S15",
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
            "S30 S1",
        )
    ]


def rule_nfs012_efs_soft_timeo(facts: MountFacts) -> list[Finding]:
    """NFS012: EFS soft mounts need timeo >= 150."""
    timeo = _int(facts.effective.get("timeo"))
    if facts.profile != PROFILE_EFS or not _soft(facts.effective) or timeo is None or timeo >= 150:
        return []
    return [
        _finding(
            "NFS012",
            Severity.WARN,
            f"EFS soft mount with timeo={timeo} (< 150)",
            "timeo=600 (at least 150)",
            "S10",
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
            "S1 S10",
        )
    ]


def rule_nfs014_efs_timeo_retrans(facts: MountFacts) -> list[Finding]:
    """NFS014: EFS expects timeo=600,retrans=2."""
    timeo, retrans = _text(facts.effective.get("timeo")), _text(facts.effective.get("retrans"))
    if facts.profile != PROFILE_EFS or (timeo in (None, "600") and retrans in (None, "2")):
        return []
    return [
        _finding(
            "NFS014",
            Severity.INFO,
            f"EFS mount with timeo={timeo},retrans={retrans} (EFS uses 600 and 2)",
            "timeo=600,retrans=2",
            "S10 S11 S13",
        )
    ]


def rule_nfs020_small_rwsize(facts: MountFacts) -> list[Finding]:
    """NFS020: EFS and Azure Files recommend rsize/wsize of 1 MiB."""
    if facts.profile not in (PROFILE_EFS, PROFILE_AZURE_FILES):
        return []
    small = _sizes(facts.effective, lambda size: size < 1048576)
    if not small:
        return []
    return [
        _finding(
            "NFS020",
            Severity.WARN,
            f"{small} below 1048576 on {facts.profile}",
            "rsize=1048576,wsize=1048576 (or leave unset)",
            "S10 S11 S22",
        )
    ]


def rule_nfs021_anf_large_rwsize(facts: MountFacts) -> list[Finding]:
    """NFS021: ANF shows higher latency above 256 KiB rsize/wsize."""
    if facts.profile != PROFILE_ANF:
        return []
    large = _sizes(facts.effective, lambda size: size > 262144)
    if not large:
        return []
    return [
        _finding(
            "NFS021",
            Severity.WARN,
            f"{large} above 262144 on Azure NetApp Files",
            "rsize=262144,wsize=262144",
            "S15",
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
            "S1 S2",
        )
    ]


def rule_nfs023_small_rwsize_tcp(facts: MountFacts) -> list[Finding]:
    """NFS023: explicit rsize/wsize under 64 KiB over TCP multiplies RPCs (not ANF)."""
    if facts.profile == PROFILE_ANF or not (facts.proto or "tcp").startswith("tcp"):
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
            "S1 S15",
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
            "S1 S29 S40",
        )
    ]


def rule_nfs032_vendor_nconnect(facts: MountFacts) -> list[Finding]:
    """NFS032: vendor-documented nconnect ranges."""
    nconnect = facts.nconnect
    if facts.profile == PROFILE_EFS and nconnect > 1:
        return [
            _finding(
                "NFS032",
                Severity.WARN,
                f"nconnect={nconnect} on EFS, which does not support nconnect",
                "remove nconnect",
                "S12",
            )
        ]
    if facts.profile == PROFILE_AZURE_FILES and nconnect > 4:
        return [
            _finding(
                "NFS032",
                Severity.WARN,
                f"nconnect={nconnect} on Azure Files: no gain beyond 4, may hurt",
                "nconnect=4",
                "S23 S25",
            )
        ]
    if facts.profile == PROFILE_ANF and nconnect > 8:
        return [
            _finding(
                "NFS032",
                Severity.INFO,
                f"nconnect={nconnect} on Azure NetApp Files: 8 is the most performant",
                "nconnect=8",
                "S15",
            )
        ]
    if facts.profile == PROFILE_FILESTORE and nconnect not in (2, 7):
        return [
            _finding(
                "NFS032",
                Severity.INFO,
                f"nconnect={nconnect} on Filestore: Google tests with 2 or 7 by tier",
                "nconnect=2 (zonal/regional < 10 TiB, enterprise) or 7 (larger, high-scale)",
                "S27",
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
            "forces renegotiation and resends",
            "drop nconnect on Kerberos mounts",
            "S16",
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
            "S29",
        )
    ]


def rule_nfs035_nconnect_old_kernel(facts: MountFacts) -> list[Finding]:
    """NFS035: nconnect needs kernel 5.3 or later (requested list)."""
    kernel = kernel_version(facts.node.kernel_release)
    if kernel is None or kernel >= (5, 3) or "nconnect" not in (facts.requested or {}):
        return []
    return [
        _finding(
            "NFS035",
            Severity.INFO,
            f"nconnect requested on kernel {facts.node.kernel_release} (< 5.3)",
            "upgrade the kernel or drop nconnect",
            "S23 S15",
        )
    ]


def rule_nfs036_ontap_max_connect(facts: MountFacts) -> list[Finding]:
    """NFS036: ONTAP NFSv4.1+ session trunking works best with max_connect=16."""
    if facts.profile != PROFILE_ONTAP or facts.version not in ("4.1", "4.2"):
        return []
    if _text(facts.effective.get("max_connect")) == "16":
        return []
    return [
        _finding(
            "NFS036",
            Severity.INFO,
            "ONTAP NFSv4.1+ mount without max_connect=16 for session trunking",
            "max_connect=16",
            "S32 S1",
        )
    ]


def rule_nfs040_noresvport(facts: MountFacts) -> list[Finding]:
    """NFS040: EFS and Azure Files want noresvport for reconnection."""
    if facts.profile not in (PROFILE_EFS, PROFILE_AZURE_FILES) or "noresvport" in facts.effective:
        return []
    return [
        _finding(
            "NFS040",
            Severity.WARN,
            f"{facts.profile} mount without noresvport: reconnects may not recover",
            "add noresvport",
            "S10 S11 S13 S22 S25",
        )
    ]


def rule_nfs041_noresvport_generic(facts: MountFacts) -> list[Finding]:
    """NFS041: noresvport on a generic server needs an ``insecure`` export."""
    if facts.profile != PROFILE_GENERIC or "noresvport" not in facts.effective:
        return []
    return [
        _finding(
            "NFS041",
            Severity.INFO,
            "noresvport: the server must accept non-privileged ports (export 'insecure');"
            " with sec=sys any local user could pose as another",
            "confirm the export policy",
            "S1 S10",
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
            "S1 S10",
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
            "S1 S15",
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
            "S1 S15",
        )
    ]


def rule_nfs053_azure_actimeo(facts: MountFacts) -> list[Finding]:
    """NFS053: Azure Files recommends actimeo 30-60."""
    if facts.profile != PROFILE_AZURE_FILES:
        return []
    actimeo = _int(facts.effective.get("actimeo"))
    if actimeo is None:
        actimeo = min(
            _int(facts.effective.get(name)) or default
            for name, default in _ATTRIBUTE_CACHE_DEFAULTS.items()
        )
    if actimeo >= 30:
        return []
    return [
        _finding(
            "NFS053",
            Severity.INFO,
            f"attribute cache timeout {actimeo}s on Azure Files (below 30s hurts)",
            "actimeo=30",
            "S22 S24 S25",
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
            "S1",
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
            "S1",
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
            "S1 S18 S20",
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
            "S1 S2",
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
            "S1 S6",
        )
    ]


def rule_nfs081_filestore_tcp(facts: MountFacts) -> list[Finding]:
    """NFS081: Filestore v3 mounts without tcp probe UDP first (about 3 s per mount)."""
    if facts.profile != PROFILE_FILESTORE or facts.version != "3":
        return []
    if facts.requested is not None:
        has_tcp = (
            facts.requested.get("proto") == "tcp" or facts.requested.get("mountproto") == "tcp"
        )
    else:
        has_tcp = _text(facts.effective.get("mountproto")) in ("tcp", "tcp6")
    if has_tcp:
        return []
    return [
        _finding(
            "NFS081",
            Severity.INFO,
            "NFSv3 Filestore mount without tcp: mountd discovery tries UDP first (+3 s)",
            "add tcp",
            "S28 S1",
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
            "S1",
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
            "S1",
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
            "S1",
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
            "S8 S10",
        )
    ]


def rule_nfs100_auth_sys(facts: MountFacts) -> list[Finding]:
    """NFS100: AUTH_SYS trusts client UIDs and sends data in the clear."""
    if facts.sec != "sys" or facts.profile == PROFILE_AZURE_FILES:  # Azure Files requires sys
        return []
    fix = {
        PROFILE_EFS: "use TLS through efs-utils (EFS has no Kerberos)",
        PROFILE_ANF: "NFSv4.1 with sec=krb5p",
        PROFILE_FILESTORE: "NFSv4.1 with sec=krb5p",
    }.get(facts.profile, "sec=krb5p, RPC-with-TLS (xprtsec=tls), or accept the risk")
    return [
        _finding(
            "NFS100",
            Severity.INFO,
            "sec=sys: the server trusts client-asserted UIDs and data travels in clear",
            fix,
            "S1 S19 S26 S10 S13 S22",
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
            "S1 S2",
        )
    ]


def rule_nfs110_read_ahead(facts: MountFacts) -> list[Finding]:
    """NFS110: 128 KiB NFS read-ahead (kernel >= 5.4 default) on cloud file services."""
    if facts.profile not in (PROFILE_EFS, PROFILE_AZURE_FILES, PROFILE_ANF):
        return []
    read_ahead = facts.node.read_ahead_kb.get(facts.mount.major_minor or "")
    if read_ahead != 128:
        return []
    return [
        _finding(
            "NFS110",
            Severity.INFO,
            f"read_ahead_kb=128 for {facts.mount.major_minor}: sequential reads are throttled",
            "set read_ahead_kb=15360 with a udev rule",
            "S23 S12",
        )
    ]


def rule_nfs111_slot_tables(facts: MountFacts) -> list[Finding]:
    """NFS111: RPC slot tables above what ANF accepts per connection/session."""
    node = facts.node
    if facts.version == "3" and (node.tcp_max_slot_table_entries or 0) > 128:
        value = f"tcp_max_slot_table_entries={node.tcp_max_slot_table_entries}"
    elif facts.version in ("4.1", "4.2") and (node.max_session_slots or 0) > 180:
        value = f"max_session_slots={node.max_session_slots}"
    else:
        return []
    return [
        _finding(
            "NFS111",
            Severity.INFO,
            f"{value}: more slots than the server accepts",
            "keep <= 128 per connection (NFSv3) / default 64 session slots (v4.1)",
            "S17",
        )
    ]


def rule_nfsk8s001_requested_vs_effective(facts: MountFacts) -> list[Finding]:
    """NFSK8S001: a requested option is missing from, or differs in, the effective options."""
    if facts.requested is None:
        return []
    differences = requested_vs_effective(facts.requested, facts.effective)
    if not differences:
        return []
    return [
        _finding(
            "NFSK8S001",
            Severity.WARN,
            "requested options not in effect: " + "; ".join(differences),
            "compare requested and effective side by side; fix the root cause "
            "(nconnect inherited per endpoint, negotiation, sharecache) and remount",
            "S40 S1 S15 S2",
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
            "S41",
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
            "S42 S43 S1",
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
            "S40",
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
            "S40",
        )
    ]


MOUNT_RULES: tuple[Callable[[MountFacts], list[Finding]], ...] = (
    rule_nfs001_nfsv2,
    rule_nfs002_nfsv40,
    rule_nfs003_nfsv3,
    rule_nfs004_version_not_pinned,
    rule_nfs010_soft_rw,
    rule_nfs011_soft_ro,
    rule_nfs012_efs_soft_timeo,
    rule_nfs013_tcp_short_timeo,
    rule_nfs014_efs_timeo_retrans,
    rule_nfs020_small_rwsize,
    rule_nfs021_anf_large_rwsize,
    rule_nfs022_rwsize_negotiated,
    rule_nfs023_small_rwsize_tcp,
    rule_nfs030_nconnect_limit,
    rule_nfs032_vendor_nconnect,
    rule_nfs033_nconnect_krb5,
    rule_nfs034_nconnect_v40,
    rule_nfs035_nconnect_old_kernel,
    rule_nfs036_ontap_max_connect,
    rule_nfs040_noresvport,
    rule_nfs041_noresvport_generic,
    rule_nfs050_noac,
    rule_nfs051_nocto_shared,
    rule_nfs052_long_actimeo_shared,
    rule_nfs053_azure_actimeo,
    rule_nfs054_lookupcache,
    rule_nfs055_nosharecache,
    rule_nfs060_v3_local_locks,
    rule_nfs070_sync,
    rule_nfs080_udp,
    rule_nfs081_filestore_tcp,
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
    requested: Mapping[str, OptionValue], effective: Mapping[str, OptionValue]
) -> list[str]:
    """Requested options that are missing from, or differ in, the effective options.

    Both sides are normalized; userspace-only and atime options (NFS090-093) and options the
    kernel does not print at their default (``lock``, ``port=2049``...) are not differences.

    Returns:
        Human-readable differences such as ``"nconnect: requested 8, effective absent"``.
    """
    wanted = normalize_options(requested)
    actual = normalize_options(effective)
    differences: list[str] = []
    for key, value in wanted.items():
        if key in USERSPACE_ONLY or key in _ATIME_OPTIONS or key.startswith("x-systemd."):
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
    also prints defaulted values); requested options come from ``context.requested_options``.
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
        server=mount.server,
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


def endpoint_key(facts: MountFacts) -> tuple[str, str, str, str, str]:
    """The per-server client key NFS031 groups by: (addr, port, proto, vers, sec)."""
    effective = facts.effective
    address = _text(effective.get("addr")) or facts.mount.server or ""
    return (
        address,
        _text(effective.get("port")) or "",
        facts.proto or "",
        facts.version or "",
        facts.sec,
    )


def evaluate_nconnect_consistency(all_facts: Sequence[MountFacts]) -> dict[int, list[Finding]]:
    """NFS031: nconnect must be the same on every mount of one server endpoint.

    Flags a group whose PVs request different nconnect values, a PV whose requested nconnect
    differs from the group's effective one, or mounts of one endpoint with different effective
    nconnect.

    Returns:
        Findings keyed by the index of the mount in ``all_facts``.
    """
    groups: dict[tuple[str, str, str, str, str], list[int]] = {}
    for index, facts in enumerate(all_facts):
        groups.setdefault(endpoint_key(facts), []).append(index)
    results: dict[int, list[Finding]] = {}
    for key, indexes in groups.items():
        effective_values = {all_facts[i].nconnect for i in indexes}
        requested_values = {
            _int(requested.get("nconnect")) or 1
            for requested in (all_facts[i].requested for i in indexes)
            if requested is not None
        }
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
                results.setdefault(i, []).append(
                    _finding(
                        "NFS031",
                        Severity.WARN,
                        f"inconsistent nconnect for {key[0]} ({key[2] or 'tcp'}, vers "
                        f"{key[3]}, sec={key[4]}): "
                        + "; ".join(reasons)
                        + " (the first mount of an endpoint sets it for all)",
                        "put the same nconnect on every PV/StorageClass for this server, "
                        "then remount (drain the node's pods using it)",
                        "S15 S23 S2 S3",
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
        profile: vendor profile override for every mount (``efs``, ``azure-files``, ``anf``,
            ``filestore``, ``ontap``, ``generic``); None detects per mount.
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
