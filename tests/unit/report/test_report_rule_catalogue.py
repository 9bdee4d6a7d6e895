"""Issue 28 item 3: one rule-catalogue machinery for every rule family (NFS, iSCSI): lookup, the
checks made when a catalogue is built, :meth:`RuleCatalogue.cite` and the JSON listing."""

from __future__ import annotations

import pytest

from kubectl_storage.core.report.findings import Finding, Severity
from kubectl_storage.core.report.rule_catalogue import RuleCatalogue, RuleSpec

SOURCES = {"A1": "first document", "A2": "second document", "B1": "third document"}
CATALOGUE = RuleCatalogue(
    SOURCES,
    (
        RuleSpec("X001", "error", "something broken", "A1 A2"),
        RuleSpec("X002", "warn/info", "something odd", "B1"),
    ),
)


def test_a_catalogue_is_a_mapping_of_rule_ids_in_table_order() -> None:
    assert list(CATALOGUE) == ["X001", "X002"]
    assert len(CATALOGUE) == 2
    assert CATALOGUE["X002"].title == "something odd"
    assert "X003" not in CATALOGUE
    assert dict(CATALOGUE.sources) == SOURCES


def test_a_catalogue_refuses_a_duplicate_id_or_an_unknown_key() -> None:
    with pytest.raises(ValueError, match="X001 is catalogued twice"):
        RuleCatalogue(SOURCES, [RuleSpec("X001", "info", "a", "A1")] * 2)
    with pytest.raises(ValueError, match="X001 cites unknown sources Z9"):
        RuleCatalogue(SOURCES, [RuleSpec("X001", "info", "a", "A1 Z9")])


def test_cite_defaults_to_the_rules_sources() -> None:
    finding = CATALOGUE.cite("X001", Severity.ERROR, "msg", "fix")
    assert finding == Finding(
        "X001", Severity.ERROR, "msg", "fix", "A1 first document; A2 second document"
    )


def test_cite_joins_the_given_key_groups_once_each_in_order() -> None:
    finding = CATALOGUE.cite("X002", Severity.INFO, "msg", "fix", "B1 A1", "", "A1  A2")
    assert finding.source == "B1 third document; A1 first document; A2 second document"


def test_cite_with_an_empty_group_cites_nothing() -> None:
    # A vendor table with no keys for a field gives "": the finding then has no source.
    assert CATALOGUE.cite("X001", Severity.WARN, "msg", "fix", "").source == ""


def test_cite_refuses_an_unknown_key() -> None:
    with pytest.raises(KeyError):
        CATALOGUE.cite("X001", Severity.WARN, "msg", "fix", "Z9")


def test_to_list_gives_each_rule_with_its_resolved_sources() -> None:
    assert CATALOGUE.to_list() == [
        {
            "id": "X001",
            "severity": "error",
            "title": "something broken",
            "sources": [
                {"key": "A1", "ref": "first document"},
                {"key": "A2", "ref": "second document"},
            ],
        },
        {
            "id": "X002",
            "severity": "warn/info",
            "title": "something odd",
            "sources": [{"key": "B1", "ref": "third document"}],
        },
    ]
