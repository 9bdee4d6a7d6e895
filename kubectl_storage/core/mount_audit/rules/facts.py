"""What the rules look at: one mount's facts normalized (:class:`MountFacts`, built by
:func:`build_facts`), the node's tunables, and the audit of a mount (:class:`MountAudit`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.mount_audit.mountstats import NfsMountStats
from kubectl_storage.core.mount_audit.rules.options import (
    as_int,
    as_text,
    kernel_version,
    netid,
    nfs_version,
    normalize_options,
)
from kubectl_storage.core.mount_audit.vendors import (
    NfsVendor,
    detect_vendor,
    is_local_tunnel,
    vendor,
)
from kubectl_storage.core.nodes.mount_model import MountEntry, OptionValue, options_from_list
from kubectl_storage.core.nodes.volume_owners import VolumeContext
from kubectl_storage.core.report.findings import Finding


@dataclass(frozen=True)
class NodeFacts:
    """Node-wide tunables some rules read (NFS035, NFS036, NFS040, NFS110, NFS111); optional."""

    kernel_release: str | None = None
    read_ahead_kb: Mapping[str, int] = field(default_factory=dict)  # keyed by "maj:min"
    tcp_max_slot_table_entries: int | None = None
    max_session_slots: int | None = None

    @property
    def kernel(self) -> tuple[int, int] | None:
        """``(major, minor)`` of the kernel release, when known."""
        return kernel_version(self.kernel_release)


@dataclass(frozen=True)
class MountFacts:
    """Everything one mount's rules need, normalized (built by :func:`build_facts`)."""

    mount: MountEntry
    effective: dict[str, OptionValue]
    requested: dict[str, OptionValue] | None
    profile: str
    profile_reason: str
    xprt_count: int | None
    context: VolumeContext
    node: NodeFacts

    @property
    def vendor(self) -> NfsVendor:
        """The vendor table entry of this mount's profile."""
        return vendor(self.profile)

    @property
    def version(self) -> str | None:
        """Effective NFS version as ``"2"``, ``"3"``, ``"4.0"``, ``"4.1"``, ``"4.2"``."""
        return nfs_version(self.effective, self.mount.fstype)

    @property
    def read_write(self) -> bool:
        """Whether the mount is writable."""
        return "ro" not in self.effective

    @property
    def proto(self) -> str | None:
        """Effective transport (``tcp``, ``tcp6``, ``udp``, ``udp6``, ``rdma``)."""
        return as_text(self.effective.get("proto"))

    @property
    def address(self) -> str:
        """The server address the kernel connected to (``addr=``), else the source's server."""
        return as_text(self.effective.get("addr")) or self.mount.server or ""

    @property
    def nconnect(self) -> int:
        """Connections per server: effective ``nconnect``, else the ``xprt:`` count, else 1."""
        value = as_int(self.effective.get("nconnect"))
        if value is not None:
            return value
        return self.xprt_count or 1

    @property
    def sec(self) -> str:
        """Effective security flavour (``sys`` when not printed)."""
        return as_text(self.effective.get("sec")) or "sys"

    @property
    def shared_writable(self) -> bool:
        """The PV is mounted read-write on two or more nodes (so caches can disagree)."""
        return self.read_write and (self.context.rw_node_count or 0) >= 2

    @property
    def local_tls_tunnel(self) -> bool:
        """The mount goes through the vendor's local TLS tunnel (efs-utils: 127.0.0.1 on a local
        port, S13), and nothing says the tunnel is plain: the PV's CSI attribute
        ``encryptInTransit`` is not false (the EFS CSI driver defaults it to true, E1) and
        ``notls`` was not requested.

        Caveat: efs-utils 2.x (efs-proxy) routes plain mounts through 127.0.0.1 as well; only the
        CSI attribute or the requested options tell them apart.
        """
        if not self.vendor.local_tls_tunnel:
            return False
        if not is_local_tunnel(self.address, as_text(self.effective.get("port"))):
            return False
        if (self.context.volume_attribute("encryptInTransit") or "").lower() == "false":
            return False
        return "notls" not in (self.requested or {})


@dataclass(frozen=True)
class MountAudit:
    """The audit of one NFS mount: what was found and what it was judged against."""

    mount: MountEntry
    profile: str
    profile_reason: str
    effective_options: dict[str, OptionValue]
    requested_options: tuple[str, ...] | None
    xprt_count: int | None
    pv_name: str | None
    findings: tuple[Finding, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: the mount's identity, the options compared and the findings."""
        return {
            "server": self.mount.server,
            "export": self.mount.export,
            "source": self.mount.source,
            "mountpoint": self.mount.mountpoint,
            "fstype": self.mount.fstype,
            "visible": self.mount.visible,
            "options": dict(self.effective_options),
            "requested_options": (
                None if self.requested_options is None else list(self.requested_options)
            ),
            "profile": self.profile,
            "profile_reason": self.profile_reason,
            "xprt_count": self.xprt_count,
            "pv_name": self.pv_name,
            "findings": [finding.to_dict() for finding in self.findings],
        }


def detect_profile(
    *,
    server: str | None = None,
    csi_driver: str | None = None,
    backend_type: str | None = None,
    options: Mapping[str, OptionValue] | None = None,
    override: str | None = None,
) -> tuple[str, str]:
    """Pick the vendor profile for a mount (rules.md A.2 detection order; :mod:`.vendors`).

    Args:
        server: the mount's server name or address.
        csi_driver: the PV's CSI driver or the StorageClass provisioner.
        backend_type: what the StorageClass says about the backend (Trident ``backendType``).
        options: effective options (``port=`` tells EFS TLS mounts on 127.0.0.1).
        override: an explicit profile that wins over detection.

    Returns:
        ``(profile, reason)`` where reason is ``override``, ``storage-class``, ``csi-driver``,
        ``server-name`` or ``default``.

    Raises:
        ValueError: the override is not a known profile.
    """
    port = as_text((options or {}).get("port"))
    entry, reason = detect_vendor(
        server=server,
        port=port,
        csi_driver=csi_driver,
        backend_type=backend_type,
        override=override,
    )
    return entry.name, reason


def build_facts(
    mount: MountEntry,
    *,
    stats: NfsMountStats | None = None,
    context: VolumeContext | None = None,
    profile: str | None = None,
    node: NodeFacts | None = None,
) -> MountFacts:
    """Gather and normalize what the rules need for one mount.

    Effective options are the mount's options overlaid with the mountstats ``opts:`` line (which
    also prints defaulted values); requested options come from ``context.requested_options``; the
    profile from the override, the context's driver and class, or the server (:mod:`.vendors`).
    """
    context = context or VolumeContext()
    effective: dict[str, OptionValue] = dict(mount.options)
    if stats is not None:
        effective.update(stats.options)
    effective = normalize_options(effective)
    requested = (
        None
        if context.requested_options is None
        else normalize_options(options_from_list(context.requested_options))
    )
    chosen, reason = detect_profile(
        server=as_text(effective.get("addr")) if mount.server is None else mount.server,
        csi_driver=context.csi_driver,
        backend_type=context.backend_type,
        options=effective,
        override=profile,
    )
    return MountFacts(
        mount=mount,
        effective=effective,
        requested=requested,
        profile=chosen,
        profile_reason=reason,
        xprt_count=stats.xprt_count if stats is not None else None,
        context=context,
        node=node or NodeFacts(),
    )


def client_key(facts: MountFacts) -> tuple[str, str, str, str, str]:
    """The kernel's NFS client identity (K1): mounts with the same key share one ``nfs_client``
    and therefore one nconnect.

    ``(address, port, transport, version, xprtsec)``: the ``addr=`` address and its port (2049
    when not printed), the transport without its address family (``tcp6`` is ``tcp`` to an IPv6
    address), the version with its minor version, and the RPC-with-TLS policy. The security
    flavour (``sec=``) is not part of it: a ``sec=sys`` and a ``sec=krb5p`` mount of one server
    share one client.
    """
    effective = facts.effective
    return (
        facts.address,
        as_text(effective.get("port")) or "2049",
        netid(effective.get("proto")) or "tcp",
        facts.version or "",
        as_text(effective.get("xprtsec")) or "none",
    )
