"""Preflight's permission checks against the real API server's RBAC, as a ServiceAccount bound to
what `kubectl storage rbac` prints, minus one right: the run is refused up front, naming the
right and the step that needs it, and creates nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_cli
from tests.e2e.conftest import HOSTPATH_CLASS

pytestmark = pytest.mark.cluster

CLASS = HOSTPATH_CLASS


@pytest.fixture
def without_cordon(cluster, namespace, tmp_path):
    """A kubeconfig for ServiceAccount `tester`, bound to validate-persistence's Role and
    ClusterRole except the right to patch (cordon) nodes."""
    printed = run_cli(
        "rbac", "validate-persistence", "-n", namespace,
        "--serviceaccount", f"{namespace}:tester", "-o", "json",
    )  # fmt: skip
    assert printed.exit_code == 0, printed.stderr
    items = json.loads(printed.stdout)["items"]
    cluster_wide = []
    for item in items:
        if item["kind"] in ("ClusterRole", "ClusterRoleBinding"):
            item["metadata"]["name"] += f"-{namespace}"[:40]
            cluster_wide.append(item["metadata"]["name"])
        if item["kind"] == "ClusterRoleBinding":
            item["roleRef"]["name"] = item["metadata"]["name"]
        if item["kind"] == "ClusterRole":
            for rule in item["rules"]:
                if rule["resources"] == ["nodes"]:
                    rule["verbs"] = [v for v in rule["verbs"] if v != "patch"]
            item["rules"] = [r for r in item["rules"] if r["verbs"]]
    cluster.kubectl_run("-n", namespace, "create", "serviceaccount", "tester")
    cluster.apply(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}), namespace)
    token = cluster.kubectl_run("-n", namespace, "create", "token", "tester").stdout.strip()
    admin = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": admin["clusters"],
        "users": [{"name": "tester", "user": {"token": token}}],
        "contexts": [
            {
                "name": "tester",
                "context": {
                    "cluster": admin["clusters"][0]["name"],
                    "user": "tester",
                    "namespace": namespace,
                },
            }
        ],
        "current-context": "tester",
    }
    path = tmp_path / "tester.kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    yield str(path)
    for name in cluster_wide:
        for kind in ("clusterrolebinding", "clusterrole"):
            cluster.kubectl_run("delete", kind, name, "--ignore-not-found", check=False)


def _events(cluster, namespace: str) -> list:
    return cluster.get_json("events", "-n", namespace)["items"]


def test_a_refused_cordon_is_found_before_anything_is_made(
    cluster, namespace, without_cordon
) -> None:
    result = run_cli(
        "validate-persistence", "-s", CLASS, "--kubeconfig", without_cordon,
        "--image", cluster.mariadb_image,
    )  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert "missing permission to patch nodes (cluster-wide)" in result.stderr
    assert "The cluster-wide one is needed to cordon the pod's node" in result.stderr
    assert "Traceback" not in result.stderr
    assert _events(cluster, namespace) == []  # nothing was created, so nothing happened
    made = subprocess.run(
        [cluster.kubectl, "--kubeconfig", cluster.kubeconfig, "-n", namespace, "get",
         "statefulsets,pods,pvc,secrets", "-o", "name"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert made.strip() == ""


def test_without_the_moves_the_same_rights_are_enough(cluster, namespace, without_cordon) -> None:
    result = run_cli(
        "validate-persistence", "-s", CLASS, "--kubeconfig", without_cordon,
        "--image", cluster.mariadb_image, "--disruptions", "restart,crash", "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(result.stdout) if d]
    assert "StatefulSet" in kinds
