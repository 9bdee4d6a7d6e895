"""The external disruption's rules: the stall, what counts as observed, and the verdicts.

Sources of the rules: issue 26 items 2 and 4 (an external run in which nothing happened proves
nothing: inconclusive, never pass; a lost acknowledged commit fails whatever caused it; the PASS
line names a power loss only as what the user may have done). The uptime line is the batch
output of ``SHOW GLOBAL STATUS LIKE 'Uptime'`` (`mysql -N -B`: name TAB value).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.external import (
    SERVER_RESTARTED,
    WRITER_ERROR,
    Attempt,
    account_attempts,
    commit_sql,
    longest_stall,
    observed_disruption,
    parse_uptime,
)
from kubectl_storage.core.validate_persistence.mysql import VolumeType
from kubectl_storage.core.validate_persistence.report import (
    EXTERNAL_RESTART_TESTED,
    POWER_LOSS_NOT_TESTED,
    PersistenceReport,
    evaluate_phase,
)
from kubectl_storage.core.validate_persistence.rows import StoredRow, compare_rows, generate_rows
from kubectl_storage.core.validate_persistence.writer import writer_row

FIRST_ID = 101


def _stored(rows) -> list[StoredRow]:
    return [StoredRow(r.task_id, r.title, r.description, 1_700_000_000) for r in rows]


def _attempts() -> list[Attempt]:
    """Acks every 0.2 s, then two failures (a crash), then acks again after 7.5 s."""
    out = [Attempt(seq, 0.2 * seq, True) for seq in range(1, 6)]
    out += [Attempt(6, 1.4, False, "ERROR 2013"), Attempt(7, 3.0, False, "pod not found")]
    out += [Attempt(seq, 8.5 + 0.2 * (seq - 8), True) for seq in range(8, 11)]
    return out


def test_longest_stall_is_the_biggest_gap_between_acknowledged_commits() -> None:
    acks = [(a.seq, a.at_s) for a in _attempts() if a.acknowledged]
    stall = longest_stall(acks)
    assert stall is not None
    assert stall.after_seq == 5
    assert stall.resumed_seq == 8
    assert stall.seconds == pytest.approx(7.5)
    assert stall.started_at_s == pytest.approx(1.0)


def test_longest_stall_needs_two_acks_and_time_going_forward() -> None:
    assert longest_stall([]) is None
    assert longest_stall([(1, 0.5)]) is None
    steady = longest_stall([(1, 0.1), (2, 0.3), (3, 0.4)])
    assert steady is not None
    assert steady.seconds == pytest.approx(0.2)
    assert steady.after_seq == 1
    with pytest.raises(ValueError, match="backwards"):
        longest_stall([(1, 2.0), (2, 1.0)])


def test_observed_disruption_both_ways() -> None:
    quiet = [Attempt(s, 0.1 * s, True) for s in range(1, 20)]
    assert (
        observed_disruption(
            quiet,
            pod_recreated=False,
            container_restarted=False,
            uptime_before_s=500,
            uptime_after_s=530,
            seconds_between=30.4,
        )
        == ()
    )
    assert observed_disruption(
        _attempts(),
        pod_recreated=False,
        container_restarted=False,
        uptime_before_s=500,
        uptime_after_s=None,
        seconds_between=30,
    ) == (WRITER_ERROR,)
    # A failover the writer never saw fail, but the server started again in between (a
    # server up for only 2 s when the phase started, and for 4 s at its end, 30 s later).
    assert observed_disruption(
        quiet,
        pod_recreated=False,
        container_restarted=False,
        uptime_before_s=2,
        uptime_after_s=4,
        seconds_between=30,
    ) == (SERVER_RESTARTED,)


def test_parse_uptime() -> None:
    assert parse_uptime("Uptime\t1234\n") == 1234.0
    assert parse_uptime("") is None
    assert parse_uptime("Uptime\tNULL\n") is None


def test_commit_sql_writes_the_writer_row() -> None:
    row = writer_row(3, FIRST_ID + 2)
    sql = commit_sql(3, FIRST_ID + 2)
    assert sql.startswith("START TRANSACTION; INSERT")
    assert sql.endswith("; COMMIT")
    assert f"({row.task_id}, '{row.title}', '{row.description}')" in sql


def _phase(found_rows, attempts, observed):
    seed = generate_rows(100, random.Random(3))
    found = _stored(seed) + found_rows
    accounting, durable, tolerated, _ = account_attempts(attempts, FIRST_ID, found)
    comparison = compare_rows(list(seed) + list(durable), found, tolerated_ids=tolerated)
    stall = longest_stall([(a.seq, a.at_s) for a in attempts if a.acknowledged])
    return evaluate_phase(
        "external",
        comparison,
        time_to_ready_s=7.0,
        commits=accounting,
        writer_attempts=len(attempts),
        stall=stall,
        observed=observed,
    )


def _rows(seqs):
    return _stored([writer_row(s, FIRST_ID + s - 1) for s in seqs])


def _report(phase) -> PersistenceReport:
    return PersistenceReport(
        "fast", VolumeType.PVC, "1Gi", "db", "mariadb:test", 100, "abcd1234", (phase,)
    )


def test_every_ack_back_after_a_restart_passes_and_says_so() -> None:
    attempts = _attempts()
    # Failed attempt 6 committed after all (allowed), 7 did not.
    phase = _phase(_rows([1, 2, 3, 4, 5, 6, 8, 9, 10]), attempts, (WRITER_ERROR, SERVER_RESTARTED))
    assert phase.verdict is Verdict.PASS
    assert phase.commits is not None
    assert phase.commits.acknowledged == 8
    report = _report(phase)
    assert report.outcome.verdict is Verdict.PASS
    assert EXTERNAL_RESTART_TESTED in report.tested
    assert "external disruption (what was done is not known to the tool)" in report.tested
    assert report.to_dict()["tested"] == report.tested
    document = replace(phase, started_at="2026-12-03T07:00:00+00:00").to_dict()
    assert document["stall"]["started_at"] == "2026-12-03T07:00:01+00:00"  # +1.0 s
    document = report.to_dict()["phases"][0]
    assert document["stall"]["seconds"] == 7.5
    assert document["stall"]["after_seq"] == 5
    assert document["disruption_observed"] == [WRITER_ERROR, SERVER_RESTARTED]


def test_pass_without_a_server_restart_keeps_power_loss_not_tested() -> None:
    phase = _phase(_rows([1, 2, 3, 4, 5, 8, 9, 10]), _attempts(), (WRITER_ERROR,))
    assert phase.verdict is Verdict.PASS
    assert _report(phase).tested.endswith(POWER_LOSS_NOT_TESTED)


def test_a_lost_acknowledged_commit_fails() -> None:
    phase = _phase(_rows([1, 2, 3, 8, 9, 10]), _attempts(), (WRITER_ERROR, SERVER_RESTARTED))
    assert phase.verdict is Verdict.FAIL
    assert phase.commits is not None
    assert phase.commits.lost_ids == (FIRST_ID + 3, FIRST_ID + 4)
    assert "2 of 8 acknowledged commits lost" in phase.note
    assert _report(phase).outcome.verdict is Verdict.FAIL


def test_nothing_observed_is_inconclusive_never_pass() -> None:
    quiet = [Attempt(s, 0.1 * s, True) for s in range(1, 11)]
    phase = _phase(_rows(range(1, 11)), quiet, ())
    assert phase.verdict is Verdict.INCONCLUSIVE
    assert "no disruption observed" in phase.note
    report = _report(phase)
    assert report.outcome.verdict is Verdict.INCONCLUSIVE
    assert list(report.outcome.reasons) == ["no-disruption:external"]
    assert report.unavailable_phases == []
    assert report.no_disruption_phases == ["external"]


def test_nothing_observed_but_a_loss_still_fails() -> None:
    quiet = [Attempt(s, 0.1 * s, True) for s in range(1, 11)]
    phase = _phase(_rows(range(1, 10)), quiet, ())
    assert phase.verdict is Verdict.FAIL
