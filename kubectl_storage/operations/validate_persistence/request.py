"""What `validate-persistence` was asked, checked without a cluster, and planned.

Everything here is decided before any object exists: the inputs (every usage error exits 2
here), the MySQL deployment of the run, the disruptions to run and the reason each one that
cannot run is skipped.
"""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass, field, replace

from kubectl_storage.core.k8s.labels import object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import PodPlacement
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.k8s.pod_defaults import MYSQL_IMAGE, TOOLBOX_IMAGE
from kubectl_storage.core.k8s.quantities import Size, format_bytes
from kubectl_storage.core.rbac.commands import Condition
from kubectl_storage.core.validate_persistence.mysql import (
    ALL_DISRUPTIONS,
    MAX_ROWS,
    MOVES,
    MYSQL_UID,
    PASSWORD_PLACEHOLDER,
    Disruption,
    MysqlDeployment,
    VolumeType,
    build_mysql_statefulset,
    build_secret,
    check_server_args,
    required_bytes,
)
from kubectl_storage.core.validate_persistence.node_crash import crash_refusal
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.preflight import ClusterFacts, Requirements

COMMAND = "validate-persistence"
NAME_PREFIX = "persist"
_PASSWORD_ALPHABET = string.ascii_letters + string.digits

#: Why the emptyDir control cannot judge a disruption: it keeps the pod, so it keeps the volume.
CONTROL_CANNOT_JUDGE = {
    Disruption.CRASH: (
        "a container restart keeps the pod and its emptyDir, so a pod-local volume keeps its "
        "data too: the control cannot show loss here"
    ),
    Disruption.EXTERNAL: (
        "what the user does is not known to the tool, so it cannot say whether a pod-local "
        "volume had to lose its data"
    ),
    Disruption.NODE_CRASH: (
        "the node comes back with the pod and its emptyDir on the node's disk, so a pod-local "
        "volume need not lose what reached that disk: the control cannot show loss here"
    ),
}


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
    #: Options appended to the server's command line (``--server-arg``).
    server_args: tuple[str, ...] = ()
    #: Run the check even when the server is not configured to make a commit durable.
    allow_non_durable: bool = False
    #: The fio image of the fsync probe; None: no probe (``--no-fsync-probe``).
    probe_image: str | None = TOOLBOX_IMAGE
    #: ``--crash-node``: the node node-crash may crash, named again (it must be --node's).
    crash_node: str | None = None
    #: The image of the pod that crashes the node (any image with ``sh``).
    crash_image: str = TOOLBOX_IMAGE

    @property
    def chosen(self) -> tuple[Disruption, ...]:
        """The disruptions asked for (the default set when none were named)."""
        return self.disruptions or ALL_DISRUPTIONS


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

    def manifests(self, password: str = PASSWORD_PLACEHOLDER) -> list[JsonDict]:
        """Secret and StatefulSet, labelled; --dry-run shows a placeholder password."""
        return [
            with_run_labels(m, self.run_id, COMMAND)
            for m in build_manifests(self.deployment, password)
        ]


def validate_request(request: PersistenceRequest) -> None:
    """Check everything that needs no cluster.

    Raises:
        UsageError: on a bad row count, size, server option, or a missing class.
    """
    if not 1 <= request.rows <= MAX_ROWS:
        raise UsageError(f"--rows must be between 1 and {MAX_ROWS:,}", "Example: --rows 1000")
    if request.timeout_s <= 0:
        raise UsageError("--timeout must be a positive number of seconds", "Example: --timeout 300")
    _check_crash_node(request)
    try:
        check_server_args(request.server_args)
    except ValueError as exc:
        raise UsageError(
            str(exc), "Pass one option per --server-arg, e.g. --server-arg=--sync-binlog=1"
        ) from exc
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


def _check_crash_node(request: PersistenceRequest) -> None:
    """node-crash reboots a whole node: it runs only when the user names it twice."""
    crash = Disruption.NODE_CRASH in request.chosen
    node = request.placement.node_name
    hint = (
        "node-crash reboots the database pod's node without syncing its disks. Name that node "
        "twice to confirm: --disruptions node-crash --node NODE --crash-node NODE."
    )
    if crash and not request.crash_node:
        raise UsageError("--disruptions node-crash needs --crash-node", hint)
    if request.crash_node and not crash:
        raise UsageError("--crash-node is only for --disruptions node-crash", hint)
    if crash and request.crash_node != node:
        raise UsageError(
            f"--crash-node {request.crash_node} is not the node the database runs on "
            f"(--node {node or 'not given'})",
            hint,
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
        server_args=request.server_args,
        probe_image=request.probe_image,
    )


def build_manifests(deployment: MysqlDeployment, password: str) -> list[JsonDict]:
    """Secret and StatefulSet, in creation order."""
    return [
        build_secret(deployment.secret_name, deployment.namespace, password),
        build_mysql_statefulset(deployment),
    ]


def new_password() -> str:
    """A random root password (letters and digits: safe in env, SQL and shells alike)."""
    return "".join(secrets.choice(_PASSWORD_ALPHABET) for _ in range(32))


def plan_disruptions(request: PersistenceRequest, facts: NodeFacts) -> list[tuple[Disruption, str]]:
    """The disruptions to run, each with '' or the reason it is skipped."""
    plan = []
    for disruption in request.chosen:
        reason = ""
        if request.volume_type is VolumeType.EMPTY_DIR and disruption in CONTROL_CANNOT_JUDGE:
            reason = "the emptyDir control cannot judge this: " + CONTROL_CANNOT_JUDGE[disruption]
        elif disruption in MOVES:
            if facts.schedulable_nodes is None:
                reason = "nodes cannot be listed (no permission), so no other node is known"
            elif len(facts.schedulable_nodes) < 2:
                only = ", ".join(facts.schedulable_nodes) or "none"
                reason = f"needs a second schedulable node (only {only})"
        plan.append((disruption, reason))
    return plan


def persistence_requirements(request: PersistenceRequest) -> Requirements:
    """The class (or the default one) for a PVC, and the writes of the chosen steps."""
    pvc = request.volume_type is VolumeType.PVC
    conditions = {Condition.PVC_VOLUME} if pvc else set()
    if any(d in MOVES for d in request.chosen):
        conditions.add(Condition.RESCHEDULE)
    if Disruption.NODE_DRAIN in request.chosen:
        conditions.add(Condition.NODE_DRAIN)
    crash = Disruption.NODE_CRASH in request.chosen
    return Requirements(
        pod_security="privileged" if crash else "restricted",
        pod_security_reason="node-crash runs a privileged pod that crashes the node"
        if crash
        else "",
        storage_classes=(request.storage_class,) if pvc and request.storage_class else (),
        default_storage_class=pvc and not request.storage_class,
        nodes=(request.placement.node_name,) if request.placement.node_name else (),
        conditions=frozenset(conditions),
        doing="run the persistence check",
    )


@dataclass(frozen=True)
class CrashFacts:
    """What node-crash's refusal reads: every node, and this machine's boot ID."""

    nodes: tuple[JsonDict, ...]
    local_boot_id: str | None


def check_crash_target(request: PersistenceRequest, crash: CrashFacts | None) -> None:
    """Refuse a node-crash of a node that shares its kernel (pure, before anything exists).

    Raises:
        UsageError: the node shares its kernel with other nodes or with this machine.
    """
    if Disruption.NODE_CRASH not in request.chosen or crash is None:
        return
    node = request.placement.node_name or ""
    why = crash_refusal(node, crash.nodes, crash.local_boot_id)
    if why:
        raise UsageError(
            f"node-crash refused: {why}",
            "Crash only a node that is a machine of its own (a VM or a server). Nothing was "
            "created and no node was touched.",
        )


def plan_persistence(
    request: PersistenceRequest, facts: ClusterFacts, run_id: str, crash: CrashFacts | None = None
) -> PersistencePlan:
    """The class decided, the server's UID (unset where the namespace assigns UIDs); pure.

    Raises:
        UsageError: node-crash of a node that must not be crashed (:func:`check_crash_target`).
    """
    check_crash_target(request, crash)
    if request.volume_type is VolumeType.PVC and not request.storage_class:
        request = replace(request, storage_class=facts.default_storage_class)
    run_as_user = None if facts.assigns_uids else request.run_as_user
    deployment = deployment_for(request, run_id, run_as_user)
    return PersistencePlan(run_id, request, deployment)
