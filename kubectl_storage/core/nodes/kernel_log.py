"""Kernel-log health: the storage events of a node's kernel log, read from the text a debug pod
can read without changing anything.

Three line formats (one text may mix them; each line is read on its own):

- ``/dev/kmsg`` records, ``PRIORITY,SEQUENCE,MICROSECONDS,FLAGS[,...];MESSAGE``, each followed
  by the record's ``KEY=value`` properties on lines that start with a space
  (Documentation/ABI/testing/dev-kmsg);
- ``dmesg`` lines, ``[ 1234.567890] MESSAGE`` (seconds since boot), and ``dmesg -T``'s
  ``[Sun Dec  6 06:31:19 2026] MESSAGE``; ``dmesg -t`` (and logs quoted without a time) is a
  bare message;
- ``journalctl -k`` with ``-o short``, ``short-precise``, ``short-iso``, ``short-iso-precise``
  or ``short-monotonic`` (``TIME HOST kernel: MESSAGE``), which is also the syslog format of
  ``/var/log/messages``; lines of other programs than ``kernel`` are not kernel messages and are
  left out.

Each message is matched against one pattern per family (:data:`KINDS`); the kernel source that
prints it is named beside each pattern. Pure: text in, frozen dataclasses out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

FORMAT_KMSG = "kmsg"
FORMAT_DMESG = "dmesg"
FORMAT_JOURNAL = "journal"
FORMAT_PLAIN = "plain"

#: The families: a filesystem that went (or may have gone) read-only or shut down, a failed
#: block I/O, an iSCSI connection error, an NFS server that stopped or resumed answering, and
#: a task blocked in the kernel.
FS_REMOUNTED_RO = "fs-remounted-ro"
BUFFER_IO_ERROR = "buffer-io-error"
ISCSI_CONN_ERROR = "iscsi-conn-error"
NFS_NOT_RESPONDING = "nfs-not-responding"
NFS_OK = "nfs-ok"
HUNG_TASK = "hung-task"
KINDS = (
    FS_REMOUNTED_RO,
    BUFFER_IO_ERROR,
    ISCSI_CONN_ERROR,
    NFS_NOT_RESPONDING,
    NFS_OK,
    HUNG_TASK,
)

# ---------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------

_KMSG = re.compile(r"^(?P<prio>\d+),(?P<seq>\d+),(?P<usec>\d+),[^;]*;(?P<message>.*)$")
_KMSG_PROPERTY = re.compile(r"^ (?P<key>[A-Z_]+)=(?P<value>.*)$")
_DMESG = re.compile(r"^\[\s*(?P<seconds>\d+\.\d+)\]\s?(?P<message>.*)$")
_DMESG_CTIME = re.compile(
    r"^\[(?P<time>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})\]\s?(?P<message>.*)$"
)
_JOURNAL_TIME = (
    r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"  # short-iso
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?)"  # short, short-precise, syslog
)
_JOURNAL = re.compile(
    rf"^{_JOURNAL_TIME} (?P<host>\S+) (?P<ident>[^\s:\[]+)(?:\[\d+\])?: ?(?P<message>.*)$"
)
# journalctl -o short-monotonic: only a "kernel:" line, or dmesg's "[ 1.2] XFS (sdb): ..." would
# pass for a host "XFS" and a program "(sdb)".
_JOURNAL_MONOTONIC = re.compile(
    r"^\[\s*(?P<seconds>\d+\.\d+)\] (?P<host>\S+) kernel: ?(?P<message>.*)$"
)
# A kernel message in syslog keeps printk's own time when the kernel adds it (kern.log).
_PRINTK_TIME = re.compile(r"^\[\s*(?P<seconds>\d+\.\d+)\]\s?(?P<message>.*)$")
_KMSG_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


@dataclass(frozen=True)
class KernelRecord:
    """One kernel message as read: its line, its text and when it was logged.

    ``monotonic`` is seconds since boot (kmsg, dmesg, short-monotonic, a kern.log line with
    printk's time), ``wall_time`` the time as printed (journal, syslog, ``dmesg -T``), ``level``
    the syslog level of a kmsg record (0 emerg … 7 debug) and ``properties`` its ``KEY=value``
    lines (``DEVICE=b8:16``, ``SUBSYSTEM=block``).
    """

    line_number: int
    raw: str
    message: str
    source_format: str
    monotonic: float | None = None
    wall_time: str | None = None
    level: int | None = None
    properties: tuple[tuple[str, str], ...] = ()

    def property(self, key: str) -> str | None:
        """One kmsg property (``DEVICE``, ``SUBSYSTEM``), or None."""
        return next((value for name, value in self.properties if name == key), None)


def read_kernel_log(text: str) -> list[KernelRecord]:
    """The kernel messages of ``text``, in order (blank lines and other programs' lines are
    left out)."""
    records: list[KernelRecord] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        prop = _KMSG_PROPERTY.match(line)
        if prop and records and records[-1].source_format == FORMAT_KMSG:
            last = records[-1]
            records[-1] = replace(last, properties=(*last.properties, (prop["key"], prop["value"])))
            continue
        record = _read_line(line, number)
        if record is not None:
            records.append(record)
    return records


def _read_line(line: str, number: int) -> KernelRecord | None:
    kmsg = _KMSG.match(line)
    if kmsg:
        message = _KMSG_ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), kmsg["message"])
        return KernelRecord(
            number,
            line,
            message,
            FORMAT_KMSG,
            monotonic=int(kmsg["usec"]) / 1_000_000,
            level=int(kmsg["prio"]) & 7,
        )
    monotonic = _JOURNAL_MONOTONIC.match(line)
    if monotonic:
        return KernelRecord(
            number,
            line,
            monotonic["message"],
            FORMAT_JOURNAL,
            monotonic=float(monotonic["seconds"]),
        )
    journal = _JOURNAL.match(line)
    if journal:
        if journal["ident"] != "kernel":
            return None  # iscsid, systemd, ...: not the kernel's message
        time, message = journal["time"], journal["message"]
        printk = _PRINTK_TIME.match(message)
        if printk:
            return KernelRecord(
                number,
                line,
                printk["message"],
                FORMAT_JOURNAL,
                monotonic=float(printk["seconds"]),
                wall_time=time,
            )
        return KernelRecord(number, line, message, FORMAT_JOURNAL, wall_time=time)
    dmesg = _DMESG.match(line)
    if dmesg:
        return KernelRecord(
            number, line, dmesg["message"], FORMAT_DMESG, monotonic=float(dmesg["seconds"])
        )
    ctime = _DMESG_CTIME.match(line)
    if ctime:
        return KernelRecord(number, line, ctime["message"], FORMAT_DMESG, wall_time=ctime["time"])
    return KernelRecord(number, line, line, FORMAT_PLAIN)


# ---------------------------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------------------------

# fs/ext4/super.c: __ext4_error, __ext4_error_inode, __ext4_error_file and __ext4_std_error
# print "EXT4-fs error (device %s): %s:%d: ..." (or "... (device %s) in %s:%d: %s");
# ext4_handle_error prints "EXT4-fs (%s): Remounting filesystem read-only" through ext4_msg.
# The ext2/ext3 drivers of older kernels printed the same with EXT2/EXT3. An ext4 error is in
# this family because, with errors=remount-ro, it may make the filesystem read-only without the
# "Remounting" line (a journal aborted earlier: tests/fixtures/kernel_log/SOURCES.md).
_EXT_ERROR = re.compile(
    r"^EXT[234]-fs error \(device (?P<device>[^)\s]+)\)(?::| in) (?P<function>[\w.]+)(?::\d+)?"
)
_EXT_REMOUNT_RO = re.compile(
    r"^EXT[234]-fs \((?P<device>[^)\s]+)\): (?:error: )?remounting filesystem read-only",
    re.IGNORECASE,
)
# fs/xfs/xfs_fsops.c xfs_do_force_shutdown: "%s (0x%x) detected at %pS (%s:%d).  Shutting down
# filesystem." (5.17 on; before: "Corruption of in-memory data detected.  Shutting down
# filesystem", "I/O Error Detected. Shutting down filesystem", "Log I/O error (0x%x) detected
# at ...", "User initiated shutdown (0x%x) received. Shutting down filesystem"); fs/xfs/xfs_log.c
# xlog_force_shutdown: "Filesystem has been shut down due to log error (0x%x)." Printed by
# xfs_alert with the "XFS (%s): " prefix. node-problem-detector's XfsShutdown rule matches
# "XFS .* Shutting down filesystem.?" (config/kernel-monitor.json).
_XFS_SHUTDOWN = re.compile(
    r"^XFS \((?P<device>[^)\s]+)\): (?P<text>.*(?:Shutting down filesystem|"
    r"Filesystem has been shut down).*)$"
)
_XFS_WHY = re.compile(r"^(?P<why>.+?)(?: \(0x[0-9a-f]+\))? (?:detected|Detected|received)\b")
# fs/buffer.c buffer_io_error: "Buffer I/O error on dev %pg, logical block %llu%s" (", lost
# async page write", ", async page read", ...); fs/ext4/page-io.c and older kernels print
# "Buffer I/O error on device %s, logical block %llu".
_BUFFER_IO = re.compile(
    r"^Buffer I/O error on (?:dev|device) (?P<device>[^,\s]+), logical block (?P<block>\d+)"
    r"(?:, (?P<what>.+))?$"
)
# The block layer's failed request: block/blk-mq.c blk_print_req_error (6.x) "%s error, dev
# %s, sector %llu op 0x%x:(%s) flags 0x%x phys_seg %u prio class %u", where %s is the status
# name of block/blk-core.c blk_errors ("I/O", "critical medium", "critical space
# allocation", "timeout", ...); 4.x-5.x printed it from blk-core.c prefixed "print_req_error: "
# or "blk_update_request: ", 3.x from end_request.
_BLOCK_ERROR = re.compile(
    r"^(?:(?:blk_update_request|print_req_error|end_request): )?"
    r"(?P<status>[A-Za-z][A-Za-z/ ]*?) error, dev (?P<device>[^,\s]+), sector (?P<sector>\d+)"
    r"(?: op (?P<op>\S+))?"
)
# drivers/scsi/scsi_transport_iscsi.c iscsi_conn_error_event (reached from libiscsi.c
# iscsi_conn_failure): "detected conn error (%d)" through iscsi_cls_conn_printk, whose
# dev_printk prefix is the connection's device name (with a blank before it).
_ISCSI_CONN_ERROR = re.compile(
    r"^(?P<connection>connection(?P<session>\d+):\d+): detected conn error \((?P<code>\d+)\)"
)
#: Codes of include/uapi/scsi/iscsi_if.h as iscsid names them in its own log line ("Kernel
#: reported iSCSI connection 12:0 error (1020 - ISCSI_ERR_TCP_CONN_CLOSE: TCP connection
#: closed)", tests/fixtures/kernel_log/SOURCES.md).
ISCSI_ERRORS = {
    "1011": "ISCSI_ERR_CONN_FAILED: iSCSI connection failed",
    "1020": "ISCSI_ERR_TCP_CONN_CLOSE: TCP connection closed",
    "1022": "ISCSI_ERR_NOP_TIMEDOUT: a NOP-Out timed out",
}
# net/sunrpc/clnt.c rpc_check_timeout: "%s: server %s not responding, still trying" (hard) or
# ", timed out" (soft), and call_decode: "%s: server %s OK", %s the RPC program ("nfs",
# "nfsacl", "lockd") and the server as named in the mount (xprt->servername).
_NFS_SERVER = re.compile(
    r"^(?P<program>nfs|nfsacl|lockd): server (?P<server>\S+) "
    r"(?:not responding, (?P<how>still trying|timed out)|(?P<ok>OK))\s*$"
)
# kernel/hung_task.c check_hung_task: "INFO: task %s:%d blocked for more than %ld seconds."
# (node-problem-detector's TaskHung rule: "task [\S ]+:\w+ blocked for more than \w+ seconds\.").
_HUNG_TASK = re.compile(
    r"^INFO: task (?P<comm>.+):(?P<pid>\d+) blocked for more than (?P<seconds>\d+) seconds\."
)
# The kernel threads whose name carries the device they work for: jbd2/<dev>-<journal inode>
# (fs/jbd2/journal.c) and xfsaild/<dev> (fs/xfs/xfs_trans_ail.c).
_TASK_DEVICE = re.compile(r"^(?:jbd2/(?P<jbd2>.+)-\d+|xfsaild/(?P<xfs>.+))$")


@dataclass(frozen=True)
class KernelEvent:
    """One storage event of the kernel log.

    ``kind`` is the family (:data:`KINDS`), ``cause`` what in it (``ext4-error``,
    ``ext4-remount-ro``, ``xfs-shutdown``, ``buffer-io``, ``block-layer``, ``conn-error``,
    ``still-trying``, ``timed-out``, ``ok``, ``blocked``); ``device`` is the kernel's name of
    the block device (``sdb``, ``dm-3``, ``loop0``) or the iSCSI connection
    (``connection1:0``), ``server`` the NFS server as the mount named it; ``details`` the other
    fields of the message (``block``, ``sector``, ``code``, ``task``, ...).
    """

    kind: str
    cause: str
    record: KernelRecord
    device: str | None = None
    server: str | None = None
    details: tuple[tuple[str, str], ...] = ()

    @property
    def line_number(self) -> int:
        """The line of the text the message is on."""
        return self.record.line_number

    @property
    def raw(self) -> str:
        """The line as read."""
        return self.record.raw

    @property
    def message(self) -> str:
        """The kernel's message, without time or prefix."""
        return self.record.message

    @property
    def monotonic(self) -> float | None:
        """Seconds since boot, when the format has them."""
        return self.record.monotonic

    @property
    def wall_time(self) -> str | None:
        """The time as printed (journal, syslog, ``dmesg -T``), when the format has it."""
        return self.record.wall_time

    def detail(self, key: str) -> str | None:
        """One field of the message, or None."""
        return next((value for name, value in self.details if name == key), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "kind": self.kind,
            "cause": self.cause,
            "device": self.device,
            "server": self.server,
            "details": dict(self.details),
            "message": self.message,
            "monotonic": self.monotonic,
            "wall_time": self.wall_time,
            "line": self.line_number,
            "raw": self.raw,
        }


def parse_kernel_log(text: str) -> list[KernelEvent]:
    """The storage events of a kernel log text, in order (see :func:`read_kernel_log`)."""
    return events_of(read_kernel_log(text))


def events_of(records: Iterable[KernelRecord]) -> list[KernelEvent]:
    """The records that are storage events, as events, in order."""
    return [event for record in records if (event := classify(record)) is not None]


def classify(record: KernelRecord) -> KernelEvent | None:
    """The event one kernel message is, or None when it is none of :data:`KINDS`."""
    message = record.message.strip()
    for classifier in _CLASSIFIERS:
        event = classifier(record, message)
        if event is not None:
            return event
    return None


def _fs_event(record: KernelRecord, message: str) -> KernelEvent | None:
    if match := _EXT_REMOUNT_RO.match(message):
        return KernelEvent(FS_REMOUNTED_RO, "ext4-remount-ro", record, match["device"])
    if match := _EXT_ERROR.match(message):
        details = (("function", match["function"]),)
        return KernelEvent(FS_REMOUNTED_RO, "ext4-error", record, match["device"], None, details)
    if match := _XFS_SHUTDOWN.match(message):
        text = match["text"]
        why = _XFS_WHY.match(text)
        reason = "log error" if "due to log error" in text else (why["why"] if why else text)
        details = (("why", reason),)
        return KernelEvent(FS_REMOUNTED_RO, "xfs-shutdown", record, match["device"], None, details)
    return None


def _io_event(record: KernelRecord, message: str) -> KernelEvent | None:
    if match := _BUFFER_IO.match(message):
        details: tuple[tuple[str, str], ...] = (("block", match["block"]),)
        if match["what"]:
            details += (("what", match["what"]),)
        return KernelEvent(BUFFER_IO_ERROR, "buffer-io", record, match["device"], None, details)
    if match := _BLOCK_ERROR.match(message):
        details = (("status", match["status"]), ("sector", match["sector"]))
        if match["op"]:
            details += (("op", match["op"]),)
        return KernelEvent(BUFFER_IO_ERROR, "block-layer", record, match["device"], None, details)
    return None


def _iscsi_event(record: KernelRecord, message: str) -> KernelEvent | None:
    match = _ISCSI_CONN_ERROR.match(message)
    if match is None:
        return None
    details: tuple[tuple[str, str], ...] = (("code", match["code"]), ("session", match["session"]))
    if match["code"] in ISCSI_ERRORS:
        details += (("error", ISCSI_ERRORS[match["code"]]),)
    return KernelEvent(ISCSI_CONN_ERROR, "conn-error", record, match["connection"], None, details)


def _nfs_event(record: KernelRecord, message: str) -> KernelEvent | None:
    match = _NFS_SERVER.match(message)
    if match is None:
        return None
    details = (("program", match["program"]),)
    if match["ok"]:
        return KernelEvent(NFS_OK, "ok", record, None, match["server"], details)
    cause = "still-trying" if match["how"] == "still trying" else "timed-out"
    return KernelEvent(NFS_NOT_RESPONDING, cause, record, None, match["server"], details)


def _hung_event(record: KernelRecord, message: str) -> KernelEvent | None:
    match = _HUNG_TASK.match(message)
    if match is None:
        return None
    task = _TASK_DEVICE.match(match["comm"])
    device = (task["jbd2"] or task["xfs"]) if task else None
    details = (("task", match["comm"]), ("pid", match["pid"]), ("seconds", match["seconds"]))
    return KernelEvent(HUNG_TASK, "blocked", record, device, None, details)


_CLASSIFIERS = (_fs_event, _io_event, _iscsi_event, _nfs_event, _hung_event)
