"""The audit: every per-mount rule in rule-id order (:data:`MOUNT_RULES`), then NFS031 across
the mounts; :func:`audit_mounts` is the entry point."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from kubectl_storage.core.mount_audit.mountstats import NfsMountStats, match_stats
from kubectl_storage.core.mount_audit.rules.caching import (
    rule_nfs050_noac,
    rule_nfs051_nocto_shared,
    rule_nfs052_long_actimeo_shared,
    rule_nfs053_vendor_actimeo,
    rule_nfs054_lookupcache,
    rule_nfs055_nosharecache,
)
from kubectl_storage.core.mount_audit.rules.facts import (
    MountAudit,
    MountFacts,
    NodeFacts,
    build_facts,
)
from kubectl_storage.core.mount_audit.rules.nconnect import (
    evaluate_nconnect_consistency,
    rule_nfs030_nconnect_limit,
    rule_nfs032_vendor_nconnect,
    rule_nfs033_nconnect_krb5,
    rule_nfs034_nconnect_v40,
    rule_nfs035_nconnect_old_kernel,
    rule_nfs036_max_connect,
    rule_nfs037_trunked_into_another_address,
)
from kubectl_storage.core.mount_audit.rules.protocol import (
    rule_nfs001_nfsv2,
    rule_nfs002_nfsv40,
    rule_nfs003_nfsv3,
    rule_nfs004_version_not_pinned,
    rule_nfs060_v3_local_locks,
    rule_nfs070_sync,
    rule_nfs080_udp,
    rule_nfs081_v3_tcp,
    rule_nfs100_auth_sys,
    rule_nfs101_xprtsec,
)
from kubectl_storage.core.mount_audit.rules.recovery import (
    rule_nfs010_soft_rw,
    rule_nfs011_soft_ro,
    rule_nfs012_soft_timeo,
    rule_nfs013_tcp_short_timeo,
    rule_nfs014_vendor_timeo_retrans,
    rule_nfs040_noresvport,
    rule_nfs041_noresvport_generic,
)
from kubectl_storage.core.mount_audit.rules.requested import (
    rule_nfs090_intr,
    rule_nfs091_atime,
    rule_nfs092_bg,
    rule_nfs093_fstab_only,
    rule_nfsk8s001_requested_vs_effective,
    rule_nfsk8s002_storageclass_drift,
    rule_nfsk8s003_no_mount_options,
    rule_nfsk8s004_failed_mount_options,
    rule_nfsk8s005_legacy_annotation,
)
from kubectl_storage.core.mount_audit.rules.transfer import (
    rule_nfs020_small_rwsize,
    rule_nfs021_large_rwsize,
    rule_nfs022_rwsize_negotiated,
    rule_nfs023_small_rwsize_tcp,
    rule_nfs110_read_ahead,
    rule_nfs111_slot_tables,
)
from kubectl_storage.core.mount_audit.vendors import (
    vendor,
)
from kubectl_storage.core.nodes.mount_model import MountEntry
from kubectl_storage.core.nodes.volume_owners import VolumeContext
from kubectl_storage.core.report.findings import Finding

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
    rule_nfs037_trunked_into_another_address,
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

#: Every NFS rule id (NFS031 is the cross-mount rule; NFS120, across nodes, is
#: :mod:`.client_identity`'s).
RULE_IDS: tuple[str, ...] = tuple(
    sorted(
        {fn.__name__.split("_")[1].upper() for fn in MOUNT_RULES} | {"NFS031", "NFS120"},
        key=lambda rid: (rid.startswith("NFSK8S"), rid),
    )
)


def evaluate_mount(facts: MountFacts) -> list[Finding]:
    """Run every per-mount rule on one mount, in rule-id order."""
    findings: list[Finding] = []
    for rule in MOUNT_RULES:
        findings.extend(rule(facts))
    return findings


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
    stats_for = match_stats(nfs_mounts, stats or ())
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
