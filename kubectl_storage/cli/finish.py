"""The one place a report's verdict becomes the exit code (docs/output.md, "Verdicts").

| verdict | exit |
|---|---|
| pass, skipped | 0 |
| warn | 0; 1 with ``--fail-on warn`` |
| fail, inconclusive | 1 |

Usage and cluster errors (2) and interruptions (130, 143) never get this far: they are raised
as errors before a report exists (kubectl_storage/errors.py).
"""

from __future__ import annotations

from kubectl_storage.core.report.findings import FailOn
from kubectl_storage.core.report.verdict import Outcome, Verdict
from kubectl_storage.errors import FindingsError
from kubectl_storage.exit_codes import ExitCode


def exit_code(verdict: Verdict, fail_on: FailOn = FailOn.ERROR) -> ExitCode:
    """The exit code a run with ``verdict`` ends with."""
    if verdict in (Verdict.FAIL, Verdict.INCONCLUSIVE):
        return ExitCode.FINDINGS
    if verdict is Verdict.WARN and fail_on is FailOn.WARN:
        return ExitCode.FINDINGS
    return ExitCode.OK


def finish(
    outcome: Outcome,
    *,
    message: str = "",
    hint: str = "",
    fail_on: FailOn = FailOn.ERROR,
) -> None:
    """Return when the verdict exits 0; raise the error that exits 1 otherwise.

    ``message`` says what went wrong in the command's own words (default: the verdict and its
    reasons); ``hint`` what to do about it.
    """
    if exit_code(outcome.verdict, fail_on) is ExitCode.OK:
        return
    said = message or f"{outcome.verdict.value}: {', '.join(outcome.reasons[:8])}"
    raise FindingsError(said, hint)
