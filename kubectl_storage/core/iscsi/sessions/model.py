"""iSCSI sessions, their disks and node records as frozen dataclasses (``to_dict()`` is the
IscsiReport's JSON contract), the input formats, and portals split into address and tag."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass(frozen=True)
class IscsiDisk:
    """A SCSI LUN attached through a session: H:C:T:L, LUN number, ``sdX`` and device state."""

    hctl: str
    lun: int
    disk: str | None
    state: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: hctl, lun, disk, state."""
        return {"hctl": self.hctl, "lun": self.lun, "disk": self.disk, "state": self.state}


@dataclass(frozen=True)
class IscsiSession:
    """One iSCSI session (one connection in practice: open-iscsi uses one per session).

    States are kept as printed (``LOGGED IN`` from iscsiadm, ``up``/``LOGGED_IN`` from sysfs);
    ``source`` says which input produced the session: ``iscsiadm-session``, ``iscsiadm-detail``
    or ``sysfs``. Fields an input does not carry are ``None``.
    """

    target: str
    current_portal: str | None
    persistent_portal: str | None
    tpgt: int | None
    iface_name: str | None
    sid: int | None
    connection_state: str | None
    session_state: str | None
    internal_session_state: str | None
    disks: tuple[IscsiDisk, ...] = ()
    transport: str | None = None
    initiator_name: str | None = None
    iface_ip: str | None = None
    recovery_timeout_s: int | None = None
    chap_enabled: bool | None = None
    chap_mutual: bool | None = None
    host_number: int | None = None
    negotiated: tuple[tuple[str, str], ...] = field(default=())
    flash: bool | None = None
    source: str = "iscsiadm-detail"

    def to_dict(self) -> dict[str, Any]:
        """JSON contract (fixed keys first, then the extra fields)."""
        return {
            "target": self.target,
            "current_portal": self.current_portal,
            "persistent_portal": self.persistent_portal,
            "tpgt": self.tpgt,
            "iface_name": self.iface_name,
            "sid": self.sid,
            "connection_state": self.connection_state,
            "session_state": self.session_state,
            "internal_session_state": self.internal_session_state,
            "disks": [disk.to_dict() for disk in self.disks],
            "transport": self.transport,
            "initiator_name": self.initiator_name,
            "iface_ip": self.iface_ip,
            "recovery_timeout_s": self.recovery_timeout_s,
            "chap_enabled": self.chap_enabled,
            "chap_mutual": self.chap_mutual,
            "negotiated": dict(self.negotiated),
            "source": self.source,
        }


@dataclass(frozen=True)
class IscsiNodeRecord:
    """A node-database (or discovery) record: portal, target portal group tag, target IQN."""

    portal: str
    tpgt: int | None
    target: str

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: portal, tpgt, target."""
        return {"portal": self.portal, "tpgt": self.tpgt, "target": self.target}


class IscsiInputFormat(StrEnum):
    """What a captured file contains, as told by :func:`detect_iscsi_format`."""

    MULTIPATH_LL = "multipath-ll"
    MULTIPATHD_JSON = "multipathd-json"
    MULTIPATH_CONF = "multipath-conf"
    ISCSIADM_SESSION = "iscsiadm-session"
    ISCSIADM_SESSION_DETAIL = "iscsiadm-session-detail"
    ISCSIADM_NODE = "iscsiadm-node"
    ISCSI_SYSFS = "iscsi-sysfs"
    SANLUN = "sanlun"
    UNKNOWN = "unknown"


# --- portals ------------------------------------------------------------------------------------

_PORTAL = re.compile(r"^(?P<addr>\[[^\]]+\]|[^\s:,\[\]]+):(?P<port>\d+)(?:,(?P<tpgt>-?\d+))?$")
# A portal whose address was redacted before posting: anything, then ":port[,tpgt]".
_LOOSE_PORTAL = re.compile(r"^(?P<addr>\S.*?):(?P<port>\d+)(?:,(?P<tpgt>-?\d+))?$")


def split_portal(text: str) -> tuple[str, int | None]:
    """Split ``addr:port,tpgt`` (IPv4, hostname or bracketed IPv6) into (``addr:port``, tpgt).

    An address that is none of these (redacted: ``<ip of node A>:3260,1``) is kept as written,
    with the port and tag still split off. Text that is not a portal at all is returned whole
    with a ``None`` tpgt.
    """
    match = _PORTAL.match(text.strip()) or _LOOSE_PORTAL.match(text.strip())
    if not match:
        return text.strip(), None
    tpgt = match.group("tpgt")
    return f"{match.group('addr')}:{match.group('port')}", int(tpgt) if tpgt is not None else None
