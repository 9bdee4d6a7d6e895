"""Rules on the protocol: the NFS version (NFS001-NFS004), locking (NFS060), sync (NFS070), the
transport (NFS080, NFS081) and security (NFS100, NFS101)."""

from __future__ import annotations

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.rules.facts import (
    MountFacts,
)
from kubectl_storage.core.mount_audit.rules.options import (
    as_text,
    netid,
)
from kubectl_storage.core.report.findings import Finding, Severity


def rule_nfs001_nfsv2(facts: MountFacts) -> list[Finding]:
    """NFS001: NFSv2 is no longer supported."""
    if facts.version != "2":
        return []
    return [
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
            "NFS004",
            Severity.INFO,
            f"no nfsvers/vers requested; the client negotiated {facts.version or 'a version'}"
            " and can fall back silently",
            fix,
        )
    ]


def rule_nfs060_v3_local_locks(facts: MountFacts) -> list[Finding]:
    """NFS060: NFSv3 with nolock/local_lock only excludes processes on the same node."""
    if facts.version != "3":
        return []
    local_lock = as_text(facts.effective.get("local_lock"))
    if "nolock" not in facts.effective and local_lock not in ("all", "flock", "posix"):
        return []
    severity = Severity.ERROR if facts.shared_writable else Severity.WARN
    what = "nolock" if "nolock" in facts.effective else f"local_lock={local_lock}"
    return [
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
            netid(facts.requested.get("proto")) == "tcp"
            or netid(facts.requested.get("mountproto")) == "tcp"
        )
    else:
        has_tcp = netid(facts.effective.get("mountproto")) == "tcp"
    if has_tcp:
        return []
    return [
        NFS_RULES.cite(
            "NFS081",
            Severity.INFO,
            f"NFSv3 {facts.vendor.title} mount without tcp: mountd discovery tries UDP first "
            "(+3 s)",
            "add tcp",
            facts.vendor.source("v3_needs_tcp") + " S1",
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
    if as_text(facts.effective.get("xprtsec")) in ("tls", "mtls") or facts.local_tls_tunnel:
        return []
    return [
        NFS_RULES.cite(
            "NFS100",
            Severity.INFO,
            "sec=sys: the server trusts client-asserted UIDs and data travels in clear",
            entry.in_transit_fix,
        )
    ]


def rule_nfs101_xprtsec(facts: MountFacts) -> list[Finding]:
    """NFS101: RPC-with-TLS protection in use (a positive note)."""
    mode = as_text(facts.effective.get("xprtsec"))
    if mode not in ("tls", "mtls"):
        return []
    return [
        NFS_RULES.cite(
            "NFS101",
            Severity.INFO,
            f"xprtsec={mode}: RPC traffic is TLS-protected",
            "(informational)",
        )
    ]
