"""Preflight: the one check of the cluster every command runs before it creates anything.

A command says what it needs (:class:`Requirements`); :func:`preflight` reads the cluster once
and either returns what the plan needs to know (:class:`ClusterFacts`) or raises the one error
that explains what is missing and what to do. The permissions checked come from the table that
``kubectl storage rbac`` prints (core/rbac.py), never from a second list kept by hand.

Order: namespace (exists, Pod Security level, OpenShift UID range) → snapshot API → classes →
claims → nodes → permissions. A name the user gave is checked here, so a wrong one exits 2 at
once, naming what exists, before anything is created (a snapshot to restore is read by the
restore's plan, which also comes before anything is created). Reads only.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.manifests import PodIdentity
from kubectl_storage.core.k8s.objects import (
    OPENSHIFT_UID_RANGE_ANNOTATION,
    JsonDict,
    annotations_of,
    is_default_storage_class,
    labels_of,
    name_of,
)
from kubectl_storage.core.rbac.commands import Scope, checks_for
from kubectl_storage.errors import ForbiddenError, NotFoundError, UsageError
from kubectl_storage.kube.access import ENFORCE_LABEL, AccessRequest, can_i
from kubectl_storage.kube.api import KubeApi

log = logging.getLogger(__name__)

#: Pod Security levels, least to most permissive (kubernetes.io/docs/concepts/security/
#: pod-security-standards). A namespace admits a pod whose needs are at or below its level.
POD_SECURITY_LEVELS = ("restricted", "baseline", "privileged")

SNAPSHOT_API_PATH = f"/apis/{kinds.VOLUME_SNAPSHOT.group}/v1"
SNAPSHOT_API_RESOURCES = frozenset(
    {"volumesnapshots", "volumesnapshotcontents", "volumesnapshotclasses"}
)
INSTALL_SNAPSHOT_API_HINT = (
    "Install the snapshot CRDs and the snapshot controller from "
    "https://github.com/kubernetes-csi/external-snapshotter (in a checkout of a release: "
    "kubectl kustomize client/config/crd | kubectl create -f - ; "
    "kubectl -n kube-system kustomize deploy/kubernetes/snapshot-controller | "
    "kubectl create -f -), then a VolumeSnapshotClass for your CSI driver."
)


@dataclass(frozen=True)
class Requirements:
    """What one run needs from the cluster, derived from its options."""

    #: The pods' Pod Security needs: "restricted" (benchmark, check, browse pods) or
    #: "privileged" (node inspection pods: hostPID, hostPath, privileged for iscsi).
    pod_security: str = "restricted"
    #: Why the pods need that level, for the error message.
    pod_security_reason: str = ""
    storage_classes: tuple[str, ...] = ()
    #: The run uses the cluster's default StorageClass (no -s given).
    default_storage_class: bool = False
    snapshot_api: bool = False
    pvcs: tuple[str, ...] = ()
    #: VolumeSnapshots the user named (in the run's namespace).
    snapshots: tuple[str, ...] = ()
    #: Nodes the user named (--node, --restore-node).
    nodes: tuple[str, ...] = ()
    #: Optional permissions that apply (core.rbac.Condition values).
    conditions: frozenset[str] = frozenset()
    #: What the run does, for "not allowed to …" messages.
    doing: str = ""


@dataclass(frozen=True)
class ClusterFacts:
    """What preflight learnt, for the plan."""

    namespace: str
    #: The namespace assigns pod UIDs itself (OpenShift's SCC range); ours must be left unset.
    assigns_uids: bool = False
    pod_security: str = "privileged"
    storage_classes: dict[str, JsonDict] = field(default_factory=dict)
    default_storage_class: str | None = None
    pvcs: dict[str, JsonDict] = field(default_factory=dict)
    snapshots: dict[str, JsonDict] = field(default_factory=dict)
    #: False for an offline --dry-run: nothing above was read from a cluster.
    read_from_cluster: bool = True

    def identity(self, given: PodIdentity | None) -> PodIdentity:
        """The pods' UID/fsGroup: the user's, else unset where the namespace assigns them."""
        if given is not None:
            return given
        return PodIdentity(None, None) if self.assigns_uids else PodIdentity()

    @classmethod
    def offline(cls, namespace: str) -> ClusterFacts:
        """Facts for a --dry-run that can be planned from the flags alone."""
        return cls(namespace=namespace, read_from_cluster=False)


def preflight(api: KubeApi, command: str, namespace: str, needs: Requirements) -> ClusterFacts:
    """Check the cluster for one run of ``command`` in ``namespace``; read-only.

    Raises:
        NotFoundError: the namespace, a class, a claim, a snapshot or the snapshot API is missing.
        ForbiddenError: Pod Security or RBAC does not allow the run.
        UsageError: no class given and the cluster has no single default class.
    """
    ns_obj = api.get_or_none(kinds.NAMESPACE, namespace)
    if ns_obj is None:
        raise NotFoundError(
            f'namespace "{namespace}" does not exist',
            "Create it (kubectl create namespace NAME) or choose another with -n.",
        )
    level = str(labels_of(ns_obj).get(ENFORCE_LABEL, "privileged"))
    _check_pod_security(namespace, level, needs)
    if needs.snapshot_api:
        require_snapshot_api(api)
    classes: dict[str, JsonDict] = {}
    default: str | None = None
    if needs.storage_classes or needs.default_storage_class:
        listed = {name_of(sc): sc for sc in api.list(kinds.STORAGE_CLASS)}
        missing = [c for c in needs.storage_classes if c not in listed]
        if missing:
            raise NotFoundError(
                f"StorageClass {', '.join(missing)} does not exist",
                "Available: "
                + (", ".join(sorted(listed)) or "none")
                + " (kubectl storage classes lists them).",
            )
        classes = {c: listed[c] for c in needs.storage_classes}
        if needs.default_storage_class:
            default = _the_default_class(listed)
            classes[default] = listed[default]
    pvcs: dict[str, JsonDict] = {}
    for claim in needs.pvcs:
        pvc = api.get_or_none(kinds.PVC, claim, namespace)
        if pvc is None:
            raise NotFoundError(
                f'PVC "{claim}" does not exist in namespace {namespace}',
                "Check the name and the namespace (-n).",
            )
        pvcs[claim] = pvc
    snapshots: dict[str, JsonDict] = {}
    for name in needs.snapshots:
        snapshot = api.get_or_none(kinds.VOLUME_SNAPSHOT, name, namespace)
        if snapshot is None:
            raise NotFoundError(
                f'VolumeSnapshot "{name}" does not exist in namespace {namespace}',
                f"kubectl storage snapshot list -n {namespace} shows the snapshots there.",
            )
        snapshots[name] = snapshot
    _require_nodes(api, needs.nodes)
    require_permissions(api, command, namespace, needs)
    return ClusterFacts(
        namespace=namespace,
        assigns_uids=OPENSHIFT_UID_RANGE_ANNOTATION in annotations_of(ns_obj),
        pod_security=level,
        storage_classes=classes,
        default_storage_class=default,
        pvcs=pvcs,
        snapshots=snapshots,
    )


def _require_nodes(api: KubeApi, names: tuple[str, ...]) -> None:
    """Every named node exists. Without the right to read nodes the check is left to the
    scheduler (a node name is not worth refusing a run that may otherwise go ahead)."""
    for node in dict.fromkeys(n for n in names if n):
        try:
            found = api.get_or_none(kinds.NODE, node)
        except ForbiddenError:
            log.debug("cannot read node %s; the scheduler will say if it is missing", node)
            return
        if found is None:
            listed = sorted(name_of(n) for n in api.list(kinds.NODE))
            raise NotFoundError(
                f'node "{node}" does not exist',
                "Nodes: " + (", ".join(listed[:20]) or "none") + " (kubectl get nodes).",
            )


def _check_pod_security(namespace: str, level: str, needs: Requirements) -> None:
    if level not in POD_SECURITY_LEVELS:
        log.warning("namespace %s has an unknown Pod Security level %r", namespace, level)
        return
    if POD_SECURITY_LEVELS.index(level) >= POD_SECURITY_LEVELS.index(needs.pod_security):
        return
    raise ForbiddenError(
        f'namespace "{namespace}" enforces the "{level}" Pod Security level, which forbids '
        + (needs.pod_security_reason or f'pods that need the "{needs.pod_security}" level'),
        f"Run in a namespace that allows {needs.pod_security} pods (-n NAME), or label one: "
        f"kubectl label ns {namespace} pod-security.kubernetes.io/enforce={needs.pod_security}",
    )


def _the_default_class(listed: dict[str, JsonDict]) -> str:
    defaults = sorted(name for name, sc in listed.items() if is_default_storage_class(sc))
    if len(defaults) != 1:
        raise UsageError(
            "no StorageClass given and the cluster has "
            + ("no default class" if not defaults else f"{len(defaults)} default classes"),
            "Name one with -s (kubectl storage classes lists them).",
        )
    return defaults[0]


def require_snapshot_api(api: KubeApi) -> None:
    """Fail with the way to install them when the snapshot CRDs are absent.

    Raises:
        NotFoundError: snapshot.storage.k8s.io/v1 is not served.
    """
    try:
        served = api.request("GET", SNAPSHOT_API_PATH)
    except NotFoundError:
        served = {}
    names = {str(r.get("name")) for r in served.get("resources") or []}
    missing = SNAPSHOT_API_RESOURCES - names
    if missing:
        raise NotFoundError(
            "the VolumeSnapshot API (snapshot.storage.k8s.io/v1) is not installed in this "
            "cluster" + (f" (missing: {', '.join(sorted(missing))})" if names else ""),
            INSTALL_SNAPSHOT_API_HINT,
        )


def access_requests(
    command: str, namespace: str, needs: Requirements
) -> list[tuple[AccessRequest, str]]:
    """The SelfSubjectAccessReviews for one run, from the RBAC table, each with the reason the
    table gives for it."""
    requests = []
    for permission in checks_for(command, needs.conditions):
        for resource in permission.resources:
            name, _, subresource = resource.partition("/")
            for verb in permission.verbs:
                request = AccessRequest(
                    verb,
                    name,
                    group=permission.group,
                    namespace=None if permission.scope is Scope.CLUSTER else namespace,
                    subresource=subresource,
                )
                requests.append((request, permission.why))
    return requests


def require_permissions(api: KubeApi, command: str, namespace: str, needs: Requirements) -> None:
    """Raise one ForbiddenError naming every write the run needs and may not do."""
    pairs = access_requests(command, namespace, needs)
    requests = [request for request, _ in pairs]
    # One review per verb and resource; asked together, they cost one round trip of latency.
    with ThreadPoolExecutor(max_workers=min(8, max(1, len(requests)))) as pool:
        answers = list(pool.map(lambda r: can_i(api, r)[0], requests))
    refused = [pair for pair, allowed in zip(pairs, answers, strict=True) if not allowed]
    if refused:
        # A cluster-wide right is often one a namespace's user cannot get: say which step
        # needs it, so the user can leave that step out instead.
        steps = sorted({why for request, why in refused if request.namespace is None})
        raise ForbiddenError(
            f"not allowed to {needs.doing or command}: missing permission to "
            + ", ".join(_describe(request) for request, _ in refused),
            "Ask a cluster admin to grant them (`kubectl storage rbac "
            f"{command}` prints a Role that does), or use a context that has them (--context)."
            + (f" The cluster-wide one is needed to {'; '.join(steps)}." if steps else ""),
        )


def _describe(request: AccessRequest) -> str:
    sub = f"/{request.subresource}" if request.subresource else ""
    group = f".{request.group}" if request.group else ""
    where = f"in namespace {request.namespace}" if request.namespace else "(cluster-wide)"
    return f"{request.verb} {request.resource}{group}{sub} {where}"
