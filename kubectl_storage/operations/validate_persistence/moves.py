"""The moves: `reschedule` (the pod deleted) and `node-drain` (the pod evicted, as `kubectl drain`
does), each with its node cordoned so the StatefulSet's new pod must land on another node.

The cordon is the one change a run makes to an object it did not create. It is registered with
the run scope before the node is patched, so the node is uncordoned when the move is over, and
also when the run ends any other way (an error, a timeout, Ctrl-C, SIGTERM, --keep). A node that
was already cordoned is left exactly as it was.

Before moving, the PV's node affinity is read. A topology-pinned volume (a local disk) that no
other schedulable node can attach cannot follow the pod: the move is still made, as a drill, and
shows what happens: the new pod stays Pending (the scheduler's own message is reported) until
the node is uncordoned, then runs on the same node again and the rows are read back there. The
phase fails with ``cannot_follow``: that is the finding.
"""

from __future__ import annotations

import time
from dataclasses import replace

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.k8s.scheduling import (
    describe_pinning,
    unschedulable_message,
    volume_nodes,
)
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import Disruption, VolumeType, pvc_name_for
from kubectl_storage.core.validate_persistence.nodes import cordon_patch, volume_events
from kubectl_storage.core.validate_persistence.report import PhaseResult
from kubectl_storage.errors import ForbiddenError, NotFoundError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import wait_for
from kubectl_storage.operations.validate_persistence.phases import State, verify
from kubectl_storage.operations.validate_persistence.pod import MysqlPod, uid_of


def evict(api: KubeApi, name: str, namespace: str) -> None:
    """Ask the Eviction API to evict the pod (what `kubectl drain` does for each pod)."""
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    api.request("POST", kinds.POD.object_path(name, namespace) + "/eviction", body=body)


def _volume(pod: MysqlPod) -> JsonDict | None:
    """The PV behind the run's claim (None for the emptyDir control, or when it cannot be read)."""
    if pod.request.volume_type is not VolumeType.PVC:
        return None
    try:
        claim = pod.api.get(kinds.PVC, pvc_name_for(pod.deployment.name), pod.ns)
        volume = dig(claim, "spec", "volumeName")
        return pod.api.get(kinds.PV, str(volume)) if volume else None
    except (ForbiddenError, NotFoundError):
        return None  # cannot tell up front; the move itself will show it


def _pinned(pod: MysqlPod, pv: JsonDict | None, others: list[str]) -> str:
    """Why the volume cannot follow the pod to any of ``others`` ('' when it can, or unknown)."""
    if pv is None:
        return ""
    try:
        nodes = pod.api.list(kinds.NODE)
    except ForbiddenError:
        return ""
    allowed = volume_nodes(pv, nodes)
    if allowed is None or set(allowed) & set(others):
        return ""
    return (
        f"the data cannot follow the pod: PersistentVolume {dig(pv, 'metadata', 'name')} is "
        f"pinned to {', '.join(allowed) or 'no node'} ({describe_pinning(pv)})"
    )


def _attach_required(api: KubeApi, pv: JsonDict | None) -> bool | None:
    """Whether the volume's CSI driver attaches volumes to nodes (None: not a CSI volume, or
    unknown). Kubernetes' default for a CSIDriver without the field is true."""
    driver = dig(pv or {}, "spec", "csi", "driver")
    if not driver:
        return None
    try:
        csi_driver = api.get_or_none(kinds.CSI_DRIVER, str(driver))
    except ForbiddenError:
        return None
    if csi_driver is None:
        return True  # no CSIDriver object: the attach/detach controller attaches
    return bool(dig(csi_driver, "spec", "attachRequired") is not False)


def move(
    pod: MysqlPod,
    scope: RunScope,
    disruption: Disruption,
    state: State,
    nodes: tuple[str, ...],
) -> PhaseResult:
    """Cordon the pod's node, delete or evict the pod, wait until it runs on another node and
    MySQL answers, uncordon, read everything back. With a pinned volume: see the module."""
    name = disruption.value
    current = pod.get_pod() or {}
    uid, node = uid_of(current), dig(current, "spec", "nodeName")
    others = [n for n in nodes if n != node]
    if not node or not others:
        return PhaseResult(name, Verdict.SKIPPED, note="no other schedulable node for the pod")
    pv = _volume(pod)
    pinned = _pinned(pod, pv, others)
    if pinned:
        pod.step(f"{name}: {pinned}; moving it anyway to show what happens")
    api = pod.api
    was_cordoned = bool(dig(api.get(kinds.NODE, node), "spec", "unschedulable"))
    uncordon = None
    if not was_cordoned:

        def undo() -> None:
            api.patch_merge(kinds.NODE, node, cordon_patch(False))

        # Registered before the patch: an interruption during the request still uncordons.
        uncordon = scope.defer(f"uncordon node {node}", undo)
        pod.step(f"{name}: cordoning node {node} for the move")
        api.patch_merge(kinds.NODE, node, cordon_patch(True))
    scheduler_said = ""
    try:
        started = time.monotonic()
        if disruption is Disruption.NODE_DRAIN:
            pod.step(f"{name}: evicting pod {pod.pod} from node {node}")
            evict(api, pod.pod, pod.ns)
        else:
            pod.step(f"{name}: deleting pod {pod.pod} on node {node}")
            api.delete(kinds.POD, pod.pod, pod.ns)
        if pinned:
            scheduler_said = _wait_unschedulable(pod, uid, node)
            pod.step(f"{name}: the new pod cannot be scheduled: {scheduler_said}")
            if uncordon is not None:
                uncordon()
                uncordon = None
                pod.step(f"{name}: node {node} uncordoned; waiting for the pod to return there")
            moved = pod.wait_pod(lambda p: uid_of(p) != uid, f"Running again on {node}")
        else:
            moved = pod.wait_pod(
                lambda p: uid_of(p) != uid and dig(p, "spec", "nodeName") not in (None, node),
                f"Running on a node other than {node}",
            )
        running_s = time.monotonic() - started
        after = dig(moved, "spec", "nodeName")
        if pinned and after != node:
            pinned = ""  # the scheduler found a node the affinity admits after all
        pod.step(f"{name}: pod running on node {after} after {running_s:.1f}s")
        ready_s = pod.wait_answering(started)
    finally:
        if uncordon is not None:
            uncordon()
            pod.step(f"{name}: node {node} uncordoned")
    # The new pod's events: its scheduling, attach and mount (a Multi-Attach error while the
    # old node still holds the volume is reported there too).
    events = _volume_events(api, pod, (uid_of(moved),))
    pod.step(f"{name}: MySQL answers on node {after} after {ready_s:.1f}s; reading back")
    how = "evicted" if disruption is Disruption.NODE_DRAIN else "deleted"
    if pinned:
        note = (
            f"{pinned}; pod {how} with {node} cordoned: it stayed Pending ({scheduler_said}) "
            f"until {node} was uncordoned, then ran there again"
        )
    else:
        note = f"pod {how} with {node} cordoned; running on {after} after {running_s:.1f}s"
    phase = verify(
        pod,
        name,
        state,
        ready_s,
        node_before=node,
        note=note,
        time_to_running_s=running_s,
        volume_events=events,
        attach_required=_attach_required(api, pv),
    )
    if pinned:
        return replace(phase, verdict=Verdict.FAIL, cannot_follow=True)
    return phase


def _wait_unschedulable(pod: MysqlPod, uid: str | None, node: str) -> str:
    """Wait until the scheduler says why the new pod cannot go anywhere; its message."""

    def said(p: JsonDict) -> bool:
        if uid_of(p) == uid:
            return False
        if dig(p, "spec", "nodeName") not in (None, node):
            # The PV's affinity said otherwise; the move happened after all.
            return True
        return unschedulable_message(p) is not None

    current = wait_for(
        pod.api,
        kinds.POD,
        pod.pod,
        said,
        namespace=pod.ns,
        timeout_s=pod.request.timeout_s,
        what=f"the scheduler's answer for the new pod (its volume is pinned to {node})",
        comes_back=True,  # the old pod goes, the StatefulSet's new one has the same name
    )
    return unschedulable_message(current) or f"scheduled on {dig(current, 'spec', 'nodeName')}"


def _volume_events(api: KubeApi, pod: MysqlPod, uids: tuple[str | None, ...]) -> tuple[str, ...]:
    try:
        events: list[JsonDict] = api.list(
            kinds.EVENT, pod.ns, field_selector=f"involvedObject.name={pod.pod}"
        )
    except ForbiddenError:
        return ()
    return tuple(volume_events(events, [u for u in uids if u]))
