"""Rules on transfer sizes and throughput tunables: rsize/wsize (NFS020-NFS023), read-ahead and
RPC slots (NFS110, NFS111)."""

from __future__ import annotations

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.rules.facts import (
    MountFacts,
)
from kubectl_storage.core.mount_audit.rules.options import (
    as_int,
    sizes_where,
)
from kubectl_storage.core.report.findings import Finding, Severity


def rule_nfs020_small_rwsize(facts: MountFacts) -> list[Finding]:
    """NFS020: rsize/wsize below the vendor's recommendation (EFS, Azure Files: 1 MiB)."""
    minimum = facts.vendor.min_rwsize
    if minimum is None:
        return []
    small = sizes_where(facts.effective, lambda size: size < minimum)
    if not small:
        return []
    return [
        NFS_RULES.cite(
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
    large = sizes_where(facts.effective, lambda size: size > maximum)
    if not large:
        return []
    return [
        NFS_RULES.cite(
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
        and as_int(facts.requested[name]) != as_int(facts.effective.get(name))
    ]
    if not differences:
        return []
    return [
        NFS_RULES.cite(
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
    small = sizes_where(options, lambda size: size < 65536)
    if not small:
        return []
    return [
        NFS_RULES.cite(
            "NFS023",
            Severity.INFO,
            f"{small} below 65536 over TCP",
            "drop the option (negotiate the largest) or raise it",
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
            "NFS111",
            Severity.INFO,
            f"{value}: more slots than {entry.title} accepts",
            f"keep <= {entry.max_tcp_slots} per connection (NFSv3) / the default 64 session "
            "slots (v4.1)",
            entry.source("max_tcp_slots"),
        )
    ]
