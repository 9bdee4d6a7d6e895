"""Wait for an object to reach a state, by watching it, with a deadline that explains itself.

On timeout the error carries the object's status conditions and recent events, e.g. a PVC Pending
because no provisioner answers, or a pod unschedulable because of a taint.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from kubectl_storage.core.k8s.kinds import ResourceKind
from kubectl_storage.core.k8s.objects import JsonDict, deletion_waits_for_resync, dig
from kubectl_storage.errors import ClusterError, StorageToolError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.events import events_for

log = logging.getLogger(__name__)

#: Decides from the object whether the wait is over: True done, False keep waiting.
#: It may raise a StorageToolError to stop early (e.g. a pod that failed).
Predicate = Callable[[JsonDict], bool]


def wait_for(
    api: KubeApi,
    kind: ResourceKind,
    name: str,
    predicate: Predicate,
    *,
    namespace: str | None = None,
    timeout_s: float,
    what: str,
    hint: str = "",
    comes_back: bool = False,
) -> JsonDict:
    """Watch ``kind/name`` until ``predicate`` holds; raise WaitTimeoutError with context if not.

    An object that is deleted while it is waited for ends the wait at once (ClusterError),
    unless ``comes_back``: a StatefulSet's pod is deleted and made again under the same name."""
    deadline = time.monotonic() + timeout_s
    last: JsonDict | None = None
    seen = False
    while True:
        current = api.get_or_none(kind, name, namespace)
        if current is not None:
            last = current
            seen = True
            if predicate(current):
                return current
        elif seen and not comes_back:
            raise _deleted_error(kind, name, namespace, what)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        version = (current or {}).get("metadata", {}).get("resourceVersion")
        for event_type, obj in api.watch(
            kind,
            namespace,
            field_selector=f"metadata.name={name}",
            resource_version=version,
            timeout_s=max(1, min(int(remaining) + 1, 60)),
        ):
            if event_type == "DELETED":
                if not comes_back:
                    raise _deleted_error(kind, name, namespace, what)
                last = None
                break
            seen = True
            last = obj
            if predicate(obj):
                return obj
            if time.monotonic() >= deadline:
                break
    raise _timeout_error(api, kind, name, last, timeout_s, what, hint)


_IMAGE_PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")


def pod_running(role: str) -> Predicate:
    """A predicate for :func:`wait_for`: the pod runs; stop early when it never will.

    A pod that ended, or whose image cannot be pulled, raises ClusterError naming ``role``
    ("benchmark", "debug", …) instead of waiting for the timeout.
    """

    def predicate(pod: JsonDict) -> bool:
        status = pod.get("status") or {}
        phase = status.get("phase")
        if phase == "Running":
            return True
        if phase in ("Failed", "Succeeded"):
            raise ClusterError(
                f"the {role} pod ended ({phase}): {status.get('message') or 'no message'}",
                "Run with --keep and inspect the pod (kubectl describe pod).",
            )
        for cs in status.get("containerStatuses") or []:
            waiting = dig(cs, "state", "waiting") or {}
            if waiting.get("reason") in _IMAGE_PULL_FAILURES:
                reason = waiting.get("message") or waiting["reason"]
                raise ClusterError(
                    f"the {role} image cannot be pulled: {reason}",
                    "Mirror the image and pass --image (or --registry) for clusters without "
                    "internet access.",
                )
        return False

    return predicate


ObjectKey = tuple[ResourceKind, str, str | None]


def wait_all_gone(
    api: KubeApi,
    objects: Sequence[ObjectKey],
    *,
    timeout_s: float,
    first_poll_s: float = 0.05,
    longest_poll_s: float = 0.5,
) -> dict[ObjectKey, JsonDict]:
    """Wait until none of ``objects`` exists; those still there at the deadline, as last read
    (empty when all went).

    Polls from ``first_poll_s`` up to ``longest_poll_s``: most deletions finish well within a
    second. An object whose deletion waits for its controller's next resync is nudged every few
    seconds meanwhile (:func:`nudge`), so it goes in seconds instead of minutes."""
    deadline = time.monotonic() + timeout_s
    next_nudge = time.monotonic() + NUDGE_AFTER_S
    delay = first_poll_s
    remaining = list(dict.fromkeys(objects))
    while True:
        nudging = time.monotonic() >= next_nudge
        still: dict[ObjectKey, JsonDict] = {}
        for key in remaining:
            kind, name, namespace = key
            current = api.get_or_none(kind, name, namespace)
            if current is None:
                continue
            still[key] = current
            if nudging and deletion_waits_for_resync(current):
                nudge(api, kind, name, namespace)
        if nudging:
            next_nudge = time.monotonic() + NUDGE_AFTER_S
        remaining = list(still)
        left = deadline - time.monotonic()
        if not still or left <= 0:
            return still
        time.sleep(min(delay, left))
        delay = min(delay * 2, longest_poll_s)


#: How long a deletion may look stuck before the object is nudged (and again between nudges).
NUDGE_AFTER_S = 3.0
#: The annotation a nudge sets; its value is the time of the nudge.
NUDGE_ANNOTATION = "kubectl-storage/nudged-at"


def nudge(api: KubeApi, kind: ResourceKind, name: str, namespace: str | None) -> None:
    """Change an annotation of a terminating object, so its controller handles it again now.

    Only for objects of our own runs (the callers delete nothing else). A failure is logged: the
    object still goes at the controller's resync."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    log.info("%s %s is waiting for its controller; nudging it", kind.kind, name)
    try:
        api.patch_merge(
            kind, name, {"metadata": {"annotations": {NUDGE_ANNOTATION: stamp}}}, namespace
        )
    except StorageToolError as exc:
        log.debug("could not nudge %s %s: %s", kind.kind, name, exc)


def _deleted_error(kind: ResourceKind, name: str, namespace: str | None, what: str) -> ClusterError:
    where = f" in namespace {namespace}" if namespace else ""
    return ClusterError(
        f"{kind.kind} {name}{where} was deleted while waiting for it to be {what}",
        "Something else deleted it: an eviction, the namespace being deleted, another tool or "
        "a controller. `kubectl get events" + (f" -n {namespace}" if namespace else "") + "` "
        "may say which.",
    )


def _timeout_error(
    api: KubeApi,
    kind: ResourceKind,
    name: str,
    last: JsonDict | None,
    timeout_s: float,
    what: str,
    hint: str,
) -> StorageToolError:
    details: list[str] = []
    if last is not None:
        status = last.get("status") or {}
        if status.get("phase"):
            details.append(f"phase {status['phase']}")
        for condition in status.get("conditions") or []:
            if condition.get("status") != "True":
                reason = condition.get("reason") or ""
                message = condition.get("message") or ""
                details.append(f"{condition.get('type')}=False {reason} {message}".strip())
    state = f" ({'; '.join(details)})" if details else ""
    events = events_for(api, last) if last is not None else []
    return WaitTimeoutError(
        f"{kind.kind} {name} did not become {what} within {timeout_s:.0f}s{state}",
        hint or "Check the events below; raise --timeout if the cluster is only slow.",
        events,
    )
