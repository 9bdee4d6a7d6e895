"""Run a collection script on chosen nodes through short-lived debug pods, many at a time.

One pod per node, pinned with nodeName, privileged only when the command needs host tools; all
collection for a node is one exec; the pod is deleted as soon as its output is read. A node that
fails (NotReady, image pull error, timeout) is reported with its reason and the others go on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import build_node_inspection_pod
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.nodes.capture import NodeCapture
from kubectl_storage.core.nodes.collect import collection_script, split_sections
from kubectl_storage.errors import NotFoundError, StorageToolError, UsageError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import exec_in_pod
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for
from kubectl_storage.operations.pipeline import Command
from kubectl_storage.operations.preflight import ClusterFacts, Requirements

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InspectionRequest:
    """Which nodes, and how to reach them."""

    command: str  # "mount-audit" or "iscsi": names the pods and labels
    namespace: str
    image: str
    sections: tuple[str, ...]
    nodes: tuple[str, ...] = ()
    selector: str | None = None
    all_nodes: bool = False
    privileged: bool = False
    parallel: int = 10
    timeout_s: float = 120
    keep: bool = False


@dataclass(frozen=True)
class InspectionKind:
    """What a node command collects and whether that needs a privileged pod."""

    command: str
    sections: tuple[str, ...]
    privileged: bool

    def request(
        self,
        *,
        namespace: str,
        image: str,
        nodes: Sequence[str] = (),
        selector: str | None = None,
        all_nodes: bool = False,
        parallel: int = 10,
        timeout_s: float = 120,
        keep: bool = False,
    ) -> InspectionRequest:
        """The request for these nodes and settings."""
        return InspectionRequest(
            command=self.command,
            namespace=namespace,
            image=image,
            sections=self.sections,
            nodes=tuple(nodes),
            selector=selector,
            all_nodes=all_nodes,
            privileged=self.privileged,
            parallel=parallel,
            timeout_s=timeout_s,
            keep=keep,
        )


@dataclass(frozen=True)
class NodeOutput:
    """What one node returned, or why it could not."""

    node: str
    sections: dict[str, str] = field(default_factory=dict)
    error: str | None = None

    def capture(self) -> NodeCapture:
        """The node's texts, as the report builders read them (live and offline alike)."""
        return NodeCapture.from_sections(self.node, self.sections, self.error)


def select_nodes(api: KubeApi, request: InspectionRequest) -> list[JsonDict]:
    """The Node objects chosen by names, -l or --all-nodes; unknown names fail before anything."""
    if not request.nodes and not request.selector and not request.all_nodes:
        raise UsageError(
            "no nodes chosen", "Name nodes as arguments, or use -l/--selector or --all-nodes."
        )
    if request.nodes:
        found = []
        missing = []
        for name in request.nodes:
            node = api.get_or_none(kinds.NODE, name)
            (found.append(node) if node else missing.append(name))
        if missing:
            raise NotFoundError(
                f"node {', '.join(missing)} does not exist", "kubectl get nodes lists them."
            )
        return found
    nodes = api.list(kinds.NODE, label_selector=request.selector)
    if not nodes:
        raise NotFoundError(
            f"no node matches the selector {request.selector!r}"
            if request.selector
            else "the cluster has no nodes",
            "kubectl get nodes --show-labels lists them.",
        )
    return sorted(nodes, key=lambda n: n["metadata"]["name"])


def node_not_ready_reason(node: JsonDict) -> str | None:
    """Why a node cannot run our pod, or None when it is Ready and schedulable enough."""
    for condition in dig(node, "status", "conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") != "True":
            return f"node NotReady ({condition.get('reason') or condition.get('status')})"
    return None


def inspection_manifests(
    request: InspectionRequest, run_id: str, nodes: Sequence[str]
) -> list[JsonDict]:
    """The debug pods the request creates, labelled for run ``run_id`` (also for --dry-run)."""
    return [
        with_run_labels(
            build_node_inspection_pod(
                object_name(request.command, run_id, node),
                request.namespace,
                node,
                request.image,
                privileged=request.privileged,
                active_deadline_s=int(request.timeout_s) + 60,
            ),
            run_id,
            request.command,
        )
        for node in nodes
    ]


def validate_inspection(request: InspectionRequest) -> None:
    """Node choice and limits, checked before any connection.

    Raises:
        UsageError: no nodes chosen, chosen two ways, or a limit below 1.
    """
    chosen = [bool(request.nodes), bool(request.selector), request.all_nodes]
    if sum(chosen) == 0:
        raise UsageError(
            "no nodes chosen", "Name nodes as arguments, or use -l/--selector or --all-nodes."
        )
    if sum(chosen) > 1:
        raise UsageError("choose nodes one way: NODE arguments, -l/--selector or --all-nodes", "")
    if request.parallel < 1:
        raise UsageError("--parallel must be at least 1", "")
    if request.timeout_s <= 0:
        raise UsageError("--timeout must be a positive number of seconds", "")


@dataclass(frozen=True)
class InspectionPlan:
    """The chosen nodes and one labelled debug pod per node that can run one."""

    run_id: str
    request: InspectionRequest
    #: Every chosen node, in name order, with the reason it gets no pod ("" when it does).
    nodes: tuple[tuple[str, str], ...]
    pods: dict[str, JsonDict]

    def manifests(self) -> list[JsonDict]:
        """The debug pods, in node order (what --dry-run prints)."""
        return list(self.pods.values())


#: Why node inspection pods need the privileged Pod Security level.
NODE_POD_NEEDS = (
    "node inspection pods (they need hostPID and a read-only hostPath of /, and privileged "
    "mode for iscsi)"
)

ReportT = TypeVar("ReportT")


def inspection_requirements(request: InspectionRequest) -> Requirements:
    """Privileged pods, and the writes of the command's RBAC row."""
    return Requirements(
        pod_security="privileged",
        pod_security_reason=NODE_POD_NEEDS,
        doing=f"inspect nodes ({request.command})",
    )


def plan_inspection(
    request: InspectionRequest, facts: ClusterFacts, nodes: list[JsonDict] | None, run_id: str
) -> InspectionPlan:
    """The nodes (NotReady ones get no pod) and their debug pods; ``nodes`` is None offline,
    where the named nodes are planned as given."""
    if nodes is None:
        chosen = [(name, "") for name in request.nodes]
    else:
        chosen = [(node["metadata"]["name"], node_not_ready_reason(node) or "") for node in nodes]
    runnable = [name for name, reason in chosen if not reason]
    pods = {m["spec"]["nodeName"]: m for m in inspection_manifests(request, run_id, runnable)}
    return InspectionPlan(run_id, request, tuple(chosen), pods)


#: A node command's stages: it gathers the node objects and plans a debug pod per node.
InspectionCommand = Command[InspectionRequest, list[JsonDict], InspectionPlan, ReportT]


def inspection_command(
    kind: InspectionKind, report: Callable[[KubeApi, list[NodeOutput]], ReportT]
) -> InspectionCommand[ReportT]:
    """A node command (mount-audit, iscsi) as pipeline stages; ``report`` turns the nodes'
    outputs into the command's typed report."""
    return Command(
        rbac_name=kind.command,
        label=kind.command,
        validate=validate_inspection,
        requirements=inspection_requirements,
        # Nodes named on the command line need no lookup to plan.
        plan_offline=lambda request: bool(request.nodes),
        gather=lambda api, request, facts: select_nodes(api, request),
        plan=plan_inspection,
        run=lambda api, plan, scope, progress: report(api, inspect_nodes(api, plan, scope)),
    )


def inspect_nodes(api: KubeApi, plan: InspectionPlan, scope: RunScope) -> list[NodeOutput]:
    """Collect the requested sections from every planned node (bounded concurrency)."""
    request = plan.request
    script = collection_script(request.sections)
    outputs = {name: NodeOutput(name, error=reason) for name, reason in plan.nodes if reason}
    runnable = list(plan.pods)
    cancel = threading.Event()
    log.info("inspecting %d node(s), %d at a time", len(runnable), request.parallel)
    with ThreadPoolExecutor(max_workers=max(1, request.parallel)) as pool:
        futures = {
            name: pool.submit(_inspect_one, api, scope, request, plan.pods[name], script, cancel)
            for name in runnable
        }
        try:
            for name, future in futures.items():
                outputs[name] = future.result()
        except BaseException:
            cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return [outputs[name] for name, _ in plan.nodes]


def _inspect_one(
    api: KubeApi,
    scope: RunScope,
    request: InspectionRequest,
    manifest: JsonDict,
    script: str,
    cancel: threading.Event,
) -> NodeOutput:
    node = manifest["spec"]["nodeName"]
    name = manifest["metadata"]["name"]
    if cancel.is_set():
        return NodeOutput(node, error="cancelled")
    try:
        scope.create(kinds.POD, manifest, request.namespace)
        wait_for(
            api,
            kinds.POD,
            name,
            pod_running("debug"),
            namespace=request.namespace,
            timeout_s=request.timeout_s,
            what="Running",
        )
        result = exec_in_pod(
            api,
            name,
            ["sh", "-c", script],
            namespace=request.namespace,
            timeout_s=request.timeout_s,
            witness_exit=True,  # a cut-off exec must not read as a node with nothing on it
        )
        log.info("%s: collected", node)
        return NodeOutput(node, split_sections(result.stdout))
    except StorageToolError as exc:
        return NodeOutput(
            node, error=exc.message + (f" ({'; '.join(exc.events)})" if exc.events else "")
        )
    finally:
        if not request.keep:
            try:
                scope.delete_now((kinds.POD, name, request.namespace))
            except StorageToolError as exc:  # the run scope's final sweep tries again
                log.warning("%s: could not delete %s yet: %s", node, name, exc.message)
                scope.adopt(kinds.POD, name, request.namespace)
