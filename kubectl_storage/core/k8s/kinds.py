"""The Kubernetes kinds this tool reads or creates, and where they live in the REST API.

One table instead of a typed client per kind: creation, deletion and cleanup all walk it, so a kind
added here is also found by ``kubectl storage cleanup``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResourceKind:
    """A kind's REST coordinates."""

    kind: str
    api_version: str  # "v1" for the core group, else "group/version"
    plural: str
    namespaced: bool
    #: Whether our runs create objects of this kind (and cleanup must look for them).
    created_by_runs: bool = False

    @property
    def group(self) -> str:
        """API group, "" for the core group."""
        return self.api_version.rpartition("/")[0]

    def collection_path(self, namespace: str | None = None) -> str:
        """REST path of the collection, across namespaces when ``namespace`` is None."""
        base = f"/api/{self.api_version}" if not self.group else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        """REST path of one object."""
        return f"{self.collection_path(namespace)}/{name}"


POD = ResourceKind("Pod", "v1", "pods", namespaced=True, created_by_runs=True)
PVC = ResourceKind(
    "PersistentVolumeClaim", "v1", "persistentvolumeclaims", namespaced=True, created_by_runs=True
)
CONFIGMAP = ResourceKind("ConfigMap", "v1", "configmaps", namespaced=True, created_by_runs=True)
SECRET = ResourceKind("Secret", "v1", "secrets", namespaced=True, created_by_runs=True)
SERVICE = ResourceKind("Service", "v1", "services", namespaced=True, created_by_runs=True)
STATEFULSET = ResourceKind(
    "StatefulSet", "apps/v1", "statefulsets", namespaced=True, created_by_runs=True
)
DEPLOYMENT = ResourceKind(
    "Deployment", "apps/v1", "deployments", namespaced=True, created_by_runs=True
)
JOB = ResourceKind("Job", "batch/v1", "jobs", namespaced=True, created_by_runs=True)
VOLUME_SNAPSHOT = ResourceKind(
    "VolumeSnapshot",
    "snapshot.storage.k8s.io/v1",
    "volumesnapshots",
    namespaced=True,
    created_by_runs=True,
)
PV = ResourceKind("PersistentVolume", "v1", "persistentvolumes", namespaced=False)
NAMESPACE = ResourceKind("Namespace", "v1", "namespaces", namespaced=False)
NODE = ResourceKind("Node", "v1", "nodes", namespaced=False)
EVENT = ResourceKind("Event", "v1", "events", namespaced=True)
STORAGE_CLASS = ResourceKind("StorageClass", "storage.k8s.io/v1", "storageclasses", False)
CSI_DRIVER = ResourceKind("CSIDriver", "storage.k8s.io/v1", "csidrivers", False)
VOLUME_SNAPSHOT_CLASS = ResourceKind(
    "VolumeSnapshotClass", "snapshot.storage.k8s.io/v1", "volumesnapshotclasses", False
)
VOLUME_SNAPSHOT_CONTENT = ResourceKind(
    "VolumeSnapshotContent", "snapshot.storage.k8s.io/v1", "volumesnapshotcontents", False
)

ALL_KINDS = (
    POD,
    PVC,
    CONFIGMAP,
    SECRET,
    SERVICE,
    STATEFULSET,
    DEPLOYMENT,
    JOB,
    VOLUME_SNAPSHOT,
    PV,
    NAMESPACE,
    NODE,
    EVENT,
    STORAGE_CLASS,
    CSI_DRIVER,
    VOLUME_SNAPSHOT_CLASS,
    VOLUME_SNAPSHOT_CONTENT,
)

#: Kinds our runs create, in the order cleanup deletes them: workloads before the claims and
#: snapshots they hold, so nothing waits on a finalizer held by something we have not deleted yet.
RUN_CREATED_KINDS = (
    JOB,
    STATEFULSET,
    DEPLOYMENT,
    POD,
    SERVICE,
    VOLUME_SNAPSHOT,
    PVC,
    CONFIGMAP,
    SECRET,
)


def kind_for(api_version: str, kind: str) -> ResourceKind:
    """Look up a kind by apiVersion and kind.

    Raises:
        KeyError: when the kind is not one this tool knows.
    """
    for candidate in ALL_KINDS:
        if candidate.api_version == api_version and candidate.kind == kind:
            return candidate
    raise KeyError(f"{api_version} {kind}")
