"""`kubectl storage snapshot list`: VolumeSnapshots with their content, class, driver,
readiness and size, and whether the source PVC still exists."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.snapshot.snapshot_list import SnapshotList, build_snapshot_list
from kubectl_storage.errors import (
    ForbiddenError,
)
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.operations.preflight import require_snapshot_api

log = logging.getLogger(__name__)


def list_snapshots(
    api: KubeApi,
    namespace: str | None,
    *,
    all_namespaces: bool = False,
    now: datetime | None = None,
) -> SnapshotList:
    """Read VolumeSnapshots (one namespace or all) with their contents, classes and PVCs."""
    require_snapshot_api(api)
    ns = None if all_namespaces else (namespace or api.namespace)
    snapshots = api.list(kinds.VOLUME_SNAPSHOT, ns, all_namespaces=all_namespaces)
    contents: list[JsonDict] = []
    classes: list[JsonDict] = []
    pvcs: list[JsonDict] | None = None
    if snapshots:
        # Details only: a user who may list snapshots but not cluster-scoped contents still
        # gets the list, with fewer columns filled.
        try:
            contents = api.list(kinds.VOLUME_SNAPSHOT_CONTENT)
        except ForbiddenError:
            log.info("not allowed to list VolumeSnapshotContents; drivers may be missing")
        try:
            classes = api.list(kinds.VOLUME_SNAPSHOT_CLASS)
        except ForbiddenError:
            log.debug("not allowed to list VolumeSnapshotClasses")
        try:
            pvcs = api.list(kinds.PVC, ns, all_namespaces=all_namespaces)
        except ForbiddenError:
            log.debug("not allowed to list PVCs; source PVC presence unknown")
    return build_snapshot_list(
        snapshots,
        contents,
        classes,
        now=now or datetime.now(UTC),
        namespace=ns,
        pvcs=pvcs,
    )
