"""NFS vendor profiles as data: one table entry per vendor (rules.md A.2).

Every threshold a vendor-scoped NFS rule uses lives in :data:`VENDORS`, with the source keys
(rules.md section 0, resolved by
:data:`kubectl_storage.core.mount_audit.rules.catalogue.NFS_RULES`) that back it in
:attr:`NfsVendor.sources`. A new vendor profile is a new entry plus tests; the rules in
:mod:`.rules` read only these fields and never test a profile name.

Detection (:func:`detect_vendor`), in order: an explicit override; the CSI driver or StorageClass
provisioner, refined by what the class says about the backend (Trident ``backendType``); the server
name (and the efs-utils local tunnel, 127.0.0.1 with a non-2049 port); else ``generic``.

Pure: data and lookups, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from kubectl_storage.core.report.findings import Severity

PROFILE_EFS = "efs"
PROFILE_AZURE_FILES = "azure-files"
PROFILE_ANF = "anf"
PROFILE_FILESTORE = "filestore"
PROFILE_ONTAP = "ontap"
PROFILE_GENERIC = "generic"

REASON_OVERRIDE = "override"
REASON_CSI_DRIVER = "csi-driver"
REASON_STORAGE_CLASS = "storage-class"
REASON_SERVER_NAME = "server-name"
REASON_DEFAULT = "default"

#: Trident's CSI driver name, and the provisioner name of pre-CSI Trident releases (S43).
TRIDENT_DRIVERS = ("csi.trident.netapp.io", "netapp.io/trident")


@dataclass(frozen=True)
class NfsVendor:
    """One vendor's NFS guidance. ``None`` or an empty value means "no guidance": the rule that
    reads the field stays quiet for this vendor.

    Attributes:
        name: the profile id (``--profile``).
        title: the vendor's product name, for messages.
        csi_drivers: CSI drivers / provisioners that always mean this vendor.
        trident_backend_types: Trident backend types (StorageClass ``backendType``) of this vendor.
        server_patterns: regular expressions matched against the mount's server name.
        local_tls_tunnel: the vendor's mount helper tunnels NFS through 127.0.0.1 on a local port
            (efs-utils): such a mount is this vendor, and its traffic leaves the node encrypted.
        tier_parameter: the StorageClass parameter naming the service tier (Filestore ``tier``).
        helper_options: options only the vendor's mount helper reads; they never reach the kernel.
        v3_severity: NFS003 severity (warn where a vendor policy audits NFSv3).
        version_fix: NFS004 hint on how to pin the version for this vendor.
        soft_min_timeo: NFS012, the lowest ``timeo`` for a soft mount (deciseconds).
        expected_timeo, expected_retrans: NFS014, the vendor's mount helper values.
        min_rwsize, max_rwsize: NFS020 / NFS021 (bytes).
        small_rwsize_ok: NFS023 does not apply (the vendor documents small sizes for some loads).
        nconnect_supported: NFS032, False when the service does not support nconnect.
        nconnect_best, nconnect_above_best: NFS032, the documented optimum and the severity of a
            higher value.
        nconnect_by_tier: NFS032, recommended values per service tier (lower-case tier names);
            a tier not listed has no recommendation.
        max_connect: NFS036, the recommended ``max_connect`` for NFSv4.1+ session trunking.
        noresvport: NFS040, the vendor recommends ``noresvport``.
        noresvport_before_kernel: NFS040 applies only to kernels older than this (major, minor).
        noresvport_needs_insecure_export: NFS041, a non-privileged source port needs the export's
            ``insecure`` option (a plain Linux server).
        min_actimeo: NFS053, the lowest attribute cache timeout the vendor recommends (seconds).
        v3_needs_tcp: NFS081, mountd does not answer UDP (add ``tcp`` to NFSv3 mounts).
        requires_sec_sys: NFS100 does not apply (the service accepts only AUTH_SYS).
        in_transit_fix: NFS100, how to protect data in transit on this service.
        read_ahead_kb: NFS110, the recommended NFS read-ahead (KiB).
        max_tcp_slots, max_session_slots: NFS111, RPC slots the server accepts per connection
            (NFSv3) and per session (NFSv4.1).
        sources: source keys (rules.md section 0) per field name, ``"detection"`` for the
            detection fields.
    """

    name: str
    title: str
    csi_drivers: tuple[str, ...] = ()
    trident_backend_types: tuple[str, ...] = ()
    server_patterns: tuple[re.Pattern[str], ...] = ()
    local_tls_tunnel: bool = False
    tier_parameter: str | None = None
    helper_options: frozenset[str] = frozenset()
    v3_severity: Severity = Severity.INFO
    version_fix: str | None = None
    soft_min_timeo: int | None = None
    expected_timeo: int | None = None
    expected_retrans: int | None = None
    min_rwsize: int | None = None
    max_rwsize: int | None = None
    small_rwsize_ok: bool = False
    nconnect_supported: bool = True
    nconnect_best: int | None = None
    nconnect_above_best: Severity = Severity.INFO
    nconnect_by_tier: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    max_connect: int | None = None
    noresvport: bool = False
    noresvport_before_kernel: tuple[int, int] | None = None
    noresvport_needs_insecure_export: bool = False
    min_actimeo: int | None = None
    v3_needs_tcp: bool = False
    requires_sec_sys: bool = False
    in_transit_fix: str = "sec=krb5p, RPC-with-TLS (xprtsec=tls), or accept the risk"
    read_ahead_kb: int | None = None
    max_tcp_slots: int | None = None
    max_session_slots: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def source(self, name: str) -> str:
        """The source keys backing one field (empty when the table gives none)."""
        return self.sources.get(name, "")


#: efs-utils options consumed by mount.efs and never passed to the kernel (S13: aws/efs-utils
#: ``src/efs_utils_common/constants.py`` ``NON_NFS_OPTIONS``).
_EFS_HELPER_OPTIONS = frozenset(
    {
        "accesspoint",
        "awscredsuri",
        "awsprofile",
        "az",
        "azid",
        "cafile",
        "iam",
        "mounttargetip",
        "netns",
        "noocsp",
        "notls",
        "ocsp",
        "region",
        "tls",
        "tlsport",
        "verify",
        "rolearn",
        "jwtpath",
        "crossaccount",
        "stunnel",
        "nodirects3read",
        "nos3readcache",
    }
)

EFS = NfsVendor(
    name=PROFILE_EFS,
    title="Amazon EFS",
    csi_drivers=("efs.csi.aws.com",),
    server_patterns=(re.compile(r"(^|\.)fs-[0-9a-f]+\.efs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$"),),
    local_tls_tunnel=True,
    helper_options=_EFS_HELPER_OPTIONS,
    soft_min_timeo=150,
    expected_timeo=600,
    expected_retrans=2,
    min_rwsize=1048576,
    nconnect_supported=False,
    noresvport=True,
    in_transit_fix="use TLS through efs-utils (EFS has no Kerberos)",
    read_ahead_kb=15360,
    sources={
        "detection": "S13 E1",
        "helper_options": "S13",
        "soft_min_timeo": "S10",
        "expected_timeo": "S10 S11 S13",
        "min_rwsize": "S10 S11",
        "nconnect_supported": "S12",
        "noresvport": "S10 S11 S13",
        "in_transit_fix": "S10 S13",
        "local_tls_tunnel": "S13",
        "read_ahead_kb": "S12",
    },
)

AZURE_FILES = NfsVendor(
    name=PROFILE_AZURE_FILES,
    title="Azure Files",
    csi_drivers=("file.csi.azure.com",),
    server_patterns=(
        re.compile(r"\.file\.core\.(windows\.net|chinacloudapi\.cn|usgovcloudapi\.net)$"),
    ),
    version_fix="Azure Files: vers=4,minorversion=1",
    min_rwsize=1048576,
    nconnect_best=4,
    nconnect_above_best=Severity.WARN,
    noresvport=True,
    noresvport_before_kernel=(5, 18),
    min_actimeo=30,
    requires_sec_sys=True,
    read_ahead_kb=15360,
    sources={
        "detection": "S22 S25",
        "version_fix": "S22",
        "min_rwsize": "S22",
        "nconnect_best": "S23 S25",
        "noresvport": "S22 S25",
        "noresvport_before_kernel": "S22",
        "min_actimeo": "S22 S24 S25",
        "requires_sec_sys": "S22",
        "read_ahead_kb": "S23",
    },
)

ANF = NfsVendor(
    name=PROFILE_ANF,
    title="Azure NetApp Files",
    trident_backend_types=("azure-netapp-files",),
    v3_severity=Severity.WARN,
    max_rwsize=262144,
    small_rwsize_ok=True,
    nconnect_best=8,
    nconnect_above_best=Severity.INFO,
    in_transit_fix="NFSv4.1 with sec=krb5p",
    read_ahead_kb=15360,
    max_tcp_slots=128,
    max_session_slots=180,
    sources={
        "detection": "T1 S43",
        "v3_severity": "S19",
        "max_rwsize": "S15",
        "small_rwsize_ok": "S15",
        "nconnect_best": "S15",
        "in_transit_fix": "S19",
        "read_ahead_kb": "S23 S12",
        "max_tcp_slots": "S17",
        "max_session_slots": "S17",
    },
)

FILESTORE = NfsVendor(
    name=PROFILE_FILESTORE,
    title="Google Filestore",
    csi_drivers=("filestore.csi.storage.gke.io",),
    tier_parameter="tier",
    # Tier names as the Filestore CSI driver accepts them (kubernetes-sigs/gcp-filestore-csi-driver
    # pkg/csi_driver/controller.go); basic tiers have no nconnect recommendation (S27).
    nconnect_by_tier={
        "zonal": (2, 7),
        "regional": (2, 7),
        "enterprise": (2,),
        "high_scale_ssd": (7,),
        "high-scale-ssd": (7,),
    },
    v3_needs_tcp=True,
    in_transit_fix="NFSv4.1 with sec=krb5p",
    sources={
        "detection": "G1",
        "nconnect_by_tier": "S27 G1",
        "v3_needs_tcp": "S28",
        "in_transit_fix": "S26",
    },
)

ONTAP = NfsVendor(
    name=PROFILE_ONTAP,
    title="NetApp ONTAP",
    csi_drivers=TRIDENT_DRIVERS,
    trident_backend_types=("ontap-nas", "ontap-nas-economy", "ontap-nas-flexgroup"),
    max_connect=16,
    sources={"detection": "T1 S43", "max_connect": "S32 S1 K3"},
)

GENERIC = NfsVendor(
    name=PROFILE_GENERIC,
    title="generic NFS server",
    noresvport_needs_insecure_export=True,
    sources={"noresvport_needs_insecure_export": "S1 S10"},
)

#: Every profile, in ``--profile`` order; ``generic`` last.
VENDORS: tuple[NfsVendor, ...] = (EFS, AZURE_FILES, ANF, FILESTORE, ONTAP, GENERIC)
PROFILES: tuple[str, ...] = tuple(vendor.name for vendor in VENDORS)


class VendorProfile(StrEnum):
    """``--profile`` of mount-audit: one of :data:`PROFILES` (a unit test keeps them equal)."""

    EFS = PROFILE_EFS
    AZURE_FILES = PROFILE_AZURE_FILES
    ANF = PROFILE_ANF
    FILESTORE = PROFILE_FILESTORE
    ONTAP = PROFILE_ONTAP
    GENERIC = PROFILE_GENERIC


_BY_NAME = {vendor.name: vendor for vendor in VENDORS}


def vendor(name: str) -> NfsVendor:
    """The table entry of one profile.

    Raises:
        ValueError: the profile is not known.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(
            f"unknown NFS profile {name!r}; choose from {', '.join(PROFILES)}"
        ) from None


def is_local_tunnel(server: str | None, port: str | None) -> bool:
    """A mount of 127.0.0.1 on a port other than 2049: a local proxy (efs-utils, S13)."""
    return (server or "").lower() == "127.0.0.1" and port not in (None, "", "0", "2049")


def detect_vendor(
    *,
    server: str | None = None,
    port: str | None = None,
    csi_driver: str | None = None,
    backend_type: str | None = None,
    override: str | None = None,
) -> tuple[NfsVendor, str]:
    """Pick the vendor profile for a mount (rules.md A.2 detection order).

    Args:
        server: the mount's server name or address.
        port: the mount's effective ``port=`` option.
        csi_driver: the PV's CSI driver or the StorageClass provisioner.
        backend_type: what the StorageClass says about the backend (Trident ``backendType``).
        override: an explicit profile that wins over detection.

    Returns:
        ``(vendor, reason)``; reason is ``override``, ``storage-class`` (the class named the
        backend), ``csi-driver``, ``server-name`` or ``default``.

    Raises:
        ValueError: the override is not a known profile.
    """
    if override:
        return vendor(override), REASON_OVERRIDE
    if csi_driver in TRIDENT_DRIVERS and backend_type:
        for entry in VENDORS:
            if backend_type in entry.trident_backend_types:
                return entry, REASON_STORAGE_CLASS
        # A backend type no profile claims (gcp-cvs, google-cloud-netapp-volumes, ...): the class
        # says it is not ONTAP, and the generic guidance is all we have.
        return GENERIC, REASON_STORAGE_CLASS
    for entry in VENDORS:
        if csi_driver and csi_driver in entry.csi_drivers:
            return entry, REASON_CSI_DRIVER
    host = (server or "").lower()
    for entry in VENDORS:
        if any(pattern.search(host) for pattern in entry.server_patterns):
            return entry, REASON_SERVER_NAME
        if entry.local_tls_tunnel and is_local_tunnel(host, port):
            return entry, REASON_SERVER_NAME
    return GENERIC, REASON_DEFAULT
