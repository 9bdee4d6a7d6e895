"""The permissions each command needs: one table, and the checks preflight reads from it.

One table, read from what the operations do (kube/ calls: get, list, watch, create, patch,
delete, exec), so `kubectl storage rbac` prints the least a cluster admin has to grant:

* namespace scope: objects in the namespace the command works in (``-n``) → a Role;
* cluster scope: cluster-scoped kinds (nodes, StorageClasses, PVs, snapshot classes and
  contents) → a ClusterRole;
* every-namespace scope: namespaced kinds read in all namespaces (the volume mapping of
  mount-audit) → the same ClusterRole;
* searched scope (cleanup): the namespace given with ``-n`` (Role), or every namespace
  (ClusterRole), as the command itself searches.

Not listed because every authenticated user has them already (the ``system:basic-user`` and
``system:discovery`` ClusterRoles): creating SelfSubjectAccessReviews (the up-front permission
check) and reading API discovery (is the snapshot API installed?).

The Role/ClusterRole manifests that grant them are built in
:mod:`kubectl_storage.core.rbac.manifests`; this module is the table they are built from.

Exec goes over a WebSocket, which Kubernetes authorizes as ``get`` on ``pods/exec`` and, since
1.30, also as ``create``; both are granted so one Role works on old and new clusters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from kubectl_storage.core.k8s.kinds import VOLUME_SNAPSHOT

_STORAGE_GROUP = "storage.k8s.io"
SNAPSHOT_API_GROUP = VOLUME_SNAPSHOT.group


class Scope(StrEnum):
    """Where a permission applies."""

    NAMESPACE = "namespace"  # the namespace the command works in: a Role there
    CLUSTER = "cluster"  # cluster-scoped kinds: a ClusterRole
    ALL_NAMESPACES = "all-namespaces"  # namespaced kinds in every namespace: a ClusterRole
    SEARCHED = "searched"  # the namespace given with -n, or every namespace without it

    def cluster_wide(self, namespace_given: bool) -> bool:
        """Whether the permission goes into the ClusterRole."""
        if self is Scope.SEARCHED:
            return not namespace_given
        return self is not Scope.NAMESPACE


@dataclass(frozen=True)
class Permission:
    """Verbs on resources of one API group, and why the command needs them."""

    scope: Scope
    group: str  # "" for the core group
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str
    #: Needed only when the run does this (a :class:`Condition`); empty: always.
    when: str = ""


class Condition(StrEnum):
    """What a run may or may not do, deciding which optional permissions it needs."""

    NEW_VOLUME = "new-volume"  # creates its own PVC (fio without --pvc, snapshot restores)
    TAKE_SNAPSHOT = "take-snapshot"  # cuts a VolumeSnapshot (check; browse/cp of a live PVC)
    RESTORE = "restore"  # restores a snapshot into a PVC and reads it in a pod
    RESCHEDULE = "reschedule"  # moves the database pod to another node
    NODE_DRAIN = "node-drain"  # evicts the database pod from its cordoned node
    PVC_VOLUME = "pvc-volume"  # the database runs on a PVC (not an emptyDir control)


#: The verbs preflight checks up front: the writes. A read that is refused fails at once and
#: says so; a create that is refused halfway through a run, or a delete refused at cleanup,
#: leaves work undone or objects behind.
CHECKED_VERBS = ("create", "patch", "delete")


@dataclass(frozen=True)
class CommandAccess:
    """Everything one command needs from the API server."""

    command: str
    permissions: tuple[Permission, ...]
    note: str = ""


def _ns(group: str, resources: str, verbs: str, why: str, when: str = "") -> Permission:
    return Permission(
        Scope.NAMESPACE, group, tuple(resources.split()), tuple(verbs.split()), why, when
    )


def _cluster(group: str, resources: str, verbs: str, why: str) -> Permission:
    return Permission(Scope.CLUSTER, group, tuple(resources.split()), tuple(verbs.split()), why)


def _everywhere(group: str, resources: str, verbs: str, why: str) -> Permission:
    return Permission(
        Scope.ALL_NAMESPACES, group, tuple(resources.split()), tuple(verbs.split()), why
    )


def _searched(group: str, resources: str, why: str) -> Permission:
    return Permission(
        Scope.SEARCHED, group, tuple(resources.split()), ("get", "list", "delete"), why
    )


_LEFTOVERS = "find labelled leftovers (-n, or every namespace); delete them with --yes"


# Shared by every command that starts pods and runs commands in them.
_NAMESPACE_EXISTS = _ns("", "namespaces", "get", "check the namespace exists and read its labels")
_EXEC = _ns("", "pods/exec", "get create", "run the tool in the pod (exec over a WebSocket)")
_EVENTS = _ns("", "events", "list", "explain a wait that timed out with the object's events")
_NODE_PODS = (
    _NAMESPACE_EXISTS,
    _ns("", "pods", "get watch create delete", "start one debug pod per node and delete it"),
    _EXEC,
    _EVENTS,
    _cluster("", "nodes", "get list", "find the nodes (by name, -l or --all-nodes)"),
)

COMMANDS: dict[str, CommandAccess] = {
    access.command: access
    for access in (
        CommandAccess(
            "classes",
            (
                _cluster(_STORAGE_GROUP, "storageclasses csidrivers", "list", "list them"),
                _cluster(SNAPSHOT_API_GROUP, "volumesnapshotclasses", "list", "list them"),
            ),
        ),
        CommandAccess(
            "cleanup",
            (
                _searched(
                    "", "pods persistentvolumeclaims configmaps secrets services", _LEFTOVERS
                ),
                _searched("apps", "statefulsets deployments", _LEFTOVERS),
                _searched("batch", "jobs", _LEFTOVERS),
                _searched(SNAPSHOT_API_GROUP, "volumesnapshots", _LEFTOVERS),
            ),
        ),
        CommandAccess(
            "fio",
            (
                _NAMESPACE_EXISTS,
                _ns("", "pods", "get watch create delete", "run fio in a pod, then delete it"),
                _EXEC,
                _ns("", "configmaps", "get create delete", "hand the fio job file to the pod"),
                _ns("", "persistentvolumeclaims", "get", "read the claim's size (--pvc)"),
                _ns(
                    "",
                    "persistentvolumeclaims",
                    "create delete",
                    "a fresh volume per StorageClass (not with --pvc)",
                    Condition.NEW_VOLUME,
                ),
                _EVENTS,
                _cluster(_STORAGE_GROUP, "storageclasses", "list", "check the classes exist"),
                _cluster(
                    "",
                    "nodes",
                    "get",
                    "report the nodes' kernel and instance type (left out when refused)",
                ),
            ),
        ),
        CommandAccess(
            "iscsi",
            _NODE_PODS,
            note='Debug pods are privileged: the namespace must allow the "privileged" Pod '
            "Security level.",
        ),
        CommandAccess(
            "mount-audit",
            (
                *_NODE_PODS,
                _cluster("", "persistentvolumes", "list", "map mounts to PersistentVolumes"),
                _cluster(_STORAGE_GROUP, "storageclasses", "list", "map mounts to classes"),
                _everywhere(
                    "",
                    "pods persistentvolumeclaims events",
                    "list",
                    "map mounts to the pods and claims using them, with FailedMount events",
                ),
            ),
            note="Debug pods use hostPID and a read-only hostPath: the namespace must allow the "
            '"privileged" Pod Security level.',
        ),
        CommandAccess(
            "snapshot",
            (
                _NAMESPACE_EXISTS,
                _ns(SNAPSHOT_API_GROUP, "volumesnapshots", "get list watch", "list snapshots"),
                _ns(
                    SNAPSHOT_API_GROUP,
                    "volumesnapshots",
                    "create delete",
                    "take one (check, or browse/cp of a PVC) and wait for it",
                    Condition.TAKE_SNAPSHOT,
                ),
                _ns(
                    "",
                    "persistentvolumeclaims",
                    "get list",
                    "show whether a snapshot's source PVC still exists",
                ),
                _ns(
                    "",
                    "persistentvolumeclaims",
                    "create delete",
                    "source and restore volumes",
                    Condition.RESTORE,
                ),
                _ns(
                    "",
                    "pods",
                    "get watch create delete",
                    "write, read and browse the volumes",
                    Condition.RESTORE,
                ),
                _ns(
                    "",
                    "pods/exec",
                    "get create",
                    "run the tool in the pod (exec over a WebSocket)",
                    Condition.RESTORE,
                ),
                _EVENTS,
                _cluster(_STORAGE_GROUP, "storageclasses", "get list", "choose the restore class"),
                _cluster(
                    SNAPSHOT_API_GROUP,
                    "volumesnapshotclasses volumesnapshotcontents",
                    "get list",
                    "the snapshot's driver, class, size and readiness",
                ),
            ),
            note="snapshot list -A needs list on volumesnapshots and persistentvolumeclaims in "
            "every namespace (a ClusterRole).",
        ),
        CommandAccess(
            "validate-persistence",
            (
                _NAMESPACE_EXISTS,
                _ns("", "secrets", "get create delete", "the database password"),
                _ns("apps", "statefulsets", "get create delete", "run MySQL"),
                _ns(
                    "",
                    "pods/eviction",
                    "create",
                    "evict the database pod for the node-drain step",
                    Condition.NODE_DRAIN,
                ),
                _ns(
                    "",
                    "persistentvolumeclaims",
                    "get delete",
                    "delete the claim the StatefulSet created",
                    Condition.PVC_VOLUME,
                ),
                _ns("", "pods", "get watch delete", "wait for the database pod; kill it"),
                _EXEC,
                _EVENTS,
                _cluster(_STORAGE_GROUP, "storageclasses", "list", "check the class exists"),
                _cluster("", "nodes", "get list", "find another node for the pod to move to"),
                Permission(
                    Scope.CLUSTER,
                    "",
                    ("nodes",),
                    ("patch",),
                    "cordon the pod's node for reschedule and node-drain, and uncordon it",
                    Condition.RESCHEDULE,
                ),
                _cluster(
                    "", "persistentvolumes", "get", "tell whether the volume can follow the pod"
                ),
                _cluster(
                    _STORAGE_GROUP,
                    "csidrivers",
                    "get",
                    "tell whether the volume's driver attaches it to a node",
                ),
            ),
        ),
    )
}


class UnknownCommandError(ValueError):
    """A command name that is not in the table."""


def select_commands(names: Sequence[str]) -> list[CommandAccess]:
    """The table rows for ``names`` (all commands when empty), in table order.

    Raises:
        UnknownCommandError: a name is not a command.
    """
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        raise UnknownCommandError(
            f"unknown command {', '.join(unknown)}; one of: {', '.join(sorted(COMMANDS))}"
        )
    wanted = set(names) or set(COMMANDS)
    return [access for name, access in sorted(COMMANDS.items()) if name in wanted]


def checks_for(command: str, conditions: Iterable[str] = ()) -> list[Permission]:
    """The permissions preflight verifies for one run: the command's writes
    (:data:`CHECKED_VERBS`) that apply under ``conditions``, from the one table above. Writes on
    cluster-scoped kinds (cordoning a node) are checked too: refused at the move, they would
    fail the run after the database was made.

    Raises:
        UnknownCommandError: the command is not in the table.
    """
    if command not in COMMANDS:
        raise UnknownCommandError(f"unknown command {command}")
    active = set(conditions)
    checked = []
    for permission in COMMANDS[command].permissions:
        if permission.scope not in (Scope.NAMESPACE, Scope.CLUSTER):
            continue
        if permission.when and permission.when not in active:
            continue
        verbs = tuple(v for v in permission.verbs if v in CHECKED_VERBS)
        if verbs:
            checked.append(
                Permission(
                    permission.scope,
                    permission.group,
                    permission.resources,
                    verbs,
                    permission.why,
                    permission.when,
                )
            )
    return checked
