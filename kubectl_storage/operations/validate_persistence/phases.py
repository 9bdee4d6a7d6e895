"""The phases that keep the pod on its node: the seed, a graceful restart and a crash mid-write.

Each returns a :class:`PhaseResult`; a phase that changes which rows must exist (the crash
writer's acknowledged commits) also returns the new :class:`State`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import MYSQL_UID, sql_stdin_command
from kubectl_storage.core.validate_persistence.report import (
    PhaseResult,
    evaluate_phase,
)
from kubectl_storage.core.validate_persistence.rows import (
    StoredRow,
    TableComparison,
    TaskRow,
    compare_rows,
    seed_sql,
)
from kubectl_storage.core.validate_persistence.writer import (
    account_commits,
    crash_writer_command,
    parse_writer_output,
)
from kubectl_storage.errors import ClusterError
from kubectl_storage.operations.validate_persistence.pod import DataUnavailable, MysqlPod, uid_of

#: The crash writer's commit after which the kill is armed, and the seconds until it fires.
COMMITS_BEFORE_CRASH = 25
KILL_DELAY_S = 1


@dataclass
class State:
    """The rows that must exist, and the baseline as read after they were written."""

    expected: list[TaskRow]
    baseline: dict[int, StoredRow]

    @property
    def max_id(self) -> int:
        """The highest task_id that must exist."""
        return max((r.task_id for r in self.expected), default=0)

    def compare_read_back(
        self,
        acknowledged: Sequence[TaskRow],
        found: Sequence[StoredRow],
        tolerated: Iterable[int],
        table_missing: bool,
    ) -> TableComparison:
        """The table read back after a disruption against every row that must exist: the
        expected ones and the commits ``acknowledged`` since; ``tolerated`` rows may or may
        not be there (commits whose acknowledgement never came)."""
        return compare_rows(
            self.expected + list(acknowledged),
            found,
            baseline=self.baseline,
            tolerated_ids=tolerated,
            table_missing=table_missing,
        )

    def after(
        self, phase: PhaseResult, acknowledged: Sequence[TaskRow], found: Sequence[StoredRow]
    ) -> State:
        """What the next phase checks: after a pass, the acknowledged commits join the rows that
        must exist and the table as read becomes the baseline; otherwise nothing changes."""
        if phase.verdict is not Verdict.PASS:
            return self
        return State(self.expected + list(acknowledged), {r.task_id: r for r in found})


def start(pod: MysqlPod) -> float:
    """Wait for the first pod and its server; seconds until MySQL answered."""
    started = time.monotonic()
    pod.step(f"waiting for MySQL pod {pod.pod} (the volume binds when it is scheduled)")
    pod.wait_pod(lambda _: True, "Running")
    pod.step("pod running; waiting for MySQL to answer")
    try:
        return pod.wait_answering(started)
    except DataUnavailable as exc:
        raise ClusterError(
            str(exc),
            "Check that the image is a MySQL-compatible server and that the volume is "
            f"writable by UID {MYSQL_UID} (fsGroup); run with --keep to inspect the pod.",
        ) from exc


def seed(
    pod: MysqlPod, rows: tuple[TaskRow, ...], ready_s: float | None, phase: str = "seed"
) -> tuple[PhaseResult, State]:
    """Write the rows (100 per committed transaction), read them back, checksum."""
    prefix = "" if phase == "seed" else f"{phase}: "
    pod.step(f"{prefix}writing {len(rows):,} rows to testdb.tasks, 100 per transaction")
    sql = seed_sql(rows).encode()
    result = pod.exec(sql_stdin_command(len(sql)), stdin=sql)
    if result.exit_code != 0:
        raise ClusterError(
            f"writing the seed rows failed (exit {result.exit_code}): "
            + result.stderr.strip()[:500],
            "Check that the image is a MySQL-compatible server (--image).",
        )
    found, missing = pod.read_table()
    comparison = compare_rows(rows, found, table_missing=missing)
    result_phase = evaluate_phase(phase, comparison, time_to_ready_s=ready_s, node_after=pod.node())
    pod.step(f"seeded and read back: {comparison.checksum_found}")
    return result_phase, State(list(rows), {r.task_id: r for r in found})


def verify(
    pod: MysqlPod,
    phase: str,
    state: State,
    ready_s: float,
    *,
    node_before: str | None,
    note: str,
    time_to_running_s: float | None = None,
    volume_events: tuple[str, ...] = (),
    attach_required: bool | None = None,
) -> PhaseResult:
    """Read everything back and compare with what must exist."""
    found, missing = pod.read_table()
    comparison = compare_rows(state.expected, found, baseline=state.baseline, table_missing=missing)
    return evaluate_phase(
        phase,
        comparison,
        time_to_ready_s=ready_s,
        node_before=node_before,
        node_after=pod.node(),
        note=note,
        time_to_running_s=time_to_running_s,
        volume_events=volume_events,
        attach_required=attach_required,
    )


def restart(pod: MysqlPod, state: State) -> PhaseResult:
    """Delete the pod gracefully; the StatefulSet recreates it on its node."""
    current = pod.get_pod() or {}
    uid, node = uid_of(current), dig(current, "spec", "nodeName")
    pod.step(f"restart: deleting pod {pod.pod} gracefully")
    started = time.monotonic()
    pod.api.delete(kinds.POD, pod.pod, pod.ns)
    pod.wait_pod(lambda p: uid_of(p) != uid, "Running again after the graceful delete")
    ready_s = pod.wait_answering(started)
    pod.step(f"restart: MySQL answers again after {ready_s:.1f}s; reading back")
    return verify(
        pod,
        "restart",
        state,
        ready_s,
        node_before=node,
        note=f"graceful delete; pod recreated on {pod.node() or 'its node'}",
    )


def crash(pod: MysqlPod, state: State) -> tuple[PhaseResult, State]:
    """SIGKILL mysqld while a writer commits rows one at a time; every ack must survive."""
    node = dig(pod.get_pod() or {}, "spec", "nodeName")
    first_id = state.max_id + 1
    pod.step(
        f"crash: writer running (one transaction per client run, acknowledged by its COMMIT); "
        f"mysqld is SIGKILLed {KILL_DELAY_S}s after its {COMMITS_BEFORE_CRASH}th commit"
    )
    result = pod.exec(
        crash_writer_command(COMMITS_BEFORE_CRASH, first_id=first_id, kill_delay_s=KILL_DELAY_S)
    )
    started = time.monotonic()
    try:
        log = parse_writer_output(result.stdout, first_id=first_id)
    except ValueError as exc:
        raise ClusterError(f"crash: the writer's output is broken: {exc}", "") from exc
    if not log.killed:
        raise ClusterError(
            "crash: the server was not killed: "
            + (
                f"the writer failed first: {log.error[:300]}"
                if log.error and len(log.acknowledged) < COMMITS_BEFORE_CRASH
                else "no mysqld or mariadbd process found in the pod"
            ),
            "The image must run the server as mysqld or mariadbd (--image); run with "
            "--keep to inspect the pod.",
        )
    pod.step(
        "crash: SIGKILLed "
        + ", ".join(f"{name} (pid {pid})" for pid, name in log.killed)
        + f"; the writer saw {len(log.acknowledged)} commits acknowledged"
        + (f", then: {log.error[:120]}" if log.error else "")
    )
    ready_s = pod.wait_answering(started)
    pod.step(f"crash: MySQL answers again after {ready_s:.1f}s (crash recovery); reading back")
    found, missing = pod.read_table()
    accounting, durable, tolerated = account_commits(log, found)
    comparison = state.compare_read_back(durable, found, tolerated, missing)
    note = "mysqld SIGKILLed during writes"
    if accounting.in_flight_seq is not None:
        note += "; the unacknowledged commit in flight is " + (
            "present (allowed)" if accounting.in_flight_present else "absent (allowed)"
        )
    phase = evaluate_phase(
        "crash",
        comparison,
        time_to_ready_s=ready_s,
        commits=accounting,
        writer_attempts=log.attempts,
        node_before=node,
        node_after=pod.node(),
        note=note,
    )
    return phase, state.after(phase, durable, found)
