"""Issue 11 part 4: every rule states its sources (catalogue, findings' JSON and docs), and vendor
thresholds live in one table per vendor rather than in the rules' code."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

from kubectl_storage.core.iscsi import rules as iscsi_rules
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.vendors import ARRAYS, array_for
from kubectl_storage.core.mount_audit import rules as nfs_rules
from kubectl_storage.core.mount_audit.rules import audit_mounts
from kubectl_storage.core.mount_audit.rules.catalogue import NFS_RULES
from kubectl_storage.core.mount_audit.vendors import PROFILES, VENDORS, NfsVendor, vendor
from tests.unit.mount_audit.test_mount_audit_rules import CASES, nfs_mount

DOCS = Path(__file__).resolve().parents[3] / "docs" / "commands"


def _cells(line: str) -> list[str]:
    """The cells of one Markdown table row (``\\|`` inside a cell does not split)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _doc_rows(page: str) -> dict[str, str]:
    """``{rule id: sources cell}`` from the docs' rule table (``| ID | severity | … | S1, S2 |``)."""
    rows = {}
    for line in (DOCS / page).read_text().splitlines():
        cells = _cells(line)
        if len(cells) == 4 and re.fullmatch(r"(NFS|NFSK8S|MP|ISCSI)\d{3}", cells[0]):
            rows[cells[0]] = cells[3]
    return rows


def _doc_source_keys(page: str) -> set[str]:
    keys = set()
    for line in (DOCS / page).read_text().splitlines():
        cells = _cells(line)
        if len(cells) == 2 and re.fullmatch(r"[A-Z]\d+", cells[0]):
            keys.add(cells[0])
    return keys


# --- NFS ----------------------------------------------------------------------------------------


def test_nfs_catalogue_covers_every_rule_and_every_key_resolves() -> None:
    assert set(NFS_RULES) == set(nfs_rules.RULE_IDS)
    for spec in NFS_RULES.values():
        assert spec.sources, spec.id
        for key in spec.sources.split():
            assert key in NFS_RULES.sources, (spec.id, key)
    entry = NFS_RULES.to_list()[0]
    assert list(entry) == ["id", "severity", "title", "sources"]
    assert entry["sources"][0] == {"key": "S7", "ref": NFS_RULES.sources["S7"]}


def test_nfs_vendor_table_sources_resolve() -> None:
    assert tuple(v.name for v in VENDORS) == PROFILES == nfs_rules.PROFILES
    fields = {f.name for f in dataclasses.fields(NfsVendor)}
    for entry in VENDORS:
        for name, keys in entry.sources.items():
            assert name in fields | {"detection"}, (entry.name, name)
            for key in keys.split():
                assert key in NFS_RULES.sources, (entry.name, name, key)


def test_nfs_rules_read_the_vendor_table_not_profile_names() -> None:
    for rule in nfs_rules.MOUNT_RULES:
        code = inspect.getsource(rule)
        assert "PROFILE_" not in code, rule.__name__
        assert "facts.profile ==" not in code, rule.__name__
        assert "facts.profile in" not in code, rule.__name__


def test_a_new_vendor_is_a_table_entry() -> None:
    # A profile the rules have never seen behaves by its table entry alone.
    made_up = dataclasses.replace(vendor("generic"), name="acme", max_rwsize=65536)
    assert made_up.max_rwsize == 65536
    with pytest.raises(ValueError, match="unknown NFS profile"):
        vendor("acme")


def test_every_nfs_finding_cites_its_sources() -> None:
    seen = set()
    for case in CASES:
        kwargs = dict(case.fires)
        mount = nfs_mount(str(kwargs.pop("options")))
        context = kwargs.pop("context", None)
        contexts = {mount.mountpoint: context} if context else None
        (audit,) = audit_mounts([mount], contexts=contexts, **kwargs)  # type: ignore[arg-type]
        for finding in audit.findings:
            assert finding.source, finding.id
            assert finding.to_dict()["source"] == finding.source
            seen.add(finding.id)
    # NFS031 needs two mounts, NFS120 two nodes
    assert set(nfs_rules.RULE_IDS) - {"NFS031", "NFS120"} <= seen


def test_nfs_docs_list_every_rule_with_its_sources() -> None:
    rows = _doc_rows("mount-audit.md")
    assert set(rows) == set(NFS_RULES)
    documented_keys = _doc_source_keys("mount-audit.md")
    for rule_id, spec in NFS_RULES.items():
        assert [key.strip() for key in rows[rule_id].split(",")] == spec.sources.split(), rule_id
        assert set(spec.sources.split()) <= documented_keys, rule_id


# --- iSCSI / multipath -------------------------------------------------------------------------


def test_iscsi_catalogue_lists_the_implemented_rules_and_keys_resolve() -> None:
    implemented = set(re.findall(r"\b(?:MP|ISCSI)\d{3}\b", iscsi_rules.__doc__.split("Not")[0]))
    assert set(ISCSI_RULES) == implemented
    for spec in ISCSI_RULES.values():
        for key in spec.sources.split():
            assert key in ISCSI_RULES.sources, (spec.id, key)
    for array in ARRAYS:
        for keys in array.sources.values():
            for key in keys.split():
                assert key in ISCSI_RULES.sources, (array.key, key)


def test_iscsi_rules_read_the_array_table_not_vendor_strings() -> None:
    # The rules are a package of rule families: every module of it, not only __init__.
    modules = [
        importlib.import_module(f"{iscsi_rules.__name__}.{info.name}")
        for info in pkgutil.iter_modules(iscsi_rules.__path__)
    ]
    assert len(modules) >= 5
    code = "\n".join(inspect.getsource(module) for module in [iscsi_rules, *modules])
    for literal in ('"NETAPP"', '"PURE"', '"NIMBLE"', '"DELLEMC"', '"netapp"', '"pure"'):
        assert literal not in code, literal
    assert array_for("NETAPP  ", "LUN C-Mode") is not None
    assert array_for("NETAPP", "INF-01-00") is None  # E-Series is another product


def test_iscsi_docs_list_every_rule_with_its_sources() -> None:
    rows = _doc_rows("iscsi.md")
    assert set(rows) == set(ISCSI_RULES)
    documented_keys = _doc_source_keys("iscsi.md")
    for rule_id, spec in ISCSI_RULES.items():
        assert [key.strip() for key in rows[rule_id].split(",")] == spec.sources.split(), rule_id
        assert set(spec.sources.split()) <= documented_keys, rule_id
