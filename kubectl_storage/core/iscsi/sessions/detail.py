"""``iscsiadm -m session -P 1`` / ``-P 3``: sessions with their states, timeouts, CHAP and the
SCSI disks under each."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.iscsi.sessions.model import IscsiDisk, IscsiSession, split_portal
from kubectl_storage.core.iscsi.sessions.values import (
    EMPTY,
    KEY_VALUE,
    as_int,
    note_skipped,
    optional,
)
from kubectl_storage.core.nodes.paste import REJOINED, LineNote, looks_like_prompt

# --- iscsiadm -m session -P 1 / -P 3 ------------------------------------------------------------

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
            iface_name=optional(get("Iface Name", "")),
            sid=as_int(get("SID")),
            connection_state=get("iSCSI Connection State"),
            session_state=get("iSCSI Session State"),
            internal_session_state=get("Internal iscsid Session State"),
            disks=tuple(IscsiDisk(hctl=h, lun=lun, disk=d, state=s) for h, lun, d, s in self.disks),
            transport=optional(get("Iface Transport", "")),
            initiator_name=optional(get("Iface Initiatorname", "")),
            iface_ip=optional(get("Iface IPaddress", "")),
            recovery_timeout_s=as_int(get("Recovery Timeout")),
            chap_enabled=None if user is None else user not in EMPTY,
            chap_mutual=None if user_in is None else user_in not in EMPTY,
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
            if not _DETAIL_PREAMBLE.match(line) and not KEY_VALUE.match(line):
                note_skipped(notes, index + 1, raw, "not an iscsiadm -m session -P 3 line")
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
            kv = KEY_VALUE.match(line)
            if kv and not looks_like_prompt(line):
                key, value = kv.group("key"), kv.group("value")
                if key in _NEGOTIATED:
                    current.negotiated.append((key, value))
                else:
                    current.values.setdefault(key, value)
            else:
                note_skipped(notes, index + 1, raw, "not an iscsiadm -m session -P 3 line")
    if current is not None:
        sessions.append(current.build())
    return tuple(sessions)
