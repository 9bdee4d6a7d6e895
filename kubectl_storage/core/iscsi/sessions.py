"""open-iscsi sessions and node records: parsers for ``iscsiadm`` output and sysfs dumps.

Inputs understood (all become :class:`IscsiSession` / :class:`IscsiNodeRecord`):

* ``iscsiadm -m session`` — ``tcp: [1] 10.0.0.1:3260,1 iqn… (non-flash)``;
* ``iscsiadm -m session -P 1`` / ``-P 3`` — Target, Current/Persistent Portal, Iface …, SID,
  the three state lines, timeouts, CHAP, negotiated parameters and attached SCSI disks;
* ``iscsiadm -m node`` and ``iscsiadm -m discovery`` — ``10.0.0.1:3260,1 iqn…``; also
  ``iscsiadm -m node -P 1`` (``Target:`` / ``Portal:``) and the records of ``iscsiadm -m node -o
  show`` (``# BEGIN RECORD`` … ``node.name = …``; only the name, portal and tag are read);
* a sysfs dump (format below) of ``/sys/class/iscsi_session/*`` and ``iscsi_connection/*``.

IPv6 portals are bracketed (``[fd00::1]:3260,1``); portals are kept as ``address:port`` strings
with the target portal group tag (``tpgt``) split off.

CHAP secrets are never kept: password lines/files are skipped without reading their values, and
even usernames are reduced to "present or not" (``chap_enabled``, ``chap_mutual``).

Captured text is often pasted: the parsers take ``notes`` (a list of
:class:`~kubectl_storage.core.nodes.mounts.LineNote`) and record there each line they skipped or
rejoined instead of refusing the text; a CHAP line is never quoted in a note. Portals that are
not addresses (``<netapp iscsi ip address node A>:3260,1072``, ``truenas.[REDACTED]:3260,1``:
redacted before posting) are kept as written, with their port and tag split off.

Sysfs dump format (written by the node collection script)
---------------------------------------------------------
One ``<path>: <value>`` line per file; ``#`` lines and blank lines are ignored; the path may be
absolute (``/sys/class/…``) or start at ``iscsi_session``/``iscsi_connection``::

    /sys/class/iscsi_session/session1/targetname: iqn.1992-08.com.netapp:sn.1:vs.4
    /sys/class/iscsi_session/session1/state: LOGGED_IN
    /sys/class/iscsi_session/session1/recovery_tmo: 5
    /sys/class/iscsi_session/session1/tpgt: 1027
    /sys/class/iscsi_session/session1/ifacename: default
    /sys/class/iscsi_session/session1/initiatorname: iqn.1994-05.com.redhat:node-a
    /sys/class/iscsi_session/session1/username: (null)
    /sys/class/iscsi_session/session1/username_in: (null)
    /sys/class/iscsi_session/session1/device/target2:0:0/2:0:0:1/block: sdc
    /sys/class/iscsi_session/session1/device/target2:0:0/2:0:0:1/state: running
    /sys/class/iscsi_connection/connection1:0/persistent_address: 10.0.0.10
    /sys/class/iscsi_connection/connection1:0/persistent_port: 3260
    /sys/class/iscsi_connection/connection1:0/address: 10.0.0.10
    /sys/class/iscsi_connection/connection1:0/port: 3260
    /sys/class/iscsi_connection/connection1:0/state: up

The ``…/<H:C:T:L>/block`` line names the disk under that LUN (``ls …/block``), and
``…/<H:C:T:L>/state`` is that SCSI device's state. An empty username or ``(null)`` means unset.
The collector should not dump ``password``/``password_in`` (they need CAP_SYS_ADMIN anyway);
if it does, the reader drops them.

:func:`detect_iscsi_format` tells which parser a captured file needs (for ``--from-file``).
Pure: text in, dataclasses out; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kubectl_storage.core.nodes.mounts import REJOINED, LineNote, looks_like_prompt, note_line

__all__ = [
    "IscsiDisk",
    "IscsiInputFormat",
    "IscsiNodeRecord",
    "IscsiSession",
    "detect_iscsi_format",
    "parse_iscsi_sysfs_dump",
    "parse_iscsiadm_node",
    "parse_iscsiadm_session",
    "parse_iscsiadm_session_detail",
    "scsi_device_states",
    "split_portal",
]


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


# --- iscsiadm -m session / -m node --------------------------------------------------------------

# The portal may hold spaces when it was redacted ("<ip of node A>:3260,1"): it runs up to the
# last ":port,tpgt " before the target.
_SESSION_LINE = re.compile(
    r"^(?P<transport>[\w-]+): \[(?P<sid>\d+)\] (?P<portal>\S.*?:\d+,-?\d+|\S+) (?P<target>\S+)"
    r"(?: \((?P<flash>non-flash|flash)\))?\s*$"
)
_NODE_LINE = re.compile(r"^(?![\w-]+: \[\d+\] )(?P<portal>\S.*?:\d+,-?\d+) (?P<target>\S+)\s*$")
_NO_SESSIONS = re.compile(r"^iscsiadm: No (?:active sessions|records found)", re.I)


def _note(notes: list[LineNote] | None, number: int, line: str, reason: str) -> None:
    """A skipped line; CHAP lines are never quoted."""
    if any(word in line.lower() for word in ("password", "username")):
        line = "(a CHAP line, not shown)"
    note_line(notes, number, line, reason)


def parse_iscsiadm_session(
    text: str, notes: list[LineNote] | None = None
) -> tuple[IscsiSession, ...]:
    """Parse the flat ``iscsiadm -m session`` listing.

    The portal printed there goes to ``persistent_portal`` (open-iscsi prints the persistent
    address in the flat listing); states and disks are unknown (``None``/empty). Other lines
    are skipped (``notes``), except iscsiadm's own "No active sessions".
    """
    sessions = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _SESSION_LINE.match(line.strip())
        if not match:
            if line.strip() and not _NO_SESSIONS.match(line.strip()):
                _note(notes, number, line, "not an iscsiadm -m session line")
            continue
        portal, tpgt = split_portal(match.group("portal"))
        flash = match.group("flash")
        sessions.append(
            IscsiSession(
                target=match.group("target"),
                current_portal=None,
                persistent_portal=portal,
                tpgt=tpgt,
                iface_name=None,
                sid=int(match.group("sid")),
                connection_state=None,
                session_state=None,
                internal_session_state=None,
                transport=match.group("transport"),
                flash=None if flash is None else flash == "flash",
                source="iscsiadm-session",
            )
        )
    return tuple(sessions)


_RECORD_START = re.compile(r"^#\s*BEGIN RECORD", re.I)
_RECORD_KEYS = {
    "node.name": "target",
    "node.tpgt": "tpgt",
    "node.conn[0].address": "address",
    "node.conn[0].port": "port",
}


def parse_iscsiadm_node(
    text: str, notes: list[LineNote] | None = None
) -> tuple[IscsiNodeRecord, ...]:
    """Parse ``iscsiadm -m node`` (or ``-m discovery``/``discoverydb --discover``) output.

    The flat listing (``portal,tpgt target``), the ``-P 1`` tree (``Target:`` then ``Portal:``
    lines) and the ``-o show`` records (``# BEGIN RECORD`` … ``# END RECORD``) are understood;
    lines of none of them are skipped (``notes``).
    """
    if _RECORD_START.search(text) or re.search(r"^\s*node\.name\s*=", text, re.M):
        return _parse_node_records(text)
    records = []
    target: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        match = _NODE_LINE.match(line)
        if match and not looks_like_prompt(line):
            portal, tpgt = split_portal(match.group("portal"))
            records.append(IscsiNodeRecord(portal=portal, tpgt=tpgt, target=match.group("target")))
            continue
        if line.startswith("Target:"):
            words = line.split(":", 1)[1].split()
            target = words[0] if words else None
            continue
        if line.startswith("Portal:") and target:
            portal, tpgt = split_portal(line.split(":", 1)[1].strip())
            records.append(IscsiNodeRecord(portal=portal, tpgt=tpgt, target=target))
            continue
        if target and _KV.match(line):
            continue  # "Iface Name: default" and the like under a -P 1 portal
        if not _NO_SESSIONS.match(line):
            _note(notes, number, raw, "not an iscsiadm -m node line")
    return tuple(records)


def _parse_node_records(text: str) -> tuple[IscsiNodeRecord, ...]:
    """``-o show`` records: only node.name, node.tpgt and connection 0's address and port."""
    records = []
    values: dict[str, str] = {}

    def flush() -> None:
        if values.get("target"):
            address = values.get("address", "")
            if ":" in address and not address.startswith("["):
                address = f"[{address}]"
            port = values.get("port")
            portal = f"{address}:{port}" if address and port else address
            records.append(
                IscsiNodeRecord(
                    portal=portal, tpgt=_int(values.get("tpgt")), target=values["target"]
                )
            )
        values.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if _RECORD_START.match(line):
            flush()
            continue
        key, sep, value = line.partition("=")
        name = _RECORD_KEYS.get(key.strip()) if sep else None
        if name == "target" and values.get("target"):
            flush()  # records printed without BEGIN/END lines
        if name:
            values[name] = value.strip()
    flush()
    return tuple(records)


# --- iscsiadm -m session -P 1 / -P 3 ------------------------------------------------------------

_KV = re.compile(r"^(?P<key>[A-Za-z][\w ]*?):\s*(?P<value>.*?)\s*$")
# "\s*": pasted text can lose the tab between the number and "State:" ("Host Number: 2State:").
_HOST = re.compile(r"^Host Number:\s*(?P<host>\d+)\s*State:\s*(?P<state>\S+)")
_LUN = re.compile(r"^scsi(?P<host>\d+) Channel (?P<chan>\d+) Id (?P<id>\d+) Lun: (?P<lun>\d+)")
_DISK = re.compile(r"^Attached scsi disk (?P<disk>\S+?)\s*State:\s*(?P<state>\S+)")
_DISK_ALONE = re.compile(r"^Attached scsi disk (?P<disk>\S+)$")
_STATE_ALONE = re.compile(r"^State:\s*(?P<state>\S+)$")
#: What iscsiadm prints before the first target.
_DETAIL_PREAMBLE = re.compile(r"^(?:iSCSI Transport Class version|version )")
_NEGOTIATED = {
    "HeaderDigest",
    "DataDigest",
    "MaxRecvDataSegmentLength",
    "MaxXmitDataSegmentLength",
    "FirstBurstLength",
    "MaxBurstLength",
    "ImmediateData",
    "InitialR2T",
    "MaxOutstandingR2T",
}
_EMPTY = {"", "<empty>", "(null)", "<NULL>"}


def _optional(value: str) -> str | None:
    return None if value in _EMPTY else value


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


@dataclass
class _SessionBuilder:
    """Mutable accumulator for one session block of ``-P 1/-P 3`` output."""

    target: str
    flash: bool | None
    values: dict[str, str] = field(default_factory=dict)
    negotiated: list[tuple[str, str]] = field(default_factory=list)
    disks: list[list[Any]] = field(default_factory=list)  # [hctl, lun, disk, state]
    host_number: int | None = None

    def build(self) -> IscsiSession:
        get = self.values.get
        current, tpgt = (
            split_portal(get("Current Portal", ""))
            if "Current Portal" in self.values
            else (None, None)
        )
        persistent, persistent_tpgt = (
            split_portal(get("Persistent Portal", ""))
            if "Persistent Portal" in self.values
            else (None, None)
        )
        user, user_in = get("username"), get("username_in")
        return IscsiSession(
            target=self.target,
            current_portal=current,
            persistent_portal=persistent,
            tpgt=tpgt if tpgt is not None else persistent_tpgt,
            iface_name=_optional(get("Iface Name", "")),
            sid=_int(get("SID")),
            connection_state=get("iSCSI Connection State"),
            session_state=get("iSCSI Session State"),
            internal_session_state=get("Internal iscsid Session State"),
            disks=tuple(IscsiDisk(hctl=h, lun=lun, disk=d, state=s) for h, lun, d, s in self.disks),
            transport=_optional(get("Iface Transport", "")),
            initiator_name=_optional(get("Iface Initiatorname", "")),
            iface_ip=_optional(get("Iface IPaddress", "")),
            recovery_timeout_s=_int(get("Recovery Timeout")),
            chap_enabled=None if user is None else user not in _EMPTY,
            chap_mutual=None if user_in is None else user_in not in _EMPTY,
            host_number=self.host_number,
            negotiated=tuple(self.negotiated),
            flash=self.flash,
            source="iscsiadm-detail",
        )


def parse_iscsiadm_session_detail(
    text: str, notes: list[LineNote] | None = None
) -> tuple[IscsiSession, ...]:
    """Parse ``iscsiadm -m session -P 1`` or ``-P 3`` output.

    Indentation is not relied on (tabs, spaces or none at all all occur in captures), nor the
    whitespace before ``State:`` on the host and disk lines. A session starts at each ``Current
    Portal:`` line and belongs to the last ``Target:`` seen. Password lines are skipped without
    keeping their values. An ``Attached scsi disk sdX`` line whose ``State:`` was wrapped onto the
    next line is rejoined; a line that is none of iscsiadm's is skipped (both in ``notes``).

    Args:
        text: the command's output.
        notes: where to record skipped and rejoined lines.

    Returns:
        One :class:`IscsiSession` per session, in printed order.
    """
    sessions: list[IscsiSession] = []
    target: str | None = None
    flash: bool | None = None
    current: _SessionBuilder | None = None
    lines = text.splitlines()
    index = -1
    while index + 1 < len(lines):
        index += 1
        raw = lines[index]
        line = raw.strip()
        if not line or line.startswith("*"):
            continue
        if line.startswith("Target:"):
            words = line.split(":", 1)[1].split()
            target = words[0] if words else ""
            flash = None
            if len(words) > 1 and words[1] in {"(non-flash)", "(flash)"}:
                flash = words[1] == "(flash)"
            continue
        if line.startswith("Current Portal:") and target is not None:
            if current is not None:
                sessions.append(current.build())
            current = _SessionBuilder(target=target, flash=flash)
        if current is None:
            if not _DETAIL_PREAMBLE.match(line) and not _KV.match(line):
                _note(notes, index + 1, raw, "not an iscsiadm -m session -P 3 line")
            continue
        if line.lower().startswith("password"):
            continue  # CHAP secrets (masked or not) are never read
        alone = _DISK_ALONE.match(line)
        if alone and index + 1 < len(lines) and _STATE_ALONE.match(lines[index + 1].strip()):
            line = f"{line} {lines[index + 1].strip()}"
            if notes is not None:
                notes.append(
                    LineNote(index + 1, line, REJOINED, "one line wrapped over 2", index + 2)
                )
            index += 1
        host, lun, disk = _HOST.match(line), _LUN.match(line), _DISK.match(line)
        if host:
            current.host_number = int(host.group("host"))
        elif lun:
            # "scsi3 Channel 00 Id 0 Lun: 1" -> "3:0:0:1" (numbers without zero padding)
            hctl = ":".join(str(int(part)) for part in lun.group("host", "chan", "id", "lun"))
            current.disks.append([hctl, int(lun.group("lun")), None, None])
        elif disk:
            if current.disks and current.disks[-1][2] is None:
                current.disks[-1][2:] = [disk.group("disk"), disk.group("state")]
        else:
            kv = _KV.match(line)
            if kv and not looks_like_prompt(line):
                key, value = kv.group("key"), kv.group("value")
                if key in _NEGOTIATED:
                    current.negotiated.append((key, value))
                else:
                    current.values.setdefault(key, value)
            else:
                _note(notes, index + 1, raw, "not an iscsiadm -m session -P 3 line")
    if current is not None:
        sessions.append(current.build())
    return tuple(sessions)


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
                disk=_optional(info.get("block", "")),
                state=_optional(info.get("state", "")),
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
                tpgt=_int(attrs.get("tpgt")),
                iface_name=_optional(attrs.get("ifacename", "")),
                sid=sid,
                connection_state=_optional(conn.get("state", "")),
                session_state=_optional(attrs.get("state", "")),
                internal_session_state=None,
                disks=disks,
                initiator_name=_optional(attrs.get("initiatorname", "")),
                recovery_timeout_s=_int(attrs.get("recovery_tmo")),
                chap_enabled=None if user is None else user not in _EMPTY,
                chap_mutual=None if user_in is None else user_in not in _EMPTY,
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


# --- format detection ---------------------------------------------------------------------------

_DETECTORS: tuple[tuple[IscsiInputFormat, re.Pattern[str]], ...] = (
    (IscsiInputFormat.MULTIPATHD_JSON, re.compile(r'"(?:major_version|path_groups)"\s*:')),
    (IscsiInputFormat.SANLUN, re.compile(r"^\s*ONTAP Path:", re.M)),
    (
        IscsiInputFormat.ISCSI_SYSFS,
        re.compile(r"iscsi_(?:session/session|connection/connection)\d"),
    ),
    (
        IscsiInputFormat.ISCSIADM_SESSION_DETAIL,
        re.compile(r"^\s*(?:Current|Persistent) Portal:", re.M),
    ),
    (IscsiInputFormat.ISCSIADM_NODE, re.compile(r"^\s*#\s*BEGIN RECORD", re.M)),
    (IscsiInputFormat.ISCSIADM_NODE, re.compile(r"^\s*Portal: \S+:\d+,-?\d+", re.M)),
    (IscsiInputFormat.ISCSIADM_SESSION, re.compile(r"^[\w-]+: \[\d+\] \S.*?:\d+,-?\d+ \S+", re.M)),
    (
        IscsiInputFormat.MULTIPATH_LL,
        re.compile(
            r"^(?:size=\S+ features='|\[size=)|policy='[^']*' prio=|\\_ \S+ \d+ \[prio=", re.M
        ),
    ),
    (
        IscsiInputFormat.MULTIPATH_CONF,
        re.compile(r"^\s*(?:defaults|devices|blacklist|multipaths|overrides)\s*\{", re.M),
    ),
    (IscsiInputFormat.ISCSIADM_NODE, re.compile(r"^\S+:\d+,-?\d+ \S+\s*$", re.M)),
)


def detect_iscsi_format(text: str) -> IscsiInputFormat:
    """Tell which parser a captured file needs.

    Checks run from the most specific marker to the least (multipathd JSON keys, sanlun's
    ``ONTAP Path:``, sysfs paths, ``Current Portal:``, the ``tcp: [N]`` session line, multipath
    property/group lines, multipath.conf sections, bare ``portal,tpgt iqn`` node lines).

    Returns:
        The detected :class:`IscsiInputFormat`; ``UNKNOWN`` when nothing matches.
    """
    for kind, pattern in _DETECTORS:
        if pattern.search(text):
            return kind
    return IscsiInputFormat.UNKNOWN
