"""Kernel-log health of one node, the report's part: the debug pod's ``kernel-log`` section as
read, and the storage events of the log grouped by device (or NFS server) with the volumes
mounted from it now and their findings (:mod:`.kernel_log_rules` builds and judges them).

The section starts with one header line, ``# kubectl-storage kernel-log source=kmsg
uptime=123.45 btime=1765000000`` (``source=none error=...`` when nothing could be read), then
the log lines that :data:`PREFILTER` keeps. Pure: frozen dataclasses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.nodes.kernel_log import (
    FORMAT_PLAIN,
    KernelEvent,
    read_kernel_log,
)
from kubectl_storage.core.report.findings import Finding

SECTION = "kernel-log"
HEADER = "# kubectl-storage kernel-log"

#: The lines worth sending back from the node, as a lower-case POSIX ERE: a line that matches
#: none of these is none of kernel_log's families (tests/unit/nodes check it on every fixture).
PREFILTER = (
    r"ext[234]-fs|xfs [(]|buffer i/o error|error, dev |detected conn error|: server [^ ]+ "
    r"(not responding|ok)|blocked for more than"
)


_HEADER_FIELD = re.compile(r"(\w+)=(\S+)")


@dataclass(frozen=True)
class KernelLogText:
    """The section as read: where the log came from (``kmsg``, ``journal``, ``dmesg``, ``file``
    or ``none``), why it could not be read, the clock facts and the log lines."""

    source: str
    error: str | None
    uptime_s: float | None
    btime: int | None
    body: str


def kernel_log_section(text: str) -> KernelLogText:
    """Read the debug pod's ``kernel-log`` section (a text without the header is a captured log
    file: ``source`` ``file``, no clock facts)."""
    first, _, rest = text.partition("\n")
    if not first.startswith(HEADER):
        return KernelLogText("file", None, None, None, text)
    fields = dict(_HEADER_FIELD.findall(first[len(HEADER) :]))
    error = first.partition(" error=")[2].strip() or None
    return KernelLogText(
        source=fields.get("source", "none"),
        error=error,
        uptime_s=_float(fields.get("uptime")),
        btime=_int(fields.get("btime")),
        body=rest,
    )


def device_aliases(
    dm_names: Mapping[str, str], session_disks: Mapping[int, Sequence[str]]
) -> dict[str, tuple[str, ...]]:
    """Other names of the devices the kernel log names: ``dm-3`` → its ``/dev/mapper`` name
    (``dm_names``: mapper name → ``dm-N``), and ``connection5:0`` → the disks of iSCSI session
    5 (open-iscsi runs one connection per session, numbered 0)."""
    aliases: dict[str, tuple[str, ...]] = {}
    for name, dm in dm_names.items():
        aliases[dm] = (*aliases.get(dm, ()), f"/dev/mapper/{name}", name)
    for sid, disks in session_disks.items():
        aliases[f"connection{sid}:0"] = tuple(disks)
    return aliases


def is_kernel_log(text: str) -> bool:
    """Whether a captured file is a kernel log (``dmesg``, ``journalctl -k``, ``/dev/kmsg``): most
    of its lines carry a kernel log's time stamp or record prefix."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    records = read_kernel_log(text)
    timed = sum(1 for record in records if record.source_format != FORMAT_PLAIN)
    return timed * 2 > len(lines)


@dataclass(frozen=True)
class VolumeTag:
    """The Kubernetes names of one volume an event landed on."""

    namespace: str | None
    pod: str | None
    pvc: str | None
    pv: str | None

    @property
    def label(self) -> str:
        """``namespace/pvc (pod)``, or the PV, or ``-``."""
        claim = f"{self.namespace}/{self.pvc}" if self.pvc else (self.pv or "-")
        return f"{claim} (pod {self.pod})" if self.pod else claim

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: namespace, pod, pvc, pv."""
        return {"namespace": self.namespace, "pod": self.pod, "pvc": self.pvc, "pv": self.pv}


@dataclass(frozen=True)
class EventGroup:
    """The events of one family on one device (or NFS server): how many, the first and last
    (with wall time and age when the log had them), what the mount table says now, and the
    volumes mounted from the device now."""

    kind: str
    subject: str
    count: int
    first: KernelEvent
    last: KernelEvent
    first_at: str | None
    last_at: str | None
    last_age_s: float | None
    state: str | None
    reason: str
    mountpoints: tuple[str, ...]
    volumes: tuple[VolumeTag, ...]
    findings: tuple[Finding, ...]

    @property
    def where(self) -> str:
        """The subject and its volumes, as a user reads them."""
        if not self.volumes:
            return self.subject
        return f"{self.subject} ({', '.join(volume.label for volume in self.volumes)})"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "kind": self.kind,
            "cause": self.last.cause,
            "subject": self.subject,
            "count": self.count,
            "first_at": self.first_at,
            "last_at": self.last_at,
            "last_age_seconds": None if self.last_age_s is None else round(self.last_age_s),
            "state": self.state,
            "reason": self.reason,
            "mountpoints": list(self.mountpoints),
            "volumes": [volume.to_dict() for volume in self.volumes],
            "message": self.last.message,
            "details": dict(self.last.details),
            "findings": [finding.to_dict() for finding in self.findings],
        }


@dataclass(frozen=True)
class KernelHealth:
    """One node's kernel-log part of a report."""

    source: str
    error: str | None
    lines: int
    events: tuple[EventGroup, ...]
    nfs_servers: tuple[EventGroup, ...]
    unread: tuple[Finding, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every finding, the unread log's first."""
        groups = (*self.events, *self.nfs_servers)
        return (*self.unread, *(finding for group in groups for finding in group.findings))

    def subject_findings(self) -> list[tuple[str, Finding]]:
        """Each finding with what it is about (``kernel log``, a device or a server)."""
        found = [("kernel log", finding) for finding in self.unread]
        for group in (*self.events, *self.nfs_servers):
            found.extend((group.where, finding) for finding in group.findings)
        return found

    def to_dict(self) -> dict[str, Any]:
        """The node's report keys: ``kernel_log``, ``kernel_events``, ``nfs_servers``."""
        return {
            "kernel_log": {
                "source": self.source,
                "error": self.error,
                "lines": self.lines,
                "findings": [finding.to_dict() for finding in self.unread],
            },
            "kernel_events": [group.to_dict() for group in self.events],
            "nfs_servers": [group.to_dict() for group in self.nfs_servers],
        }


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(float(text)) if text is not None else None
    except ValueError:
        return None


def kernel_log_keys(health: KernelHealth | None) -> dict[str, Any]:
    """A node report's kernel-log keys: ``kernel_log`` (null when no log was read or given),
    ``kernel_events`` and ``nfs_servers``."""
    if health is None:
        return {"kernel_log": None, "kernel_events": [], "nfs_servers": []}
    return health.to_dict()
