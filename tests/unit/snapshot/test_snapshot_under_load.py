"""The --under-load verdict: the restored log against the acknowledgements and creationTime."""

from __future__ import annotations

import io

import pytest

from kubectl_storage.core.snapshot.log_record import encode_record
from kubectl_storage.core.snapshot.log_writer import Ack
from kubectl_storage.core.snapshot.under_load import creation_time_ns, judge_under_load
from kubectl_storage.render.snapshot import _write_under_load

SECOND = 1_000_000_000
T0 = 1_796_000_000 * SECOND  # a whole second, as creationTime gives it


def _acks(count: int, first_ack_ns: int, step_ns: int = SECOND // 10) -> tuple[Ack, ...]:
    return tuple(
        Ack(seq, first_ack_ns + (seq - 1) * step_ns - 1000, first_ack_ns + (seq - 1) * step_ns)
        for seq in range(1, count + 1)
    )


def _log(records: int) -> bytes:
    return b"".join(encode_record(seq, T0 + seq) for seq in range(1, records + 1))


def test_creation_time_is_read_to_the_second_and_fractions_when_given() -> None:
    assert creation_time_ns("2026-12-01T12:55:39Z") == 1_796_129_739 * SECOND
    assert creation_time_ns("2026-12-01T12:55:39.250Z") == 1_796_129_739 * SECOND + 250_000_000
    assert creation_time_ns(None) is None
    assert creation_time_ns("yesterday") is None


def test_a_restore_holding_every_record_acknowledged_before_the_snapshot_passes() -> None:
    # 30 records acknowledged, every 0.1 s from T0 - 2 s; the snapshot says T0: 20 before it.
    acks = _acks(30, T0 - 2 * SECOND)
    moment = "2026-11-30T00:53:20Z"
    assert creation_time_ns(moment) == T0

    result = judge_under_load(
        _log(22), acks, creation_time=moment, requested_ns=T0 - SECOND, ready_ns=T0 + SECOND
    )

    assert result.acknowledged_before_snapshot == 20
    assert result.log.clean_prefix == 22
    assert result.problems == []
    assert result.written_during_cut == 20
    assert result.request_to_ready_s == pytest.approx(2.0)


def test_a_restore_missing_an_acknowledged_record_fails_with_its_offset() -> None:
    acks = _acks(30, T0 - 2 * SECOND)

    result = judge_under_load(
        _log(19), acks, creation_time="2026-11-30T00:53:20Z", requested_ns=T0, ready_ns=T0
    )

    assert result.problems == [
        "log: lost acknowledged record 20 (offset 77824): the clean prefix ends at record 19, "
        "but 20 records were acknowledged before the snapshot"
    ]
    assert result.to_dict()["cleanPrefix"] == 19


def test_without_a_creation_time_nothing_counts_as_lost() -> None:
    result = judge_under_load(
        _log(3), _acks(30, T0), creation_time=None, requested_ns=T0, ready_ns=T0
    )

    assert result.acknowledged_before_snapshot is None
    assert result.problems == []
    out = io.StringIO()
    _write_under_load(result, out)
    assert "gave no creationTime, so none can be counted lost" in out.getvalue()


def test_a_torn_last_record_is_the_one_in_flight() -> None:
    data = _log(21) + encode_record(22, T0)[:1000]

    result = judge_under_load(
        data, _acks(30, T0 - 2 * SECOND), creation_time="2026-11-30T00:53:20Z",
        requested_ns=T0, ready_ns=T0,
    )  # fmt: skip

    torn = result.to_dict()["tornRecord"]
    assert torn == {
        "offset": 86016,
        "length": 1000,
        "seq": 22,
        "reason": "short write",
        "inFlight": True,
    }
    assert result.problems == []
