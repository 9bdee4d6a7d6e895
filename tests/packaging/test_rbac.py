"""`kubectl storage rbac`: the permission table, the manifests, and the printed forms.

The table must cover what the operations ask the API server for up front: every
``AccessRequest(...)`` in an operations module is checked against the command(s) that module
serves, so a permission added to a command cannot be forgotten here. (Run as a service account
bound to exactly these roles, every command worked on the test cluster; see docs/rbac.md.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer.main
import yaml

from kubectl_storage.cli.app import app
from kubectl_storage.core.rbac import (
    COMMANDS,
    SNAPSHOT_API_GROUP,
    Permission,
    Scope,
    Subject,
    UnknownCommandError,
    build_rbac_manifests,
    policy_rules,
    select_commands,
)
from tests.conftest import run_cli

OPERATIONS = Path(__file__).resolve().parents[2] / "kubectl_storage" / "operations"
# Which commands each operations module serves.
MODULE_COMMANDS = {
    "fio.py": ("fio",),
    "node_inspection.py": ("mount-audit", "iscsi"),
    "snapshot.py": ("snapshot",),
    "persistence.py": ("validate-persistence",),
}
# Names used for API groups in AccessRequest(..., group=NAME).
GROUP_NAMES = {"SNAPSHOT_API_GROUP": SNAPSHOT_API_GROUP}
CLUSTER_SCOPED = {
    "nodes",
    "persistentvolumes",
    "storageclasses",
    "csidrivers",
    "volumesnapshotclasses",
    "volumesnapshotcontents",
}


def registered_commands() -> set[str]:
    group = typer.main.get_command(app)
    return set(group.commands) - {"rbac"}  # type: ignore[attr-defined]


def test_every_command_has_a_row() -> None:
    assert registered_commands() <= set(COMMANDS)
    assert {"classes", "cleanup", "fio"} <= set(COMMANDS)


def _literal(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in GROUP_NAMES:
        return GROUP_NAMES[node.id]
    raise AssertionError(f"cannot read {ast.unparse(node)}; add it to GROUP_NAMES")


def access_requests(path: Path) -> list[tuple[str, str, str, bool]]:
    """(verb, group, resource[/subresource], namespaced) of each AccessRequest in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "AccessRequest"
        ):
            continue
        verb, resource = (_literal(arg) for arg in node.args[:2])
        keywords = {k.arg: k.value for k in node.keywords}
        group = _literal(keywords["group"]) if "group" in keywords else ""
        if "subresource" in keywords:
            resource += "/" + _literal(keywords["subresource"])
        found.append((verb, group, resource, "namespace" in keywords))
    return found


@pytest.mark.parametrize("module", sorted(MODULE_COMMANDS))
def test_permissions_checked_up_front_are_granted(module: str) -> None:
    path = OPERATIONS / module
    # Every command's module exists now: a rename must update this table, not skip it.
    assert path.exists(), f"operations/{module} is gone; update MODULE_COMMANDS"
    requests = access_requests(path)
    assert requests, f"no AccessRequest found in {module}"
    for command in MODULE_COMMANDS[module]:
        permissions = COMMANDS[command].permissions
        for verb, group, resource, namespaced in requests:
            granted = [
                p
                for p in permissions
                if p.group == group
                and resource in p.resources
                and verb in p.verbs
                and (p.scope is Scope.NAMESPACE) == namespaced
            ]
            assert granted, f"{command}: {verb} {group or 'core'}/{resource} is not in the table"


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
    """Objects are only ever created in the namespace the command works in."""
    manifests = build_rbac_manifests(select_commands([]), namespace=None)
    (cluster_role,) = [m for m in manifests if m["kind"] == "ClusterRole"]
    for rule in cluster_role["rules"]:
        assert not {"create", "patch", "update"} & set(rule["verbs"]), rule


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
