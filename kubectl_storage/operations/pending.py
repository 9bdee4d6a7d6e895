"""Why a pod of ours is still Pending when the wait for it runs out: one diagnosis for every
command that waits for a pod on a fresh volume (fio, snapshot, validate-persistence)."""

from __future__ import annotations

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.manifests import PodPlacement
from kubectl_storage.core.k8s.scheduling import untolerated_taints
from kubectl_storage.errors import ClusterError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.events import events_for


def pending_hint(namespace: str, pvc: str, storage_class: str | None = None) -> str:
    """What to look at when the pod stays Pending: its claim first, then the nodes."""
    look = f"kubectl describe pvc {pvc} -n {namespace}"
    if storage_class:
        look += f"; kubectl describe storageclass {storage_class}"
    return (
        f"If PVC {pvc} stays Pending, its events say why ({look}): no provisioner running, a "
        "restore the driver refused, quota. If the pod is Pending, check node taints "
        "(--toleration), --node-selector and resources; raise --timeout if the cluster is only "
        "slow."
    )


def explain_pending(
    api: KubeApi,
    exc: WaitTimeoutError,
    *,
    namespace: str,
    pvc: str | None,
    placement: PodPlacement | None,
) -> WaitTimeoutError:
    """The timeout with what holds the pod: the claim's events, and the taints that keep it
    off every node it may go to (said by us from the nodes, since the scheduler's last message
    may be an older reason, such as a claim not yet bound when the pod was first tried)."""
    events = list(exc.events)
    if pvc:
        claim = api.get_or_none(kinds.PVC, pvc, namespace)
        events += [f"PVC {pvc}: {line}" for line in events_for(api, claim)] if claim else []
    message, hint = exc.message, exc.hint
    taints = _taints_everywhere(api, placement) if placement is not None else ""
    if taints:
        message = f"{message}; every node it may go to has an untolerated taint ({taints})"
        hint = (
            "Pass --toleration KEY[=VALUE][:EFFECT] for the taint, or choose other nodes with "
            "--node or --node-selector."
        )
    return WaitTimeoutError(message, hint, events)


def _taints_everywhere(api: KubeApi, placement: PodPlacement) -> str:
    """The untolerated taints, when every node the placement allows has one; else ""."""
    try:
        nodes = api.list(kinds.NODE)
    except ClusterError:
        return ""  # nodes that cannot be read: nothing to add
    taints = untolerated_taints(nodes, placement)
    allowed = [
        n
        for n in nodes
        if (not placement.node_name or n["metadata"]["name"] == placement.node_name)
        and all(
            (n["metadata"].get("labels") or {}).get(k) == v
            for k, v in placement.node_selector.items()
        )
    ]
    if not taints or len(taints) < len(allowed):
        return ""  # some node the pod may go to has no untolerated taint: not the reason
    return "; ".join(f"{node}: {', '.join(t)}" for node, t in sorted(taints.items()))
