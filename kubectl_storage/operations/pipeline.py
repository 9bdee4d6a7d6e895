"""The one pipeline every command that creates objects runs (design.md section 2).

    options (typed flags, cli/) → complete() (namespace once, no network; cli/context.py)
    → validate (pure: every usage error, before any connection)
    → preflight (read-only cluster checks of every named input, operations/preflight.py)
    → gather (the cluster reads the plan needs, once)
    → plan(run_id) (pure: the labelled manifests; --dry-run prints exactly these)
    → run(plan) inside the run scope → one typed report

A command is a :class:`Command`: a table of its stage functions, no class of its own.
:func:`execute` runs the stages in that order and is the only place that decides when the
cluster is contacted and when a run scope opens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from kubectl_storage.core.k8s.labels import new_run_id
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.logs import tick
from kubectl_storage.operations.preflight import ClusterFacts, Requirements, preflight

RequestT = TypeVar("RequestT")
GatheredT = TypeVar("GatheredT")
PlanT = TypeVar("PlanT", bound="Plan")
ReportT = TypeVar("ReportT")
log = logging.getLogger(__name__)

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

    def manifests(self) -> list[JsonDict]:
        """Every object the run creates (what --dry-run prints)."""
        ...


def nothing_to_gather(api: KubeApi, request: object, facts: ClusterFacts) -> None:
    """The gather stage of a command whose plan needs nothing beyond preflight's facts."""


@dataclass(frozen=True)
class Command(Generic[RequestT, GatheredT, PlanT, ReportT]):
    """One subcommand's stages, each a plain function so tests can call them one by one."""

    #: The RBAC table row (core/rbac.py) whose permissions preflight checks.
    rbac_name: str
    #: The ``kubectl-storage/command`` label of everything the run creates.
    label: str
    #: Refuse bad input (UsageError); pure, no cluster.
    validate: Callable[[RequestT], object]
    #: What preflight must check for this request.
    requirements: Callable[[RequestT], Requirements]
    #: Whether --dry-run can plan from the flags alone, without reading the cluster.
    plan_offline: Callable[[RequestT], bool]
    #: The only cluster reads between preflight and run: what the plan needs to decide.
    gather: Callable[[KubeApi, RequestT, ClusterFacts], GatheredT]
    #: Pure: the labelled manifests (``gathered`` is None for an offline --dry-run).
    plan: Callable[[RequestT, ClusterFacts, GatheredT | None, str], PlanT]
    #: Create exactly the plan's objects through the scope, and report.
    run: Callable[[KubeApi, PlanT, RunScope, Progress], ReportT]


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
    command: Command[RequestT, GatheredT, PlanT, ReportT], request: RequestT, session: Session
) -> Outcome[PlanT, ReportT]:
    """Validate, check the cluster, gather, plan and run; or stop after the plan for
    --dry-run."""
    command.validate(request)
    run_id = new_run_id()
    if session.dry_run and command.plan_offline(request):
        plan = command.plan(request, ClusterFacts.offline(session.namespace), None, run_id)
        return Outcome(plan, None, read_cluster=False)
    api = session.connect()
    facts = preflight(api, command.rbac_name, session.namespace, command.requirements(request))
    gathered = command.gather(api, request, facts)
    plan = command.plan(request, facts, gathered, run_id)
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
