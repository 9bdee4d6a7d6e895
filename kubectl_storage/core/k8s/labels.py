"""Labels that mark what a run created, and run ids.

Every object a run creates carries all three labels, so ``cleanup`` can find leftovers by label and
nothing a user owns is ever touched.
"""

from __future__ import annotations

import re
import secrets

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "kubectl-storage"
RUN_ID = "kubectl-storage/run-id"
COMMAND = "kubectl-storage/command"
#: Selector matching everything any run of ours created.
MANAGED_SELECTOR = f"{MANAGED_BY}={MANAGED_BY_VALUE}"

_RUN_ID_PATTERN = re.compile(r"^[a-z0-9]{4,16}$")


def new_run_id() -> str:
    """A short random id, valid in labels and object names (lowercase letters and digits)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


def is_valid_run_id(run_id: str) -> bool:
    """Whether ``run_id`` looks like one :func:`new_run_id` makes."""
    return bool(_RUN_ID_PATTERN.match(run_id))


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
