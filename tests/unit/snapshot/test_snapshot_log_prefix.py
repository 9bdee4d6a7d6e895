"""The under-load check's log: the record format and the clean-prefix verdict.

Every log here is built with encode_record and then damaged the way a bad snapshot would: a
torn last record, a hole, records out of order or duplicated, a copied block, lost records.
"""

from __future__ import annotations

import hashlib

import pytest

from kubectl_storage.core.snapshot.log_prefix import (
    Hole,
    LogVerdict,
    MismatchedRecord,
    OutOfSequence,
    TornReason,
    TornRecord,
    TrailingGarbage,
    check_log,
)
from kubectl_storage.core.snapshot.log_record import (
    DEFAULT_RECORD_SIZE,
    MAGIC,
    encode_record,
    record_payload,
)

SIZE = DEFAULT_RECORD_SIZE
T0 = 1_760_000_000_000_000_000  # the writer's wall clock, ns


def ts(seq: int) -> int:
    return T0 + seq * 1_000_000


def record(seq: int) -> bytes:
    return encode_record(seq, ts(seq))


def log(*seqs: int) -> bytes:
    return b"".join(record(s) for s in seqs)


def check(data: bytes, acknowledged: int | None = None) -> LogVerdict:
    return check_log(data, record_size=SIZE, acknowledged_before_snapshot=acknowledged)


# -- the record format ----------------------------------------------------------------------


def test_record_layout_is_the_documented_one() -> None:
    rec = encode_record(7, 123_456_789, size=4096)
    assert len(rec) == 4096
    assert rec[0:8] == MAGIC == b"KSLOG001"
    assert int.from_bytes(rec[8:16], "big") == 7
    assert int.from_bytes(rec[16:24], "big") == 123_456_789
    assert int.from_bytes(rec[24:28], "big") == 4096
    seed = hashlib.sha256(b"kubectl-storage log " + (7).to_bytes(8, "big")).digest()
    assert rec[28:-32] == (seed * 200)[: 4096 - 60] == record_payload(7, 4096)
    assert rec[-32:] == hashlib.sha256(rec[:-32]).digest()


def test_payload_differs_between_records_and_sizes_are_honoured() -> None:
    assert record_payload(1) != record_payload(2)
    assert len(encode_record(1, 0, size=64)) == 64
    assert len(encode_record(1, 0, size=512)) == 512


@pytest.mark.parametrize(
    ("seq", "timestamp_ns", "size", "message"),
    [
        (0, 0, 4096, "seq must be between 1"),
        (2**64, 0, 4096, "seq must be between 1"),
        (1, -1, 4096, "timestamp_ns must be between 0"),
        (1, 0, 63, "record size must be between 64"),
    ],
)
def test_encode_record_rejects_what_the_format_cannot_hold(
    seq: int, timestamp_ns: int, size: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        encode_record(seq, timestamp_ns, size=size)


def test_check_log_rejects_a_negative_acknowledged_count() -> None:
    with pytest.raises(ValueError, match="acknowledged_before_snapshot"):
        check(log(1), acknowledged=-1)


# -- clean logs -----------------------------------------------------------------------------


def test_clean_log_is_a_clean_prefix() -> None:
    v = check(log(1, 2, 3, 4, 5), acknowledged=5)
    assert v.ok
    assert v.problems == ()
    assert v.notes == ()
    assert v.clean_prefix == 5
    assert v.clean_prefix_timestamp_ns == ts(5)
    assert v.records_intact == 5
    assert v.log_bytes == 5 * SIZE
    assert v.torn is None
    assert not v.in_flight_torn
    assert (v.holes, v.reordered, v.duplicate, v.mismatched) == ((), (), (), ())
    assert v.trailing_garbage is None
    assert v.lost_acknowledged == 0


def test_clean_log_with_a_small_record_size() -> None:
    data = b"".join(encode_record(s, ts(s), size=512) for s in (1, 2, 3))
    v = check_log(data, record_size=512, acknowledged_before_snapshot=2)
    assert v.ok
    assert v.clean_prefix == 3


def _flip_a_payload_byte(seq: int) -> bytes:
    rec = bytearray(record(seq))
    rec[1000] ^= 0xFF
    return bytes(rec)


@pytest.mark.parametrize(
    ("tail", "reason", "length"),
    [
        pytest.param(record(6)[:100], TornReason.SHORT_WRITE, 100, id="short-write"),
        pytest.param(_flip_a_payload_byte(6), TornReason.BAD_CHECKSUM, SIZE, id="bad-checksum"),
        pytest.param(bytes(SIZE), TornReason.ZEROS, SIZE, id="zero-tail"),
        pytest.param(bytes(300), TornReason.SHORT_WRITE, 300, id="short-zero-tail"),
    ],
)
def test_torn_last_record_is_allowed_as_the_one_in_flight(
    tail: bytes, reason: TornReason, length: int
) -> None:
    v = check(log(1, 2, 3, 4, 5) + tail, acknowledged=5)
    assert v.ok, v.problems
    assert v.clean_prefix == 5
    assert v.in_flight_torn
    assert v.torn == TornRecord(offset=5 * SIZE, length=length, seq=6, reason=reason)
    assert v.trailing_garbage is None
    assert v.notes == (
        f"record 6 at offset 20480 is torn ({reason}, {length} of 4096 bytes) right after the "
        "clean prefix: the record in flight",
    )


def test_torn_record_that_was_acknowledged_is_lost() -> None:
    v = check(log(1, 2, 3, 4, 5) + bytes(SIZE), acknowledged=6)
    assert not v.ok
    assert v.in_flight_torn
    assert v.lost_acknowledged == 1
    assert v.problems == (
        "lost acknowledged record 6 (offset 20480): the clean prefix ends at record 5, "
        "but 6 records were acknowledged before the snapshot",
    )


def test_only_one_torn_record_is_allowed() -> None:
    v = check(log(1, 2) + bytes(SIZE) + bytes(SIZE) + b"x" * 10)
    assert not v.ok
    assert v.clean_prefix == 2
    assert v.torn == TornRecord(8192, SIZE, 3, TornReason.ZEROS)
    assert v.trailing_garbage == TrailingGarbage(offset=12288, length=SIZE + 10)
    assert v.problems == (
        "trailing garbage at offset 12288: 4106 bytes after the one record that may be torn",
    )


# -- holes ----------------------------------------------------------------------------------


def test_zeroed_record_in_the_middle_is_a_hole() -> None:
    data = log(1, 2) + bytes(SIZE) + log(4, 5)
    v = check(data, acknowledged=2)
    assert not v.ok
    assert v.clean_prefix == 2
    assert v.records_intact == 4
    assert v.holes == (Hole(offset=8192, length=SIZE, content="zeros", next_record_offset=12288),)
    # Records 4 and 5 sit where they belong after the hole: no second complaint about them.
    assert v.reordered == ()
    assert v.duplicate == ()
    assert v.torn is None
    assert v.problems == (
        "hole at offset 8192: 4096 bytes of zeros, followed by a record at offset 12288",
    )


def test_garbage_and_zeros_spanning_two_records_is_one_hole() -> None:
    data = log(1) + bytes(SIZE) + b"\xab" * SIZE + log(4)
    v = check(data)
    assert v.holes == (Hole(4096, 2 * SIZE, "zeros and garbage", 12288),)
    assert v.problems == (
        "hole at offset 4096: 8192 bytes of zeros and garbage, followed by a record at offset 12288",
    )


def test_corrupt_first_record_leaves_an_empty_prefix() -> None:
    data = _flip_a_payload_byte(1) + log(2, 3)
    v = check(data, acknowledged=0)
    assert not v.ok
    assert v.clean_prefix == 0
    assert v.clean_prefix_timestamp_ns is None
    assert v.holes == (Hole(0, SIZE, "garbage", 4096),)
    assert v.problems == (
        "hole at offset 0: 4096 bytes of garbage, followed by a record at offset 4096",
    )


# -- order ----------------------------------------------------------------------------------


def test_reordered_records() -> None:
    v = check(log(1, 2, 4, 3, 5))
    assert not v.ok
    assert v.clean_prefix == 2
    assert v.records_intact == 5
    assert v.reordered == (
        OutOfSequence(offset=8192, expected=3, found=4),
        OutOfSequence(offset=12288, expected=5, found=3),
    )
    assert v.duplicate == ()
    assert v.problems == (
        "record out of order at offset 8192: expected seq 3, found 4",
        "record out of order at offset 12288: expected seq 5, found 3",
    )


def test_missing_record_without_a_hole_is_out_of_order() -> None:
    v = check(log(1, 2, 4, 5))
    assert v.clean_prefix == 2
    assert v.reordered == (OutOfSequence(8192, 3, 4),)
    assert v.problems == ("record out of order at offset 8192: expected seq 3, found 4",)


def test_duplicate_record_inserted() -> None:
    v = check(log(1, 2, 2, 3, 4))
    assert not v.ok
    assert v.clean_prefix == 2
    assert v.duplicate == (OutOfSequence(offset=8192, expected=3, found=2),)
    assert v.reordered == ()
    assert v.problems == ("duplicate record at offset 8192: seq 2 again, where seq 3 was expected",)


def test_copied_block_over_a_record_is_a_duplicate_and_the_record_is_missing() -> None:
    v = check(log(1, 2, 2, 4, 5), acknowledged=2)
    assert v.clean_prefix == 2
    assert v.duplicate == (OutOfSequence(8192, 3, 2),)
    assert v.reordered == (OutOfSequence(12288, 3, 4),)
    assert v.problems == (
        "duplicate record at offset 8192: seq 2 again, where seq 3 was expected",
        "record out of order at offset 12288: expected seq 3, found 4",
    )


def test_torn_record_after_a_reorder_is_noted_not_excused() -> None:
    v = check(log(1, 3) + record(4)[:10])
    assert not v.ok
    assert not v.in_flight_torn
    assert v.torn == TornRecord(8192, 10, 4, TornReason.SHORT_WRITE)
    assert v.problems == ("record out of order at offset 4096: expected seq 2, found 3",)
    assert v.notes == (
        "record 4 at offset 8192 is torn (short write, 10 of 4096 bytes) after the last record: "
        "the record in flight",
    )


# -- copied payloads ------------------------------------------------------------------------


def _header_rewritten(payload_of: int, claims: int) -> bytes:
    """Record ``payload_of`` with its seq field set to ``claims`` and a recomputed checksum."""
    body = bytearray(record(payload_of)[:-32])
    body[8:16] = claims.to_bytes(8, "big")
    return bytes(body) + hashlib.sha256(body).digest()


def test_block_carrying_another_records_payload_is_detected() -> None:
    data = log(1, 2) + _header_rewritten(payload_of=5, claims=3) + log(4)
    v = check(data)
    assert not v.ok
    assert v.clean_prefix == 2
    assert v.records_intact == 3
    reason = "its payload belongs to another record (a copied or forged block)"
    assert v.mismatched == (MismatchedRecord(offset=8192, seq=3, reason=reason),)
    assert v.holes == ()
    assert v.reordered == ()
    assert v.problems == (f"record at offset 8192 claims seq 3, but {reason}",)


def test_block_carrying_another_records_payload_is_not_excused_as_torn() -> None:
    v = check(log(1, 2) + _header_rewritten(payload_of=5, claims=3))
    assert not v.ok
    assert v.torn is None
    assert v.problems == (
        "record at offset 8192 claims seq 3, but its payload belongs to another record "
        "(a copied or forged block)",
    )


def test_record_of_another_size_is_mismatched() -> None:
    body = bytearray(record(2)[:-32])
    body[24:28] = (8192).to_bytes(4, "big")
    forged = bytes(body) + hashlib.sha256(body).digest()
    v = check(log(1) + forged)
    assert v.mismatched == (
        MismatchedRecord(4096, 2, "written as a 8192-byte record, read as 4096"),
    )
    assert v.problems == (
        "record at offset 4096 claims seq 2, but written as a 8192-byte record, read as 4096",
    )


# -- empty logs and lost records ------------------------------------------------------------


@pytest.mark.parametrize("acknowledged", [None, 0])
def test_empty_log_is_ok_when_nothing_was_acknowledged(acknowledged: int | None) -> None:
    v = check(b"", acknowledged=acknowledged)
    assert v.ok
    assert v.clean_prefix == 0
    assert v.torn is None
    assert v.problems == ()


def test_empty_log_with_acknowledged_records_lost_them() -> None:
    v = check(b"", acknowledged=3)
    assert not v.ok
    assert v.lost_acknowledged == 3
    assert v.problems == (
        "lost acknowledged record 1 (offset 0): the clean prefix ends at record 0, "
        "but 3 records were acknowledged before the snapshot",
    )


def test_prefix_shorter_than_the_acknowledged_count_is_a_failure() -> None:
    v = check(log(1, 2, 3), acknowledged=5)
    assert not v.ok
    assert v.clean_prefix == 3
    assert v.lost_acknowledged == 2
    assert v.problems == (
        "lost acknowledged record 4 (offset 12288): the clean prefix ends at record 3, "
        "but 5 records were acknowledged before the snapshot",
    )


def test_records_after_a_hole_do_not_count_as_acknowledged() -> None:
    v = check(log(1) + bytes(SIZE) + log(3, 4), acknowledged=4)
    assert v.clean_prefix == 1
    assert v.lost_acknowledged == 3
    assert v.problems == (
        "hole at offset 4096: 4096 bytes of zeros, followed by a record at offset 8192",
        "lost acknowledged record 2 (offset 4096): the clean prefix ends at record 1, "
        "but 4 records were acknowledged before the snapshot",
    )


def test_one_lost_record_reads_in_the_singular() -> None:
    v = check(b"", acknowledged=1)
    assert v.problems == (
        "lost acknowledged record 1 (offset 0): the clean prefix ends at record 0, "
        "but 1 record was acknowledged before the snapshot",
    )
