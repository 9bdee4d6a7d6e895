"""The cross-file cut rules (core/snapshot/log_cut.py), each both ways. The logs are built with
encode_record (the writer's own byte format), not yet recorded from a real two-file writer: the
writer still appends to one file."""

from __future__ import annotations

from kubectl_storage.core.snapshot.log_cut import global_seq, in_file, judge_cut
from kubectl_storage.core.snapshot.log_prefix import LogVerdict, check_log
from kubectl_storage.core.snapshot.log_record import encode_record
from kubectl_storage.core.snapshot.log_writer import Ack

SECOND = 1_000_000_000
T0 = 1_796_000_000 * SECOND
STEP = SECOND // 10  # one global record every 0.1 s, from T0


def _ts(g: int) -> int:
    return T0 + (g - 1) * STEP


def _file(index: int, count: int) -> LogVerdict:
    data = b"".join(encode_record(s, _ts(global_seq(index, s, 2))) for s in range(1, count + 1))
    return check_log(data, acknowledged_before_snapshot=None)


ACKS = tuple(Ack(g, _ts(g), _ts(g) + STEP // 2) for g in range(1, 61))
# Requested after global 20 was acknowledged, readyToUse seen after 40; 60 acknowledged in all.
KW = {
    "acknowledged_at_request": 20,
    "acknowledged_at_ready": 40,
    "requested_ns": _ts(21),
    "ready_ns": _ts(41),
}


def test_the_mapping_of_global_records_to_files() -> None:
    assert [in_file(5, 2, i) for i in (0, 1)] == [3, 2]
    assert [global_seq(0, 3, 2), global_seq(1, 3, 2)] == [5, 6]


def test_a_clean_two_file_prefix_is_point_in_time_and_crash_consistent() -> None:
    verdict = judge_cut([_file(0, 16), _file(1, 15)], ACKS, creation_ns=None, **KW)

    assert verdict.point_in_time
    assert verdict.crash_consistent
    assert verdict.problems == ()
    assert verdict.lower_bound == "request"


def test_crossing_counts_are_not_point_in_time() -> None:
    # File 0 copied early (12 records), file 1 late (18): no crash leaves that.
    verdict = judge_cut([_file(0, 12), _file(1, 18)], ACKS, creation_ns=None, **KW)

    assert not verdict.point_in_time
    assert not verdict.crash_consistent
    assert verdict.problems[0].startswith("not point-in-time: the files hold 12, 18 records")


def test_records_begun_after_ready_to_use_fail() -> None:
    verdict = judge_cut([_file(0, 26), _file(1, 26)], ACKS, creation_ns=None, **KW)

    assert any("holds writes from after it was cut" in p for p in verdict.problems)
    quiet = judge_cut([_file(0, 21), _file(1, 20)], ACKS, creation_ns=None, **KW)
    assert quiet.problems == ()


def test_without_creation_time_the_request_bound_still_catches_loss() -> None:
    verdict = judge_cut([_file(0, 3), _file(1, 3)], ACKS, creation_ns=None, **KW)

    assert verdict.lower_bound == "request"
    assert any(p.startswith("lost acknowledged record: 20 records") for p in verdict.problems)


def test_a_creation_time_tightens_the_bound_and_a_late_one_is_named_apart_from_loss() -> None:
    late = _ts(35) + STEP  # after 35 were acknowledged, before readyToUse
    verdict = judge_cut([_file(0, 11), _file(1, 11)], ACKS, creation_ns=late, **KW)

    assert verdict.lower_bound == "creationTime"
    assert verdict.required == 35
    assert verdict.problems == ()
    assert verdict.warnings[0].startswith("creationTime stamped after the cut")
    held = judge_cut([_file(0, 18), _file(1, 18)], ACKS, creation_ns=late, **KW)
    assert held.warnings == ()
    assert held.lower_bound == "creationTime"


def test_a_writer_dead_before_the_cut_is_inconclusive() -> None:
    dead = ACKS[:15]
    verdict = judge_cut(
        [_file(0, 8), _file(1, 7)], dead, creation_ns=None,
        acknowledged_at_request=15, acknowledged_at_ready=15,
        requested_ns=_ts(21), ready_ns=_ts(41),
    )  # fmt: skip

    assert verdict.inconclusive
    assert not verdict.crash_consistent
    alive = judge_cut([_file(0, 8), _file(1, 7)], ACKS, creation_ns=None, **{**KW,
        "acknowledged_at_request": 15})  # fmt: skip
    assert alive.inconclusive == ()
