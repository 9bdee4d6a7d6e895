"""Does committed MySQL data survive pod loss? The MySQL pod of `validate-persistence`.

What lives here: the disruptions and volume types, the manifests (a one-replica StatefulSet, its
Secret, the claim template or an emptyDir control, the fsync probe's container) and the shell the
client runs inside the pod. Rows and checksums are in :mod:`.rows`, the crash writer in
:mod:`.writer`, the report in :mod:`.report`, nodes and moves in :mod:`.nodes`. Standard
library only; operations/validate_persistence runs it.

The MySQL pod passes the ``restricted`` Pod Security level. The official image's entrypoint starts
as root only to chown the data directory and then drops to its ``mysql`` user (UID/GID 999);
started directly as UID 999, with fsGroup 999 making the volume writable, it needs no root, no
capabilities and no privilege escalation. Clusters that assign UIDs themselves (OpenShift) get no
runAsUser/fsGroup and the image runs under the assigned UID. The data volume is mounted with
``subPath: mysql`` so a filesystem's ``lost+found`` never sits in MySQL's data directory (MySQL
refuses to initialise a non-empty one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from kubectl_storage.core.k8s.manifests import PodPlacement, build_pvc
from kubectl_storage.core.k8s.objects import JsonDict

#: UID and GID of the ``mysql`` user in the official mysql, mariadb and percona images.
MYSQL_UID = 999
MYSQL_PORT = 3306
DATA_DIR = "/var/lib/mysql"
#: The server's data directory is this directory inside the volume, never the volume's root.
DATA_SUBPATH = "mysql"
MYSQL_CONTAINER = "mysql"
CLIENT_CONTAINER = "client"
#: The container that runs the fsync probe (the toolbox image, fio) on the same volume.
PROBE_CONTAINER = "probe"
#: Where the probe container sees the whole data volume (MySQL's directory is a subdirectory).
PROBE_DIR = "/probe"
PASSWORD_KEY = "password"
#: What --dry-run shows instead of the password (which is generated per run and never shown).
PASSWORD_PLACEHOLDER = "<generated at run time, never shown>"
#: Seconds a gracefully deleted MySQL pod gets to flush and shut down.
TERMINATION_GRACE_S = 60
#: Where the crash writer looks for the file that asks it to stop (the client container's /tmp).
WRITER_STOP_FILE = "/tmp/kubectl-storage-writer.stop"
#: Server process names the crash phase kills (mysql/percona: mysqld; MariaDB: mariadbd).
SERVER_PROCESS_NAMES = ("mysqld", "mariadbd")
#: MySQL's own files (redo and undo logs, system tablespaces) on a fresh data directory, rounded up.
SERVER_FILES_BYTES = 320 * 1024 * 1024
#: Generous space one seeded row takes in InnoDB, index and page overhead included.
ROW_BYTES = 2048
MAX_ROWS = 1_000_000

READY_SQL = "SELECT 1"

# -- what to do -----------------------------------------------------------------------------


class Disruption(StrEnum):
    """What happens to the MySQL pod between writing and reading back."""

    RESTART = "restart"  # graceful pod delete; the StatefulSet recreates it
    CRASH = "crash"  # mysqld SIGKILLed while a writer commits rows one at a time
    RESCHEDULE = "reschedule"  # the pod moved to another node: the volume detaches and reattaches
    NODE_DRAIN = "node-drain"  # the pod evicted from its cordoned node, as a drain does (opt-in)
    #: The user disrupts the database while a writer commits (opt-in; the tool waits and sees).
    EXTERNAL = "external"
    #: The pod's node kernel crashed (sysrq b) while a writer commits (opt-in, the node named
    #: twice: --node N --crash-node N; core/validate_persistence/node_crash.py).
    NODE_CRASH = "node-crash"


#: What runs when --disruptions is not given (node-drain is opt-in: it is a failover drill).
ALL_DISRUPTIONS = (Disruption.RESTART, Disruption.CRASH, Disruption.RESCHEDULE)
#: Disruptions that put the pod on another node.
MOVES = (Disruption.RESCHEDULE, Disruption.NODE_DRAIN)


class VolumeType(StrEnum):
    """Where MySQL keeps its data: a PVC of the class, or a pod-local emptyDir (the control)."""

    PVC = "pvc"
    EMPTY_DIR = "emptyDir"


def parse_disruptions(text: str) -> tuple[Disruption, ...]:
    """Parse ``restart,crash,reschedule,node-drain`` (any order; repeats dropped, order kept).

    Raises:
        ValueError: on an empty list or an unknown name.
    """
    chosen: list[Disruption] = []
    for part in filter(None, (p.strip().lower() for p in text.split(","))):
        try:
            disruption = Disruption(part)
        except ValueError:
            names = ", ".join(d.value for d in Disruption)
            raise ValueError(f"unknown disruption {part!r} (choose from {names})") from None
        if disruption not in chosen:
            chosen.append(disruption)
    if not chosen:
        names = ", ".join(d.value for d in Disruption)
        raise ValueError(f"no disruption given (choose from {names})")
    return tuple(chosen)


def required_bytes(rows: int) -> int:
    """Space a fresh MySQL data directory with ``rows`` seeded rows needs (an upper bound)."""
    return SERVER_FILES_BYTES + rows * ROW_BYTES


# -- manifests ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MysqlDeployment:
    """Everything the MySQL StatefulSet and its Secret are built from."""

    name: str
    namespace: str
    image: str
    secret_name: str
    storage_class: str | None
    size: str
    volume_type: VolumeType = VolumeType.PVC
    placement: PodPlacement = field(default_factory=PodPlacement)
    #: UID, GID and fsGroup of the server; None leaves them to the cluster (OpenShift assigns).
    run_as_user: int | None = MYSQL_UID
    #: Options appended to the server's command line (``--server-arg``), e.g. durability settings.
    server_args: tuple[str, ...] = ()
    #: The image of the fsync probe's container (fio); None: no probe.
    probe_image: str | None = None


def pod_name_for(statefulset: str) -> str:
    """The name of the StatefulSet's only pod."""
    return f"{statefulset}-0"


def pvc_name_for(statefulset: str) -> str:
    """The name of the claim the StatefulSet's claim template ``data`` creates for its pod."""
    return f"data-{statefulset}-0"


def selector_labels(statefulset: str) -> dict[str, str]:
    """Labels that tie the StatefulSet to its pod."""
    return {"app.kubernetes.io/name": "mysql", "app.kubernetes.io/instance": statefulset}


def build_secret(name: str, namespace: str, password: str) -> JsonDict:
    """The Secret holding MySQL's root password (given as stringData; never printed)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "stringData": {PASSWORD_KEY: password},
    }


def _secret_env(name: str, secret: str) -> JsonDict:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": PASSWORD_KEY}}}


def _container_security() -> JsonDict:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
    }


def build_mysql_statefulset(d: MysqlDeployment) -> JsonDict:
    """A one-replica StatefulSet: the server container and an idle client container.

    The client container (same image, so the same client) is where every SQL statement runs,
    over TCP to 127.0.0.1 with the password from ``MYSQL_PWD``: nothing secret in argv or logs,
    no Service or DNS needed, and the crash writer keeps its output when mysqld is killed. The
    pod shares one process namespace so the client can SIGKILL mysqld (same UID, no capability).
    """
    labels = selector_labels(d.name)
    pod_security: JsonDict = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    if d.run_as_user is not None:
        pod_security.update(
            {
                "runAsUser": d.run_as_user,
                "runAsGroup": d.run_as_user,
                "fsGroup": d.run_as_user,
                "fsGroupChangePolicy": "OnRootMismatch",
            }
        )
    server: JsonDict = {
        "name": MYSQL_CONTAINER,
        "image": d.image,
        "imagePullPolicy": "IfNotPresent",
        "env": [
            _secret_env("MYSQL_ROOT_PASSWORD", d.secret_name),
            _secret_env("MARIADB_ROOT_PASSWORD", d.secret_name),
        ],
        "ports": [{"name": "mysql", "containerPort": MYSQL_PORT}],
        # The entrypoint writes the socket and pid file under /var/run/mysqld, so the root
        # filesystem stays writable; restricted does not require it read-only.
        "securityContext": _container_security(),
        "volumeMounts": [{"name": "data", "mountPath": DATA_DIR, "subPath": DATA_SUBPATH}],
        # A server that fails to start leaves its last log lines in the pod status.
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if d.server_args:
        # Options only: the images' entrypoints put the server's name in front of args that
        # start with "-", as `docker run IMAGE --option` does.
        server["args"] = list(d.server_args)
    client: JsonDict = {
        "name": CLIENT_CONTAINER,
        "image": d.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sleep", "infinity"],
        "env": [_secret_env("MYSQL_PWD", d.secret_name)],
        "securityContext": {**_container_security(), "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    containers = [server, client]
    if d.probe_image:
        containers.append(
            {
                "name": PROBE_CONTAINER,
                "image": d.probe_image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["sleep", "infinity"],
                "securityContext": {**_container_security(), "readOnlyRootFilesystem": True},
                # The whole volume: the probe's file sits beside MySQL's directory, on the
                # same filesystem and device.
                "volumeMounts": [
                    {"name": "data", "mountPath": PROBE_DIR},
                    {"name": "tmp", "mountPath": "/tmp"},
                ],
            }
        )
    volumes: list[JsonDict] = [{"name": "tmp", "emptyDir": {}}]
    if d.volume_type is VolumeType.EMPTY_DIR:
        volumes.append({"name": "data", "emptyDir": {}})
    pod_spec: JsonDict = {
        "shareProcessNamespace": True,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": TERMINATION_GRACE_S,
        "securityContext": pod_security,
        "containers": containers,
        "volumes": volumes,
    }
    d.placement.apply(pod_spec, server)
    spec: JsonDict = {
        "replicas": 1,
        "serviceName": d.name,
        "podManagementPolicy": "OrderedReady",
        "selector": {"matchLabels": dict(labels)},
        "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
    }
    if d.volume_type is VolumeType.PVC:
        if not d.storage_class:
            raise ValueError("a PVC-backed MySQL needs a StorageClass")
        claim = build_pvc("data", d.namespace, d.storage_class, d.size)
        del claim["metadata"]["namespace"]
        spec["volumeClaimTemplates"] = [
            {"metadata": claim["metadata"], "spec": claim["spec"]},
        ]
        spec["persistentVolumeClaimRetentionPolicy"] = {
            "whenDeleted": "Delete",
            "whenScaled": "Delete",
        }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": d.name, "namespace": d.namespace, "labels": dict(labels)},
        "spec": spec,
    }


# -- the client inside the pod --------------------------------------------------------------

#: Picks the client binary (MariaDB 11 images ship only ``mariadb``, MySQL only ``mysql``) and
#: connects over TCP to the server in the same pod; the password comes from MYSQL_PWD.
CLIENT_SCRIPT = (
    "if command -v mariadb >/dev/null 2>&1; then c=mariadb; else c=mysql; fi; "
    'sql() { "$c" --protocol=TCP -h 127.0.0.1 -P ' + str(MYSQL_PORT) + ' -u root -N -B "$@"; }; '
)


def sql_command(sql: str) -> list[str]:
    """argv that runs ``sql`` (passed as an argument, never spliced into the script)."""
    return ["sh", "-c", CLIENT_SCRIPT + 'sql -e "$1"', "sh", sql]


def sql_stdin_command(size: int) -> list[str]:
    """argv that runs the ``size`` bytes of SQL sent on stdin (``head`` ends the input)."""
    return ["sh", "-c", CLIENT_SCRIPT + 'head -c "$1" | sql', "sh", str(size)]


_MISSING_TABLE = re.compile(r"ERROR (1049|1146)\b")


def is_missing_table_error(stderr: str) -> bool:
    """Whether the client said the database or the table does not exist (the data is gone)."""
    return bool(_MISSING_TABLE.search(stderr))


def check_server_args(args: tuple[str, ...]) -> None:
    """Refuse a ``--server-arg`` that is not one server option (``--name`` or ``--name=value``).

    Raises:
        ValueError: on anything else (a word that is not an option, whitespace in it).
    """
    for arg in args:
        if not re.fullmatch(r"--[A-Za-z0-9][A-Za-z0-9_-]*(=\S*)?", arg):
            raise ValueError(
                f"--server-arg {arg!r} is not one server option such as "
                "--innodb-flush-log-at-trx-commit=2"
            )
