"""Recent events of an object, the first thing to show when a wait fails."""

from __future__ import annotations

from kubectl_storage.core.k8s.kinds import EVENT
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.kube.api import KubeApi


def events_for(api: KubeApi, obj: JsonDict, limit: int = 10) -> list[str]:
    """The object's latest events as one line each, oldest first ("Warning FailedMount: ...")."""
    meta = obj.get("metadata") or {}
    name, namespace = meta.get("name"), meta.get("namespace")
    if not name:
        return []
    selector = f"involvedObject.name={name}"
    if obj.get("kind"):
        selector += f",involvedObject.kind={obj['kind']}"
    try:
        events = api.list(EVENT, namespace or "default", field_selector=selector)
    except Exception:  # noqa: BLE001 - events are a courtesy; never hide the real error
        return []
    events.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    lines = []
    for event in events[-limit:]:
        count = event.get("count") or 1
        times = f" (x{count})" if count > 1 else ""
        lines.append(
            f"{event.get('type', '')} {event.get('reason', '')}: "
            f"{(event.get('message') or '').strip()}{times}"
        )
    return lines
