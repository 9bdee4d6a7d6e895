"""The --under-load verdict: the two restored logs against the acknowledgements, the counts read
around the cut, and creationTime (judge_cut's rules on the report's verdict model)."""

from __future__ import annotations

import io

import pytest

from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.snapshot.check_report import SnapshotCheckReport
from kubectl_storage.core.snapshot.log_record import encode_record
from kubectl_storage.core.snapshot.log_writer import Ack
from kubectl_storage.core.snapshot.under_load import (
    UnderLoadResult,
    creation_time_ns,
    judge_under_load,
)
from kubectl_storage.render.snapshot import _write_under_load

SECOND = 1_000_000_000
T0 = 1_796_000_000 * SECOND  # a whole second, as creationTime gives it
AT_T0 = "2026-11-30T00:53:20Z"


def _acks(count: int, first_ack_ns: int, step_ns: int = SECOND // 10) -> tuple[Ack, ...]:
    return tuple(
        Ack(seq, first_ack_ns + (seq - 1) * step_ns - 1000, first_ack_ns + (seq - 1) * step_ns)
        for seq in range(1, count + 1)
    )


def _logs(acks: tuple[Ack, ...], first: int, second: int) -> tuple[bytes, bytes]:
    """File 0 holds its first ``first`` records, file 1 its first ``second``; global record g
    is record (g - 1) // 2 + 1 of file (g - 1) % 2, stamped with the ack's timestamp."""
    return tuple(  # type: ignore[return-value]
        b"".join(encode_record(j, acks[(j - 1) * 2 + i].timestamp_ns) for j in range(1, k + 1))
        for i, k in enumerate((first, second))
    )


def _judge(
    logs: tuple[bytes, bytes], acks: tuple[Ack, ...], *, at_request: int = 15, at_ready: int = 25,
    creation_time: str | None = AT_T0,
) -> UnderLoadResult:  # fmt: skip
    # 30 records acked every 0.1 s from T0 - 2 s: requested at T0 - 0.5 s, ready at T0 + 0.5 s.
    return judge_under_load(
        logs,
        acks,
        creation_time=creation_time,
        requested_ns=T0 - SECOND // 2,
        ready_ns=T0 + SECOND // 2,
        acknowledged_at_request=at_request,
        acknowledged_at_ready=at_ready,
    )


def _render(result: UnderLoadResult) -> str:
    out = io.StringIO()
    _write_under_load(result, out)
    return out.getvalue()


def test_creation_time_is_read_to_the_second_and_fractions_when_given() -> None:
    assert creation_time_ns("2026-12-01T12:55:39Z") == 1_796_129_739 * SECOND
    assert creation_time_ns("2026-12-01T12:55:39.250Z") == 1_796_129_739 * SECOND + 250_000_000
    assert creation_time_ns(AT_T0) == T0
    assert creation_time_ns(None) is None
    assert creation_time_ns("yesterday") is None


def test_one_instant_holding_every_acknowledged_record_passes_as_crash_consistent() -> None:
    acks = _acks(30, T0 - 2 * SECOND)

    result = _judge(_logs(acks, 11, 11), acks)

    assert result.problems == []
    assert result.outcome.verdict is Verdict.PASS
    assert result.crash_consistent
    assert result.acknowledged_before_snapshot == 20  # by creationTime T0
    assert result.cut.lower_bound == "creationTime"
    assert result.written_during_cut == 10
    assert result.written_after_ready == 5
    assert result.request_to_ready_s == pytest.approx(1.0)
    data = result.to_dict()
    assert (data["verdict"], data["crashConsistent"], data["cleanPrefix"]) == ("pass", True, 22)
    assert [f["cleanPrefix"] for f in data["files"]] == [11, 11]
    assert "crash-consistent" in _render(result)


def test_files_from_two_instants_fail_as_not_point_in_time() -> None:
    # File 0 copied while it held 10 records, file 1 a second later with 13: no crash leaves that.
    acks = _acks(30, T0 - 2 * SECOND)

    result = _judge(_logs(acks, 10, 13), acks)

    assert result.outcome.verdict is Verdict.FAIL
    assert any(p.startswith("not point-in-time") for p in result.problems)
    assert not result.crash_consistent
    assert result.to_dict()["pointInTime"] is False
    assert "crash-consistent" not in _render(result)


def test_a_lost_record_acknowledged_before_the_request_fails() -> None:
    acks = _acks(30, T0 - 2 * SECOND)

    result = _judge(_logs(acks, 6, 6), acks)

    assert result.outcome.verdict is Verdict.FAIL
    assert any(p.startswith("lost acknowledged record") for p in result.problems)
    assert "crash-consistent" not in _render(result)


def test_a_record_from_after_ready_fails_the_upper_bound() -> None:
    acks = _acks(30, T0 - 2 * SECOND)

    result = _judge(_logs(acks, 14, 14), acks)  # global 28 > 25 + 1 acknowledged at ready

    assert any("from after it was cut" in p for p in result.problems)
    assert result.outcome.verdict is Verdict.FAIL


def test_a_torn_last_record_is_the_one_in_flight() -> None:
    acks = _acks(30, T0 - 2 * SECOND)
    first, second = _logs(acks, 11, 10)

    result = _judge((first, second + encode_record(11, T0)[:1000]), acks)

    assert result.to_dict()["files"][1]["tornRecord"] == {
        "offset": 40960,
        "length": 1000,
        "seq": 11,
        "reason": "short write",
        "inFlight": True,
    }
    assert result.problems == []
    assert result.crash_consistent


def test_a_writer_that_died_before_ready_is_inconclusive_and_so_is_the_report() -> None:
    acks = _acks(25, T0 - 2 * SECOND)  # nothing after the 25 counted at readyToUse

    result = _judge(_logs(acks, 11, 11), acks)

    assert result.outcome.verdict is Verdict.INCONCLUSIVE
    assert not result.crash_consistent
    report = SnapshotCheckReport(
        storage_class="c", snapshot_class="s", driver="d", namespace="n", size="1Gi",
        snapshot="x", restore_size="1Gi", restore_storage_class="c", run_id="r", steps=(),
        files=(), changes=(), under_load=result,
    )  # fmt: skip
    assert report.outcome.verdict is Verdict.INCONCLUSIVE
    assert report.outcome.reasons == ("under-load",)
    assert report.to_dict()["underLoad"]["inconclusive"]


def test_without_a_creation_time_the_request_count_is_the_lower_bound() -> None:
    acks = _acks(30, T0 - 2 * SECOND)

    result = _judge(_logs(acks, 8, 7), acks, creation_time=None)

    assert result.acknowledged_before_snapshot is None
    assert result.cut.lower_bound == "request"
    assert result.problems == []
    assert "the snapshot gave no creationTime" in _render(result)
