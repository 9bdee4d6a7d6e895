"""`snapshot check --restore-node`: read the restore on a different node than the source.

A driver whose snapshots live on the node that took them (local volumes, some LVM and ZFS
drivers) restores fine on that node and nowhere else; a check that reads the restore where the
source ran cannot tell. With ``--restore-node NODE`` the writer avoids NODE and the reader must
run on it; with ``--restore-node other`` the reader must run on any node but the writer's.

Pure: pod affinities to write into our manifests, and the verdict drawn from the pods and the
restored PersistentVolume as the API returns them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.k8s.scheduling import describe_pinning, unschedulable_message

#: ``--restore-node other``: any node except the source's.
OTHER = "other"

#: What the scheduler says when a pod's volume may not be used on any node it could go to
#: (kube-scheduler's VolumeBinding and VolumeRestrictions plugins, as worded since 1.20).
_VOLUME_TOPOLOGY_MESSAGES = (
    "volume node affinity conflict",
    "didn't match PersistentVolume's node affinity",
    "didn't find available persistent volumes to bind",
)


def _node_name_term(operator: str, node: str) -> dict[str, Any]:
    """A nodeAffinity that requires (In) or forbids (NotIn) one node, by its name."""
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": operator, "values": [node]}]}
            ]
        }
    }


def writer_affinity(restore_node: str | None) -> dict[str, Any] | None:
    """The writer's nodeAffinity: away from a named restore node, so the two differ."""
    if restore_node is None or restore_node == OTHER:
        return None
    return {"nodeAffinity": _node_name_term("NotIn", restore_node)}


def reader_affinity(restore_node: str, source_node: str) -> dict[str, Any]:
    """The reader's nodeAffinity: on the named node, or on any node but the source's.

    Through the scheduler (not ``nodeName``), so a restored volume that may not be used there
    shows as the scheduler's own "volume node affinity conflict" instead of a kubelet error."""
    if restore_node == OTHER:
        return {"nodeAffinity": _node_name_term("NotIn", source_node)}
    return {"nodeAffinity": _node_name_term("In", restore_node)}


def volume_topology_refusal(pod: Mapping[str, Any]) -> str | None:
    """The scheduler's reason when it places the pod nowhere because of its volume's topology;
    None while it may still be scheduled, or when the reason is something else (taints, CPU)."""
    message = unschedulable_message(pod)
    if message and any(text in message for text in _VOLUME_TOPOLOGY_MESSAGES):
        return message
    return None


@dataclass(frozen=True)
class RestorePlacement:
    """Where the source and the restore were read, and whether the restore could go elsewhere."""

    requested: str  # a node name, or OTHER
    source_node: str
    restore_node: str | None = None  # None: the reader never ran
    #: Why the restore cannot be used on another node, when it cannot.
    node_local: str | None = None

    @property
    def problems(self) -> list[str]:
        """The placement's reasons to fail the check."""
        if self.node_local:
            return [
                f"the snapshot cannot be used on another node than {self.source_node}: "
                f"{self.node_local}"
            ]
        if self.restore_node is not None and self.restore_node == self.source_node:
            return [f"the restore was read on the source's own node {self.source_node}"]
        return []

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "requested": self.requested,
            "sourceNode": self.source_node,
            "restoreNode": self.restore_node,
            "nodeLocal": self.node_local is not None,
            **({"reason": self.node_local} if self.node_local else {}),
        }


def node_local_reason(pod: Mapping[str, Any], restored_pv: Mapping[str, Any] | None) -> str | None:
    """Why the reader cannot run away from the source, from its pod and the restored PV."""
    refusal = volume_topology_refusal(pod)
    if refusal is None:
        return None
    if restored_pv and dig(restored_pv, "spec", "nodeAffinity", "required"):
        return (
            f"the restored volume {dig(restored_pv, 'metadata', 'name')} may be used only where "
            f"{describe_pinning(restored_pv)} (its PersistentVolume's node affinity); the "
            f"scheduler says: {refusal}"
        )
    return f"the scheduler says: {refusal}"
