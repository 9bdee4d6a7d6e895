"""The ``external`` disruption: a writer commits while the user disrupts the database.

The writer runs here, in the tool: each attempt is one exec of one client run of
``START TRANSACTION; INSERT ...; COMMIT`` (core.validate_persistence.external.commit_sql), and
counts as acknowledged only when that exec came back with exit 0. An exec that fails (an error,
a lost connection, the pod gone) is an attempt whose commit may or may not have happened; the
writer goes on with the next seq. Because it runs outside the pod, it survives the pod's loss and
times every acknowledgement on the tool's monotonic clock: the longest gap is the I/O stall.

Waits: until a disruption is observed (a failed attempt, a new pod uid, a restarted server
container) or --timeout passes; then until a commit is acknowledged again (--timeout); then a
few more commits, the server's Uptime (a restart the writer did not see) and the read-back.
A server that is still crash-looping at that second --timeout fails the phase (its data does not
start), as in the other phases; one that is merely not answering is inconclusive.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from dataclasses import replace

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.external import (
    UPTIME_SLACK_S,
    UPTIME_SQL,
    Attempt,
    account_attempts,
    commit_sql,
    longest_stall,
    observed_disruption,
    parse_uptime,
)
from kubectl_storage.core.validate_persistence.mysql import MYSQL_CONTAINER, Disruption
from kubectl_storage.core.validate_persistence.node_crash import (
    NODE_REBOOTED,
    boot_id,
    build_crash_pod,
    node_ready,
)
from kubectl_storage.core.validate_persistence.report import PhaseResult, evaluate_phase
from kubectl_storage.core.validate_persistence.writer import writer_task_id
from kubectl_storage.errors import ForbiddenError, StorageToolError, WaitTimeoutError
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.validate_persistence.phases import State
from kubectl_storage.operations.validate_persistence.pod import (
    DataUnavailable,
    MysqlPod,
    server_failure,
    uid_of,
)
from kubectl_storage.operations.validate_persistence.request import NAME_PREFIX

#: Seconds one commit attempt may take before it counts as failed.
ATTEMPT_TIMEOUT_S = 20
#: Commits acknowledged after the recovery before reading back (the writer goes on working).
COMMITS_AFTER_RECOVERY = 3
#: Commits acknowledged before the instruction is printed, so the server's Uptime and the
#: stall's baseline are read before anything the user does (a prompt kill raced them).
COMMITS_BEFORE_INSTRUCTION = 3
#: Seconds the server container's restart count may take to reach the API after a disruption.
RESTART_COUNT_WAIT_S = 15
#: Seconds between the Uptime baseline and the instruction: a restart right after the prompt
#: must leave the server younger than the baseline by more than the comparison's slack (with
#: 0.4 s of lead a kill at the prompt restarted the server too soon after the baseline to tell,
#: and CI saw no server-restarted).
BASELINE_LEAD_S = 2 * UPTIME_SLACK_S
#: Pause after a failed attempt (no pause between acknowledged ones).
RETRY_PAUSE_S = 1.0


def _restarts(pod: JsonDict | None) -> int | None:
    for status in dig(pod or {}, "status", "containerStatuses") or []:
        if status.get("name") == MYSQL_CONTAINER:
            return int(status.get("restartCount") or 0)
    return None


def _attempt(pod: MysqlPod, seq: int, first_id: int, started: float) -> Attempt:
    sql = commit_sql(seq, writer_task_id(first_id, seq))
    try:
        result = pod.sql(sql, timeout_s=ATTEMPT_TIMEOUT_S)
    except ForbiddenError:
        raise
    except StorageToolError as exc:
        return Attempt(seq, time.monotonic() - started, False, exc.message[:200])
    ok = result.exit_code == 0
    error = "" if ok else (result.stderr.strip() or f"exit {result.exit_code}")[:200]
    return Attempt(seq, time.monotonic() - started, ok, error)


def _seconds(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.0f}s"


def _uptime(pod: MysqlPod) -> float | None:
    try:
        result = pod.sql(UPTIME_SQL, timeout_s=ATTEMPT_TIMEOUT_S)
    except ForbiddenError:
        raise
    except StorageToolError:
        return None
    return parse_uptime(result.stdout) if result.exit_code == 0 else None


def _settled_pod(
    pod: MysqlPod, uid: str | None, restarts: int | None, restarted: bool, *, wait: bool
) -> tuple[JsonDict, bool]:
    """The pod at the end, and whether its server container restarted during the phase.

    The kubelet posts a container's restart to the API a moment after the restart (seconds on a
    loaded node: a CI run saw the server back and three commits acknowledged before the count
    moved). So after a disruption the count is given up to :data:`RESTART_COUNT_WAIT_S` to
    catch up, unless the pod was recreated or the restart was already seen."""
    deadline = time.monotonic() + (RESTART_COUNT_WAIT_S if wait else 0)
    while True:
        final = pod.get_pod() or {}
        final_restarts = _restarts(final)
        restarted = restarted or (
            restarts is not None and final_restarts is not None and final_restarts > restarts
        )
        if restarted or uid_of(final) != uid or time.monotonic() >= deadline:
            return final, restarted
        time.sleep(1)


def external(pod: MysqlPod, state: State) -> tuple[PhaseResult, State]:
    """Commit rows while the user disrupts the database; every acknowledged commit must be back."""
    return _disrupted(pod, state, None)


def node_crash(pod: MysqlPod, scope: RunScope, state: State) -> tuple[PhaseResult, State]:
    """Commit rows while the pod's node crashes (sysrq b, from a privileged pod); every
    acknowledged commit must be back once the node has rebooted and MySQL answers again.

    The node was checked before anything was created (request.check_crash_target). Its boot
    ID before the crash and after the recovery tells whether it really rebooted: a phase whose
    node kept its boot ID proved nothing about a crash and is inconclusive.
    """
    node = pod.request.placement.node_name or ""
    before = boot_id(pod.api.get(kinds.NODE, node))

    name = object_name(NAME_PREFIX, scope.run_id, "crash")
    if before is None:  # refused in the plan already; a node that stopped reporting it since
        raise WaitTimeoutError(f"node {node} reports no boot ID: it is not crashed", "")

    def crash() -> None:
        manifest = build_crash_pod(name, pod.ns, node, pod.request.crash_image, before)
        pod.step(
            f"node-crash: crashing node {node} now (pod {pod.ns}/{name} writes b to "
            f"/proc/sysrq-trigger: an immediate reboot without sync); waiting up to "
            f"{pod.request.timeout_s:.0f}s for the database to stop answering"
        )
        scope.create(kinds.POD, manifest, pod.ns)

    def crashed() -> None:
        # Deleted as soon as the crash is seen: a kubelet that comes back never starts a pod
        # that is being deleted (and the script would not crash a new boot anyway).
        scope.delete_now((kinds.POD, name, pod.ns))

    return _disrupted(pod, state, crash, crashed, node=node, boot_id_before=before)


def _node_back(pod: MysqlPod, node: str, before: str | None) -> tuple[bool, float]:
    """Wait (--timeout) until the node reports a boot ID other than ``before`` and is Ready:
    (rebooted, seconds waited)."""
    started = time.monotonic()
    deadline = started + pod.request.timeout_s
    while True:
        current = pod.api.get(kinds.NODE, node)
        now = boot_id(current)
        if now is not None and now != before and node_ready(current):
            return True, time.monotonic() - started
        if time.monotonic() >= deadline:
            return False, time.monotonic() - started
        time.sleep(2)


def _disrupted(
    pod: MysqlPod,
    state: State,
    trigger: Callable[[], None] | None,
    seen: Callable[[], None] | None = None,
    *,
    node: str = "",
    boot_id_before: str | None = None,
) -> tuple[PhaseResult, State]:
    """The writer's phase around one disruption: the user's (``trigger`` None, ``external``)
    or the tool's own (``trigger`` does it, ``node-crash``)."""
    name = "external" if trigger is None else Disruption.NODE_CRASH.value
    current = pod.get_pod() or {}
    uid, restarts = uid_of(current), _restarts(current)
    node = node or dig(current, "spec", "nodeName")
    timeout = pod.request.timeout_s
    claim = next(
        (
            dig(v, "persistentVolumeClaim", "claimName")
            for v in dig(current, "spec", "volumes") or []
            if dig(v, "persistentVolumeClaim", "claimName")
        ),
        None,
    )
    uptime_before = _uptime(pod)
    uptime_read = time.monotonic()
    started_utc = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    first_id = state.max_id + 1
    attempts: list[Attempt] = []
    seq = 0
    # a few commits first: whatever the user does then comes after the baseline readings
    while (
        sum(a.acknowledged for a in attempts) < COMMITS_BEFORE_INSTRUCTION
        or time.monotonic() < uptime_read + BASELINE_LEAD_S
    ):
        if time.monotonic() >= started + timeout:
            break
        seq += 1
        attempts.append(_attempt(pod, seq, first_id, started))
        if not attempts[-1].acknowledged:
            break
    if trigger is None:
        pod.step(
            "external: the writer is committing rows now. DO THE DISRUPTION NOW (a storage "
            f"failover, a power-cycle of node {node}, `power-off {node}` of the test harness): "
            f"pod {pod.ns}/{pod.pod} on node {node}"
            + (f", volume claim {pod.ns}/{claim}" if claim else "")
            + f". Waiting up to {timeout:.0f}s for the database to stop answering (Ctrl-C "
            "deletes everything)"
        )
    else:
        trigger()
    recreated = restarted = False
    deadline = started + timeout
    # 1. until something happens (or --timeout)
    while time.monotonic() < deadline:
        seq += 1
        attempts.append(_attempt(pod, seq, first_id, started))
        now_pod = pod.get_pod()
        recreated = recreated or (now_pod is not None and uid_of(now_pod) != uid)
        now_restarts = _restarts(now_pod)
        restarted = restarted or (
            restarts is not None and now_restarts is not None and now_restarts > restarts
        )
        if not attempts[-1].acknowledged or recreated or restarted:
            break
    seen_at = time.monotonic()
    disrupted = not attempts[-1].acknowledged or recreated or restarted
    if disrupted:
        if seen is not None:
            seen()
        pod.step(
            f"{name}: disruption seen after {seen_at - started:.1f}s "
            f"({attempts[-1].error or 'pod recreated or restarted'}); waiting for commits "
            "to be acknowledged again"
        )
        # 2. until a commit is acknowledged again (--timeout), then a few more
        deadline = seen_at + timeout
        after = 0
        crash_loop = ""
        while after < COMMITS_AFTER_RECOVERY:
            if time.monotonic() >= deadline:
                if crash_loop:
                    # The server kept exiting on its own until --timeout: what the volume holds
                    # after the disruption does not start (the phases' crash-loop rule, applied
                    # only at the deadline here, so that a failover has --timeout to recover).
                    raise DataUnavailable(
                        "MySQL does not start after the disruption (it kept exiting on its own "
                        f"for {timeout:.0f}s): {crash_loop}"
                    )
                raise WaitTimeoutError(
                    f"{name}: no commit was acknowledged within {timeout:.0f}s of the "
                    f"disruption ({attempts[-1].error[:200]})",
                    "Raise --timeout if the recovery is only slow.",
                )
            seq += 1
            attempts.append(_attempt(pod, seq, first_id, started))
            if attempts[-1].acknowledged:
                after += 1
                crash_loop = ""
            else:
                after = 0
                crash_loop = server_failure(pod.get_pod() or {}) or crash_loop
                time.sleep(RETRY_PAUSE_S)
    # A node that rebooted took the database with it, so without a disruption seen there is
    # no reboot to wait for (the phase is inconclusive: nothing was observed).
    rebooted, node_wait_s = (
        _node_back(pod, node, boot_id_before) if trigger is not None and disrupted else (False, 0.0)
    )
    uptime_after = _uptime(pod)
    final, restarted = _settled_pod(pod, uid, restarts, restarted, wait=disrupted)
    observed = observed_disruption(
        attempts,
        pod_recreated=recreated or uid_of(final) != uid,
        container_restarted=restarted,
        uptime_before_s=uptime_before,
        uptime_after_s=uptime_after,
        seconds_between=time.monotonic() - uptime_read,
    ) + ((NODE_REBOOTED,) if rebooted else ())
    stall = longest_stall([(a.seq, a.at_s) for a in attempts if a.acknowledged])
    found, missing = pod.read_table()
    accounting, durable, tolerated, uncertain_present = account_attempts(attempts, first_id, found)
    comparison = state.compare_read_back(durable, found, tolerated, missing)
    failed = sum(1 for a in attempts if not a.acknowledged)
    what = (
        "external disruption (what was done is not known to the tool)"
        if trigger is None
        else f"node {node} crashed (sysrq b)"
        + (
            f", back with a new boot ID and Ready {node_wait_s:.0f}s after the recovery"
            if rebooted
            else f", but it did not report a new boot ID within {timeout:.0f}s"
        )
    )
    note = (
        f"{what}; observed: "
        f"{', '.join(observed) or 'nothing'}; {failed} failed attempts, "
        f"{uncertain_present} of them committed after all (allowed); server Uptime "
        f"{_seconds(uptime_before)} before, {_seconds(uptime_after)} after"
    )
    if stall is not None:
        note += f"; longest stall {stall.seconds:.1f}s from +{stall.started_at_s:.1f}s"
    phase = evaluate_phase(
        name,
        comparison,
        time_to_ready_s=(time.monotonic() - seen_at) if disrupted else None,
        commits=accounting,
        writer_attempts=len(attempts),
        node_before=node,
        node_after=pod.node(),
        note=note,
        stall=stall,
        started_at=started_utc,
        observed=observed,
    )
    if trigger is not None and not rebooted and phase.verdict is Verdict.PASS:
        # Every commit is back, but the node never showed a reboot: no crash was proved.
        phase = replace(phase, verdict=Verdict.INCONCLUSIVE)
    return phase, state.after(phase, durable, found)
