"""NFS120 (across nodes): several nodes presenting one NFSv4 client identity to one server.

An NFSv4 client names itself to the server with one string, built by Linux from the node's
name and an optional uniquifier: "Linux NFSv4.x <nodename>[/<uniquifier>]"
(fs/nfs/nfs4proc.c nfs4_init_uniform_client_string). The uniquifier is
/sys/fs/nfs/net/nfs_client/identifier (set at boot, for example by a udev rule from
/etc/machine-id), else the ``nfs.nfs4_unique_id`` module parameter, else nothing
(Documentation/filesystems/nfs/client-identifier.rst). Nodes cloned from one image keep one
hostname and no uniquifier: the server takes them for one client, and each one's mount
renews, expires and steals the other's leases, opens and locks. Pure: node facts in, findings
out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.report.findings import Finding, Severity


@dataclass(frozen=True)
class NfsClientIdentity:
    """What a node's NFSv4 client calls itself: its node name and the uniquifier, with where
    the uniquifier came from (``sysfs``, ``module`` or None when there is none)."""

    nodename: str
    uniquifier: str | None
    uniquifier_from: str | None

    @property
    def owner_string(self) -> str:
        """The client-owner string after ``Linux NFSv4.x`` (without the minor version)."""
        return self.nodename + (f"/{self.uniquifier}" if self.uniquifier else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: nodename, uniquifier, uniquifier_from."""
        return {
            "nodename": self.nodename,
            "uniquifier": self.uniquifier,
            "uniquifier_from": self.uniquifier_from,
        }


def client_identity(
    hostname: str | None, sysfs_identifier: str | None, module_unique_id: str | None
) -> NfsClientIdentity | None:
    """The identity a node's client presents (None without its hostname)."""
    name = (hostname or "").strip()
    if not name:
        return None
    for value, origin in ((sysfs_identifier, "sysfs"), (module_unique_id, "module")):
        if value and value.strip() and value.strip() != "(null)":
            return NfsClientIdentity(name, value.strip(), origin)
    return NfsClientIdentity(name, None, None)


def check_shared_client_identity(
    nodes: Mapping[str, tuple[NfsClientIdentity | None, Iterable[str]]],
) -> list[Finding]:
    """NFS120: nodes with one client identity and an NFSv4 server in common.

    Args:
        nodes: node name -> (its identity, the servers of its NFSv4 mounts).
    """
    by_identity: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for node, (identity, servers) in nodes.items():
        if identity is not None:
            by_identity[identity.owner_string].append((node, {s.lower() for s in servers}))
    findings = []
    for owner, members in sorted(by_identity.items()):
        if len(members) < 2:
            continue
        shared = sorted(set.intersection(*(servers for _, servers in members)))
        if not shared:
            continue
        names = ", ".join(sorted(node for node, _ in members))
        findings.append(
            NFS_RULES.cite(
                "NFS120",
                Severity.ERROR,
                f"nodes {names} present one NFSv4 client identity ('Linux NFSv4.x {owner}') "
                f"to {', '.join(shared)}: the server takes them for one client, and each "
                "node's mounts expire or steal the other's leases, opens and locks",
                "Give every node its own hostname, or a unique uniquifier: write "
                "/etc/machine-id (or a random UUID) to /sys/fs/nfs/net/nfs_client/identifier "
                "at boot (a udev rule), or set the nfs module's nfs4_unique_id",
            )
        )
    return findings
