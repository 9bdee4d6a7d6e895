"""`snapshot check --restore-node` in the cluster: is there another node for the reader, and
where did the restore end up. The verdict is pure (core/snapshot/restore_node.py)."""

from __future__ import annotations

import logging
from dataclasses import replace

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.k8s.scheduling import schedulable_nodes
from kubectl_storage.core.snapshot.restore_node import OTHER, RestorePlacement, node_local_reason
from kubectl_storage.errors import ClusterError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.operations.snapshot.common import PodSettings

log = logging.getLogger(__name__)


def restore_where(restore_node: str, source_node: str) -> str:
    """How progress names the restore's node."""
    return f"a node other than {source_node}" if restore_node == OTHER else f"node {restore_node}"


def require_another_node(api: KubeApi, pods: PodSettings, source_node: str) -> None:
    """Fail early (exit 2) when no node but the source's may run the reader.

    Skipped when nodes may not be listed (RBAC): the scheduler then says it, at the timeout."""
    try:
        nodes = api.list(kinds.NODE)
    except ClusterError as exc:
        log.debug("cannot list nodes (%s); leaving the choice to the scheduler", exc.message)
        return
    others = [
        n
        for n in schedulable_nodes(nodes, replace(pods.placement, node_name=None))
        if n != source_node
    ]
    if not others:
        raise ClusterError(
            f"--restore-node {OTHER}: no Ready, schedulable node other than {source_node} "
            "(the source's) fits the pods' --node-selector and tolerations.",
            "Run on a cluster with a second node, or widen --node-selector/--toleration.",
        )


def judge_placement(
    api: KubeApi, restore_node: str, source_node: str, reader_pod: JsonDict, pvc: str, ns: str
) -> RestorePlacement:
    """Where the restore ended up, and whether its volume refused to go there."""
    claim = api.get_or_none(kinds.PVC, pvc, ns)
    volume = str(dig(claim, "spec", "volumeName") or "")
    pv = api.get_or_none(kinds.PV, volume, None) if volume else None
    reason = node_local_reason(reader_pod, pv)
    return RestorePlacement(
        requested=restore_node,
        source_node=source_node,
        restore_node=None if reason else str(dig(reader_pod, "spec", "nodeName") or "") or None,
        node_local=reason,
    )
