"""The verdict every report gives about itself (design.md section 7).

A report computes its own :class:`Outcome` from its content: one :class:`Verdict` and the
reasons behind it (finding ids, phase names, guard ids), so that "did the check pass?" has one
answer wherever it is asked. ``cli/finish.py`` maps the verdict to the exit code; nothing else
decides it.

- ``pass``: everything the run set out to test was tested and held.
- ``warn``: it held, but something undercuts it (a guard's warning, a finding of severity warn).
- ``fail``: something tested did not hold.
- ``inconclusive``: the run could not tell: nothing was tested, a control did not show what it
  exists to show, a step did not finish within the timeout.
- ``skipped``: for one part of a run (a check of a suite) that did not apply, with its reason;
  a whole run with nothing tested is ``inconclusive``, never ``skipped``.

Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kubectl_storage.core.report.findings import Finding, Severity


class Verdict(StrEnum):
    """What a report, or one part of it, concluded."""

    PASS = "pass"
    SKIPPED = "skipped"
    WARN = "warn"
    INCONCLUSIVE = "inconclusive"
    FAIL = "fail"


@dataclass(frozen=True)
class Outcome:
    """A verdict and the reasons behind it (ids a reader can look up, in the order found)."""

    verdict: Verdict
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The two keys every report carries after its kind."""
        return {"verdict": self.verdict.value, "reasons": list(self.reasons)}


PASSED = Outcome(Verdict.PASS)


def judge(
    *,
    fail: Iterable[str] = (),
    inconclusive: Iterable[str] = (),
    warn: Iterable[str] = (),
) -> Outcome:
    """The outcome of a report from its reasons, worst first: any reason to fail fails it,
    else any reason it could not tell makes it inconclusive, else any warning warns, else it
    passes."""
    for verdict, reasons in (
        (Verdict.FAIL, fail),
        (Verdict.INCONCLUSIVE, inconclusive),
        (Verdict.WARN, warn),
    ):
        unique = tuple(dict.fromkeys(reasons))
        if unique:
            return Outcome(verdict, unique)
    return PASSED


def findings_outcome(findings: Iterable[Finding], not_inspected: Iterable[str] = ()) -> Outcome:
    """A node audit's outcome: fail on a finding of severity error, warn on one of severity warn
    (``--fail-on warn`` makes that exit 1) and on a node that could not be inspected
    (``not-inspected:<node>``: the verdict does not cover it); the reasons are the rule ids."""
    found = list(findings)
    return judge(
        fail=(f.id for f in found if f.severity is Severity.ERROR),
        warn=[
            *(f.id for f in found if f.severity is Severity.WARN),
            *(f"not-inspected:{node}" for node in not_inspected),
        ],
    )
