"""Rule catalogues: the one machinery behind every family of node rules (NFS, iSCSI/multipath).

A catalogue is data: a table of sources (key -> reference, e.g. ``"S1" -> "nfs(5) https://…"``)
and the rules (:class:`RuleSpec`: id, documented severity, title, the keys of the sources it rests
on). :class:`RuleCatalogue` checks the table when it is built (no duplicate id, every key
resolves), looks rules up by id (it is a read-only mapping of id to :class:`RuleSpec`), makes the
findings that cite their sources (:meth:`RuleCatalogue.cite`) and gives the catalogue as JSON
(:meth:`RuleCatalogue.to_list`). A finding's ``source`` is ``"KEY reference"`` per key cited,
joined by ``"; "``, each key once, in the order cited.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from kubectl_storage.core.report.findings import Finding, Severity


@dataclass(frozen=True)
class RuleSpec:
    """One catalogue entry: the rule id, its documented severity, what it checks, its sources
    (space-separated keys of the catalogue's source table)."""

    id: str
    severity: str
    title: str
    sources: str

    def to_dict(self, refs: Mapping[str, str]) -> dict[str, Any]:
        """JSON shape: id, severity, title, sources (key and the reference ``refs`` gives)."""
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "sources": [{"key": key, "ref": refs[key]} for key in self.sources.split()],
        }


class RuleCatalogue(Mapping[str, RuleSpec]):
    """The rules of one family by id, with the source table their keys resolve in."""

    def __init__(self, sources: Mapping[str, str], rules: Iterable[RuleSpec]) -> None:
        """Build and check the catalogue.

        Raises:
            ValueError: a rule id appears twice, or a rule cites a key ``sources`` lacks.
        """
        self.sources: Mapping[str, str] = MappingProxyType(dict(sources))
        by_id: dict[str, RuleSpec] = {}
        for spec in rules:
            if spec.id in by_id:
                raise ValueError(f"rule {spec.id} is catalogued twice")
            unknown = [key for key in spec.sources.split() if key not in self.sources]
            if unknown:
                raise ValueError(f"rule {spec.id} cites unknown sources {' '.join(unknown)}")
            by_id[spec.id] = spec
        self._rules: Mapping[str, RuleSpec] = MappingProxyType(by_id)

    def __getitem__(self, rule_id: str) -> RuleSpec:
        return self._rules[rule_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def source(self, *keys: str) -> str:
        """The ``source`` text citing ``keys`` (each a space-separated group of keys).

        Raises:
            KeyError: a key the source table lacks.
        """
        unique = dict.fromkeys(key for group in keys for key in group.split())
        return "; ".join(f"{key} {self.sources[key]}" for key in unique)

    def cite(self, rule_id: str, severity: Severity, message: str, fix: str, *keys: str) -> Finding:
        """A finding of ``rule_id`` citing ``keys`` (space-separated groups; an empty group cites
        nothing); without ``keys``, the rule's catalogue sources."""
        cited = keys or (self._rules[rule_id].sources,)
        return Finding(rule_id, severity, message, fix, self.source(*cited))

    def to_list(self) -> list[dict[str, Any]]:
        """Every rule with its severity, title and resolved sources (JSON shape)."""
        return [spec.to_dict(self.sources) for spec in self._rules.values()]
