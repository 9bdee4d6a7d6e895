"""Ask the cluster before acting: may we do this (RBAC), and will this namespace admit the pod?"""

from __future__ import annotations

from dataclasses import dataclass

from kubectl_storage.core.k8s.kinds import NAMESPACE
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.errors import ForbiddenError, NotFoundError
from kubectl_storage.kube.api import KubeApi

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"


@dataclass(frozen=True)
class AccessRequest:
    """One verb on one resource, as SelfSubjectAccessReview takes it."""

    verb: str
    resource: str
    group: str = ""
    namespace: str | None = None
    subresource: str = ""


def can_i(api: KubeApi, request: AccessRequest) -> tuple[bool, str]:
    """Whether the current user may do ``request`` (the reason when the server gives one)."""
    attributes = {"verb": request.verb, "resource": request.resource, "group": request.group}
    if request.namespace:
        attributes["namespace"] = request.namespace
    if request.subresource:
        attributes["subresource"] = request.subresource
    review = api.request(
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        body={
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        },
    )
    status = review.get("status") or {}
    return bool(status.get("allowed")), str(status.get("reason") or "")


def require_access(api: KubeApi, requests: list[AccessRequest], doing: str) -> None:
    """Raise one ForbiddenError listing every permission that is missing."""
    missing = []
    for request in requests:
        allowed, _ = can_i(api, request)
        if not allowed:
            where = f" in namespace {request.namespace}" if request.namespace else ""
            sub = f"/{request.subresource}" if request.subresource else ""
            missing.append(f"{request.verb} {request.resource}{sub}{where}")
    if missing:
        raise ForbiddenError(
            f"not allowed to {doing}: missing permission to " + ", ".join(missing),
            "Ask a cluster admin to grant them (`kubectl storage rbac` prints a Role that does), "
            "or use a context that has them (--context).",
        )


def pod_security_level(api: KubeApi, namespace: str) -> str:
    """The Pod Security level enforced on ``namespace`` ("privileged" when unlabelled).

    Raises:
        NotFoundError: when the namespace does not exist.
    """
    ns = api.get_or_none(NAMESPACE, namespace)
    if ns is None:
        raise NotFoundError(
            f'namespace "{namespace}" does not exist',
            "Create it (kubectl create namespace NAME) or choose another with -n.",
        )
    labels = dig(ns, "metadata", "labels") or {}
    # Without a label the cluster-wide default applies; on most clusters that is privileged.
    return str(labels.get(ENFORCE_LABEL, "privileged"))
