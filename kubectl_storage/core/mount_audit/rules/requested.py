"""Rules on what the PV asked for: options that only mount helpers read (NFS090-NFS093), and the
Kubernetes side (NFSK8S001-NFSK8S005: requested against effective, the class's options,
FailedMount events, the legacy annotation)."""

from __future__ import annotations

import re

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.rules.facts import (
    MountFacts,
)
from kubectl_storage.core.mount_audit.rules.options import (
    ATIME_OPTIONS,
    normalize_options,
    requested_vs_effective,
)
from kubectl_storage.core.nodes.mount_model import options_from_list
from kubectl_storage.core.report.findings import Finding, Severity


def rule_nfs090_intr(facts: MountFacts) -> list[Finding]:
    """NFS090: intr/nointr are ignored since 2.6.25 (requested list)."""
    found = sorted({"intr", "nointr"} & set(facts.requested or {}))
    if not found:
        return []
    return [
        NFS_RULES.cite(
            "NFS090",
            Severity.INFO,
            f"{','.join(found)} requested: ignored by the kernel",
            "remove it",
        )
    ]


def rule_nfs091_atime(facts: MountFacts) -> list[Finding]:
    """NFS091: atime options have no effect on NFS (requested list)."""
    found = [name for name in (facts.requested or {}) if name in ATIME_OPTIONS]
    if not found:
        return []
    return [
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
            "NFS093",
            Severity.INFO,
            f"{','.join(found)} requested: fstab/boot options, meaningless for kubelet "
            "and CSI mounts",
            "remove them (harmless)",
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
            "NFSK8S005",
            Severity.INFO,
            "the PV uses volume.beta.kubernetes.io/mount-options (legacy)",
            "move the options to spec.mountOptions",
        )
    ]
