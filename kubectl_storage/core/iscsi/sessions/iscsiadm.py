"""``iscsiadm -m session`` (one line per session) and ``iscsiadm -m node`` (flat or
``# BEGIN RECORD`` blocks)."""

from __future__ import annotations

import re

from kubectl_storage.core.iscsi.sessions.model import IscsiNodeRecord, IscsiSession, split_portal
from kubectl_storage.core.iscsi.sessions.values import KEY_VALUE, as_int, note_skipped
from kubectl_storage.core.nodes.paste import LineNote, looks_like_prompt

# --- iscsiadm -m session / -m node --------------------------------------------------------------

# The portal may hold spaces when it was redacted ("<ip of node A>:3260,1"): it runs up to the
# last ":port,tpgt " before the target.
_SESSION_LINE = re.compile(
    r"^(?P<transport>[\w-]+): \[(?P<sid>\d+)\] (?P<portal>\S.*?:\d+,-?\d+|\S+) (?P<target>\S+)"
    r"(?: \((?P<flash>non-flash|flash)\))?\s*$"
)
_NODE_LINE = re.compile(r"^(?![\w-]+: \[\d+\] )(?P<portal>\S.*?:\d+,-?\d+) (?P<target>\S+)\s*$")
_NO_SESSIONS = re.compile(r"^iscsiadm: No (?:active sessions|records found)", re.I)


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
                note_skipped(notes, number, line, "not an iscsiadm -m session line")
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
        if target and KEY_VALUE.match(line):
            continue  # "Iface Name: default" and the like under a -P 1 portal
        if not _NO_SESSIONS.match(line):
            note_skipped(notes, number, raw, "not an iscsiadm -m node line")
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
                    portal=portal, tpgt=as_int(values.get("tpgt")), target=values["target"]
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
