"""`snapshot check --freeze` on the real cluster: where the namespace forbids the freezer, and
where the volume shares the node's filesystem (the test cluster's hostpath driver keeps volumes
on the node's root filesystem), the check runs crash-consistent and says why; the freezer pod it
did create is cleaned up like everything else."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import run_cli
from tests.e2e.test_snapshot import CLASS, _managed, _ok

pytestmark = pytest.mark.cluster


def test_a_restricted_namespace_gets_no_freezer_and_a_crash_consistent_check(
    cluster, namespace
) -> None:
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    plan = run_cli("snapshot", "check", "-s", CLASS, "--freeze", "--dry-run", "-n", namespace)
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(_ok(plan)) if d]
    assert not [n for n in names if n.endswith("-freezer")]
    result = run_cli(
        "snapshot", "check", "-s", CLASS, "-z", "64Mi", "--freeze", "-n", namespace, "-o", "json"
    )
    report = json.loads(_ok(result))
    assert report["verdict"] == "pass"
    assert report["freeze"]["frozen"] is False
    assert 'enforces the "restricted" Pod Security level' in report["freeze"]["reason"]
    assert "not freezing" in result.stderr
    assert _managed(cluster, namespace) == []


def test_a_volume_on_the_nodes_own_filesystem_is_not_frozen(cluster, namespace) -> None:
    result = run_cli(
        "snapshot", "check", "-s", CLASS, "-z", "64Mi", "--freeze", "--under-load",
        "-n", namespace, "-o", "json", "-v",
    )  # fmt: skip
    report = json.loads(_ok(result))
    assert report["verdict"] == "pass", report["problems"]
    freeze = report["freeze"]
    assert freeze["frozen"] is False
    assert "the volume is on the node's own filesystem" in freeze["reason"]
    assert "freeze source" in [s["name"] for s in report["steps"]]
    assert "cleaning up 6 object(s)" in result.stderr  # the freezer pod was made, and went
    assert _managed(cluster, namespace) == []
