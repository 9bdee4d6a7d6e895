"""Nodes for the moves (reschedule, node-drain): the cordon patch, and what the attach/detach
controller and the scheduler said in events. Where a pod or a volume may go is shared with other
commands (core/k8s/scheduling.py). Pure: dicts in, lines out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubectl_storage.core.k8s.objects import JsonDict, dig


def cordon_patch(unschedulable: bool) -> JsonDict:
    """Merge patch for a Node: cordon (True) or uncordon (False), as `kubectl cordon` does."""
    return {"spec": {"unschedulable": unschedulable}}


# -- what the cluster said about the move ---------------------------------------------------

#: Event reasons that tell the volume's side of a move (kubelet, attach/detach controller,
#: scheduler).
VOLUME_EVENT_REASONS = (
    "SuccessfulAttachVolume",
    "FailedAttachVolume",
    "SuccessfulDetachVolume",
    "FailedDetachVolume",
    "FailedMount",
    "FailedScheduling",
)


def volume_events(events: Iterable[Mapping[str, Any]], pod_uids: Iterable[str]) -> list[str]:
    """The volume's events of the given pods, oldest first: ``"Normal SuccessfulAttachVolume:
    AttachVolume.Attach succeeded for volume ..."``."""
    uids = set(pod_uids)
    chosen = [
        e
        for e in events
        if dig(e, "involvedObject", "uid") in uids and e.get("reason") in VOLUME_EVENT_REASONS
    ]
    chosen.sort(key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))
    lines: list[str] = []
    for event in chosen:
        count = int(event.get("count") or 1)
        line = (
            f"{event.get('type', '')} {event.get('reason', '')}: "
            f"{(event.get('message') or '').strip()}" + (f" (x{count})" if count > 1 else "")
        )
        if line not in lines:  # the scheduler repeats itself as the pod is retried
            lines.append(line)
    return lines
