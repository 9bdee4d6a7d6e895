"""Findings: what a rule says about one thing it looked at. Pure data, no I/O."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How bad a finding is, ordered info < warn < error."""

    INFO = "info"
    WARN = "warn"
    ERROR = "error"

    @property
    def rank(self) -> int:
        """Order for sorting: a higher rank is more severe."""
        return {"info": 0, "warn": 1, "error": 2}[self.value]


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one subject (a mount, a multipath map, a session)."""

    id: str
    severity: Severity
    message: str
    fix: str
    source: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON shape with fixed key order (field names are part of the contract)."""
        return {
            "id": self.id,
            "severity": self.severity.value,
            "message": self.message,
            "fix": self.fix,
            "source": self.source,
        }


class FailOn(StrEnum):
    """``--fail-on``: the least severity that makes a check exit 1."""

    WARN = "warn"
    ERROR = "error"


@dataclass(frozen=True)
class SeverityCounts:
    """How many findings of each severity a report holds (its summary's ``findings``)."""

    error: int = 0
    warn: int = 0
    info: int = 0

    @classmethod
    def of(cls, findings: Iterable[Finding]) -> SeverityCounts:
        """Count ``findings`` by severity."""
        counts = Counter(finding.severity for finding in findings)
        return cls(counts[Severity.ERROR], counts[Severity.WARN], counts[Severity.INFO])

    def to_dict(self) -> dict[str, int]:
        """JSON shape: error, warn, info (most severe first)."""
        return {"error": self.error, "warn": self.warn, "info": self.info}
