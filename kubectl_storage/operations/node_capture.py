"""What node commands read besides the node itself: captures grouped by node, and the volumes,
claims and classes behind kubelet's mount paths. Shared by mount-audit and iscsi.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.nodes.kubelet_paths import VolumeContext, VolumeOwner, resolve_mountpoints
from kubectl_storage.errors import ClusterError, UsageError
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.operations.node_inspection import NodeOutput

log = logging.getLogger(__name__)

#: Where kubelets keep volumes: the default, k0s and MicroK8s.
KUBELET_ROOTS = (
    "/var/lib/kubelet",
    "/var/lib/k0s/kubelet",
    "/var/snap/microk8s/common/var/lib/kubelet",
)


# ---------------------------------------------------------------------------------------------
# Inputs: what one node gave us, from a debug pod or from files
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCapture:
    """The raw texts of one node, by kind (a live section name or a detected file format).

    Several files of one kind (two multipath captures, say) stay separate texts.
    """

    node: str
    texts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None
    inputs: tuple[str, ...] = ()

    def all(self, kind: str) -> tuple[str, ...]:
        """Every non-blank text of one kind."""
        return tuple(text for text in self.texts.get(kind, ()) if text.strip())

    def first(self, kind: str) -> str:
        """The first non-blank text of one kind, or ``""``."""
        texts = self.all(kind)
        return texts[0] if texts else ""

    @classmethod
    def from_output(cls, output: NodeOutput) -> NodeCapture:
        """A live node's sections, one text each."""
        return cls(
            node=output.node,
            texts={name: (text,) for name, text in output.sections.items()},
            error=output.error,
            inputs=tuple(output.sections),
        )


def read_capture_files(
    paths: Sequence[str | Path], node_name: str | None, classify: Callable[[Path, str], str]
) -> list[NodeCapture]:
    """Read ``--from-file`` inputs and group them by node.

    Args:
        paths: the files, in the order given.
        node_name: every file belongs to this node; without it each file names its own node.
        classify: ``classify(path, text) -> kind``, raising :class:`UsageError` for a file it
            cannot place.

    Raises:
        UsageError: a file cannot be read or its format is not recognised.
    """
    grouped: dict[str, dict[str, list[str]]] = {}
    inputs: dict[str, list[str]] = defaultdict(list)
    for raw_path in paths:
        path = Path(raw_path)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except IsADirectoryError as exc:
            raise UsageError(f"--from-file {path}: is a directory", "Give files.") from exc
        except OSError as exc:
            raise UsageError(f"--from-file {path}: cannot read it: {exc.strerror}", "") from exc
        kind = classify(path, text)
        node = node_name or path.name
        grouped.setdefault(node, {}).setdefault(kind, []).append(text)
        inputs[node].append(f"{path} ({kind})")
    return [
        NodeCapture(
            node=node,
            texts={kind: tuple(texts) for kind, texts in by_kind.items()},
            inputs=tuple(inputs[node]),
        )
        for node, by_kind in grouped.items()
    ]


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (for messages about unreadable output)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


# ---------------------------------------------------------------------------------------------
# The cluster side: volumes, claims and classes, read once
# ---------------------------------------------------------------------------------------------


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


def read_volume_objects(api: KubeApi) -> VolumeObjects:
    """Read what the mapping needs, once for all nodes; what cannot be read is left empty."""
    found: dict[str, tuple[JsonDict, ...]] = {}
    for name, kind, selector in (
        ("pods", kinds.POD, None),
        ("pvs", kinds.PV, None),
        ("pvcs", kinds.PVC, None),
        ("storage_classes", kinds.STORAGE_CLASS, None),
        ("events", kinds.EVENT, "reason=FailedMount"),
    ):
        try:
            found[name] = tuple(api.list(kind, all_namespaces=True, field_selector=selector))
        except ClusterError as exc:
            log.warning("cannot list %s (%s); volumes are mapped without them", name, exc.message)
            found[name] = ()
    return VolumeObjects(**found)
