"""The envelope every structured report shares: apiVersion and kind first, then the report's
verdict and its reasons (core/report/verdict.py), then the body."""

from __future__ import annotations

from typing import Any

from kubectl_storage.core.report.verdict import Outcome

API_VERSION = "kubectl-storage/v1alpha1"
#: The keys the envelope adds to every report (readers of saved reports skip them).
ENVELOPE_KEYS = frozenset({"apiVersion", "kind", "verdict", "reasons"})


def report_envelope(kind: str, outcome: Outcome, body: dict[str, Any]) -> dict[str, Any]:
    """Wrap a report body so ``apiVersion``, ``kind``, ``verdict`` and ``reasons`` lead."""
    envelope: dict[str, Any] = {"apiVersion": API_VERSION, "kind": kind}
    envelope.update(outcome.to_dict())
    envelope.update(body)
    return envelope
