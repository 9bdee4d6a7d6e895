"""`kubectl storage rbac`: the permission table, the manifests, and the printed forms.

The table is the only list of permissions: preflight derives its up-front checks from it
(operations/preflight.py), so the checks and the printed Role cannot drift apart. The e2e suite
runs commands as a service account bound to exactly the printed Role.
"""

from __future__ import annotations

import pytest
import typer.main
import yaml

from kubectl_storage.cli.app import app
from kubectl_storage.core.rbac.commands import (
    COMMANDS,
    Condition,
    Permission,
    Scope,
    UnknownCommandError,
    select_commands,
)
from kubectl_storage.core.rbac.manifests import Subject, build_rbac_manifests, policy_rules
from kubectl_storage.operations.preflight import Requirements, access_requests
from tests.conftest import run_cli

CLUSTER_SCOPED = {
    "nodes",
    "persistentvolumes",
    "storageclasses",
    "csidrivers",
    "volumesnapshotclasses",
    "volumesnapshotcontents",
}


def registered_commands() -> set[str]:
    """Every command that talks to the cluster: not rbac (prints the table) and not completion
    (best-effort lookups that print nothing when refused)."""
    group = typer.main.get_command(app)
    ctx = group.make_context("kubectl storage", [], resilient_parsing=True)
    return set(group.list_commands(ctx)) - {"rbac", "completion"}  # type: ignore[attr-defined]


def test_every_command_has_a_row() -> None:
    assert len(registered_commands()) >= 7
    assert registered_commands() <= set(COMMANDS)
    assert {"classes", "cleanup", "fio"} <= set(COMMANDS)


def _checked(command: str, *conditions: str) -> set[str]:
    return {
        f"{r.verb} {r.group or 'core'}/{r.resource}{'/' + r.subresource if r.subresource else ''}"
        for r, _why in access_requests(
            command, "ns", Requirements(conditions=frozenset(conditions))
        )
    }


def test_preflight_checks_the_writes_of_the_table() -> None:
    """Preflight's permission checks are derived from the table, per the run's conditions."""
    with_volume = _checked("fio", Condition.NEW_VOLUME)
    assert "create core/persistentvolumeclaims" in with_volume
    assert "delete core/persistentvolumeclaims" in with_volume
    assert "create core/pods/exec" in with_volume
    assert "create core/configmaps" in with_volume
    # fio --pvc creates no claim, so it must not be refused for lacking that right.
    existing_pvc = _checked("fio")
    assert not {p for p in existing_pvc if "persistentvolumeclaims" in p}
    assert "create core/pods" in existing_pvc
    # Reads are not checked up front: a refused read fails at once with its own message.
    assert not {p for p in with_volume if p.startswith(("get ", "list ", "watch "))}


def test_snapshot_list_needs_no_write_but_check_does() -> None:
    assert _checked("snapshot") == set()
    check = _checked("snapshot", Condition.TAKE_SNAPSHOT, Condition.RESTORE)
    assert "create snapshot.storage.k8s.io/volumesnapshots" in check
    assert "delete snapshot.storage.k8s.io/volumesnapshots" in check
    assert "create core/persistentvolumeclaims" in check


def test_every_condition_is_used_by_some_permission() -> None:
    used = {p.when for access in COMMANDS.values() for p in access.permissions if p.when}
    assert used == {str(c) for c in Condition}


def test_table_is_well_formed() -> None:
    verbs = {"get", "list", "watch", "create", "update", "patch", "delete"}
    for access in COMMANDS.values():
        for permission in access.permissions:
            assert permission.why
            assert set(permission.verbs) <= verbs
            cluster_scoped = set(permission.resources) & CLUSTER_SCOPED
            if permission.scope is Scope.NAMESPACE:
                # A Role can grant only its own namespace's objects (and that namespace itself).
                assert not cluster_scoped, permission
                if "namespaces" in permission.resources:
                    assert permission.verbs == ("get",)
            elif permission.scope is Scope.CLUSTER:
                assert cluster_scoped == set(permission.resources), permission


def test_nothing_is_created_cluster_wide() -> None:
    """Objects are only ever created in the namespace the command works in; the one cluster-wide
    write is validate-persistence's cordon and uncordon of a node (patch nodes)."""
    manifests = build_rbac_manifests(select_commands([]), namespace=None)
    (cluster_role,) = [m for m in manifests if m["kind"] == "ClusterRole"]
    for rule in cluster_role["rules"]:
        writes = {"create", "patch", "update"} & set(rule["verbs"])
        if rule["resources"] == ["nodes"]:
            assert writes <= {"patch"}, rule
        else:
            assert not writes, rule


def test_rules_merge_verbs_and_resources() -> None:
    rules = policy_rules(
        [
            Permission(Scope.NAMESPACE, "", ("pods",), ("get", "create"), "a"),
            Permission(Scope.NAMESPACE, "", ("pods", "configmaps"), ("delete",), "b"),
            Permission(Scope.NAMESPACE, "", ("configmaps",), ("create", "get"), "c"),
            Permission(Scope.NAMESPACE, "apps", ("statefulsets",), ("get",), "d"),
        ]
    )
    assert rules == [
        {
            "apiGroups": [""],
            "resources": ["configmaps", "pods"],
            "verbs": ["get", "create", "delete"],
        },
        {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["get"]},
    ]


def test_role_namespace_follows_dash_n() -> None:
    fio = select_commands(["fio"])
    with_ns = build_rbac_manifests(fio, namespace="bench")
    without = build_rbac_manifests(fio, namespace=None)
    assert [m["kind"] for m in with_ns] == ["Role", "ClusterRole"]
    assert with_ns[0]["metadata"]["namespace"] == "bench"
    assert "namespace" not in without[0]["metadata"]
    assert "namespace" not in with_ns[1]["metadata"]
    assert with_ns[0]["metadata"]["name"] == "kubectl-storage-fio"


def test_cleanup_searches_one_namespace_or_all() -> None:
    cleanup = select_commands(["cleanup"])
    assert [m["kind"] for m in build_rbac_manifests(cleanup, namespace="ns1")] == ["Role"]
    assert [m["kind"] for m in build_rbac_manifests(cleanup, namespace=None)] == ["ClusterRole"]


def test_classes_needs_no_role() -> None:
    manifests = build_rbac_manifests(select_commands(["classes"]), namespace="x")
    assert [m["kind"] for m in manifests] == ["ClusterRole"]


def test_bindings_for_subjects() -> None:
    subjects = [Subject("User", "alice"), Subject.service_account("ci:bench")]
    manifests = build_rbac_manifests(
        select_commands(["fio"]), namespace="bench", name="perf", subjects=subjects
    )
    kinds = [m["kind"] for m in manifests]
    assert kinds == ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]
    binding = manifests[2]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "perf",
    }
    assert binding["subjects"] == [
        {"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
        {"kind": "ServiceAccount", "name": "bench", "namespace": "ci"},
    ]
    assert manifests[3]["roleRef"]["kind"] == "ClusterRole"


@pytest.mark.parametrize("value", ["bench", ":bench", "ci:", ""])
def test_bad_service_account(value: str) -> None:
    with pytest.raises(ValueError, match="NAMESPACE:NAME"):
        Subject.service_account(value)


def test_unknown_command() -> None:
    with pytest.raises(UnknownCommandError, match="one of: classes"):
        select_commands(["fio", "benchmark"])


# -- the command line ---------------------------------------------------------------------


def test_all_commands_yaml(golden) -> None:
    result = run_cli("rbac")
    assert result.exit_code == 0, result.stderr
    assert [d["kind"] for d in yaml.safe_load_all(result.stdout)] == ["Role", "ClusterRole"]
    golden("rbac-all.yaml", result.stdout)


def test_fio_with_namespace_and_binding(golden) -> None:
    result = run_cli("rbac", "fio", "snapshot", "-n", "bench", "--serviceaccount", "ci:bench")
    assert result.exit_code == 0, result.stderr
    golden("rbac-fio-snapshot-bench.yaml", result.stdout)


def test_wide_table(golden) -> None:
    result = run_cli("rbac", "-o", "wide")
    assert result.exit_code == 0, result.stderr
    golden("rbac-wide.txt", result.stdout)


def test_json_is_a_list() -> None:
    result = run_cli("rbac", "mount-audit", "-o", "json")
    assert result.exit_code == 0, result.stderr
    document = result.json()
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    assert [i["kind"] for i in document["items"]] == ["Role", "ClusterRole"]


def test_usage_errors() -> None:
    result = run_cli("rbac", "benchmark")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown command benchmark")
    result = run_cli("rbac", "--serviceaccount", "bench")
    assert result.exit_code == 2
    assert "NAMESPACE:NAME" in result.stderr
    assert result.stdout == ""


def test_a_cluster_wide_write_is_checked_cluster_wide() -> None:
    """Cordoning a node is a write on a cluster-scoped kind: asked without a namespace, and only
    when the run moves the pod."""
    moving = access_requests(
        "validate-persistence", "ns", Requirements(conditions=frozenset({Condition.RESCHEDULE}))
    )
    cordon = [(r, why) for r, why in moving if r.resource == "nodes"]
    assert [(r.verb, r.namespace) for r, _why in cordon] == [("patch", None)]
    # The reason is what a refused user reads: it names the step that needs the right.
    assert all("cordon" in why for _r, why in cordon)
    staying = access_requests("validate-persistence", "ns", Requirements())
    assert not [r for r, _why in staying if r.resource == "nodes"]
