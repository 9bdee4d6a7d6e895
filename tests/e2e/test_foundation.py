"""classes and cleanup against the real cluster."""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tests.e2e.conftest import HOSTPATH_CLASS, wait_for_deleted_namespaces


def test_classes_json_reports_the_test_cluster(cluster) -> None:
    result = run_cli("classes", "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["apiVersion"], report["kind"]) == ("kubectl-storage/v1alpha1", "ClassList")
    by_name = {c["name"]: c for c in report["storageClasses"]}
    hostpath = by_name[HOSTPATH_CLASS]
    assert hostpath["default"] is True
    assert hostpath["provisioner"] == "hostpath.csi.k8s.io"
    assert hostpath["snapshotClasses"] == ["csi-hostpath-snapclass"]
    assert hostpath["csiDriver"] is True
    local = by_name["local-path"]
    assert local["volumeBindingMode"] == "WaitForFirstConsumer"
    assert local["snapshotClasses"] == []
    assert report["snapshotApiAvailable"] is True
    assert any(n["id"] == "CLS004" and "local-path" in n["message"] for n in report["notes"])


def test_no_subcommand_and_global_options_after_it(cluster) -> None:
    plain = run_cli()
    assert plain.exit_code == 0
    assert f"{HOSTPATH_CLASS} (default)" in plain.stdout
    before = run_cli("-o", "yaml", "classes")
    after = run_cli("classes", "-o", "yaml")
    assert before.exit_code == after.exit_code == 0
    assert before.stdout == after.stdout
    assert before.stdout.startswith("apiVersion: kubectl-storage/v1alpha1\nkind: ClassList\n")


def test_unknown_context_against_a_real_kubeconfig(cluster) -> None:
    result = run_cli("--context", "nope", "classes")
    assert result.exit_code == 2
    assert 'context "nope" is not in the kubeconfig' in result.stderr


def _labelled_configmap(name: str, run_id: str) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  labels:
    app.kubernetes.io/managed-by: kubectl-storage
    kubectl-storage/run-id: {run_id}
    kubectl-storage/command: fio
data: {{a: b}}
"""


def test_cleanup_lists_then_deletes_only_our_objects(cluster, namespace) -> None:
    # The all-namespace cleanup below must find nothing an earlier test's namespace still holds.
    wait_for_deleted_namespaces(cluster)
    cluster.apply(_labelled_configmap("leftover-1", "e2eaaaa1"), namespace)
    cluster.apply(_labelled_configmap("leftover-2", "e2ebbbb2"), namespace)
    cluster.apply(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: users-own}\ndata: {a: b}\n", namespace
    )

    listed = run_cli("cleanup", "-n", namespace, "-o", "json")
    assert listed.exit_code == 1  # leftovers found, not deleted
    names = sorted(o["name"] for o in json.loads(listed.stdout)["objects"])
    assert names == ["leftover-1", "leftover-2"]

    one_run = run_cli("cleanup", "-n", namespace, "--run-id", "e2eaaaa1", "--yes", "-o", "json")
    assert one_run.exit_code == 0, one_run.stderr
    report = json.loads(one_run.stdout)
    assert [(o["name"], o["deleted"]) for o in report["objects"]] == [("leftover-1", True)]

    rest = run_cli("cleanup", "--yes")  # all namespaces
    assert rest.exit_code == 0, rest.stderr
    assert "leftover-2" in rest.stdout

    remaining = cluster.get_json("configmaps", "-n", namespace)["items"]
    remaining_names = {c["metadata"]["name"] for c in remaining}
    assert "users-own" in remaining_names
    assert not remaining_names & {"leftover-1", "leftover-2"}

    assert run_cli("cleanup").exit_code == 0  # nothing left


def test_cleanup_older_than_spares_new_objects(cluster, namespace) -> None:
    cluster.apply(_labelled_configmap("fresh", "e2ecccc3"), namespace)
    result = run_cli("cleanup", "-n", namespace, "--older-than", "1h", "--yes")
    assert result.exit_code == 0
    assert "No objects" in result.stdout
    assert cluster.get_json("configmap", "fresh", "-n", namespace)["metadata"]["name"] == "fresh"
    assert run_cli("cleanup", "-n", namespace, "--yes").exit_code == 0
