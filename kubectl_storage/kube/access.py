"""Ask the cluster before acting: may we do this (a SelfSubjectAccessReview per verb).

The namespace's Pod Security level is read by preflight (``ENFORCE_LABEL``), with the namespace
it reads anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

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
