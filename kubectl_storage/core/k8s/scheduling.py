"""Where a pod may go and where a volume may be used, as the scheduler decides it: node
readiness, taints and selectors, a PersistentVolume's node affinity, and the scheduler's own
reason when it places a pod nowhere. Shared by the commands that move or place pods on purpose
(validate-persistence's moves, snapshot check's restore on another node). Pure: dicts in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubectl_storage.core.k8s.manifests import PodPlacement, Toleration
from kubectl_storage.core.k8s.objects import dig

# -- nodes ----------------------------------------------------------------------------------


def _tolerates(taint: Mapping[str, Any], tolerations: Sequence[Toleration]) -> bool:
    for toleration in tolerations:
        if toleration.key == "*":
            if toleration.effect is None or toleration.effect == taint.get("effect"):
                return True
            continue
        if toleration.key != taint.get("key"):
            continue
        if toleration.effect and toleration.effect != taint.get("effect"):
            continue
        if toleration.value is None or toleration.value == taint.get("value"):
            return True
    return False


def untolerated_taints(
    nodes: Iterable[Mapping[str, Any]], placement: PodPlacement
) -> dict[str, list[str]]:
    """For each node the placement's name and selector allow, the NoSchedule/NoExecute taints
    its tolerations do not tolerate (``key=value:Effect``); nodes with none are left out.

    The scheduler's own message can be stale: a pod first tried before its claim was bound
    says so until it is tried again, which may be minutes later."""
    found: dict[str, list[str]] = {}
    for node in nodes:
        name = str(dig(node, "metadata", "name"))
        labels = dig(node, "metadata", "labels") or {}
        if placement.node_name and name != placement.node_name:
            continue
        if any(labels.get(k) != v for k, v in placement.node_selector.items()):
            continue
        blocking = [
            f"{t.get('key')}" + (f"={t['value']}" if t.get("value") else "") + f":{t.get('effect')}"
            for t in dig(node, "spec", "taints") or []
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not _tolerates(t, placement.effective_tolerations)
        ]
        if blocking:
            found[name] = blocking
    return found


def schedulable_nodes(nodes: Iterable[Mapping[str, Any]], placement: PodPlacement) -> list[str]:
    """Names of the Ready, schedulable nodes a pod with this placement may land on (node,
    selector and taints)."""
    names = []
    for node in nodes:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        if spec.get("unschedulable") and not placement.node_name:  # a named node: cordon or not
            continue
        conditions = dig(node, "status", "conditions") or []
        if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
            continue
        labels = meta.get("labels") or {}
        if any(labels.get(k) != v for k, v in placement.node_selector.items()):
            continue
        blocking = [
            t
            for t in spec.get("taints") or []
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not _tolerates(t, placement.effective_tolerations)
        ]
        if blocking:
            continue
        if placement.node_name and meta.get("name") != placement.node_name:
            continue
        names.append(str(meta.get("name")))
    return sorted(names)


# -- where the volume may go ----------------------------------------------------------------


def _matches_expression(
    node: Mapping[str, Any], expression: Mapping[str, Any], field: bool
) -> bool:
    key = str(expression.get("key") or "")
    operator = expression.get("operator")
    values = [str(v) for v in expression.get("values") or []]
    if field:
        have: str | None = str(dig(node, "metadata", "name")) if key == "metadata.name" else None
    else:
        labels = dig(node, "metadata", "labels") or {}
        have = str(labels[key]) if key in labels else None
    if operator == "In":
        return have is not None and have in values
    if operator == "NotIn":
        return have is None or have not in values
    if operator == "Exists":
        return have is not None
    if operator == "DoesNotExist":
        return have is None
    if operator in ("Gt", "Lt") and have is not None and values:
        try:
            number, bound = int(have), int(values[0])
        except ValueError:
            return False
        return number > bound if operator == "Gt" else number < bound
    return False


def _matches_term(node: Mapping[str, Any], term: Mapping[str, Any]) -> bool:
    expressions = [(e, False) for e in term.get("matchExpressions") or []]
    expressions += [(e, True) for e in term.get("matchFields") or []]
    # A term without requirements matches nothing (the API's rule for node selector terms).
    return bool(expressions) and all(_matches_expression(node, e, f) for e, f in expressions)


def volume_nodes(pv: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]]) -> list[str] | None:
    """The nodes a PV's required node affinity admits; None when it has none (any node).

    A topology-pinned PV (a local disk, a zonal volume) admits only its own node or zone: the
    scheduler cannot put a pod that uses it anywhere else.
    """
    terms = dig(pv, "spec", "nodeAffinity", "required", "nodeSelectorTerms")
    if not terms:
        return None
    return sorted(
        str(dig(node, "metadata", "name"))
        for node in nodes
        if any(_matches_term(node, term) for term in terms)
    )


def describe_pinning(pv: Mapping[str, Any]) -> str:
    """The PV's node affinity in one line ("kubernetes.io/hostname In [node-a]")."""
    terms = dig(pv, "spec", "nodeAffinity", "required", "nodeSelectorTerms") or []
    parts = []
    for term in terms:
        for expression in [*(term.get("matchExpressions") or []), *(term.get("matchFields") or [])]:
            values = ", ".join(str(v) for v in expression.get("values") or [])
            parts.append(
                f"{expression.get('key')} {expression.get('operator')}"
                + (f" [{values}]" if values else "")
            )
    return " or ".join(parts) or "none"


def unschedulable_message(pod: Mapping[str, Any]) -> str | None:
    """The scheduler's reason when the pod cannot be placed (its PodScheduled condition)."""
    for condition in dig(pod, "status", "conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == "Unschedulable"
        ):
            message = str(condition.get("message") or "Unschedulable")
            # The first sentence says why; the rest is about preemption.
            return message.split(". ")[0].rstrip(".")
    return None
