"""The Role, ClusterRole and bindings that grant the permissions of the command table.

Separate from the table (:mod:`kubectl_storage.core.rbac.commands`) so what each command needs
is read in one place and how RBAC objects are written (verbs merged per resource, resources per
API group, stable order) in another.

Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.rbac.commands import COMMANDS, CommandAccess, Permission

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
DEFAULT_NAME = "kubectl-storage"
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete")


def _sorted_verbs(verbs: Iterable[str]) -> list[str]:
    return sorted(set(verbs), key=lambda v: (_VERB_ORDER.index(v), v))


def policy_rules(permissions: Iterable[Permission]) -> list[dict[str, Any]]:
    """RBAC rules for the permissions: verbs merged per resource, then resources with the same
    verbs merged per API group; in a stable order (core group first)."""
    verbs: dict[tuple[str, str], set[str]] = {}
    for permission in permissions:
        for resource in permission.resources:
            verbs.setdefault((permission.group, resource), set()).update(permission.verbs)
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (group, resource), resource_verbs in verbs.items():
        key = (group, tuple(_sorted_verbs(resource_verbs)))
        grouped.setdefault(key, []).append(resource)
    rules = [
        {"apiGroups": [group], "resources": sorted(resources), "verbs": list(rule_verbs)}
        for (group, rule_verbs), resources in grouped.items()
    ]
    rules.sort(key=lambda rule: (rule["apiGroups"][0], rule["resources"][0]))
    return rules


@dataclass(frozen=True)
class Subject:
    """Who the bindings grant the roles to (``--user``, ``--group``, ``--serviceaccount``)."""

    kind: str  # User, Group or ServiceAccount
    name: str
    namespace: str | None = None  # ServiceAccount only

    @classmethod
    def service_account(cls, value: str) -> Subject:
        """Parse ``NAMESPACE:NAME`` as kubectl create rolebinding --serviceaccount does.

        Raises:
            ValueError: not NAMESPACE:NAME.
        """
        namespace, sep, name = value.partition(":")
        if not sep or not namespace or not name:
            raise ValueError(f"{value!r} is not NAMESPACE:NAME")
        return cls("ServiceAccount", name, namespace)

    def to_dict(self) -> dict[str, str]:
        """The subject as a binding lists it."""
        out = {"kind": self.kind, "name": self.name}
        if self.kind == "ServiceAccount":
            out["namespace"] = str(self.namespace)
        else:
            out["apiGroup"] = "rbac.authorization.k8s.io"
        return out


def role_name(commands: Sequence[CommandAccess]) -> str:
    """kubectl-storage for all commands, kubectl-storage-<command>[-<command>…] otherwise."""
    if {c.command for c in commands} == set(COMMANDS):
        return DEFAULT_NAME
    return "-".join([DEFAULT_NAME, *(c.command for c in commands)])


def _metadata(
    name: str, namespace: str | None, commands: Sequence[CommandAccess]
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/name": DEFAULT_NAME}
    meta["annotations"] = {
        "kubectl-storage/commands": ",".join(c.command for c in commands),
    }
    return meta


def build_rbac_manifests(
    commands: Sequence[CommandAccess],
    *,
    namespace: str | None,
    name: str | None = None,
    subjects: Sequence[Subject] = (),
) -> list[dict[str, Any]]:
    """Role (namespace permissions) and ClusterRole (the rest), each only when it has rules,
    followed by a RoleBinding and ClusterRoleBinding when ``subjects`` are given.

    ``namespace`` None leaves the namespace out of the Role and RoleBinding: ``kubectl apply``
    then puts them in the context's namespace, the one the commands use without ``-n``.
    """
    name = name or role_name(commands)
    permissions = [p for c in commands for p in c.permissions]
    given = namespace is not None
    namespaced = policy_rules(p for p in permissions if not p.scope.cluster_wide(given))
    cluster = policy_rules(p for p in permissions if p.scope.cluster_wide(given))
    manifests: list[dict[str, Any]] = []
    if namespaced:
        manifests.append(
            {
                "apiVersion": RBAC_API_VERSION,
                "kind": "Role",
                "metadata": _metadata(name, namespace, commands),
                "rules": namespaced,
            }
        )
    if cluster:
        manifests.append(
            {
                "apiVersion": RBAC_API_VERSION,
                "kind": "ClusterRole",
                "metadata": _metadata(name, None, commands),
                "rules": cluster,
            }
        )
    if subjects:
        subject_dicts = [s.to_dict() for s in subjects]
        if namespaced:
            manifests.append(
                {
                    "apiVersion": RBAC_API_VERSION,
                    "kind": "RoleBinding",
                    "metadata": _metadata(name, namespace, commands),
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "Role",
                        "name": name,
                    },
                    "subjects": subject_dicts,
                }
            )
        if cluster:
            manifests.append(
                {
                    "apiVersion": RBAC_API_VERSION,
                    "kind": "ClusterRoleBinding",
                    "metadata": _metadata(name, None, commands),
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": name,
                    },
                    "subjects": subject_dicts,
                }
            )
    return manifests


def permission_rows(commands: Sequence[CommandAccess]) -> list[dict[str, str]]:
    """One row per permission, for the ``-o wide`` table: command, scope, group, what, why."""
    rows = []
    for access in commands:
        for permission in access.permissions:
            rows.append(
                {
                    "command": access.command,
                    "scope": str(permission.scope),
                    "apiGroup": permission.group or "core",
                    "resources": ",".join(permission.resources),
                    "verbs": ",".join(_sorted_verbs(permission.verbs)),
                    "why": permission.why,
                }
            )
    return rows
