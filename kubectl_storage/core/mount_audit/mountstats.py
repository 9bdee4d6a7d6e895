"""NFS client statistics per mount, from ``/proc/<pid>/mountstats``.

The kernel writes one block per mount: ``device SRC mounted on DIR with fstype nfs4 statvers=1.1``
followed (NFS only) by tab-indented ``opts:``, ``age:``, ``caps:``, ``sec:``, ``events:``,
``bytes:``, ``RPC iostats version:``, one ``xprt:`` line per transport (nconnect gives several) and
the ``per-op statistics`` table. Non-NFS blocks are skipped; two blocks on the same mount point
stay two entries. Sources: Linux ``fs/nfs/super.c`` ``nfs_show_stats()``, ``net/sunrpc/stats.c``
``rpc_clnt_show_stats()`` and ``xprtsock.c``/``xprtrdma`` ``print_stats`` (rules.md S2, S3).

Pure: text in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kubectl_storage.core.nodes.mount_model import (
    NFS_FSTYPES,
    MountEntry,
    OptionValue,
    parse_options,
    split_network_source,
)
from kubectl_storage.core.nodes.mount_wrap import rejoin_mountstats
from kubectl_storage.core.nodes.mounts import MountstatsBlock, mountstats_blocks
from kubectl_storage.core.nodes.paste import TRIMMED, LineNote, note_line, trim_pasted_lines

_KEY_LINE = re.compile(r"^[A-Za-z][\w ]*?:")
_OP_LINE = re.compile(r"^\s*(?P<name>[A-Z][A-Z0-9_]*):\s+(?P<values>\d+(?:\s+\d+)*)\s*$")
_IOSTATS = re.compile(r"RPC iostats version:\s*(?P<version>\S+)\s+p/v:\s*(?P<pv>\S+)")

# Field names of an ``xprt:`` line after the protocol, by protocol; statvers 1.0 prints a prefix.
_COMMON_CONNECTED = ("port", "bind_count", "connect_count", "connect_time", "idle_time")
_COMMON_COUNTERS = ("sends", "receives", "bad_xids", "cumulative_active", "cumulative_backlog")
_V11_COUNTERS = ("max_slots", "sending_queue", "pending_queue")
_XPRT_FIELDS: dict[str, tuple[str, ...]] = {
    "tcp": _COMMON_CONNECTED + _COMMON_COUNTERS + _V11_COUNTERS,
    "udp": ("port", "bind_count", *_COMMON_COUNTERS, *_V11_COUNTERS),
    "rdma": _COMMON_CONNECTED + _COMMON_COUNTERS,
}
_BYTES_FIELDS = (
    "normal_read",
    "normal_write",
    "direct_read",
    "direct_write",
    "server_read",
    "server_write",
    "pages_read",
    "pages_write",
)


class MountstatsParseError(ValueError):
    """A line inside an NFS block that cannot be read (raised only with ``strict=True``)."""


@dataclass(frozen=True)
class OpStats:
    """One row of ``per-op statistics``: counts and cumulative milliseconds for one RPC."""

    name: str
    ops: int
    transmissions: int
    major_timeouts: int
    bytes_sent: int
    bytes_received: int
    queue_ms: int
    rtt_ms: int
    execute_ms: int
    errors: int | None = None  # iostats 1.1 only

    @property
    def retransmissions(self) -> int:
        """Transmissions beyond the first for each request (``trans - ops``)."""
        return max(self.transmissions - self.ops, 0)

    @property
    def avg_rtt_ms(self) -> float | None:
        """Mean network + server time per operation, in ms (None when no operations)."""
        return self.rtt_ms / self.ops if self.ops else None

    @property
    def avg_execute_ms(self) -> float | None:
        """Mean time from queueing to completion per operation, in ms."""
        return self.execute_ms / self.ops if self.ops else None

    @property
    def avg_queue_ms(self) -> float | None:
        """Mean time waiting before transmission per operation, in ms."""
        return self.queue_ms / self.ops if self.ops else None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order and units in the key names."""
        return {
            "ops": self.ops,
            "retransmissions": self.retransmissions,
            "major_timeouts": self.major_timeouts,
            "bytes_sent": self.bytes_sent,
            "bytes_received": self.bytes_received,
            "avg_rtt_ms": _round(self.avg_rtt_ms),
            "avg_execute_ms": _round(self.avg_execute_ms),
            "avg_queue_ms": _round(self.avg_queue_ms),
            "errors": self.errors,
        }


@dataclass(frozen=True)
class Transport:
    """One ``xprt:`` line: one RPC transport (connection) of the mount's client."""

    protocol: str
    values: tuple[int, ...]
    fields: dict[str, int] = field(default_factory=dict)

    @property
    def port(self) -> int | None:
        """Local source port of the transport."""
        return self.fields.get("port")


@dataclass(frozen=True)
class NfsMountStats:
    """Statistics of one NFS mount block."""

    device: str
    mountpoint: str
    fstype: str
    statvers: str | None
    server: str | None
    export: str | None
    options: dict[str, OptionValue] = field(default_factory=dict)
    age_seconds: int | None = None
    rpc_iostats_version: str | None = None
    program_version: str | None = None
    xprt_lines: tuple[str, ...] = field(default=(), repr=False)
    details: dict[str, str] = field(default_factory=dict, repr=False)
    op_table: str = field(default="", repr=False)
    line_number: int = 0

    @property
    def xprt_count(self) -> int:
        """Number of transports, i.e. the real connection count (nconnect)."""
        return len(self.xprt_lines)

    # Counters other than opts/age/xprt count are parsed on first use: an audit of thousands of
    # mounts needs only the options and the transport count, which keeps a large node fast.
    @cached_property
    def caps(self) -> dict[str, OptionValue]:
        """The ``caps:`` line (server capabilities, wtmult, dtsize, bsize, namlen)."""
        return parse_options(self.details.get("caps", ""))

    @cached_property
    def sec(self) -> dict[str, OptionValue]:
        """The ``sec:`` line (``flavor``, ``pseudoflavor``)."""
        return parse_options(self.details.get("sec", ""))

    @cached_property
    def events(self) -> tuple[int, ...]:
        """The ``events:`` counters, in kernel order (``nfs_stat_eventcounters``)."""
        return _ints(self.details.get("events", ""))

    @cached_property
    def bytes(self) -> dict[str, int]:
        """The ``bytes:`` counters by name (``normal_read`` ... ``pages_write``)."""
        return dict(zip(_BYTES_FIELDS, _ints(self.details.get("bytes", "")), strict=False))

    @cached_property
    def op_lines(self) -> tuple[str, ...]:
        """The raw rows of the ``per-op statistics`` table."""
        return tuple(line for line in self.op_table.split("\n") if line.strip())

    @cached_property
    def transports(self) -> tuple[Transport, ...]:
        """One :class:`Transport` per ``xprt:`` line, in order."""
        transports = []
        for line in self.xprt_lines:
            try:
                transports.append(_parse_transport(line))
            except ValueError:
                continue  # unreadable line: parse_mountstats(strict=True) reports it
        return tuple(transports)

    @cached_property
    def ops(self) -> dict[str, OpStats]:
        """Per-operation statistics by upper-case name, in printed order."""
        result: dict[str, OpStats] = {}
        for line in self.op_lines:
            try:
                name, stats = _parse_op(line)
            except ValueError:
                continue  # unreadable line: parse_mountstats(strict=True) reports it
            result[name] = stats
        return result

    def op(self, name: str) -> OpStats | None:
        """Statistics of one operation by its upper-case name (``READ``, ``WRITE``, ``GETATTR``)."""
        return self.ops.get(name.upper())

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order; only operations that ran are listed."""
        return {
            "server": self.server,
            "export": self.export,
            "device": self.device,
            "mountpoint": self.mountpoint,
            "fstype": self.fstype,
            "statvers": self.statvers,
            "age_seconds": self.age_seconds,
            "options": dict(self.options),
            "xprt_count": self.xprt_count,
            "transports": [t.protocol for t in self.transports],
            "ops": {name: stats.to_dict() for name, stats in self.ops.items() if stats.ops},
        }


def parse_mountstats(
    text: str, *, strict: bool = False, notes: list[LineNote] | None = None
) -> list[NfsMountStats]:
    """Parse ``/proc/<pid>/mountstats`` into one :class:`NfsMountStats` per NFS mount.

    Args:
        text: the whole file.
        strict: check every counter line of every NFS block now and raise
            :class:`MountstatsParseError` on an unreadable one; otherwise unreadable lines are
            ignored (per-op and ``xprt:`` rows are then parsed on first access).
        notes: without ``strict``, wrapped lines are rejoined first
            (:func:`~kubectl_storage.core.nodes.mounts.rejoin_mountstats`), and every line that
            is rejoined, or cannot be read (a counter row, a line outside any block), gets a
            :class:`~kubectl_storage.core.nodes.mounts.LineNote` here.

    Returns:
        NFS mounts in file order; non-NFS devices are skipped.
    """
    if not strict:
        text = rejoin_mountstats(trim_pasted_lines(text, notes), notes)
    results: list[NfsMountStats] = []
    # Work block by block (the frame is read by core.nodes.mounts.mountstats_blocks): a non-NFS
    # block costs one header check, and an NFS block's per-op table is kept as raw lines (parsed
    # on first access), which keeps 10,000 mounts fast.
    for block in mountstats_blocks(text):
        number = block.line_number
        if not block.has_header or block.fstype not in NFS_FSTYPES:
            if notes is not None:
                start = number + 1 if block.has_header else number
                lines = block.body.split("\n") if block.has_header else block.text.split("\n")
                for offset, line in enumerate(lines, start=start):
                    note_line(notes, offset, line, "not a mountstats line")
            continue
        builder = _Builder(block)
        head, marker, op_table = block.body.partition("per-op statistics")
        for offset, line in enumerate(head.split("\n"), start=number + 1):
            if not line or line.isspace():
                continue
            try:
                builder.feed(line)
            except ValueError as error:
                if strict:
                    raise MountstatsParseError(f"line {offset}: {error}: {line!r}") from error
        if marker:
            builder.op_table = op_table
        if notes is not None:
            _note_block(block.text, number, notes)
        results.append(builder.build())
    if strict:
        _check_counters(results, text)
    return results


def match_stats(
    mounts: Sequence[MountEntry], stats: Sequence[NfsMountStats]
) -> list[NfsMountStats | None]:
    """The mountstats block of each mount (None where there is none), in ``mounts`` order.

    Blocks pair with mounts by (mount point, device) and are consumed in order, so two mounts
    stacked on one mount point each get their own block. The audit's rules and the report's
    counters both pair this way (:func:`~kubectl_storage.core.mount_audit.rules.audit_mounts`).
    """
    pool: dict[tuple[str, str], list[NfsMountStats]] = {}
    for block in stats:
        pool.setdefault((block.mountpoint, block.device), []).append(block)
    matched: list[NfsMountStats | None] = []
    for mount in mounts:
        candidates = pool.get((mount.mountpoint, mount.source))
        matched.append(candidates.pop(0) if candidates else None)
    return matched


def _note_block(block: str, number: int, notes: list[LineNote]) -> None:
    """One note per line of an NFS block that cannot be read (the block's header excluded)."""
    in_ops = False
    for offset, line in enumerate(block.split("\n")[1:], start=number + 1):
        stripped = line.strip()
        if not stripped:
            continue
        if in_ops:
            try:
                _parse_op(line)
            except ValueError as error:
                note_line(notes, offset, line, f"unreadable per-op row ({error})")
            continue
        if stripped.startswith("per-op statistics"):
            in_ops = True
            continue
        key, sep, value = stripped.partition(":")
        if not sep or not _KEY_LINE.match(stripped):
            note_line(notes, offset, line, "not a mountstats line")
            continue
        try:
            if key == "xprt":
                _parse_transport(value)
            elif key == "age":
                _, annotation = annotated_number(value)
                if annotation:
                    notes.append(
                        LineNote(offset, line, TRIMMED, f"read without the note {annotation!r}")
                    )
            elif key in ("events", "bytes") and not _ints(value.strip()):
                raise ValueError(f"unreadable {key} counters")
        except ValueError:
            note_line(notes, offset, line, f"unreadable {key}: line")


def _check_counters(results: list[NfsMountStats], text: str) -> None:
    lines = text.split("\n")
    for stats in results:
        for key in ("events", "bytes"):
            if key in stats.details and not _ints(stats.details[key]):
                raise MountstatsParseError(
                    f"{stats.mountpoint}: unreadable {key}: {stats.details[key]!r}"
                )
        for number, line in enumerate(lines[stats.line_number :], start=stats.line_number + 1):
            if line.startswith(("device ", "no device ")):
                break
            stripped = line.strip()
            try:
                if stripped.startswith("xprt:"):
                    _parse_transport(stripped.partition(":")[2])
                elif stripped and line in stats.op_lines:
                    _parse_op(line)
            except ValueError as error:
                raise MountstatsParseError(f"line {number}: {error}: {line!r}") from error


class _Builder:
    """Accumulates the lines of one NFS block (mutable while parsing, frozen on build)."""

    def __init__(self, block: MountstatsBlock) -> None:
        self.device = block.device
        self.mountpoint = block.mountpoint
        self.fstype = block.fstype
        self.statvers = block.statvers
        self.number = block.line_number
        self.options: dict[str, OptionValue] = {}
        self.age: int | None = None
        self.iostats: str | None = None
        self.program: str | None = None
        self.xprt_lines: list[str] = []
        self.details: dict[str, str] = {}
        self.op_table = ""

    def feed(self, line: str) -> None:
        key, _, value = line.strip().partition(":")
        if key == "xprt":
            self.xprt_lines.append(value)
        elif key == "opts":
            self.options = parse_options(value.strip())
        elif key == "age":
            self.age = annotated_number(value)[0]
        elif key == "RPC iostats version":
            match = _IOSTATS.search(line)
            if match:
                self.iostats, self.program = match["version"], match["pv"]
        else:
            self.details[key] = value.strip()  # caps, sec, events, bytes, nfsv4, impl_id ...

    def build(self) -> NfsMountStats:
        server, export = split_network_source(self.device, self.fstype)
        return NfsMountStats(
            device=self.device,
            mountpoint=self.mountpoint,
            fstype=self.fstype,
            statvers=self.statvers,
            server=server,
            export=export,
            options=self.options,
            age_seconds=self.age,
            rpc_iostats_version=self.iostats,
            program_version=self.program,
            xprt_lines=tuple(self.xprt_lines),
            details=self.details,
            op_table=self.op_table,
            line_number=self.number,
        )


# "19", or "19 (time, in seconds, since the mount)" as a post explained the number.
_ANNOTATED_NUMBER = re.compile(r"^\s*(?P<number>\d+)(?:\s+(?P<annotation>\S.*?))?\s*$")


def annotated_number(text: str) -> tuple[int, str | None]:
    """The number a counter line holds, and the note a paste added after it (None if none).

    Raises:
        ValueError: the text does not start with a number.
    """
    match = _ANNOTATED_NUMBER.match(text)
    if match is None:
        raise ValueError(f"not a number: {text.strip()!r}")
    return int(match["number"]), match["annotation"]


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(map(int, text.split()))
    except ValueError:
        return ()  # unreadable counters: parse_mountstats(strict=True) reports them


def _parse_transport(line: str) -> Transport:
    parts = line.split()
    if not parts:
        raise ValueError("empty xprt line")
    protocol = parts[0]
    values = tuple(int(v) for v in parts[1:])
    # statvers 1.0 prints a prefix of the 1.1 fields; rdma appends its own counters (kept raw).
    names = _XPRT_FIELDS.get(protocol, ())
    return Transport(protocol, values, dict(zip(names, values, strict=False)))


def _parse_op(line: str) -> tuple[str, OpStats]:
    match = _OP_LINE.match(line)
    if match is None:
        raise ValueError("not a per-op statistics line")
    name = match["name"]
    numbers = [int(v) for v in match["values"].split()]
    if len(numbers) < 8:
        raise ValueError(f"per-op line for {name} has {len(numbers)} counters, expected 8 or 9")
    return name, OpStats(
        name=name,
        ops=numbers[0],
        transmissions=numbers[1],
        major_timeouts=numbers[2],
        bytes_sent=numbers[3],
        bytes_received=numbers[4],
        queue_ms=numbers[5],
        rtt_ms=numbers[6],
        execute_ms=numbers[7],
        errors=numbers[8] if len(numbers) > 8 else None,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
