"""mount-audit and iscsi return typed reports, and render/ draws them from their attributes.

The operations build frozen dataclasses (MountAuditReport, IscsiReport) from real fixtures;
``to_dict()`` is the whole JSON/YAML document (plain JSON types only, so ``-o yaml`` with the
safe dumper and ``-o json`` without a fallback both work); the renderers take the typed report
and refuse the dict document. Nothing loads these reports back (no --baseline for node
commands), so there is no from_dict to round-trip; the document round-trips through JSON.
"""

from __future__ import annotations

import dataclasses
import io
import json
import typing
from typing import Any

import pytest
import yaml

from kubectl_storage.cli.node_commands import finish
from kubectl_storage.core.iscsi.multipath import MultipathMap
from kubectl_storage.core.iscsi.report import IscsiNode, IscsiReport, LunRow
from kubectl_storage.core.mount_audit.report import (
    AuditedMount,
    MountAuditNode,
    MountAuditReport,
    MountCounters,
)
from kubectl_storage.core.report.findings import FailOn, Finding, Severity, SeverityCounts
from kubectl_storage.errors import ClusterError, FindingsError
from kubectl_storage.operations.iscsi import iscsi_files
from kubectl_storage.operations.mount_audit import audit_files
from kubectl_storage.render.findings import write_findings
from kubectl_storage.render.iscsi import write_iscsi_table
from kubectl_storage.render.mount_audit import write_mount_audit_table
from tests.conftest import FIXTURES

MOUNTINFO = FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo"
MOUNTSTATS = FIXTURES / "mountstats" / "invented-edge-cases.mountstats"
BUNDLE = FIXTURES / "kubernetes" / "constructed-anf-bundle.pv-pvc-sc.json"
PODS = FIXTURES / "kubernetes" / "constructed-anf-bundle.pods.json"
ISCSI_FILES = [
    FIXTURES / "iscsiadm" / "stockage_session_P3_chunk1_spaces.txt",
    FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt",
    FIXTURES / "multipath" / "conf_stockage_rocky_duplicate_defaults.conf",
    FIXTURES / "sanlun" / "invented_two_luns_path_down.txt",
]


def mount_report() -> MountAuditReport:
    return audit_files([MOUNTINFO, MOUNTSTATS, BUNDLE, PODS], "w1", None)


def iscsi_report() -> IscsiReport:
    return iscsi_files(ISCSI_FILES, "chunk1")


def test_mount_audit_report_is_typed_all_the_way_down() -> None:
    report = mount_report()
    assert isinstance(report, MountAuditReport)
    (node,) = report.nodes
    assert isinstance(node, MountAuditNode)
    assert node.mounts
    assert all(isinstance(mount, AuditedMount) for mount in node.mounts)
    counted = [mount.stats for mount in node.mounts if mount.stats is not None]
    assert counted
    assert all(isinstance(stats, MountCounters) for stats in counted)
    assert report.findings
    assert all(isinstance(f, Finding) for f in report.findings)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.error = "changed"  # type: ignore[misc]


def test_iscsi_report_is_typed_all_the_way_down() -> None:
    report = iscsi_report()
    assert isinstance(report, IscsiReport)
    (node,) = report.nodes
    assert isinstance(node, IscsiNode)
    assert node.multipath_maps
    assert all(isinstance(m, MultipathMap) for m in node.multipath_maps)
    assert node.luns
    assert all(isinstance(row, LunRow) for row in node.luns)
    assert {path.role for row in node.luns for path in row.paths} >= {"active", "failed"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.status = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("build", [mount_report, iscsi_report], ids=["mount-audit", "iscsi"])
def test_the_document_is_plain_json_and_yaml(build: Any) -> None:
    document = build().to_dict()
    assert list(document)[:2] == ["apiVersion", "kind"]
    # No tuples, enums or dataclasses left in the document: strict JSON and the safe YAML
    # dumper both take it, and reading it back gives the same document.
    assert json.loads(json.dumps(document)) == document
    assert yaml.safe_load(yaml.safe_dump(document, sort_keys=False)) == document


def test_summaries_count_what_the_nodes_hold() -> None:
    mounts = mount_report()
    assert mounts.summary.findings == SeverityCounts.of(mounts.findings)
    assert mounts.to_dict()["summary"] == mounts.summary.to_dict()
    assert mounts.summary.nfs_mounts == sum(len(node.mounts) for node in mounts.nodes)
    luns = iscsi_report()
    assert luns.summary.failed_paths >= 1  # the fixture's faulty path
    assert luns.summary.paths == sum(len(list(node.paths)) for node in luns.nodes)
    assert luns.to_dict()["summary"] == luns.summary.to_dict()


def test_severity_counts_order_and_totals() -> None:
    findings = [
        Finding("A", Severity.WARN, "m", "f"),
        Finding("B", Severity.ERROR, "m", "f"),
        Finding("C", Severity.WARN, "m", "f"),
    ]
    counts = SeverityCounts.of(findings)
    assert counts.to_dict() == {"error": 1, "warn": 2, "info": 0}
    assert list(counts.to_dict()) == ["error", "warn", "info"]


def test_renderers_are_annotated_with_the_typed_reports() -> None:
    assert typing.get_type_hints(write_mount_audit_table)["report"] is MountAuditReport
    assert typing.get_type_hints(write_iscsi_table)["report"] is IscsiReport


@pytest.mark.parametrize(
    ("build", "draw"),
    [(mount_report, write_mount_audit_table), (iscsi_report, write_iscsi_table)],
    ids=["mount-audit", "iscsi"],
)
def test_render_draws_the_typed_report_and_refuses_its_dict(build: Any, draw: Any) -> None:
    report = build()
    out = io.StringIO()
    draw(report, out, True)
    assert "Findings:" in out.getvalue()
    with pytest.raises(AttributeError):
        draw(report.to_dict(), io.StringIO(), True)


def test_findings_render_most_severe_first_from_finding_objects() -> None:
    out = io.StringIO()
    write_findings(
        [
            ("n1", Finding("X001", Severity.INFO, "told", "")),
            ("n1", Finding("X002", Severity.ERROR, "broken", "mend it")),
        ],
        out,
    )
    # Most severe first; a fix line only where there is a fix.
    assert out.getvalue() == (
        "\nFindings:\n"
        "  ERROR X002      n1: broken\n"
        "        fix: mend it\n"
        "  INFO  X001      n1: told\n"
    )


def test_finish_reads_the_typed_report() -> None:
    report = mount_report()
    worst = max(f.severity.rank for f in report.findings)
    assert worst == Severity.ERROR.rank  # the edge-case fixture has an error
    with pytest.raises(FindingsError):
        finish(report, FailOn.ERROR)
    quiet = dataclasses.replace(report, nodes=())
    finish(quiet, FailOn.WARN)  # no nodes, no findings: nothing to say
    (node,) = report.nodes
    down = dataclasses.replace(node, error="node NotReady", mounts=())
    with pytest.raises(ClusterError, match="no node could be inspected"):
        finish(dataclasses.replace(report, nodes=(down,)), FailOn.ERROR)
