"""A dump of /sys/class/iscsi_session and iscsi_connection (``grep -r . …``), and the SCSI device
states of the sessions' disks."""

from __future__ import annotations

import re
from collections.abc import Iterable

from kubectl_storage.core.iscsi.sessions.model import IscsiDisk, IscsiSession
from kubectl_storage.core.iscsi.sessions.values import EMPTY, as_int, optional

# --- sysfs dump ---------------------------------------------------------------------------------

_SYSFS_SESSION = re.compile(r"iscsi_session/session(?P<sid>\d+)/(?P<rest>.+)$")
_SYSFS_CONN = re.compile(r"iscsi_connection/connection(?P<sid>\d+):(?P<cid>\d+)/(?P<attr>\w+)$")
_SYSFS_LUN = re.compile(r"^device/target[\d:]+/(?P<hctl>\d+:\d+:\d+:\d+)/(?P<attr>block|state)$")


def parse_iscsi_sysfs_dump(text: str) -> tuple[IscsiSession, ...]:
    """Read the ``<path>: <value>`` sysfs dump described in the module docstring.

    Returns:
        One :class:`IscsiSession` per ``sessionN`` directory, sorted by sid; connection 0 of
        each session provides the portals and ``connection_state``.
    """
    session_attrs: dict[int, dict[str, str]] = {}
    conn_attrs: dict[int, dict[str, str]] = {}
    luns: dict[int, dict[str, dict[str, str]]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith(":"):  # an empty file: "path:" with no value
            path, value = line[:-1], ""
        elif ": " in line:  # paths contain ":" (connection1:0) but never ": "
            path, _, value = line.partition(": ")
            value = value.strip()
        else:
            continue
        session = _SYSFS_SESSION.search(path)
        if session:
            sid, rest = int(session.group("sid")), session.group("rest")
            if "password" in rest:
                continue  # never keep CHAP secrets
            lun = _SYSFS_LUN.match(rest)
            if lun:
                luns.setdefault(sid, {}).setdefault(lun.group("hctl"), {})[lun.group("attr")] = (
                    value
                )
            elif "/" not in rest:
                session_attrs.setdefault(sid, {})[rest] = value
            continue
        connection = _SYSFS_CONN.search(path)
        if connection and connection.group("cid") == "0":
            conn_attrs.setdefault(int(connection.group("sid")), {})[connection.group("attr")] = (
                value
            )

    def portal(attrs: dict[str, str], addr_key: str, port_key: str) -> str | None:
        addr, port = attrs.get(addr_key), attrs.get(port_key)
        if not addr:
            return None
        if ":" in addr and not addr.startswith("["):
            addr = f"[{addr}]"  # IPv6: bracket as iscsiadm does
        return f"{addr}:{port}" if port else addr

    sessions = []
    for sid in sorted(set(session_attrs) | set(conn_attrs)):
        attrs, conn = session_attrs.get(sid, {}), conn_attrs.get(sid, {})
        disks = tuple(
            IscsiDisk(
                hctl=hctl,
                lun=int(hctl.rsplit(":", 1)[1]),
                disk=optional(info.get("block", "")),
                state=optional(info.get("state", "")),
            )
            for hctl, info in sorted(
                luns.get(sid, {}).items(), key=lambda item: [int(x) for x in item[0].split(":")]
            )
        )
        user, user_in = attrs.get("username"), attrs.get("username_in")
        sessions.append(
            IscsiSession(
                target=attrs.get("targetname", ""),
                current_portal=portal(conn, "address", "port"),
                persistent_portal=portal(conn, "persistent_address", "persistent_port"),
                tpgt=as_int(attrs.get("tpgt")),
                iface_name=optional(attrs.get("ifacename", "")),
                sid=sid,
                connection_state=optional(conn.get("state", "")),
                session_state=optional(attrs.get("state", "")),
                internal_session_state=None,
                disks=disks,
                initiator_name=optional(attrs.get("initiatorname", "")),
                recovery_timeout_s=as_int(attrs.get("recovery_tmo")),
                chap_enabled=None if user is None else user not in EMPTY,
                chap_mutual=None if user_in is None else user_in not in EMPTY,
                source="sysfs",
            )
        )
    return tuple(sessions)


def scsi_device_states(sessions: Iterable[IscsiSession]) -> dict[str, str]:
    """``{"sdb": "blocked", …}``: the kernel's state of each SCSI disk the sessions attach
    (``Attached scsi disk sdb State: blocked`` in ``iscsiadm -P 3``, ``…/H:C:T:L/state`` in
    sysfs), for disks whose name and state are known."""
    return {
        disk.disk: disk.state
        for session in sessions
        for disk in session.disks
        if disk.disk and disk.state
    }
