"""The pods, PVs, PVCs and StorageClasses behind kubelet's mount paths (read once per run by
operations, or from ``kubectl get -o json|yaml`` captures) and what the node commands ask of
them: the owner of a mount point, the NFS rules' view of a volume."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.nodes.volume_owners import VolumeContext, VolumeOwner, resolve_mountpoints

KUBELET_ROOTS = (
    "/var/lib/kubelet",
    "/var/lib/k0s/kubelet",
    "/var/snap/microk8s/common/var/lib/kubelet",
)


@dataclass(frozen=True)
class VolumeObjects:
    """Pods, PVs, PVCs, StorageClasses and FailedMount events, as ``kubectl get -o json`` items."""

    pods: tuple[JsonDict, ...] = ()
    pvs: tuple[JsonDict, ...] = ()
    pvcs: tuple[JsonDict, ...] = ()
    storage_classes: tuple[JsonDict, ...] = ()
    events: tuple[JsonDict, ...] = ()

    def resolve(
        self, mountpoints: Iterable[str], node: str | None = None
    ) -> dict[str, VolumeOwner]:
        """Kubelet mount points mapped to the objects behind them.

        With ``node``, the join first uses only the node's pods and their claims and volumes
        (a large cluster has many PVs, and staging paths are matched by hashing each PV's
        handle); what stays unowned is looked up again in everything.
        """
        points = list(mountpoints)
        if node is None:
            return self._resolve(points, self)
        owners = self._resolve(points, self._on_node(node))
        orphans = [mp for mp, owner in owners.items() if not owner.pv_name and not owner.pod_name]
        if orphans:
            owners.update(self._resolve(orphans, self))
        return owners

    @staticmethod
    def _resolve(mountpoints: Iterable[str], objects: VolumeObjects) -> dict[str, VolumeOwner]:
        return resolve_mountpoints(
            mountpoints,
            pods=objects.pods,
            pvs=objects.pvs,
            pvcs=objects.pvcs,
            storage_classes=objects.storage_classes,
            kubelet_root=KUBELET_ROOTS,
        )

    def _on_node(self, node: str) -> VolumeObjects:
        pods = tuple(p for p in self.pods if dig(p, "spec", "nodeName") == node)
        claims = {
            (dig(p, "metadata", "namespace"), dig(v, "persistentVolumeClaim", "claimName"))
            for p in pods
            for v in dig(p, "spec", "volumes") or []
        }
        pvcs = tuple(
            c
            for c in self.pvcs
            if (dig(c, "metadata", "namespace"), dig(c, "metadata", "name")) in claims
        )
        volumes = {dig(c, "spec", "volumeName") for c in pvcs}
        pvs = tuple(v for v in self.pvs if dig(v, "metadata", "name") in volumes)
        return VolumeObjects(pods, pvs, pvcs, self.storage_classes)

    def volume_context(self, owner: VolumeOwner) -> VolumeContext:
        """The NFS rules' view of one volume: requested options, RW node count, mount errors."""
        usage = self._usage
        pv = owner.pv_name
        if pv is None or not self.pods:
            return owner.volume_context()
        messages = tuple(
            message for uid in usage.pod_uids.get(pv, ()) for message in usage.events.get(uid, ())
        )
        return owner.volume_context(
            rw_node_count=len(usage.rw_nodes.get(pv, ())), mount_events=messages
        )

    @cached_property
    def _usage(self) -> _Usage:
        return _Usage.build(self)


@dataclass
class _Usage:
    """Which nodes mount each PV read-write, and the pods (and their mount errors) using it."""

    rw_nodes: dict[str, set[str]]
    pod_uids: dict[str, list[str]]
    events: dict[str, list[str]]

    @classmethod
    def build(cls, objects: VolumeObjects) -> _Usage:
        claims = {
            (dig(pvc, "metadata", "namespace"), dig(pvc, "metadata", "name")): dig(
                pvc, "spec", "volumeName"
            )
            for pvc in objects.pvcs
        }
        rw_nodes: dict[str, set[str]] = defaultdict(set)
        pod_uids: dict[str, list[str]] = defaultdict(list)
        for pod in objects.pods:
            if dig(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue
            namespace = dig(pod, "metadata", "namespace")
            for volume in dig(pod, "spec", "volumes") or []:
                claim = volume.get("persistentVolumeClaim") or {}
                pv = claims.get((namespace, claim.get("claimName")))
                if not pv:
                    continue
                pod_uids[pv].append(dig(pod, "metadata", "uid"))
                node = dig(pod, "spec", "nodeName")
                if node and not claim.get("readOnly"):
                    rw_nodes[pv].add(node)
        events: dict[str, list[str]] = defaultdict(list)
        for event in objects.events:
            uid = dig(event, "involvedObject", "uid")
            if uid and event.get("message"):
                events[uid].append(str(event["message"]))
        return cls(dict(rw_nodes), dict(pod_uids), dict(events))
