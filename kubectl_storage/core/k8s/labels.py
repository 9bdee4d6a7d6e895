"""Labels that mark what a run created, and run ids.

Every object a run creates carries all three labels, so ``cleanup`` can find leftovers by label and
nothing a user owns is ever touched.
"""

from __future__ import annotations

import copy
import re
import secrets
from collections.abc import Mapping
from typing import Any

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "kubectl-storage"
RUN_ID = "kubectl-storage/run-id"
COMMAND = "kubectl-storage/command"
#: Selector matching everything any run of ours created.
MANAGED_SELECTOR = f"{MANAGED_BY}={MANAGED_BY_VALUE}"


def new_run_id() -> str:
    """A short random id, valid in labels and object names (lowercase letters and digits)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


def run_labels(run_id: str, command: str) -> dict[str, str]:
    """The labels every object of one run carries."""
    return {MANAGED_BY: MANAGED_BY_VALUE, RUN_ID: run_id, COMMAND: command}


def run_selector(run_id: str) -> str:
    """Label selector for the objects of one run."""
    return f"{MANAGED_SELECTOR},{RUN_ID}={run_id}"


def object_name(command: str, run_id: str, suffix: str = "") -> str:
    """Name for an object a run creates: ``ks-<command>-<run id>[-<suffix>]``, DNS-1123 safe."""
    parts = ["ks", command, run_id] + ([suffix] if suffix else [])
    name = "-".join(parts).lower()
    name = re.sub(r"[^a-z0-9-]", "-", name)
    return name[:63].rstrip("-")


def with_run_labels(manifest: Mapping[str, Any], run_id: str, command: str) -> dict[str, Any]:
    """A copy of ``manifest`` carrying the run's labels, also on pod and claim templates.

    Plans are labelled when they are built, so ``--dry-run`` prints the labels the live objects
    get and ``--dry-run | kubectl apply -f -`` creates objects ``cleanup`` can find.
    """
    labels = run_labels(run_id, command)
    labelled = copy.deepcopy(dict(manifest))
    _add(labelled.setdefault("metadata", {}), labels)
    spec = labelled.get("spec") or {}
    template = spec.get("template")
    if isinstance(template, dict):
        _add(template.setdefault("metadata", {}), labels)
    for claim in spec.get("volumeClaimTemplates") or []:
        _add(claim.setdefault("metadata", {}), labels)
    return labelled


def _add(meta: dict[str, Any], labels: Mapping[str, str]) -> None:
    meta.setdefault("labels", {}).update(labels)
