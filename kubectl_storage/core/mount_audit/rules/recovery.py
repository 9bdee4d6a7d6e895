"""Rules on how a mount rides out a server outage: hard or soft, timeo and retrans
(NFS010-NFS014), reserved ports (NFS040, NFS041)."""

from __future__ import annotations

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.rules.facts import (
    MountFacts,
)
from kubectl_storage.core.mount_audit.rules.options import (
    as_int,
    as_text,
    is_soft,
)
from kubectl_storage.core.report.findings import Finding, Severity


def rule_nfs010_soft_rw(facts: MountFacts) -> list[Finding]:
    """NFS010: soft/softerr on a writable mount risks silent data corruption."""
    if not facts.read_write or not is_soft(facts.effective):
        return []
    return [
        NFS_RULES.cite(
            "NFS010",
            Severity.ERROR,
            "soft/softerr on a read-write mount: a timeout can cause silent data corruption",
            "remove soft/softerr (hard is the default); size timeo instead",
        )
    ]


def rule_nfs011_soft_ro(facts: MountFacts) -> list[Finding]:
    """NFS011: soft/softerr on a read-only mount is still unreliable."""
    if facts.read_write or not is_soft(facts.effective):
        return []
    return [
        NFS_RULES.cite(
            "NFS011",
            Severity.WARN,
            "soft/softerr on a read-only mount is unreliable",
            "prefer hard",
        )
    ]


def rule_nfs012_soft_timeo(facts: MountFacts) -> list[Finding]:
    """NFS012: a vendor's soft mounts need a minimum timeo (EFS: 150)."""
    minimum = facts.vendor.soft_min_timeo
    timeo = as_int(facts.effective.get("timeo"))
    if minimum is None or not is_soft(facts.effective) or timeo is None or timeo >= minimum:
        return []
    return [
        NFS_RULES.cite(
            "NFS012",
            Severity.WARN,
            f"{facts.vendor.title} soft mount with timeo={timeo} (< {minimum})",
            f"timeo=600 (at least {minimum})",
            facts.vendor.source("soft_min_timeo"),
        )
    ]


def rule_nfs013_tcp_short_timeo(facts: MountFacts) -> list[Finding]:
    """NFS013: over TCP a timeo under 15 s retransmits needlessly."""
    timeo = as_int(facts.effective.get("timeo"))
    if not (facts.proto or "tcp").startswith("tcp") or timeo is None or timeo >= 150:
        return []
    return [
        NFS_RULES.cite(
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
    timeo, retrans = as_text(facts.effective.get("timeo")), as_text(facts.effective.get("retrans"))
    if timeo in (None, str(entry.expected_timeo)) and retrans in (
        None,
        str(entry.expected_retrans),
    ):
        return []
    return [
        NFS_RULES.cite(
            "NFS014",
            Severity.INFO,
            f"{entry.title} mount with timeo={timeo},retrans={retrans} ({entry.title} uses "
            f"{entry.expected_timeo} and {entry.expected_retrans})",
            f"timeo={entry.expected_timeo},retrans={entry.expected_retrans}",
            entry.source("expected_timeo"),
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
            "NFS041",
            Severity.INFO,
            "noresvport: the server must accept non-privileged ports (export 'insecure');"
            " with sec=sys any local user could pose as another",
            "confirm the export policy",
        )
    ]
