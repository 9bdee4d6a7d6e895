"""The envelope every structured report shares: apiVersion and kind first, then the body."""

from __future__ import annotations

from typing import Any

API_VERSION = "kubectl-storage/v1alpha1"


def report_envelope(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """Wrap a report body so ``apiVersion`` and ``kind`` always lead, in that order."""
    envelope: dict[str, Any] = {"apiVersion": API_VERSION, "kind": kind}
    envelope.update(body)
    return envelope
