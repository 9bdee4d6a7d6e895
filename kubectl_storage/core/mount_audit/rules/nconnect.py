"""Rules on connections per server: the nconnect limits and vendor ranges (NFS030,
NFS032-NFS037), and NFS031, nconnect consistent across every mount of one NFS client."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.rules.facts import (
    MountFacts,
    client_key,
)
from kubectl_storage.core.mount_audit.rules.options import (
    as_int,
    as_text,
)
from kubectl_storage.core.report.findings import Finding, Severity

#: The first kernel where the ONTAP max_connect advice (NFS036) is given (see K3).
MAX_CONNECT_MIN_KERNEL = (5, 18)


def rule_nfs030_nconnect_limit(facts: MountFacts) -> list[Finding]:
    """NFS030: nconnect above 16 makes the mount fail (requested list)."""
    requested = as_int((facts.requested or {}).get("nconnect"))
    if requested is None or requested <= 16:
        return []
    return [
        NFS_RULES.cite(
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
            NFS_RULES.cite(
                "NFS032",
                Severity.WARN,
                f"nconnect={nconnect} on {entry.title}, which does not support nconnect",
                "remove nconnect",
                entry.source("nconnect_supported"),
            )
        ]
    if entry.nconnect_best is not None and nconnect > entry.nconnect_best:
        return [
            NFS_RULES.cite(
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
                NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
        NFS_RULES.cite(
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
    if as_int(facts.effective.get("max_connect")) == wanted:
        return []
    need = ".".join(str(part) for part in MAX_CONNECT_MIN_KERNEL)
    return [
        NFS_RULES.cite(
            "NFS036",
            Severity.INFO,
            f"{facts.vendor.title} NFSv4.1+ mount without max_connect={wanted} for session "
            "trunking",
            f"max_connect={wanted}" + ("" if kernel is not None else f" (Linux {need} or later)"),
            facts.vendor.source("max_connect"),
        )
    ]


def rule_nfs037_trunked_into_another_address(facts: MountFacts) -> list[Finding]:
    """NFS037: an NFSv4.1+ mount of one server address that runs on the client of another.

    Trunking detection (RFC 8881 section 2.10.5; Linux nfs4_discover_server_trunking) finds
    that the address belongs to a server the node already has a client for, and the mount
    shares that client: ``addr=`` shows the first address, and no connection to the mount's
    own address exists. Information: the kernel does what the protocol says, but a user who
    mounted a second address for a second path has one. Judged only when the mount names its
    server by address (a host name's address is not known here).
    """
    if facts.version not in ("4.1", "4.2"):
        return []
    source = _address(facts.mount.server)
    addr = _address(as_text(facts.effective.get("addr")))
    if source is None or addr is None or source == addr:
        return []
    return [
        NFS_RULES.cite(
            "NFS037",
            Severity.INFO,
            f"mounted from {source}, but NFSv4.1 trunking put it on the client of {addr}: "
            f"its traffic goes to {addr}, there is no connection to {source}",
            "For a second path to one server, use trunking on purpose (max_connect, or "
            "nconnect); mounting another address of it does not add one",
        )
    ]


def _address(text: str | None) -> str | None:
    """An IP address as written in a mount source or ``addr=`` (brackets off), or None for a
    host name or nothing."""
    if not text:
        return None
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        return None


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
            as_int(requested.get("nconnect")) or 1
            for requested in (all_facts[i].requested for i in indexes)
            if requested is not None
        }
        flavours = sorted({all_facts[i].sec for i in indexes})
        for i in indexes:
            facts = all_facts[i]
            reasons: list[str] = []
            wanted = None if facts.requested is None else as_int(facts.requested.get("nconnect"))
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
                    NFS_RULES.cite(
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
