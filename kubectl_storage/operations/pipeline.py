"""The one pipeline every command that creates objects runs (design.md section 2).

    options (typed flags, cli/) → complete() (namespace once, no network; cli/context.py)
    → validate() (pure: every usage error, before any connection)
    → preflight() (read-only cluster checks, operations/preflight.py)
    → plan(run_id) (the labelled manifests; --dry-run prints exactly these)
    → run(plan) inside the run scope → one typed report

A command implements :class:`Command`; :func:`execute` runs the stages in that order and is the
only place that decides when the cluster is contacted and when a run scope opens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from kubectl_storage.core.k8s.labels import new_run_id
from kubectl_storage.core.k8s.manifests import Manifest
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.logs import tick
from kubectl_storage.operations.preflight import ClusterFacts, Requirements, preflight

RequestT = TypeVar("RequestT", contravariant=True)
PlanT = TypeVar("PlanT", bound="Plan")
log = logging.getLogger(__name__)
ReportT = TypeVar("ReportT", covariant=True)

Step = Callable[[str], None]


@dataclass(frozen=True)
class Progress:
    """Where a run reports what it is doing: steps, and ticks while a long step goes on."""

    step: Step
    tick: Step

    @classmethod
    def to_log(cls) -> Progress:
        """Steps and ticks as log lines on stderr (logs.py decides how they look)."""
        return cls(step=lambda message: log.info("%s", message), tick=lambda m: tick(log, m))


class Plan(Protocol):
    """What a run will create, labelled with its run id, in creation order."""

    @property
    def run_id(self) -> str:
        """The id every object of the run is labelled and named with."""
        ...

    def manifests(self) -> list[Manifest]:
        """Every object the run creates (what --dry-run prints)."""
        ...


class Command(Protocol[RequestT, PlanT, ReportT]):
    """One subcommand's stages; each is a plain method so tests can call them one by one."""

    #: The RBAC table row (core/rbac.py) whose permissions preflight checks.
    rbac_name: str
    #: The ``kubectl-storage/command`` label of everything the run creates.
    label: str

    def validate(self, request: RequestT) -> None:
        """Refuse bad input (UsageError); pure, no cluster."""
        ...

    def requirements(self, request: RequestT) -> Requirements:
        """What preflight must check for this request."""
        ...

    def plan_offline(self, request: RequestT) -> bool:
        """Whether --dry-run can plan from the flags alone, without reading the cluster."""
        ...

    def plan(
        self, request: RequestT, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> PlanT:
        """The labelled manifests (``api`` is None for an offline --dry-run)."""
        ...

    def run(self, api: KubeApi, plan: PlanT, scope: RunScope, progress: Progress) -> ReportT:
        """Create exactly the plan's objects through ``scope``, and report."""
        ...


@dataclass(frozen=True)
class Session:
    """What complete() resolved once for the whole invocation."""

    namespace: str
    connect: Callable[[], KubeApi]
    progress: Progress
    dry_run: bool = False
    keep: bool = False
    cleanup_timeout_s: float = 120


@dataclass(frozen=True)
class Outcome(Generic[PlanT, ReportT]):
    """What a pipeline run produced: the plan, and the report unless it was a --dry-run."""

    plan: PlanT
    report: ReportT | None
    #: False when a --dry-run planned without reading the cluster.
    read_cluster: bool = True


def execute(
    command: Command[RequestT, PlanT, ReportT], request: RequestT, session: Session
) -> Outcome[PlanT, ReportT]:
    """Validate, check the cluster, plan and run; or stop after the plan for --dry-run."""
    command.validate(request)
    run_id = new_run_id()
    if session.dry_run and command.plan_offline(request):
        plan = command.plan(request, ClusterFacts.offline(session.namespace), run_id, None)
        return Outcome(plan, None, read_cluster=False)
    api = session.connect()
    facts = preflight(api, command.rbac_name, session.namespace, command.requirements(request))
    plan = command.plan(request, facts, run_id, api)
    if session.dry_run:
        return Outcome(plan, None)
    with RunScope(
        api,
        command.label,
        keep=session.keep,
        cleanup_timeout_s=session.cleanup_timeout_s,
        run_id=plan.run_id,
    ) as scope:
        report = command.run(api, plan, scope, session.progress)
    return Outcome(plan, report)
