"""`kubectl storage cleanup`: find what runs left behind, by label, and delete it on request."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from kubectl_storage.core.cleanup import (
    CleanupReport,
    Leftover,
    leftover_from_object,
    select_leftovers,
)
from kubectl_storage.core.k8s.kinds import RUN_CREATED_KINDS, ResourceKind
from kubectl_storage.core.k8s.labels import MANAGED_SELECTOR, run_selector
from kubectl_storage.errors import NotFoundError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import deletion_grace_s
from kubectl_storage.kube.waits import wait_all_gone

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CleanupRequest:
    """What to look for and whether to delete it."""

    namespace: str | None  # None: all namespaces
    run_id: str | None = None
    older_than_s: float | None = None
    delete: bool = False
    timeout_s: float = 120


def find_leftovers(api: KubeApi, request: CleanupRequest) -> list[tuple[ResourceKind, Leftover]]:
    """Every object with our managed-by label that matches the request."""
    selector = run_selector(request.run_id) if request.run_id else MANAGED_SELECTOR
    found: list[tuple[ResourceKind, Leftover]] = []
    now = datetime.now(UTC)
    for kind in RUN_CREATED_KINDS:
        try:
            objects = api.list(
                kind,
                request.namespace,
                label_selector=selector,
                all_namespaces=request.namespace is None,
            )
        except NotFoundError:
            continue  # e.g. the snapshot API is not installed
        items = [leftover_from_object(kind.kind, o) for o in objects]
        for item in select_leftovers(
            items, now=now, run_id=request.run_id, older_than_s=request.older_than_s
        ):
            found.append((kind, item))
    return found


def cleanup(api: KubeApi, request: CleanupRequest) -> CleanupReport:
    """List leftovers; with ``request.delete`` delete them and wait until they are gone."""
    found = find_leftovers(api, request)
    if not request.delete or not found:
        return CleanupReport(objects=tuple(item for _, item in found), deleted=False)
    log.info("deleting %d object(s)", len(found))
    for kind, item in found:
        api.delete(kind, item.name, item.namespace, grace_period_s=deletion_grace_s(kind))
    still = wait_all_gone(
        api,
        [(kind, item.name, item.namespace) for kind, item in found],
        timeout_s=request.timeout_s,
    )
    # Re-read: what holds an object now (its finalizers) is what the report names.
    remaining = [
        (key[0], leftover_from_object(key[0].kind, current)) for key, current in still.items()
    ]
    gone = {(k.kind, i.namespace, i.name) for k, i in found} - {
        (k.kind, i.namespace, i.name) for k, i in remaining
    }
    return CleanupReport(
        objects=tuple(
            replace(item, deleted=(kind.kind, item.namespace, item.name) in gone)
            for kind, item in found
        ),
        deleted=True,
        still_present=tuple(item for _, item in remaining),
    )
