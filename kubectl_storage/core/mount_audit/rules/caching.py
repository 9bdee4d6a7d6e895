"""Rules on client caching: the attribute cache, close-to-open, lookup and shared caches
(NFS050-NFS055)."""

from __future__ import annotations

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.rules.facts import (
    MountFacts,
)
from kubectl_storage.core.mount_audit.rules.options import (
    ATTRIBUTE_CACHE_DEFAULTS,
    as_int,
    as_text,
)
from kubectl_storage.core.report.findings import Finding, Severity


def rule_nfs050_noac(facts: MountFacts) -> list[Finding]:
    """NFS050: noac / actimeo=0 disable the attribute cache. On a volume several nodes mount
    read-write that is the documented way to see each other's changes at once (nfs(5), "Data
    and metadata coherence"), so there it is information, not a warning."""
    options = facts.effective
    all_zero = all(as_text(options.get(name)) == "0" for name in ATTRIBUTE_CACHE_DEFAULTS)
    if not ("noac" in options or as_text(options.get("actimeo")) == "0" or all_zero):
        return []
    if facts.shared_writable:
        return [
            NFS_RULES.cite(
                "NFS050",
                Severity.INFO,
                "attribute caching disabled (noac/actimeo=0) on a PV mounted rw by several "
                "nodes: each sees the others' changes at once, at a performance cost",
                "keep it if the application needs that coherence; otherwise use locking",
            )
        ]
    return [
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        if (as_int(facts.effective.get(name)) or 0) > 60
    ]
    if not long_timers:
        return []
    severity = Severity.WARN if facts.shared_writable else Severity.INFO
    return [
        NFS_RULES.cite(
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
        for name, default in ATTRIBUTE_CACHE_DEFAULTS.items()
        if (value := as_int(facts.effective.get(name))) is not None and value != default
    }
    low = {name: value for name, value in explicit.items() if value < minimum}
    if not low:
        return []
    shown = ",".join(f"{name}={value}" for name, value in low.items())
    return [
        NFS_RULES.cite(
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
    mode = as_text(facts.effective.get("lookupcache"))
    if mode not in ("none", "pos", "positive"):
        return []
    return [
        NFS_RULES.cite(
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
        NFS_RULES.cite(
            "NFS055",
            Severity.WARN,
            "nosharecache: several cached copies of one file can get out of sync",
            "remove nosharecache",
        )
    ]
