"""`validate-persistence` as pipeline stages, and the run: deploy, seed, read the server's
durability settings, probe fsync, then each disruption followed by reading everything back.

Steps: create a Secret with a random root password and a one-replica MySQL StatefulSet through
the run scope → wait until MySQL answers → seed testdb.tasks and read it back (checksum) → read
and judge its durability settings, with the engine it gave the table (a server not configured
to make a commit durable fails the check, and the disruptions are not run, unless
--allow-non-durable-config) → the fsync probe on
the same volume → for each disruption: disrupt, wait until MySQL answers again, read everything
back and compare → report.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from pathlib import Path

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.scheduling import schedulable_nodes
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import (
    Disruption,
    VolumeType,
    pod_name_for,
    pvc_name_for,
)
from kubectl_storage.core.validate_persistence.node_crash import BOOT_ID_PATH
from kubectl_storage.core.validate_persistence.report import (
    ControlScope,
    DurabilityCheck,
    PersistenceReport,
    PhaseResult,
)
from kubectl_storage.core.validate_persistence.rows import generate_rows
from kubectl_storage.errors import ForbiddenError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.pipeline import Command
from kubectl_storage.operations.preflight import ClusterFacts
from kubectl_storage.operations.validate_persistence import phases
from kubectl_storage.operations.validate_persistence.external import external, node_crash
from kubectl_storage.operations.validate_persistence.moves import move
from kubectl_storage.operations.validate_persistence.pod import DataUnavailable, MysqlPod
from kubectl_storage.operations.validate_persistence.request import (
    COMMAND,
    CONTROL_CANNOT_JUDGE,
    CrashFacts,
    NodeFacts,
    PersistencePlan,
    PersistenceRequest,
    new_password,
    persistence_requirements,
    plan_disruptions,
    plan_persistence,
    validate_request,
)


def read_node_facts(api: KubeApi, request: PersistenceRequest) -> NodeFacts:
    """The nodes the database pod could move to (for reschedule and node-drain)."""
    try:
        return NodeFacts(tuple(schedulable_nodes(api.list(kinds.NODE), request.placement)))
    except ForbiddenError:
        return NodeFacts(None)


def run_persistence(
    api: KubeApi,
    planned: PersistencePlan,
    scope: RunScope,
    step: Callable[[str], None],
    *,
    rng: random.Random | None = None,
) -> PersistenceReport:
    """Run the planned check and return its report (verdict fail when committed data was lost,
    or when the server is not configured to make a commit durable)."""
    request = planned.request
    facts = read_node_facts(api, request)
    plan = plan_disruptions(request, facts)
    rows = generate_rows(request.rows, rng or random.Random(secrets.randbits(64)))
    deployment = planned.deployment
    secret, statefulset = planned.manifests(new_password())
    scope.create(kinds.SECRET, secret, request.namespace)
    # The StatefulSet controller creates the claim and the pod on our behalf; they are ours
    # to delete all the same. Deleted in reverse order: the StatefulSet first (so nothing
    # recreates the pod), then the pod (waited for: no MySQL outlives the run), then the
    # claim.
    if request.volume_type is VolumeType.PVC:
        scope.adopt(kinds.PVC, pvc_name_for(deployment.name), request.namespace)
    scope.adopt(kinds.POD, pod_name_for(deployment.name), request.namespace)
    scope.create(kinds.STATEFULSET, statefulset, request.namespace)
    pod = MysqlPod(api, request, deployment, step)
    ready_s = phases.start(pod)
    seeded, state = phases.seed(pod, rows, ready_s)
    # After the seed: the settings include the engine the server gave the check's table.
    durability = DurabilityCheck(
        pod.read_durability(), request.allow_non_durable, request.server_args
    )
    _say_durability(step, durability)
    result: list[PhaseResult] = [seeded]
    probe = None
    if request.probe_image:
        step(
            "fsync probe: 2300-byte writes, fdatasync each (etcd's check), then direct 4k "
            "writes, fdatasync each, beside MySQL"
        )
        probe = pod.run_probe()
        step(
            f"fsync probe: {probe.error}"
            if probe.error
            else f"fsync probe: fdatasync p50 {probe.p50_us} µs, p99 {probe.p99_us} µs"
            + (f"; {probe.flush.label}" if probe.flush else "")
            + "".join(f"; WARNING: {w}" for w in probe.warnings)
        )
    control = request.volume_type is VolumeType.EMPTY_DIR
    lost_in = "" if seeded.verdict is Verdict.PASS else "seed"
    if durability.failed:
        lost_in = "durability"
    unavailable_in = ""
    for disruption, skip_reason in plan:
        if unavailable_in:
            result.append(
                PhaseResult(
                    disruption.value,
                    Verdict.SKIPPED,
                    note=f"not run: MySQL did not answer after {unavailable_in}",
                )
            )
            continue
        if lost_in == "durability":
            result.append(
                PhaseResult(
                    disruption.value,
                    Verdict.SKIPPED,
                    note="not run: the server is not configured to make a commit durable",
                )
            )
            continue
        if skip_reason:
            step(f"{disruption.value}: skipped: {skip_reason}")
            result.append(PhaseResult(disruption.value, Verdict.SKIPPED, note=skip_reason))
            continue
        if lost_in and control and lost_in != "seed":
            # The control proves each disruption on its own: write the rows again first.
            _, state = phases.seed(pod, rows, None, phase=f"reseed before {disruption.value}")
        elif lost_in:
            result.append(
                PhaseResult(
                    disruption.value,
                    Verdict.SKIPPED,
                    note=f"not run: the data was already lost in {lost_in}",
                )
            )
            continue
        phase, state = _run_phase(pod, scope, disruption, state, facts)
        step(
            f"{disruption.value}: {phase.verdict.value}" + (f"; {phase.note}" if phase.note else "")
        )
        result.append(phase)
        if phase.lost_data:
            lost_in = disruption.value
        elif phase.verdict is Verdict.INCONCLUSIVE:
            unavailable_in = disruption.value
    return PersistenceReport(
        storage_class=request.storage_class if request.volume_type is VolumeType.PVC else None,
        volume_type=request.volume_type,
        size=request.size.text if request.volume_type is VolumeType.PVC else None,
        namespace=request.namespace,
        image=request.image,
        rows=request.rows,
        run_id=planned.run_id,
        phases=tuple(result),
        durability=durability,
        fsync_probe=probe,
        control=_control_scope(result) if control else None,
    )


def _say_durability(step: Callable[[str], None], durability: DurabilityCheck) -> None:
    values = ", ".join(f"{k}={v}" for k, v in durability.settings.values().items())
    step(f"durability settings: {values}")
    if durability.settings.unknown:
        step("durability unknown, not reported: " + ", ".join(durability.settings.unknown))
    for reason in durability.settings.reasons:
        allowed = " (allowed: --allow-non-durable-config)" if durability.allowed_non_durable else ""
        step(f"not durable{allowed}: {reason}")


def _control_scope(result: list[PhaseResult]) -> ControlScope:
    judged = tuple(
        p.phase
        for p in result
        if p.phase in {d.value for d in Disruption} and p.verdict is not Verdict.SKIPPED
    )
    ran = {p.phase for p in result}
    return ControlScope(
        judged=judged,
        # only the disruptions this run asked for: a control cannot fail to judge what never ran
        cannot_judge=tuple(
            (d.value, why) for d, why in CONTROL_CANNOT_JUDGE.items() if d.value in ran
        ),
    )


def _run_phase(
    pod: MysqlPod,
    scope: RunScope,
    disruption: Disruption,
    state: phases.State,
    facts: NodeFacts,
) -> tuple[PhaseResult, phases.State]:
    """One disruption; MySQL not coming back counts as a failed phase, not a failed run."""
    try:
        if disruption is Disruption.RESTART:
            return phases.restart(pod, state), state
        if disruption is Disruption.CRASH:
            return phases.crash(pod, state)
        if disruption is Disruption.EXTERNAL:
            return external(pod, state)
        if disruption is Disruption.NODE_CRASH:
            return node_crash(pod, scope, state)
        return move(pod, scope, disruption, state, facts.schedulable_nodes or ()), state
    except DataUnavailable as exc:
        # MySQL keeps failing to start on what the volume holds: the data did not come back.
        return PhaseResult(disruption.value, Verdict.FAIL, note=str(exc)), state
    except WaitTimeoutError as exc:
        # Nothing could be read within --timeout (a slow detach, a Pending pod): no proof of
        # loss, and no proof of durability either.
        message = f"unavailable within --timeout: {exc.message}"
        if exc.events:
            message += " (events: " + "; ".join(exc.events[-3:]) + ")"
        return PhaseResult(disruption.value, Verdict.INCONCLUSIVE, note=message), state


def gather_crash_facts(
    api: KubeApi, request: PersistenceRequest, facts: ClusterFacts
) -> CrashFacts | None:
    """For node-crash: every node's boot ID and this machine's, so the plan can refuse a node
    that shares its kernel (core/validate_persistence/node_crash.py)."""
    if Disruption.NODE_CRASH not in request.chosen:
        return None
    try:
        local: str | None = Path(BOOT_ID_PATH).read_text().strip() or None
    except OSError:  # not Linux: no machine of ours can be a node's kernel then
        local = None
    return CrashFacts(tuple(api.list(kinds.NODE)), local)


def _plan_offline(request: PersistenceRequest) -> bool:
    """The emptyDir control, or a named class: nothing to look up (node-crash always reads
    the nodes: its refusal is part of the plan)."""
    if Disruption.NODE_CRASH in request.chosen:
        return False
    return request.volume_type is VolumeType.EMPTY_DIR or bool(request.storage_class)


PERSISTENCE_COMMAND: Command[
    PersistenceRequest, CrashFacts | None, PersistencePlan, PersistenceReport
] = Command(
    rbac_name=COMMAND,
    label=COMMAND,
    validate=validate_request,
    requirements=persistence_requirements,
    plan_offline=_plan_offline,
    gather=gather_crash_facts,
    plan=lambda request, facts, crash, run_id: plan_persistence(request, facts, run_id, crash),
    run=lambda api, plan, scope, progress: run_persistence(api, plan, scope, progress.step),
)
