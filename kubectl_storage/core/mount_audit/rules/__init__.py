"""NFS mount-option rules (rules.md section A) evaluated on parsed mounts.

One module per rule family (:mod:`.protocol`, :mod:`.recovery`, :mod:`.transfer`,
:mod:`.nconnect`, :mod:`.caching`, :mod:`.requested`), the catalogue (:mod:`.catalogue`), the
option handling (:mod:`.options`), the facts the rules read (:mod:`.facts`) and the audit that
runs them (:mod:`.audit`); this package gives the names the rest of the code uses.

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
:data:`.catalogue.NFS_RULES` (the catalogue, also in docs/commands/mount-audit.md) and in every
finding's ``source``.

Pure: dataclasses in, dataclasses out, no I/O.
"""

from kubectl_storage.core.mount_audit.rules.audit import (
    MOUNT_RULES,
    RULE_IDS,
    audit_mounts,
    evaluate_mount,
)
from kubectl_storage.core.mount_audit.rules.client_identity import (
    NfsClientIdentity,
    check_shared_client_identity,
    client_identity,
)
from kubectl_storage.core.mount_audit.rules.facts import (
    MountAudit,
    MountFacts,
    NodeFacts,
    build_facts,
    client_key,
    detect_profile,
)
from kubectl_storage.core.mount_audit.rules.nconnect import evaluate_nconnect_consistency
from kubectl_storage.core.mount_audit.rules.options import (
    kernel_version,
    nfs_version,
    normalize_options,
    requested_vs_effective,
)
from kubectl_storage.core.mount_audit.vendors import (
    PROFILE_ANF,
    PROFILE_AZURE_FILES,
    PROFILE_EFS,
    PROFILE_FILESTORE,
    PROFILE_GENERIC,
    PROFILE_ONTAP,
    PROFILES,
    VENDORS,
)
from kubectl_storage.core.nodes.volume_owners import VolumeContext

__all__ = [
    "MOUNT_RULES",
    "PROFILES",
    "PROFILE_ANF",
    "PROFILE_AZURE_FILES",
    "PROFILE_EFS",
    "PROFILE_FILESTORE",
    "PROFILE_GENERIC",
    "PROFILE_ONTAP",
    "RULE_IDS",
    "VENDORS",
    "MountAudit",
    "MountFacts",
    "NfsClientIdentity",
    "NodeFacts",
    "VolumeContext",
    "audit_mounts",
    "build_facts",
    "check_shared_client_identity",
    "client_identity",
    "client_key",
    "detect_profile",
    "evaluate_mount",
    "evaluate_nconnect_consistency",
    "kernel_version",
    "nfs_version",
    "normalize_options",
    "requested_vs_effective",
]
