"""`kubectl storage validate-persistence`: does committed MySQL data survive pod loss?

Steps: validate the inputs → check the cluster (namespace, class, permissions, nodes) → create a
Secret with a random root password and a one-replica MySQL StatefulSet through the run scope →
wait until MySQL answers → seed testdb.tasks and read it back (checksum) → for each disruption:
disrupt, wait until MySQL answers again, read everything back and compare → report. Every SQL
statement runs by exec in the pod's client container; the password reaches the client through
MYSQL_PWD from the Secret, so it is never in argv, in logs or on the screen.
"""

from __future__ import annotations

import logging
import random
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.images import MYSQL_IMAGE
from kubectl_storage.core.k8s.labels import object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import Manifest, PodPlacement
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.k8s.quantities import Size, format_bytes
from kubectl_storage.core.rbac import Condition
from kubectl_storage.core.validate_persistence.mysql import (
    ALL_DISRUPTIONS,
    CLIENT_CONTAINER,
    DUMP_SQL,
    MAX_ROWS,
    MYSQL_CONTAINER,
    MYSQL_UID,
    PASSWORD_PLACEHOLDER,
    READY_SQL,
    Disruption,
    MysqlDeployment,
    PersistenceReport,
    PhaseResult,
    StoredRow,
    TaskRow,
    Verdict,
    VolumeType,
    account_commits,
    avoid_node_patch,
    build_mysql_statefulset,
    build_secret,
    compare_rows,
    crash_writer_command,
    evaluate_phase,
    generate_rows,
    is_missing_table_error,
    parse_dump,
    parse_writer_output,
    pod_name_for,
    pvc_name_for,
    required_bytes,
    schedulable_nodes,
    seed_sql,
    sql_command,
    sql_stdin_command,
)
from kubectl_storage.errors import (
    ClusterError,
    ForbiddenError,
    StorageToolError,
    UsageError,
    WaitTimeoutError,
)
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.kube.podexec import ExecResult, exec_in_pod
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for
from kubectl_storage.operations.pipeline import Progress
from kubectl_storage.operations.preflight import ClusterFacts, Requirements

log = logging.getLogger(__name__)

COMMAND = "validate-persistence"
NAME_PREFIX = "persist"
#: The crash writer's commit after which the kill is armed, and the seconds until it fires.
COMMITS_BEFORE_CRASH = 25
KILL_DELAY_S = 1
#: Exit codes of a server container we stopped ourselves (SIGKILL, SIGTERM) or that ended cleanly.
_EXPECTED_EXITS = (0, 137, 143)
_PASSWORD_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class PersistenceRequest:
    """Everything `kubectl storage validate-persistence` was asked to do."""

    storage_class: str | None  # None with a PVC: the cluster's default class
    namespace: str
    size: Size = field(default_factory=lambda: Size.parse("1Gi"))
    rows: int = 1000
    #: None: every disruption that applies to the cluster.
    disruptions: tuple[Disruption, ...] | None = None
    volume_type: VolumeType = VolumeType.PVC
    image: str = MYSQL_IMAGE
    placement: PodPlacement = field(default_factory=PodPlacement)
    timeout_s: float = 300
    keep: bool = False
    #: UID/GID/fsGroup of the server; None: let the cluster assign (decided from the namespace).
    run_as_user: int | None = MYSQL_UID


@dataclass(frozen=True)
class NodeFacts:
    """Where the database pod can go, read when the run starts."""

    schedulable_nodes: tuple[str, ...] | None  # None: nodes could not be listed


@dataclass(frozen=True)
class PersistencePlan:
    """A planned check: the request with its class decided, and the run's objects."""

    run_id: str
    request: PersistenceRequest
    deployment: MysqlDeployment

    def manifests(self, password: str = PASSWORD_PLACEHOLDER) -> list[Manifest]:
        """Secret and StatefulSet, labelled; --dry-run shows a placeholder password."""
        return [
            with_run_labels(m, self.run_id, COMMAND)
            for m in build_manifests(self.deployment, password)
        ]


# -- validation and manifests ---------------------------------------------------------------


def validate_request(request: PersistenceRequest) -> None:
    """Check everything that needs no cluster.

    Raises:
        UsageError: on a bad row count, size, or a missing class.
    """
    if not 1 <= request.rows <= MAX_ROWS:
        raise UsageError(f"--rows must be between 1 and {MAX_ROWS:,}", "Example: --rows 1000")
    if request.timeout_s <= 0:
        raise UsageError("--timeout must be a positive number of seconds", "Example: --timeout 300")
    if request.volume_type is VolumeType.EMPTY_DIR:
        if request.storage_class:
            raise UsageError(
                "-s/--storage-class and --volume-type emptyDir exclude each other",
                "The emptyDir control uses no StorageClass; drop -s or use --volume-type pvc.",
            )
        return
    needed = required_bytes(request.rows)
    if request.size.bytes < needed:
        raise UsageError(
            f"-z {request.size} is too small for MySQL with {request.rows:,} rows: it needs "
            f"about {format_bytes(needed)} (its own redo/undo logs and system tables included)",
            f"Raise -z/--size to at least {format_bytes(needed)}, or lower --rows.",
        )


def deployment_for(
    request: PersistenceRequest, run_id: str, run_as_user: int | None = MYSQL_UID
) -> MysqlDeployment:
    """The MySQL deployment of one run."""
    name = object_name(NAME_PREFIX, run_id)
    return MysqlDeployment(
        name=name,
        namespace=request.namespace,
        image=request.image,
        secret_name=object_name(NAME_PREFIX, run_id, "auth"),
        storage_class=request.storage_class,
        size=request.size.text,
        volume_type=request.volume_type,
        placement=request.placement,
        run_as_user=run_as_user,
    )


def build_manifests(deployment: MysqlDeployment, password: str) -> list[Manifest]:
    """Secret and StatefulSet, in creation order."""
    return [
        build_secret(deployment.secret_name, deployment.namespace, password),
        build_mysql_statefulset(deployment),
    ]


def new_password() -> str:
    """A random root password (letters and digits: safe in env, SQL and shells alike)."""
    return "".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(32))


# -- the pipeline's stages ------------------------------------------------------------------


def read_node_facts(api: KubeApi, request: PersistenceRequest) -> NodeFacts:
    """The nodes the database pod could move to (for the reschedule disruption)."""
    try:
        return NodeFacts(tuple(schedulable_nodes(api.list(kinds.NODE), request.placement)))
    except ForbiddenError:
        return NodeFacts(None)


class PersistenceCommand:
    """`kubectl storage validate-persistence` as pipeline stages."""

    rbac_name = COMMAND
    label = COMMAND

    def validate(self, request: PersistenceRequest) -> None:
        """See :func:`validate_request`."""
        validate_request(request)

    def requirements(self, request: PersistenceRequest) -> Requirements:
        """The class (or the default one) for a PVC, and the writes of the chosen steps."""
        pvc = request.volume_type is VolumeType.PVC
        conditions = {Condition.PVC_VOLUME} if pvc else set()
        if Disruption.RESCHEDULE in (request.disruptions or ALL_DISRUPTIONS):
            conditions.add(Condition.RESCHEDULE)
        return Requirements(
            storage_classes=(request.storage_class,) if pvc and request.storage_class else (),
            default_storage_class=pvc and not request.storage_class,
            conditions=frozenset(conditions),
            doing="run the persistence check",
        )

    def plan_offline(self, request: PersistenceRequest) -> bool:
        """The emptyDir control, or a named class: nothing to look up."""
        return request.volume_type is VolumeType.EMPTY_DIR or bool(request.storage_class)

    def plan(
        self,
        request: PersistenceRequest,
        facts: ClusterFacts,
        run_id: str,
        api: KubeApi | None,
    ) -> PersistencePlan:
        """The class decided, the server's UID (unset where the namespace assigns UIDs)."""
        if request.volume_type is VolumeType.PVC and not request.storage_class:
            request = replace(request, storage_class=facts.default_storage_class)
        run_as_user = None if facts.assigns_uids else request.run_as_user
        deployment = deployment_for(request, run_id, run_as_user)
        return PersistencePlan(run_id, request, deployment)

    def run(
        self, api: KubeApi, plan: PersistencePlan, scope: RunScope, progress: Progress
    ) -> PersistenceReport:
        """See :func:`run_persistence`."""
        return run_persistence(api, plan, scope, progress.step)


def plan_disruptions(request: PersistenceRequest, facts: NodeFacts) -> list[tuple[Disruption, str]]:
    """The disruptions to run, each with '' or the reason it is skipped."""
    plan = []
    for disruption in request.disruptions or ALL_DISRUPTIONS:
        reason = ""
        if disruption is Disruption.RESCHEDULE:
            if facts.schedulable_nodes is None:
                reason = "nodes cannot be listed (no permission), so no other node is known"
            elif len(facts.schedulable_nodes) < 2:
                only = ", ".join(facts.schedulable_nodes) or "none"
                reason = f"needs a second schedulable node (only {only})"
        plan.append((disruption, reason))
    return plan


# -- running --------------------------------------------------------------------------------


class _DataUnavailable(Exception):  # noqa: N818 - an outcome of a phase, not a program error
    """MySQL did not come back after a disruption: a failed phase, not a failed run."""


@dataclass
class _State:
    """The rows that must exist, and the baseline as read after they were written."""

    expected: list[TaskRow]
    baseline: dict[int, StoredRow]

    @property
    def max_id(self) -> int:
        return max((r.task_id for r in self.expected), default=0)


class _Run:
    """One run's pod, client and phases."""

    def __init__(
        self,
        api: KubeApi,
        request: PersistenceRequest,
        deployment: MysqlDeployment,
        step: Callable[[str], None],
    ) -> None:
        self.api = api
        self.request = request
        self.deployment = deployment
        self.ns = request.namespace
        self.pod = pod_name_for(deployment.name)
        self.step = step

    # -- the client ------------------------------------------------------------------------
    def sql(self, statement: str, *, timeout_s: float | None = None) -> ExecResult:
        return exec_in_pod(
            self.api,
            self.pod,
            sql_command(statement),
            namespace=self.ns,
            container=CLIENT_CONTAINER,
            timeout_s=timeout_s or self.request.timeout_s,
        )

    def read_table(self) -> tuple[tuple[StoredRow, ...], bool]:
        """All rows, and whether the table (or database) is gone."""
        result = self.sql(DUMP_SQL)
        if result.exit_code != 0:
            if is_missing_table_error(result.stderr):
                return (), True
            raise ClusterError(
                f"reading the table failed (exit {result.exit_code}): "
                + result.stderr.strip()[:500],
                "Run with --keep and read the server log: "
                f"kubectl logs -n {self.ns} {self.pod} -c {MYSQL_CONTAINER}",
            )
        try:
            return parse_dump(result.stdout), False
        except ValueError as exc:
            raise ClusterError(f"the table dump could not be read: {exc}", "") from exc

    # -- waiting ---------------------------------------------------------------------------
    def get_pod(self) -> JsonDict | None:
        return self.api.get_or_none(kinds.POD, self.pod, self.ns)

    def wait_pod(self, predicate: Callable[[JsonDict], bool], what: str) -> JsonDict:
        """Wait for the pod (by name) to satisfy ``predicate`` and run."""

        runs = pod_running("MySQL")  # stops early on image pull errors

        def ready(pod: JsonDict) -> bool:
            # The pod being replaced ends (Failed) while it terminates: judge only the one
            # waited for.
            return predicate(pod) and runs(pod) and _running(pod)

        return wait_for(
            self.api,
            kinds.POD,
            self.pod,
            ready,
            namespace=self.ns,
            timeout_s=self.request.timeout_s,
            what=what,
            hint=(
                "If the pod is Pending, check its events: the PVC (provisioner, "
                "WaitForFirstConsumer, quota), taints (--toleration) and resources. "
                "Raise --timeout if the cluster is only slow."
            ),
        )

    def wait_answering(self, started: float) -> float:
        """Poll ``SELECT 1`` until MySQL answers; seconds since ``started``.

        Raises:
            _DataUnavailable: the server keeps failing to start (its log is in the message).
            WaitTimeoutError: it did not answer within --timeout.
        """
        deadline = time.monotonic() + self.request.timeout_s
        next_note = time.monotonic() + 15
        last_error = ""
        while True:
            pod = self.get_pod()
            if pod is not None and _running(pod):
                failure = _server_failure(pod)
                if failure:
                    raise _DataUnavailable(f"MySQL does not start: {failure}")
                try:
                    result = self.sql(READY_SQL, timeout_s=30)
                except ForbiddenError:
                    raise
                except StorageToolError as exc:
                    last_error = exc.message
                else:
                    if result.exit_code == 0:
                        return time.monotonic() - started
                    last_error = result.stderr.strip()
            now = time.monotonic()
            if now >= deadline:
                raise WaitTimeoutError(
                    f"MySQL in pod {self.pod} did not answer within "
                    f"{self.request.timeout_s:.0f}s"
                    + (f" (last error: {last_error[:300]})" if last_error else ""),
                    "Raise --timeout if the cluster is only slow; run with --keep and read "
                    f"`kubectl logs -n {self.ns} {self.pod} -c {MYSQL_CONTAINER}`.",
                )
            if now >= next_note:
                self.step(f"still waiting for MySQL to answer ({now - started:.0f}s)")
                next_note = now + 15
            time.sleep(1)

    # -- phases ----------------------------------------------------------------------------
    def start(self) -> float:
        started = time.monotonic()
        self.step(f"waiting for MySQL pod {self.pod} (the volume binds when it is scheduled)")
        self.wait_pod(lambda _: True, "Running")
        self.step("pod running; waiting for MySQL to answer")
        try:
            return self.wait_answering(started)
        except _DataUnavailable as exc:
            raise ClusterError(
                str(exc),
                "Check that the image is a MySQL-compatible server and that the volume is "
                f"writable by UID {MYSQL_UID} (fsGroup); run with --keep to inspect the pod.",
            ) from exc

    def seed(self, rows: tuple[TaskRow, ...], ready_s: float) -> tuple[PhaseResult, _State]:
        self.step(f"writing {len(rows):,} rows to testdb.tasks, 100 per transaction")
        sql = seed_sql(rows).encode()
        result = exec_in_pod(
            self.api,
            self.pod,
            sql_stdin_command(len(sql)),
            namespace=self.ns,
            container=CLIENT_CONTAINER,
            timeout_s=self.request.timeout_s,
            stdin=sql,
        )
        if result.exit_code != 0:
            raise ClusterError(
                f"writing the seed rows failed (exit {result.exit_code}): "
                + result.stderr.strip()[:500],
                "Check that the image is a MySQL-compatible server (--image).",
            )
        found, missing = self.read_table()
        comparison = compare_rows(rows, found, table_missing=missing)
        phase = evaluate_phase("seed", comparison, time_to_ready_s=ready_s, node_after=self.node())
        self.step(f"seeded and read back: {comparison.checksum_found}")
        return phase, _State(list(rows), {r.task_id: r for r in found})

    def node(self) -> str | None:
        pod = self.get_pod()
        return ((pod or {}).get("spec") or {}).get("nodeName")

    def verify(
        self,
        phase: str,
        state: _State,
        ready_s: float,
        *,
        node_before: str | None,
        note: str,
    ) -> PhaseResult:
        found, missing = self.read_table()
        comparison = compare_rows(
            state.expected, found, baseline=state.baseline, table_missing=missing
        )
        return evaluate_phase(
            phase,
            comparison,
            time_to_ready_s=ready_s,
            node_before=node_before,
            node_after=self.node(),
            note=note,
        )

    def restart(self, state: _State) -> PhaseResult:
        pod = self.get_pod() or {}
        uid, node = _uid(pod), dig(pod, "spec", "nodeName")
        self.step(f"restart: deleting pod {self.pod} gracefully")
        started = time.monotonic()
        self.api.delete(kinds.POD, self.pod, self.ns)
        self.wait_pod(lambda p: _uid(p) != uid, "Running again after the graceful delete")
        ready_s = self.wait_answering(started)
        self.step(f"restart: MySQL answers again after {ready_s:.1f}s; reading back")
        return self.verify(
            "restart",
            state,
            ready_s,
            node_before=node,
            note=f"graceful delete; pod recreated on {self.node() or 'its node'}",
        )

    def crash(self, state: _State) -> tuple[PhaseResult, _State]:
        pod = self.get_pod() or {}
        node = dig(pod, "spec", "nodeName")
        first_writer_id = state.max_id + 1
        self.step(
            f"crash: writer running (one committed INSERT at a time); mysqld is SIGKILLed "
            f"{KILL_DELAY_S}s after its {COMMITS_BEFORE_CRASH}th commit"
        )
        result = exec_in_pod(
            self.api,
            self.pod,
            crash_writer_command(COMMITS_BEFORE_CRASH, kill_delay_s=KILL_DELAY_S),
            namespace=self.ns,
            container=CLIENT_CONTAINER,
            timeout_s=self.request.timeout_s,
        )
        started = time.monotonic()
        writer_log = parse_writer_output(result.stdout)
        if not writer_log.killed:
            raise ClusterError(
                "crash: the server was not killed: "
                + (
                    f"the writer failed first: {writer_log.error[:300]}"
                    if writer_log.error and len(writer_log.acknowledged) < COMMITS_BEFORE_CRASH
                    else "no mysqld or mariadbd process found in the pod"
                ),
                "The image must run the server as mysqld or mariadbd (--image); run with "
                "--keep to inspect the pod.",
            )
        self.step(
            "crash: SIGKILLed "
            + ", ".join(f"{name} (pid {pid})" for pid, name in writer_log.killed)
            + f"; the writer saw {len(writer_log.acknowledged)} commits acknowledged"
            + (f", then: {writer_log.error[:120]}" if writer_log.error else "")
        )
        ready_s = self.wait_answering(started)
        self.step(f"crash: MySQL answers again after {ready_s:.1f}s (crash recovery); reading back")
        found, missing = self.read_table()
        accounting, durable, tolerated = account_commits(
            writer_log, found, first_writer_id=first_writer_id
        )
        comparison = compare_rows(
            state.expected + list(durable),
            found,
            baseline=state.baseline,
            tolerated_ids=tolerated,
            table_missing=missing,
        )
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
            writer_attempts=writer_log.attempts,
            node_before=node,
            node_after=self.node(),
            note=note,
        )
        if phase.verdict is Verdict.PASS:
            state = _State(state.expected + list(durable), {r.task_id: r for r in found})
        return phase, state

    def reschedule(self, state: _State, nodes: tuple[str, ...]) -> PhaseResult:
        pod = self.get_pod() or {}
        uid, node = _uid(pod), dig(pod, "spec", "nodeName")
        others = [n for n in nodes if n != node]
        if not node or not others:
            return PhaseResult(
                "reschedule", Verdict.SKIPPED, note="no other schedulable node for the pod"
            )
        self.step(f"reschedule: moving {self.pod} off node {node}")
        started = time.monotonic()
        self.api.patch_merge(
            kinds.STATEFULSET, self.deployment.name, avoid_node_patch(node), self.ns
        )
        self.wait_pod(
            lambda p: _uid(p) != uid and dig(p, "spec", "nodeName") not in (None, node),
            f"Running on a node other than {node}",
        )
        ready_s = self.wait_answering(started)
        after = self.node()
        self.step(f"reschedule: MySQL answers on node {after} after {ready_s:.1f}s; reading back")
        return self.verify(
            "reschedule",
            state,
            ready_s,
            node_before=node,
            note=f"moved from {node} to {after}; the volume detached and attached there",
        )


def run_persistence(
    api: KubeApi,
    planned: PersistencePlan,
    scope: RunScope,
    step: Callable[[str], None],
    *,
    rng: random.Random | None = None,
) -> PersistenceReport:
    """Run the planned check and return its report (verdict fail when committed data was lost)."""
    request = planned.request
    facts = read_node_facts(api, request)
    plan = plan_disruptions(request, facts)
    rows = generate_rows(request.rows, rng or random.Random(secrets.randbits(64)))
    phases: list[PhaseResult] = []
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
    run = _Run(api, request, deployment, step)
    ready_s = run.start()
    seeded, state = run.seed(rows, ready_s)
    phases.append(seeded)
    lost_in = "" if seeded.verdict is Verdict.PASS else "seed"
    for disruption, skip_reason in plan:
        if lost_in:
            phases.append(
                PhaseResult(
                    disruption.value,
                    Verdict.SKIPPED,
                    note=f"not run: the data was already lost in {lost_in}",
                )
            )
            continue
        if skip_reason:
            step(f"{disruption.value}: skipped: {skip_reason}")
            phases.append(PhaseResult(disruption.value, Verdict.SKIPPED, note=skip_reason))
            continue
        phase = _run_phase(run, disruption, state, facts)
        if isinstance(phase, tuple):
            phase, state = phase
        step(
            f"{disruption.value}: {phase.verdict.value}" + (f"; {phase.note}" if phase.note else "")
        )
        phases.append(phase)
        if phase.verdict is Verdict.FAIL:
            lost_in = disruption.value
    return PersistenceReport(
        storage_class=request.storage_class if request.volume_type is VolumeType.PVC else None,
        volume_type=request.volume_type,
        size=request.size.text if request.volume_type is VolumeType.PVC else None,
        namespace=request.namespace,
        image=request.image,
        rows=request.rows,
        run_id=planned.run_id,
        phases=tuple(phases),
    )


def _run_phase(
    run: _Run, disruption: Disruption, state: _State, facts: NodeFacts
) -> PhaseResult | tuple[PhaseResult, _State]:
    """One disruption; MySQL not coming back counts as a failed phase, not a failed run."""
    try:
        if disruption is Disruption.RESTART:
            return run.restart(state)
        if disruption is Disruption.CRASH:
            return run.crash(state)
        return run.reschedule(state, facts.schedulable_nodes or ())
    except (_DataUnavailable, WaitTimeoutError) as exc:
        message = str(exc) if isinstance(exc, _DataUnavailable) else exc.message
        events = getattr(exc, "events", ())
        if events:
            message += " (events: " + "; ".join(events[-3:]) + ")"
        return PhaseResult(disruption.value, Verdict.FAIL, note=message)


# -- pod status -----------------------------------------------------------------------------


def _uid(pod: JsonDict) -> str | None:
    uid = dig(pod, "metadata", "uid")
    return str(uid) if uid else None


def _running(pod: JsonDict) -> bool:
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Running":
        return False
    states = {c.get("name"): c.get("state") or {} for c in status.get("containerStatuses") or []}
    return "running" in states.get(CLIENT_CONTAINER, {})


def _server_failure(pod: JsonDict) -> str:
    """The server's last log lines when it keeps crashing on its own ('' when it does not)."""
    for cs in dig(pod, "status", "containerStatuses") or []:
        if cs.get("name") != MYSQL_CONTAINER:
            continue
        waiting = dig(cs, "state", "waiting") or {}
        last = dig(cs, "lastState", "terminated") or {}
        if waiting.get("reason") == "CrashLoopBackOff" and last.get("exitCode") not in (
            _EXPECTED_EXITS
        ):
            message = (last.get("message") or "").strip()
            tail = " | ".join(message.splitlines()[-6:])
            return f"the server container exited with code {last.get('exitCode')}" + (
                f": {tail}" if tail else ""
            )
    return ""
