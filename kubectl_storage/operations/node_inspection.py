"""Run a collection script on chosen nodes through short-lived debug pods, many at a time.

One pod per node, pinned with nodeName, privileged only when the command needs host tools; all
collection for a node is one exec; the pod is deleted as soon as its output is read. A node that
fails (NotReady, image pull error, timeout) is reported with its reason and the others go on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name
from kubectl_storage.core.k8s.manifests import Manifest, build_node_inspection_pod
from kubectl_storage.core.nodes.collect import collection_script, split_sections
from kubectl_storage.errors import (
    ForbiddenError,
    NotFoundError,
    StorageToolError,
    UsageError,
)
from kubectl_storage.kube.access import AccessRequest, pod_security_level, require_access
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.kube.podexec import exec_in_pod
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for

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


def check_allowed(api: KubeApi, request: InspectionRequest) -> None:
    """Refuse before creating anything when Pod Security or RBAC forbids the debug pods."""
    level = pod_security_level(api, request.namespace)
    # hostPID and hostPath are forbidden at baseline already.
    if level != "privileged":
        raise ForbiddenError(
            f'namespace "{request.namespace}" enforces the "{level}" Pod Security level, which '
            "forbids node inspection pods (they need hostPID and a read-only hostPath of /)",
            "Run in a namespace that allows privileged pods (-n NAME), or label one: "
            f"kubectl label ns {request.namespace} pod-security.kubernetes.io/enforce=privileged",
        )
    require_access(
        api,
        [
            AccessRequest("get", "nodes"),
            AccessRequest("create", "pods", namespace=request.namespace),
            AccessRequest("create", "pods", namespace=request.namespace, subresource="exec"),
            AccessRequest("delete", "pods", namespace=request.namespace),
        ],
        f"inspect nodes ({request.command})",
    )


def node_not_ready_reason(node: JsonDict) -> str | None:
    """Why a node cannot run our pod, or None when it is Ready and schedulable enough."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready" and condition.get("status") != "True":
            return f"node NotReady ({condition.get('reason') or condition.get('status')})"
    return None


def inspection_manifests(
    request: InspectionRequest, run_id: str, nodes: list[str]
) -> list[Manifest]:
    """The debug pods the request would create (also for --dry-run)."""
    return [
        build_node_inspection_pod(
            object_name(request.command, run_id, node),
            request.namespace,
            node,
            request.image,
            privileged=request.privileged,
            active_deadline_s=int(request.timeout_s) + 60,
        )
        for node in nodes
    ]


def inspect_nodes(api: KubeApi, request: InspectionRequest) -> list[NodeOutput]:
    """Collect the requested sections from every chosen node (bounded concurrency)."""
    nodes = select_nodes(api, request)
    check_allowed(api, request)
    script = collection_script(request.sections)
    outputs: dict[str, NodeOutput] = {}
    runnable = []
    for node in nodes:
        name = node["metadata"]["name"]
        reason = node_not_ready_reason(node)
        if reason:
            outputs[name] = NodeOutput(name, error=reason)
        else:
            runnable.append(name)
    cancel = threading.Event()
    with RunScope(api, request.command, keep=request.keep, cleanup_timeout_s=60) as scope:
        manifests = {
            m["spec"]["nodeName"]: m for m in inspection_manifests(request, scope.run_id, runnable)
        }
        log.info("inspecting %d node(s), %d at a time", len(runnable), request.parallel)
        with ThreadPoolExecutor(max_workers=max(1, request.parallel)) as pool:
            futures = {
                name: pool.submit(
                    _inspect_one, api, scope, request, manifests[name], script, cancel
                )
                for name in runnable
            }
            try:
                for name, future in futures.items():
                    outputs[name] = future.result()
            except BaseException:
                cancel.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    return [outputs[n["metadata"]["name"]] for n in nodes]


def _inspect_one(
    api: KubeApi,
    scope: RunScope,
    request: InspectionRequest,
    manifest: Manifest,
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
                scope.delete_now(kinds.POD, name, request.namespace)
            except StorageToolError as exc:  # the run scope's final sweep tries again
                log.warning("%s: could not delete %s yet: %s", node, name, exc.message)
                scope.adopt(kinds.POD, name, request.namespace)
