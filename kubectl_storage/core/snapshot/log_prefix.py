"""The under-load snapshot check: a checksummed append-only log and the clean-prefix verdict.

While the snapshot is cut, a writer in the source pod appends fixed-size records to one file,
calling fsync after each and acknowledging it only then. A crash-consistent snapshot of that
volume must hold a *clean prefix* of the log: records 1..k intact and in order, nothing valid
after a hole, at most the one record that was in flight torn, and k no smaller than the last
record acknowledged before the snapshot's creationTime. :func:`check_log` reads the restored
file's bytes and says whether it does; a record is defined once, in
:mod:`kubectl_storage.core.snapshot.log_record`.

Rules applied by :func:`check_log`, block by block (``record_size`` bytes at a time):

* the clean prefix is k: blocks 0..k-1 hold valid records with seq 1..k;
* after the last record found, the first block (short, zeros, or a bad checksum) is the record
  that was in flight: torn, allowed when it follows the prefix directly (``in_flight_torn``);
  any bytes after that one block are trailing garbage, a failure;
* an invalid region with a record after it is a hole, a failure;
* a valid record whose seq is not the next one is reordered, or a duplicate when that seq was
  already seen; a checksum-valid block whose payload or size field does not match its header is
  mismatched (a copied or forged block): all failures;
* fewer than ``acknowledged_before_snapshot`` records in the prefix is a failure (lost records).

Pure: bytes in, a frozen :class:`LogVerdict` out.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from kubectl_storage.core.snapshot.log_record import (
    CHECKSUM_SIZE,
    DEFAULT_RECORD_SIZE,
    HEADER_SIZE,
    MAGIC,
    check_record_size,
    record_payload,
)

# -- the verdict --------------------------------------------------------------------------------


class TornReason(StrEnum):
    """Why the in-flight block is not a record."""

    SHORT_WRITE = "short write"
    ZEROS = "all zeros"
    BAD_CHECKSUM = "bad checksum"


@dataclass(frozen=True)
class TornRecord:
    """The block after the last record found: the record that was being written."""

    offset: int
    length: int
    #: The seq it would have held (one after the highest seq found).
    seq: int
    reason: TornReason


@dataclass(frozen=True)
class Hole:
    """An invalid region (zeros or garbage) with at least one record after it."""

    offset: int
    length: int
    #: "zeros", "garbage", or "zeros and garbage".
    content: str
    #: Where the record after the hole starts.
    next_record_offset: int


@dataclass(frozen=True)
class OutOfSequence:
    """A valid record whose seq is not the one its place calls for."""

    offset: int
    expected: int
    found: int


@dataclass(frozen=True)
class MismatchedRecord:
    """A block with a valid checksum whose payload or size field does not match its header."""

    offset: int
    seq: int
    reason: str


@dataclass(frozen=True)
class TrailingGarbage:
    """Bytes after the one torn record."""

    offset: int
    length: int


@dataclass(frozen=True)
class LogVerdict:
    """What a restored log holds, and whether it is a clean prefix of what was written."""

    record_size: int
    log_bytes: int
    #: k: records 1..k are intact and in order at the start of the log.
    clean_prefix: int
    #: The writer's timestamp of record k (None when k is 0).
    clean_prefix_timestamp_ns: int | None
    #: Valid records anywhere in the log, also those after a hole.
    records_intact: int
    torn: TornRecord | None
    #: The torn record follows the clean prefix directly: the one record in flight, allowed.
    in_flight_torn: bool
    holes: tuple[Hole, ...]
    reordered: tuple[OutOfSequence, ...]
    duplicate: tuple[OutOfSequence, ...]
    mismatched: tuple[MismatchedRecord, ...]
    trailing_garbage: TrailingGarbage | None
    acknowledged_before_snapshot: int | None
    #: Acknowledged records missing from the clean prefix (0 when none, or unknown).
    lost_acknowledged: int
    ok: bool
    #: One sentence per failure, each with its byte offset; empty when ok.
    problems: tuple[str, ...]
    #: Sentences about what is allowed but worth saying (the in-flight torn record).
    notes: tuple[str, ...]


# -- reading blocks -----------------------------------------------------------------------------


class _Kind(StrEnum):
    VALID = "valid"
    MISMATCHED = "mismatched"
    SHORT = "short"
    ZEROS = "zeros"
    GARBAGE = "garbage"


@dataclass(frozen=True)
class _Block:
    offset: int
    length: int
    kind: _Kind
    seq: int = 0
    timestamp_ns: int = 0
    reason: str = ""


def _read_block(data: bytes, offset: int, record_size: int) -> _Block:
    block = data[offset : offset + record_size]
    length = len(block)
    if length < record_size:
        return _Block(offset, length, _Kind.SHORT)
    if block.count(0) == length:
        return _Block(offset, length, _Kind.ZEROS)
    body, checksum = block[:-CHECKSUM_SIZE], block[-CHECKSUM_SIZE:]
    if block[: len(MAGIC)] != MAGIC or hashlib.sha256(body).digest() != checksum:
        return _Block(offset, length, _Kind.GARBAGE)
    seq = int.from_bytes(block[8:16], "big")
    timestamp_ns = int.from_bytes(block[16:24], "big")
    declared_size = int.from_bytes(block[24:28], "big")
    if declared_size != record_size:
        reason = f"written as a {declared_size}-byte record, read as {record_size}"
        return _Block(offset, length, _Kind.MISMATCHED, seq, timestamp_ns, reason)
    if block[HEADER_SIZE:-CHECKSUM_SIZE] != record_payload(seq, record_size):
        reason = "its payload belongs to another record (a copied or forged block)"
        return _Block(offset, length, _Kind.MISMATCHED, seq, timestamp_ns, reason)
    return _Block(offset, length, _Kind.VALID, seq, timestamp_ns)


def _torn_reason(block: _Block) -> TornReason:
    if block.kind is _Kind.SHORT:
        return TornReason.SHORT_WRITE
    if block.kind is _Kind.ZEROS:
        return TornReason.ZEROS
    return TornReason.BAD_CHECKSUM


def _hole(region: list[_Block], next_record_offset: int) -> Hole:
    kinds = {b.kind for b in region}
    if kinds == {_Kind.ZEROS}:
        content = "zeros"
    elif _Kind.ZEROS in kinds:
        content = "zeros and garbage"
    else:
        content = "garbage"
    start = region[0].offset
    return Hole(start, next_record_offset - start, content, next_record_offset)


# -- the check ----------------------------------------------------------------------------------


def check_log(
    data: bytes,
    *,
    record_size: int = DEFAULT_RECORD_SIZE,
    acknowledged_before_snapshot: int | None,
) -> LogVerdict:
    """Walk the restored log ``data`` record by record and judge it (rules: module docstring).

    ``acknowledged_before_snapshot`` is the highest seq the writer acknowledged (fsync returned)
    before the snapshot's creationTime; None when unknown, and then no record counts as lost.
    """
    check_record_size(record_size)
    if acknowledged_before_snapshot is not None and acknowledged_before_snapshot < 0:
        raise ValueError(
            f"acknowledged_before_snapshot must be 0 or more, got {acknowledged_before_snapshot}"
        )
    blocks = [_read_block(data, off, record_size) for off in range(0, len(data), record_size)]

    # 1. The clean prefix.
    k = 0
    while k < len(blocks) and blocks[k].kind is _Kind.VALID and blocks[k].seq == k + 1:
        k += 1
    prefix_timestamp = blocks[k - 1].timestamp_ns if k else None

    # 2. Between the prefix and the last record: holes, reordered, duplicates, mismatched.
    records = [i for i, b in enumerate(blocks) if b.kind in (_Kind.VALID, _Kind.MISMATCHED)]
    last_record = records[-1] if records else -1
    holes: list[Hole] = []
    reordered: list[OutOfSequence] = []
    duplicate: list[OutOfSequence] = []
    mismatched: list[MismatchedRecord] = []
    seen = set(range(1, k + 1))
    max_seq, last_valid = k, k - 1
    region: list[_Block] = []
    for i in range(k, last_record + 1):
        block = blocks[i]
        if block.kind not in (_Kind.VALID, _Kind.MISMATCHED):
            region.append(block)
            continue
        if region:
            holes.append(_hole(region, block.offset))
            region = []
        if block.kind is _Kind.MISMATCHED:
            mismatched.append(MismatchedRecord(block.offset, block.seq, block.reason))
            continue
        # The seq this place calls for: one after the highest seen, counting holes as records.
        expected = max_seq + (i - last_valid)
        if block.seq in seen:
            duplicate.append(OutOfSequence(block.offset, expected, block.seq))
        elif block.seq != expected:
            reordered.append(OutOfSequence(block.offset, expected, block.seq))
        seen.add(block.seq)
        max_seq, last_valid = max(max_seq, block.seq), i

    # 3. After the last record: the torn in-flight record, then trailing garbage.
    tail = blocks[last_record + 1 :]
    torn = None
    trailing = None
    if tail:
        first = tail[0]
        torn = TornRecord(first.offset, first.length, max_seq + 1, _torn_reason(first))
        if len(tail) > 1:
            trailing = TrailingGarbage(tail[1].offset, len(data) - tail[1].offset)
    in_flight_torn = torn is not None and torn.offset == k * record_size

    lost = 0
    if acknowledged_before_snapshot is not None:
        lost = max(0, acknowledged_before_snapshot - k)

    problems = _problems(
        k=k,
        record_size=record_size,
        holes=holes,
        reordered=reordered,
        duplicate=duplicate,
        mismatched=mismatched,
        trailing=trailing,
        acknowledged=acknowledged_before_snapshot,
        lost=lost,
    )
    notes: list[str] = []
    if torn is not None:
        where = "right after the clean prefix" if in_flight_torn else "after the last record"
        notes.append(
            f"record {torn.seq} at offset {torn.offset} is torn ({torn.reason}, "
            f"{torn.length} of {record_size} bytes) {where}: the record in flight"
        )
    return LogVerdict(
        record_size=record_size,
        log_bytes=len(data),
        clean_prefix=k,
        clean_prefix_timestamp_ns=prefix_timestamp,
        records_intact=sum(1 for b in blocks if b.kind is _Kind.VALID),
        torn=torn,
        in_flight_torn=in_flight_torn,
        holes=tuple(holes),
        reordered=tuple(reordered),
        duplicate=tuple(duplicate),
        mismatched=tuple(mismatched),
        trailing_garbage=trailing,
        acknowledged_before_snapshot=acknowledged_before_snapshot,
        lost_acknowledged=lost,
        ok=not problems,
        problems=tuple(problems),
        notes=tuple(notes),
    )


def _problems(
    *,
    k: int,
    record_size: int,
    holes: list[Hole],
    reordered: list[OutOfSequence],
    duplicate: list[OutOfSequence],
    mismatched: list[MismatchedRecord],
    trailing: TrailingGarbage | None,
    acknowledged: int | None,
    lost: int,
) -> list[str]:
    found: list[tuple[int, str]] = []
    for hole in holes:
        found.append(
            (
                hole.offset,
                f"hole at offset {hole.offset}: {hole.length} bytes of {hole.content}, "
                f"followed by a record at offset {hole.next_record_offset}",
            )
        )
    for r in reordered:
        found.append(
            (
                r.offset,
                f"record out of order at offset {r.offset}: expected seq {r.expected}, "
                f"found {r.found}",
            )
        )
    for d in duplicate:
        found.append(
            (
                d.offset,
                f"duplicate record at offset {d.offset}: seq {d.found} again, "
                f"where seq {d.expected} was expected",
            )
        )
    for m in mismatched:
        found.append((m.offset, f"record at offset {m.offset} claims seq {m.seq}, but {m.reason}"))
    if trailing is not None:
        found.append(
            (
                trailing.offset,
                f"trailing garbage at offset {trailing.offset}: {trailing.length} bytes after "
                "the one record that may be torn",
            )
        )
    found.sort(key=lambda item: item[0])
    problems = [text for _, text in found]
    if lost:
        offset = k * record_size
        were = "record was" if acknowledged == 1 else "records were"
        problems.append(
            f"lost acknowledged record {k + 1} (offset {offset}): the clean prefix ends at "
            f"record {k}, but {acknowledged} {were} acknowledged before the snapshot"
        )
    return problems
