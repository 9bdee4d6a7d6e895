"""Kernel-log health rules: the storage events of a node's kernel log, grouped by device (or
NFS server), placed on the volumes mounted from it now, each group with one finding.

What a user acts on is the state now, so severities follow it: a filesystem still read-only
after an error, an XFS shut down and still mounted, or an NFS server whose last word was "not
responding" is an error; an event on a volume mounted now within :data:`RECENT_S` a warning;
the rest (older, or on a device nothing is mounted from now) is information, so a node's past
does not raise alarms. Grouping keeps a burst of thousands of I/O error lines one finding.
Pure: texts, mount entries and volume owners in, :class:`~.kernel_health.KernelHealth` out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from kubectl_storage.core.nodes.kernel_health import (
    EventGroup,
    KernelHealth,
    VolumeTag,
    kernel_log_section,
)
from kubectl_storage.core.nodes.kernel_log import (
    BUFFER_IO_ERROR,
    FS_REMOUNTED_RO,
    HUNG_TASK,
    ISCSI_CONN_ERROR,
    NFS_NOT_RESPONDING,
    NFS_OK,
    KernelEvent,
    parse_kernel_log,
)
from kubectl_storage.core.nodes.kernel_log_mounts import (
    NO_LONGER_READ_ONLY,
    NOT_MOUNTED,
    STILL_MOUNTED,
    STILL_READ_ONLY,
    UNKNOWN,
    LocatedEvent,
    NfsServerState,
    locate_events,
    nfs_server_states,
    server_key,
)
from kubectl_storage.core.nodes.mount_model import MountEntry
from kubectl_storage.core.nodes.volume_owners import VolumeOwner
from kubectl_storage.core.report.findings import Finding, Severity
from kubectl_storage.core.report.rule_catalogue import RuleCatalogue, RuleSpec

#: An event on a volume mounted now is a warning for this long (seconds), information after.
RECENT_S = 24 * 3600

_SOURCES = {
    "K1": "node-problem-detector config/kernel-monitor.json (ReadonlyFilesystem, "
    "IOError, XfsShutdown, TaskHung) and config/plugin/check_ro_filesystem.sh",
    "K2": "Linux fs/ext4/super.c ext4_handle_error (errors=remount-ro) and commits "
    "d3476f3dad4a, 6b76715d5e41 (emergency_ro)",
    "K3": "Linux fs/xfs/xfs_fsops.c xfs_do_force_shutdown (a shutdown lasts until unmount)",
    "K4": "Linux fs/buffer.c buffer_io_error, block/blk-mq.c blk_print_req_error",
    "K5": "Linux drivers/scsi/scsi_transport_iscsi.c iscsi_conn_error_event; "
    "include/uapi/scsi/iscsi_if.h (1011, 1020)",
    "K6": "Linux net/sunrpc/clnt.c rpc_check_timeout, call_decode; nfs(5) hard and soft",
    "K7": "Linux kernel/hung_task.c check_hung_task",
}

KERNEL_LOG_RULES = RuleCatalogue(
    _SOURCES,
    (
        RuleSpec("KLOG000", "info", "the node's kernel log could not be read", "K1"),
        RuleSpec("KLOG001", "error", "filesystem read-only now after a kernel error", "K1 K2"),
        RuleSpec("KLOG002", "error", "XFS shut down and still mounted", "K1 K3"),
        RuleSpec(
            "KLOG003", "warn", "filesystem error; whether it is read-only now is unknown", "K2"
        ),
        RuleSpec(
            "KLOG004", "info", "filesystem was read-only after an error; it is not now", "K1 K2"
        ),
        RuleSpec("KLOG010", "warn (info when old or unmounted)", "I/O errors on a device", "K4"),
        RuleSpec("KLOG020", "warn (info when old)", "iSCSI connection errors", "K5"),
        RuleSpec("KLOG030", "error", "NFS server not responding now", "K6"),
        RuleSpec("KLOG031", "warn (info when old)", "NFS server stopped responding, then OK", "K6"),
        RuleSpec(
            "KLOG040", "warn (info when old or unplaced)", "tasks blocked in the kernel", "K7"
        ),
    ),
)


def assess_kernel_log(
    text: str,
    mounts: Sequence[MountEntry],
    owners: Mapping[str, VolumeOwner],
    *,
    kernel_release: str | None = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> KernelHealth:
    """The kernel-log health of a node from its ``kernel-log`` section (or a captured log),
    its mount table now and the owners of its kubelet mount points."""
    log = kernel_log_section(text)
    if log.source == "none":
        why = log.error or "no source was readable"
        unread = KERNEL_LOG_RULES.cite(
            "KLOG000",
            Severity.INFO,
            f"the kernel log was not read ({why}): read-only filesystems, I/O errors and NFS "
            "servers not responding are not checked on this node",
            "Give the debug pod CAP_SYSLOG (the default), or run the iscsi command (privileged).",
        )
        return KernelHealth("none", why, 0, (), (), (unread,))
    events = parse_kernel_log(log.body)
    clock = _Clock(log.uptime_s, log.btime)
    located = locate_events(
        (event for event in events if event.kind not in (NFS_NOT_RESPONDING, NFS_OK)),
        mounts,
        aliases=aliases,
        kernel_release=kernel_release,
    )
    groups = _group(located)
    return KernelHealth(
        source=log.source,
        error=None,
        lines=sum(1 for line in log.body.splitlines() if line.strip()),
        events=tuple(_event_group(items, owners, clock) for items in groups),
        nfs_servers=tuple(
            _server_group(state, events, owners, clock)
            for state in nfs_server_states(events, mounts)
        ),
    )


# ---------------------------------------------------------------------------------------------
# Grouping and judging
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Clock:
    uptime_s: float | None
    btime: int | None

    def at(self, event: KernelEvent) -> str | None:
        if event.monotonic is not None and self.btime is not None:
            moment = datetime.fromtimestamp(self.btime + event.monotonic, UTC)
            return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
        return event.wall_time

    def age(self, event: KernelEvent) -> float | None:
        if event.monotonic is None or self.uptime_s is None:
            return None
        return max(0.0, self.uptime_s - event.monotonic)


#: Block-layer operations a device may refuse without losing data: the kernel stops sending
#: them and falls back (block/blk-lib.c; a LIO fileio LUN refuses WRITE_ZEROES while mkfs.ext4
#: zeroes its journal, tests/fixtures/kernel_log/SOURCES.md).
OPTIONAL_OPS = ("DISCARD", "WRITE_ZEROES", "SECURE_ERASE", "WRITE_SAME")


def optional_op(event: KernelEvent) -> bool:
    """Whether the event is a device refusing an optional operation, not a lost read or write."""
    op = event.detail("op") or ""
    return event.cause == "block-layer" and any(f"({name})" in op for name in OPTIONAL_OPS)


def _group(located: Sequence[LocatedEvent]) -> list[list[LocatedEvent]]:
    by_key: dict[tuple[str, str, bool], list[LocatedEvent]] = {}
    for item in located:
        event = item.event
        subject = event.device or event.detail("task") or "-"
        by_key.setdefault((event.kind, subject, optional_op(event)), []).append(item)
    return list(by_key.values())


def _volumes(
    mountpoints: Sequence[str], owners: Mapping[str, VolumeOwner]
) -> tuple[VolumeTag, ...]:
    tags: dict[VolumeTag, None] = {}
    for mountpoint in mountpoints:
        owner = owners.get(mountpoint)
        if owner is None or not (owner.pvc_name or owner.pv_name):
            continue
        tag = VolumeTag(owner.namespace, owner.pod_name, owner.pvc_name, owner.pv_name)
        tags[tag] = None
    # A claim's staging mount has no pod; keep it only when no pod mount names the claim.
    named = {(tag.namespace, tag.pvc, tag.pv) for tag in tags if tag.pod}
    return tuple(tag for tag in tags if tag.pod or (tag.namespace, tag.pvc, tag.pv) not in named)


def _event_group(
    items: Sequence[LocatedEvent], owners: Mapping[str, VolumeOwner], clock: _Clock
) -> EventGroup:
    first, last = items[0].event, items[-1]
    mountpoints = tuple(dict.fromkeys(mp for item in items[-1:] for mp in item.mountpoints))
    volumes = _volumes(mountpoints, owners)
    age = clock.age(last.event)
    subject = last.event.device or last.event.detail("task") or "-"
    group = EventGroup(
        kind=last.event.kind,
        subject=subject,
        count=len(items),
        first=first,
        last=last.event,
        first_at=clock.at(first),
        last_at=clock.at(last.event),
        last_age_s=age,
        state=last.state,
        reason=last.reason,
        mountpoints=mountpoints,
        volumes=volumes,
        findings=(),
    )
    finding = _judge(group, recent=age is None or age <= RECENT_S, mounted=bool(mountpoints))
    return group if finding is None else _with(group, finding)


def _judge(group: EventGroup, *, recent: bool, mounted: bool) -> Finding | None:
    """The finding of one group: the state now first, then how recent and where."""
    times = f"{group.count}x, last {_when(group)}"
    where = group.where
    fresh = Severity.WARN if recent and mounted else Severity.INFO
    if group.kind == FS_REMOUNTED_RO:
        return _fs_finding(group, where, times)
    if group.kind == BUFFER_IO_ERROR and optional_op(group.last):
        return KERNEL_LOG_RULES.cite(
            "KLOG010",
            Severity.INFO,
            f"{where} refused an optional operation ({group.last.detail('op')}, {times}): the "
            "kernel stops using it; no data was lost",
            "",
        )
    if group.kind == BUFFER_IO_ERROR:
        return KERNEL_LOG_RULES.cite(
            "KLOG010",
            fresh,
            f"I/O errors on {where} ({times}); "
            + ("mounted now" if mounted else "nothing is mounted from it now"),
            "Check the device's path to its storage (iSCSI session, multipath, cable or "
            "cloud disk) and the filesystem; a pod on it may be reading errors.",
        )
    if group.kind == ISCSI_CONN_ERROR:
        code = group.last.detail("code") or "?"
        return KERNEL_LOG_RULES.cite(
            "KLOG020",
            Severity.WARN if recent else Severity.INFO,
            f"iSCSI {group.subject} reported connection error {code} ({times})",
            "Check the network path to the portal; after replacement_timeout the session's "
            "disks fail their I/O and filesystems on them may go read-only.",
        )
    if group.kind == HUNG_TASK:
        return KERNEL_LOG_RULES.cite(
            "KLOG040",
            fresh,
            f"task {group.last.detail('task')} blocked for more than "
            f"{group.last.detail('seconds')} s ({times})",
            "A task waits on storage that does not answer: look for an NFS server not "
            "responding or a device without paths on this node.",
        )
    return None


def _fs_finding(group: EventGroup, where: str, times: str) -> Finding | None:
    state, reason = group.state, group.reason
    if state == STILL_READ_ONLY:
        return KERNEL_LOG_RULES.cite(
            "KLOG001",
            Severity.ERROR,
            f"{where} is read-only now after a kernel error ({times}): {reason}",
            "Writes fail while the pod keeps running: fix the cause (paths, device), check the "
            "filesystem, then restart the pod so the volume is mounted again.",
        )
    if state == STILL_MOUNTED:
        return KERNEL_LOG_RULES.cite(
            "KLOG002",
            Severity.ERROR,
            f"XFS on {where} shut down ({times}) and is still mounted: {reason}",
            "The filesystem answers nothing until it is unmounted: restart the pod, run "
            "xfs_repair if mounting fails.",
        )
    if state == UNKNOWN and group.mountpoints:
        return KERNEL_LOG_RULES.cite(
            "KLOG003",
            Severity.WARN,
            f"filesystem error on {where} ({times}); read-only now or not is unknown: {reason}",
            "Try a write on the volume; on Linux 6.12-6.14 ext4 hides that it refuses writes.",
        )
    if state in (NO_LONGER_READ_ONLY, NOT_MOUNTED, UNKNOWN):
        return KERNEL_LOG_RULES.cite(
            "KLOG004",
            Severity.INFO,
            f"filesystem error on {where} ({times}); now: {reason or state}",
            "",
        )
    return None


def _server_group(
    state: NfsServerState,
    events: Sequence[KernelEvent],
    owners: Mapping[str, VolumeOwner],
    clock: _Clock,
) -> EventGroup:
    mine = [
        event
        for event in events
        if event.server is not None and server_key(event.server) == server_key(state.server)
    ]
    mountpoints = tuple(dict.fromkeys(entry.mountpoint for entry in state.mounts))
    age = clock.age(state.last)
    group = EventGroup(
        kind="nfs-server",
        subject=f"NFS server {state.server}",
        count=state.not_responding,
        first=mine[0] if mine else state.last,
        last=state.last,
        first_at=clock.at(mine[0] if mine else state.last),
        last_at=clock.at(state.last),
        last_age_s=age,
        state=state.state,
        reason="",
        mountpoints=mountpoints,
        volumes=_volumes(mountpoints, owners),
        findings=(),
    )
    times = f"{state.not_responding}x not responding, last word {_when(group)}"
    if state.still_not_responding:
        finding = KERNEL_LOG_RULES.cite(
            "KLOG030",
            Severity.ERROR if mountpoints else Severity.WARN,
            f"{group.where} is not responding ({times})",
            "I/O to its mounts waits (hard) or fails (soft): check the server and the network "
            "from this node.",
        )
    else:
        recent = age is None or age <= RECENT_S
        finding = KERNEL_LOG_RULES.cite(
            "KLOG031",
            Severity.WARN if recent and mountpoints else Severity.INFO,
            f"{group.where} stopped responding and came back ({times})",
            "",
        )
    return _with(group, finding)


def _with(group: EventGroup, finding: Finding) -> EventGroup:
    return replace(group, findings=(finding,))


def _when(group: EventGroup) -> str:
    if group.last_age_s is not None:
        return f"{_ago(group.last_age_s)} ago"
    return group.last_at or "at an unknown time"


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"
