"""The ``external`` disruption's arithmetic: the writer's attempts, the longest stall between
acknowledged commits, whether a disruption was observed at all, and the accounting of what came
back. Standard library only; operations/validate_persistence/external.py runs the writer.

During ``external`` the user disrupts the database themselves (a storage controller failover, a
node power-cycle, the test harness's ``power-off``); the tool cannot know what was done. It only
sees its own writer (each commit one client run, acknowledged by the COMMIT's own success, as
in :mod:`.writer`), the pod (uid, container restarts) and the server's ``Uptime``. A run in which
none of those show a disruption proves nothing, so it is inconclusive, never a pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.validate_persistence.rows import DATABASE, TABLE, StoredRow, TaskRow
from kubectl_storage.core.validate_persistence.writer import (
    CommitAccounting,
    writer_row,
    writer_task_id,
)

#: What counts as a disruption, as the phase records it.
WRITER_ERROR = "writer-error"  # a commit attempt failed (error, lost connection, pod gone)
POD_RECREATED = "pod-recreated"  # the database pod has a new uid
CONTAINER_RESTARTED = "container-restarted"  # the server container's restartCount went up
SERVER_RESTARTED = "server-restarted"  # the server's Uptime did not keep up with the clock
#: Seconds of slack when comparing the server's Uptime (whole seconds) with the phase's length.
UPTIME_SLACK_S = 2.0


def commit_sql(seq: int, task_id: int) -> str:
    """One attempt: one explicit transaction ending in COMMIT, for the row of ``seq``."""
    row = writer_row(seq, task_id)
    return (
        f"START TRANSACTION; INSERT INTO {DATABASE}.{TABLE} (task_id, title, description) "
        f"VALUES ({row.task_id}, '{row.title}', '{row.description}'); COMMIT"
    )


@dataclass(frozen=True)
class Attempt:
    """One commit attempt; ``at_s`` is seconds since the phase started, when it returned."""

    seq: int
    at_s: float
    acknowledged: bool
    error: str = ""


@dataclass(frozen=True)
class Stall:
    """The longest gap between two acknowledged commits: how long the writer's I/O stopped."""

    seconds: float
    #: Seconds since the phase started when the last commit before the gap was acknowledged.
    started_at_s: float
    #: The seq acknowledged just before the gap, and the first one after it.
    after_seq: int
    resumed_seq: int

    def to_dict(self, started_utc: str | None = None) -> dict[str, Any]:
        """JSON shape (stable key order); ``started_utc``: when the stall began, in UTC."""
        return {
            "seconds": round(self.seconds, 2),
            "started_at_s": round(self.started_at_s, 2),
            "started_at": started_utc,
            "after_seq": self.after_seq,
            "resumed_seq": self.resumed_seq,
        }


def longest_stall(acks: Sequence[tuple[int, float]]) -> Stall | None:
    """The longest gap between consecutive acknowledged commits, ``acks`` = (seq, at_s) in
    order; None with fewer than two (no gap can be measured). Ties: the first gap."""
    best: Stall | None = None
    for (seq_a, at_a), (seq_b, at_b) in itertools.pairwise(acks):
        gap = at_b - at_a
        if gap < 0:
            raise ValueError(f"acknowledgement times go backwards at seq {seq_b}")
        if best is None or gap > best.seconds:
            best = Stall(gap, at_a, seq_a, seq_b)
    return best


def observed_disruption(
    attempts: Sequence[Attempt],
    *,
    pod_recreated: bool,
    container_restarted: bool,
    uptime_before_s: float | None,
    uptime_after_s: float | None,
    seconds_between: float,
) -> tuple[str, ...]:
    """What shows that something happened to the database (empty: nothing was observed).

    A server whose ``Uptime`` grew less than the time between the two readings (less slack)
    restarted in between; an unknown uptime counts as nothing.
    """
    seen = []
    if any(not a.acknowledged for a in attempts):
        seen.append(WRITER_ERROR)
    if pod_recreated:
        seen.append(POD_RECREATED)
    if container_restarted:
        seen.append(CONTAINER_RESTARTED)
    if server_restarted(uptime_before_s, uptime_after_s, seconds_between):
        seen.append(SERVER_RESTARTED)
    return tuple(seen)


def server_restarted(
    uptime_before_s: float | None, uptime_after_s: float | None, seconds_between: float
) -> bool:
    """The server started again between two readings of its Uptime: the second is smaller than
    the first plus the time between them (less slack for whole seconds and exec latency)."""
    if uptime_before_s is None or uptime_after_s is None:
        return False
    return uptime_after_s + UPTIME_SLACK_S < uptime_before_s + seconds_between


def parse_uptime(stdout: str) -> float | None:
    """The seconds of ``SHOW GLOBAL STATUS LIKE 'Uptime'`` (batch output: ``Uptime\\t123``)."""
    for line in stdout.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "Uptime" and words[1].isdigit():
            return float(words[1])
    return None


UPTIME_SQL = "SHOW GLOBAL STATUS LIKE 'Uptime'"


def account_attempts(
    attempts: Sequence[Attempt], first_id: int, found: Sequence[StoredRow]
) -> tuple[CommitAccounting, tuple[TaskRow, ...], tuple[int, ...], int]:
    """Every acknowledged commit must be back; a failed attempt may or may not have committed.

    Returns the accounting (``in_flight_seq`` is the last failed attempt, ``in_flight_present``
    whether any failed attempt committed after all), the rows that must exist from now on, the
    ids tolerated by ``compare_rows`` (failed attempts that committed) and how many failed
    attempts committed.
    """
    by_id = {row.task_id: row for row in found}
    lost: list[int] = []
    present = 0
    durable: list[TaskRow] = []
    tolerated: list[int] = []
    uncertain_present = 0
    for attempt in attempts:
        row = writer_row(attempt.seq, writer_task_id(first_id, attempt.seq))
        got = by_id.get(row.task_id)
        intact = got is not None and got.content() == row
        if attempt.acknowledged:
            durable.append(row)
            if intact:
                present += 1
            else:
                lost.append(row.task_id)
        elif intact:
            uncertain_present += 1
            tolerated.append(row.task_id)
            durable.append(row)
    failed = [a.seq for a in attempts if not a.acknowledged]
    accounting = CommitAccounting(
        acknowledged=sum(1 for a in attempts if a.acknowledged),
        acknowledged_present=present,
        lost_ids=tuple(lost),
        in_flight_seq=failed[-1] if failed else None,
        in_flight_present=(uncertain_present > 0) if failed else None,
    )
    return accounting, tuple(durable), tuple(tolerated), uncertain_present
