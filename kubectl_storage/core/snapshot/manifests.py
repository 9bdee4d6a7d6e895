"""Manifests for the snapshot API: a VolumeSnapshot of a PVC, and a PVC's ``dataSource``.

Separate so the API group and the object shapes the commands create are written once.
"""

from __future__ import annotations

from typing import Any

SNAPSHOT_API_GROUP = "snapshot.storage.k8s.io"


def build_volume_snapshot(
    name: str, namespace: str, *, pvc_name: str, snapshot_class: str
) -> dict[str, Any]:
    """A VolumeSnapshot of a PVC with an explicit class."""
    return {
        "apiVersion": f"{SNAPSHOT_API_GROUP}/v1",
        "kind": "VolumeSnapshot",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "volumeSnapshotClassName": snapshot_class,
            "source": {"persistentVolumeClaimName": pvc_name},
        },
    }


def snapshot_data_source(snapshot_name: str) -> dict[str, Any]:
    """A PVC ``dataSource`` that restores ``snapshot_name``."""
    return {"apiGroup": SNAPSHOT_API_GROUP, "kind": "VolumeSnapshot", "name": snapshot_name}
