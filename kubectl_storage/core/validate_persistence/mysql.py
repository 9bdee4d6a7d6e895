"""Does committed MySQL data survive pod loss? The pure half of `validate-persistence`.

What lives here: the MySQL manifests (a one-replica StatefulSet, its Secret, the claim template or
an emptyDir control), the seed schema and rows, the shell the client runs inside the pod, the
checksum of the table, the accounting of the commits a writer had acknowledged when mysqld was
killed, and the PersistenceReport model. Standard library only; operations/persistence.py runs it.

The MySQL pod passes the ``restricted`` Pod Security level. The official image's entrypoint starts
as root only to chown the data directory and then drops to its ``mysql`` user (UID/GID 999);
started directly as UID 999, with fsGroup 999 making the volume writable, it needs no root, no
capabilities and no privilege escalation. Clusters that assign UIDs themselves (OpenShift) get no
runAsUser/fsGroup and the image runs under the assigned UID. The data volume is mounted with
``subPath: mysql`` so a filesystem's ``lost+found`` never sits in MySQL's data directory (MySQL
refuses to initialise a non-empty one).
"""

from __future__ import annotations

import hashlib
import random
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kubectl_storage.core.k8s.manifests import Manifest, PodPlacement, Toleration, build_pvc
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.report.envelope import report_envelope

DATABASE = "testdb"
TABLE = "tasks"
QUALIFIED_TABLE = f"`{DATABASE}`.`{TABLE}`"

#: UID and GID of the ``mysql`` user in the official mysql, mariadb and percona images.
MYSQL_UID = 999
MYSQL_PORT = 3306
DATA_DIR = "/var/lib/mysql"
#: The server's data directory is this directory inside the volume, never the volume's root.
DATA_SUBPATH = "mysql"
MYSQL_CONTAINER = "mysql"
CLIENT_CONTAINER = "client"
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

SCHEMA_SQL = (
    f"CREATE DATABASE IF NOT EXISTS `{DATABASE}`;\n"
    f"CREATE TABLE IF NOT EXISTS {QUALIFIED_TABLE} (\n"
    "  task_id INT AUTO_INCREMENT PRIMARY KEY,\n"
    "  title VARCHAR(255) NOT NULL,\n"
    "  description TEXT,\n"
    "  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP\n"
    ") ENGINE=InnoDB;\n"
)

#: The table as the checks read it: hex keeps any byte exact through the client's batch output.
DUMP_SQL = (
    "SELECT task_id, HEX(title), HEX(description), UNIX_TIMESTAMP(created_at) "
    f"FROM {QUALIFIED_TABLE} ORDER BY task_id"
)
READY_SQL = "SELECT 1"

_PAYLOAD_ALPHABET = string.ascii_letters + string.digits + " .,-_"


# -- what to do -----------------------------------------------------------------------------


class Disruption(StrEnum):
    """What happens to the MySQL pod between writing and reading back."""

    RESTART = "restart"  # graceful pod delete; the StatefulSet recreates it
    CRASH = "crash"  # mysqld SIGKILLed while a writer commits rows one at a time
    RESCHEDULE = "reschedule"  # the pod moved to another node: the volume detaches and reattaches


ALL_DISRUPTIONS = (Disruption.RESTART, Disruption.CRASH, Disruption.RESCHEDULE)


class VolumeType(StrEnum):
    """Where MySQL keeps its data: a PVC of the class, or a pod-local emptyDir (the control)."""

    PVC = "pvc"
    EMPTY_DIR = "emptyDir"


def parse_disruptions(text: str) -> tuple[Disruption, ...]:
    """Parse ``restart,crash,reschedule`` (any order, no repeats kept; order is kept).

    Raises:
        ValueError: on an empty list or an unknown name.
    """
    chosen: list[Disruption] = []
    for part in filter(None, (p.strip().lower() for p in text.split(","))):
        try:
            disruption = Disruption(part)
        except ValueError:
            names = ", ".join(d.value for d in ALL_DISRUPTIONS)
            raise ValueError(f"unknown disruption {part!r} (choose from {names})") from None
        if disruption not in chosen:
            chosen.append(disruption)
    if not chosen:
        raise ValueError("no disruption given (choose from restart, crash, reschedule)")
    return tuple(chosen)


def parse_volume_type(text: str) -> VolumeType:
    """Parse ``pvc`` or ``emptyDir`` (case-insensitive).

    Raises:
        ValueError: on anything else.
    """
    for volume_type in VolumeType:
        if text.strip().lower() == volume_type.value.lower():
            return volume_type
    raise ValueError(f"--volume-type must be pvc or emptyDir, not {text!r}")


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


def pod_name_for(statefulset: str) -> str:
    """The name of the StatefulSet's only pod."""
    return f"{statefulset}-0"


def pvc_name_for(statefulset: str) -> str:
    """The name of the claim the StatefulSet's claim template ``data`` creates for its pod."""
    return f"data-{statefulset}-0"


def selector_labels(statefulset: str) -> dict[str, str]:
    """Labels that tie the StatefulSet to its pod."""
    return {"app.kubernetes.io/name": "mysql", "app.kubernetes.io/instance": statefulset}


def build_secret(name: str, namespace: str, password: str) -> Manifest:
    """The Secret holding MySQL's root password (given as stringData; never printed)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "Opaque",
        "stringData": {PASSWORD_KEY: password},
    }


def _secret_env(name: str, secret: str) -> Manifest:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": PASSWORD_KEY}}}


def _container_security() -> Manifest:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
    }


def build_mysql_statefulset(d: MysqlDeployment) -> Manifest:
    """A one-replica StatefulSet: the server container and an idle client container.

    The client container (same image, so the same client) is where every SQL statement runs,
    over TCP to 127.0.0.1 with the password from ``MYSQL_PWD``: nothing secret in argv or logs,
    no Service or DNS needed, and the crash writer keeps its output when mysqld is killed. The
    pod shares one process namespace so the client can SIGKILL mysqld (same UID, no capability).
    """
    labels = selector_labels(d.name)
    pod_security: Manifest = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    if d.run_as_user is not None:
        pod_security.update(
            {
                "runAsUser": d.run_as_user,
                "runAsGroup": d.run_as_user,
                "fsGroup": d.run_as_user,
                "fsGroupChangePolicy": "OnRootMismatch",
            }
        )
    server: Manifest = {
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
    client: Manifest = {
        "name": CLIENT_CONTAINER,
        "image": d.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sleep", "infinity"],
        "env": [_secret_env("MYSQL_PWD", d.secret_name)],
        "securityContext": {**_container_security(), "readOnlyRootFilesystem": True},
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    volumes: list[Manifest] = [{"name": "tmp", "emptyDir": {}}]
    if d.volume_type is VolumeType.EMPTY_DIR:
        volumes.append({"name": "data", "emptyDir": {}})
    pod_spec: Manifest = {
        "shareProcessNamespace": True,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": TERMINATION_GRACE_S,
        "securityContext": pod_security,
        "containers": [server, client],
        "volumes": volumes,
    }
    d.placement.apply(pod_spec, server)
    spec: Manifest = {
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


def avoid_node_patch(node: str) -> Manifest:
    """Merge patch for the StatefulSet: schedule its pod anywhere but ``node``."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": [node]}]}
    return {
        "spec": {
            "template": {
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [term]
                            }
                        }
                    }
                }
            }
        }
    }


# -- nodes ----------------------------------------------------------------------------------


def _tolerates(taint: Mapping[str, Any], tolerations: Sequence[Toleration]) -> bool:
    for toleration in tolerations:
        if toleration.key == "*":
            return True
        if toleration.key != taint.get("key"):
            continue
        if toleration.effect and toleration.effect != taint.get("effect"):
            continue
        if toleration.value is None or toleration.value == taint.get("value"):
            return True
    return False


def schedulable_nodes(nodes: Iterable[Mapping[str, Any]], placement: PodPlacement) -> list[str]:
    """Names of the Ready, schedulable nodes the MySQL pod may land on (selector and taints)."""
    names = []
    for node in nodes:
        meta = node.get("metadata") or {}
        spec = node.get("spec") or {}
        if spec.get("unschedulable"):
            continue
        conditions = dig(node, "status", "conditions") or []
        if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
            continue
        labels = meta.get("labels") or {}
        if any(labels.get(k) != v for k, v in placement.node_selector.items()):
            continue
        blocking = [
            t
            for t in spec.get("taints") or []
            if t.get("effect") in ("NoSchedule", "NoExecute")
            and not _tolerates(t, placement.tolerations)
        ]
        if blocking:
            continue
        if placement.node_name and meta.get("name") != placement.node_name:
            continue
        names.append(str(meta.get("name")))
    return sorted(names)


# -- the client inside the pod --------------------------------------------------------------

#: Picks the client binary (MariaDB 11 images ship only ``mariadb``, MySQL only ``mysql``) and
#: connects over TCP to the server in the same pod; the password comes from MYSQL_PWD.
_CLIENT = (
    "if command -v mariadb >/dev/null 2>&1; then c=mariadb; else c=mysql; fi; "
    'sql() { "$c" --protocol=TCP -h 127.0.0.1 -P ' + str(MYSQL_PORT) + ' -u root -N -B "$@"; }; '
)


def sql_command(sql: str) -> list[str]:
    """argv that runs ``sql`` (passed as an argument, never spliced into the script)."""
    return ["sh", "-c", _CLIENT + 'sql -e "$1"', "sh", sql]


def sql_stdin_command(size: int) -> list[str]:
    """argv that runs the ``size`` bytes of SQL sent on stdin (``head`` ends the input)."""
    return ["sh", "-c", _CLIENT + 'head -c "$1" | sql', "sh", str(size)]


def crash_writer_command(
    kill_after: int, *, kill_delay_s: int = 1, max_commits: int = 100_000
) -> list[str]:
    """argv of the crash writer: it commits rows one at a time and SIGKILLs mysqld mid-stream.

    Each commit is one client run with one INSERT (autocommit) followed by LAST_INSERT_ID().
    ``kill_delay_s`` seconds after the ``kill_after``-th acknowledged commit, a background job
    SIGKILLs the server while the loop keeps committing; the pod shares one process namespace,
    so the client container sees mysqld in /proc, and the same UID needs no capability. The
    writer and its killer live in the client container, so their output survives the crash.

    Output lines: ``ack SEQ ID`` once the server acknowledged the commit of row SEQ (task_id
    ID); ``killed PID NAME`` per process killed (``nokill`` when none was found); ``fail SEQ
    ERROR`` when attempt SEQ failed (its commit may or may not have happened) and the writer
    stops; ``stop SEQ`` when it stopped between attempts; ``end SEQ`` last.
    """
    names = "|".join(SERVER_PROCESS_NAMES)
    # Inside the script's double quotes: plain identifiers (backticks would run a command).
    insert = (
        f"INSERT INTO {DATABASE}.{TABLE} (title, description) "
        "VALUES ('crash-$i', 'written by the crash writer, commit $i'); "
        "SELECT LAST_INSERT_ID();"
    )
    script = (
        _CLIENT + "kill_server() { k=0; for p in /proc/[0-9]*; do "
        'read -r n 2>/dev/null < "$p/comm" || continue; '
        f'case "$n" in {names}) kill -KILL "${{p#/proc/}}" && echo "killed ${{p#/proc/}} $n" '
        "&& k=1;; esac; done; "
        f'[ "$k" = 1 ] || echo nokill; : > "{WRITER_STOP_FILE}"; }}; '
        f'rm -f "{WRITER_STOP_FILE}"; i=0; '
        'while [ "$i" -lt "$1" ]; do '
        f'if [ -e "{WRITER_STOP_FILE}" ]; then echo "stop $i"; break; fi; '
        "i=$((i+1)); "
        f'if out=$(sql -e "{insert}" 2>&1); then '
        'echo "ack $i $(printf "%s" "$out" | tail -n 1)"; '
        'if [ "$i" -eq "$2" ]; then ( sleep "$3"; kill_server ) & fi; '
        'else echo "fail $i $(printf "%s" "$out" | tr "\\n" " ")"; break; fi; '
        'done; wait; echo "end $i"'
    )
    return ["sh", "-c", script, "sh", str(max_commits), str(kill_after), str(kill_delay_s)]


_MISSING_TABLE = re.compile(r"ERROR (1049|1146)\b")


def is_missing_table_error(stderr: str) -> bool:
    """Whether the client said the database or the table does not exist (the data is gone)."""
    return bool(_MISSING_TABLE.search(stderr))


# -- rows and checksums ---------------------------------------------------------------------


@dataclass(frozen=True)
class TaskRow:
    """A row as written: the content the application controls."""

    task_id: int
    title: str
    description: str | None


@dataclass(frozen=True)
class StoredRow:
    """A row as read back, with the server's timestamp."""

    task_id: int
    title: str
    description: str | None
    created_at: int | None

    def content(self) -> TaskRow:
        """The written part of the row."""
        return TaskRow(self.task_id, self.title, self.description)


def generate_rows(count: int, rng: random.Random, *, start_id: int = 1) -> tuple[TaskRow, ...]:
    """``count`` rows with explicit ids and random printable payloads."""

    def text(low: int, high: int) -> str:
        return "".join(rng.choice(_PAYLOAD_ALPHABET) for _ in range(rng.randint(low, high)))

    return tuple(
        TaskRow(task_id, f"task {task_id}: {text(8, 40)}", text(32, 400))
        for task_id in range(start_id, start_id + count)
    )


def writer_row(seq: int, task_id: int) -> TaskRow:
    """The row the crash writer commits as its ``seq``-th commit."""
    return TaskRow(task_id, f"crash-{seq}", f"written by the crash writer, commit {seq}")


def _sql_string(value: str | None) -> str:
    if value is None:
        return "NULL"
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def seed_sql(rows: Sequence[TaskRow], *, batch: int = 100) -> str:
    """The schema, then the rows in committed transactions of ``batch`` rows."""
    parts = [SCHEMA_SQL]
    for start in range(0, len(rows), batch):
        values = ",\n".join(
            f"({r.task_id}, {_sql_string(r.title)}, {_sql_string(r.description)})"
            for r in rows[start : start + batch]
        )
        parts.append(
            "START TRANSACTION;\n"
            f"INSERT INTO {QUALIFIED_TABLE} (task_id, title, description) VALUES\n{values};\n"
            "COMMIT;\n"
        )
    return "".join(parts)


def _unhex(text: str) -> str | None:
    if text == "NULL":
        return None
    return bytes.fromhex(text).decode("utf-8", "surrogateescape")


def parse_dump(text: str) -> tuple[StoredRow, ...]:
    """Parse the client's batch output of :data:`DUMP_SQL`.

    Raises:
        ValueError: on a line that is not four tab-separated fields.
    """
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise ValueError(f"line {number} of the table dump has {len(fields)} fields: {line!r}")
        task_id, title, description, created = fields
        try:
            rows.append(
                StoredRow(
                    int(task_id),
                    _unhex(title) or "",
                    _unhex(description),
                    None if created == "NULL" else int(float(created)),
                )
            )
        except ValueError as exc:
            raise ValueError(f"line {number} of the table dump: {exc}") from exc
    return tuple(rows)


def table_checksum(rows: Iterable[TaskRow]) -> str:
    """SHA-256 over the rows' written content in id order: ``sha256:<hex>``."""
    digest = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r.task_id):
        description = "NULL" if row.description is None else row.description.encode().hex()
        digest.update(f"{row.task_id}\t{row.title.encode().hex()}\t{description}\n".encode())
    return "sha256:" + digest.hexdigest()


@dataclass(frozen=True)
class TableComparison:
    """The expected rows against those found after a disruption."""

    rows_expected: int
    rows_found: int
    missing_ids: tuple[int, ...]
    changed_ids: tuple[int, ...]
    #: Rows found that were never written or acknowledged (the crash's in-flight row aside).
    unexpected_ids: tuple[int, ...]
    checksum_expected: str
    #: Checksum of the found rows with the expected ids.
    checksum_found: str
    table_missing: bool = False

    @property
    def checksum_match(self) -> bool:
        """Whether every expected row came back byte for byte."""
        return self.checksum_expected == self.checksum_found

    @property
    def intact(self) -> bool:
        """Nothing lost, changed or made up."""
        return (
            self.checksum_match
            and not self.missing_ids
            and not self.changed_ids
            and not self.unexpected_ids
        )


def compare_rows(
    expected: Sequence[TaskRow],
    found: Sequence[StoredRow],
    *,
    baseline: Mapping[int, StoredRow] | None = None,
    tolerated_ids: Iterable[int] = (),
    table_missing: bool = False,
) -> TableComparison:
    """Compare what was written with what was read back.

    ``baseline`` (the rows as read right after writing) also catches a changed ``created_at``;
    ``tolerated_ids`` are rows that may or may not exist (the commit in flight at a crash).
    """
    by_id = {row.task_id: row for row in found}
    missing = []
    changed = []
    for row in expected:
        got = by_id.get(row.task_id)
        if got is None:
            missing.append(row.task_id)
        elif got.content() != row or (
            baseline is not None and baseline.get(row.task_id, got) != got
        ):
            changed.append(row.task_id)
    expected_ids = {row.task_id for row in expected}
    tolerated = set(tolerated_ids)
    unexpected = sorted(i for i in by_id if i not in expected_ids and i not in tolerated)
    return TableComparison(
        rows_expected=len(expected),
        rows_found=len(found),
        missing_ids=tuple(missing),
        changed_ids=tuple(changed),
        unexpected_ids=tuple(unexpected),
        checksum_expected=table_checksum(expected),
        checksum_found=table_checksum(by_id[i].content() for i in expected_ids if i in by_id),
        table_missing=table_missing,
    )


# -- acknowledged commits during the crash --------------------------------------------------


@dataclass(frozen=True)
class WriterLog:
    """What the crash writer printed: the commits it saw acknowledged, and how it ended."""

    #: (seq, task_id) of every commit the server acknowledged, in order.
    acknowledged: tuple[tuple[int, int], ...]
    #: The attempt that failed (its commit may or may not have happened), if any.
    in_flight_seq: int | None
    ended: str  # "fail", "stop" or "cut" (the output ended without the writer's last line)
    error: str = ""
    #: (pid, process name) of each server process the writer's killer SIGKILLed.
    killed: tuple[tuple[int, str], ...] = ()

    @property
    def attempts(self) -> int:
        """Commits tried: the acknowledged ones and the one in flight."""
        return len(self.acknowledged) + (1 if self.in_flight_seq is not None else 0)


def parse_writer_output(text: str) -> WriterLog:
    """Read the crash writer's lines (see :func:`crash_writer_command`).

    A line cut off by a lost connection never counts as an acknowledgement.
    """
    acknowledged: list[tuple[int, int]] = []
    killed: list[tuple[int, str]] = []
    in_flight: int | None = None
    ended = "cut"
    error = ""
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()  # half a line: the connection was cut while it was written
    for line in lines:
        words = line.split(" ", 2)
        number = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        if words[0] == "ack" and number is not None:
            task_id = words[2].strip() if len(words) == 3 else ""
            if task_id.isdigit():
                acknowledged.append((number, int(task_id)))
            else:
                in_flight = number  # the commit happened, but its id never came back
        elif words[0] == "killed" and number is not None and len(words) == 3:
            killed.append((number, words[2].strip()))
        elif words[0] == "fail" and number is not None:
            in_flight = number
            ended = "fail"
            error = words[2].strip() if len(words) == 3 else ""
            # Some clients echo the failed statement first; the ERROR line is what matters.
            error = error[error.find("ERROR ") :] if "ERROR " in error else error
        elif words[0] in ("stop", "end") and ended == "cut":
            ended = "stop"
    return WriterLog(tuple(acknowledged), in_flight, ended, error, tuple(killed))


@dataclass(frozen=True)
class CommitAccounting:
    """Acknowledged commits against the rows found after recovery."""

    acknowledged: int
    acknowledged_present: int
    #: task_ids of acknowledged commits that are missing or changed: data loss.
    lost_ids: tuple[int, ...]
    in_flight_seq: int | None
    #: Whether the unacknowledged in-flight commit survived (either outcome is correct).
    in_flight_present: bool | None

    @property
    def ok(self) -> bool:
        """Every acknowledged commit survived."""
        return not self.lost_ids


def account_commits(
    log: WriterLog, found: Sequence[StoredRow], *, first_writer_id: int
) -> tuple[CommitAccounting, tuple[TaskRow, ...], tuple[int, ...]]:
    """Check that every acknowledged commit is present after recovery.

    Returns the accounting, the writer's rows that must exist from now on (acknowledged ones,
    plus the in-flight one when it turned out committed) and the ids of the found rows the
    writer may have written without acknowledgement (tolerated by :func:`compare_rows`).
    """
    by_id = {row.task_id: row for row in found}
    lost = []
    present = 0
    durable: list[TaskRow] = []
    for seq, task_id in log.acknowledged:
        row = writer_row(seq, task_id)
        durable.append(row)
        got = by_id.get(task_id)
        if got is not None and got.content() == row:
            present += 1
        else:
            lost.append(task_id)
    acknowledged_ids = {task_id for _, task_id in log.acknowledged}
    in_flight_present: bool | None = None
    tolerated: list[int] = []
    if log.in_flight_seq is not None:
        in_flight_present = False
        title = writer_row(log.in_flight_seq, 0).title
        for stored in found:
            if (
                stored.task_id >= first_writer_id
                and stored.task_id not in acknowledged_ids
                and stored.title == title
            ):
                in_flight_present = True
                durable.append(writer_row(log.in_flight_seq, stored.task_id))
                tolerated.append(stored.task_id)
    accounting = CommitAccounting(
        acknowledged=len(log.acknowledged),
        acknowledged_present=present,
        lost_ids=tuple(lost),
        in_flight_seq=log.in_flight_seq,
        in_flight_present=in_flight_present,
    )
    return accounting, tuple(durable), tuple(tolerated)


# -- the report -----------------------------------------------------------------------------


class Verdict(StrEnum):
    """Outcome of a phase, or of the whole check."""

    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"


#: How many ids a report lists per category (the counts are always complete).
LISTED_IDS = 20


@dataclass(frozen=True)
class PhaseResult:
    """One phase: the seed, or a disruption followed by reading everything back."""

    phase: str  # "seed" or a Disruption value
    verdict: Verdict
    time_to_ready_s: float | None = None
    comparison: TableComparison | None = None
    commits: CommitAccounting | None = None
    writer_attempts: int | None = None
    node_before: str | None = None
    node_after: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (stable key order)."""
        out: dict[str, Any] = {"phase": self.phase, "verdict": self.verdict.value}
        out["time_to_ready_s"] = (
            round(self.time_to_ready_s, 1) if self.time_to_ready_s is not None else None
        )
        c = self.comparison
        out["rows_expected"] = c.rows_expected if c else None
        out["rows_found"] = c.rows_found if c else None
        out["checksum_match"] = c.checksum_match if c else None
        if c:
            out["checksum_expected"] = c.checksum_expected
            out["checksum_found"] = c.checksum_found
            out["rows_missing"] = len(c.missing_ids)
            out["rows_changed"] = len(c.changed_ids)
            out["rows_unexpected"] = len(c.unexpected_ids)
            out["missing_ids"] = list(c.missing_ids[:LISTED_IDS])
            out["changed_ids"] = list(c.changed_ids[:LISTED_IDS])
            out["unexpected_ids"] = list(c.unexpected_ids[:LISTED_IDS])
            out["table_missing"] = c.table_missing
        if self.commits is not None:
            k = self.commits
            out["commits"] = {
                "attempted": self.writer_attempts,
                "acknowledged": k.acknowledged,
                "acknowledged_present": k.acknowledged_present,
                "acknowledged_lost": len(k.lost_ids),
                "lost_ids": list(k.lost_ids[:LISTED_IDS]),
                "in_flight": k.in_flight_seq is not None,
                "in_flight_present": k.in_flight_present,
            }
        out["node_before"] = self.node_before
        out["node_after"] = self.node_after
        out["note"] = self.note
        return out


def evaluate_phase(
    phase: str,
    comparison: TableComparison,
    *,
    time_to_ready_s: float | None,
    commits: CommitAccounting | None = None,
    writer_attempts: int | None = None,
    node_before: str | None = None,
    node_after: str | None = None,
    note: str = "",
) -> PhaseResult:
    """A phase passes when every expected row and every acknowledged commit came back intact."""
    ok = comparison.intact and (commits is None or commits.ok)
    if not ok:
        loss = describe_loss(comparison, commits)
        note = f"{loss}; {note}" if note else loss
    return PhaseResult(
        phase=phase,
        verdict=Verdict.PASS if ok else Verdict.FAIL,
        time_to_ready_s=time_to_ready_s,
        comparison=comparison,
        commits=commits,
        writer_attempts=writer_attempts,
        node_before=node_before,
        node_after=node_after,
        note=note,
    )


def describe_loss(comparison: TableComparison, commits: CommitAccounting | None) -> str:
    """What went wrong, in words ('' when nothing did)."""
    parts = []
    if comparison.table_missing:
        parts.append(f"table {DATABASE}.{TABLE} is gone")
    if comparison.missing_ids:
        parts.append(
            f"{len(comparison.missing_ids):,} of {comparison.rows_expected:,} rows missing"
        )
    if comparison.changed_ids:
        parts.append(f"{len(comparison.changed_ids):,} rows changed")
    if comparison.unexpected_ids:
        parts.append(f"{len(comparison.unexpected_ids):,} rows nobody committed")
    if commits is not None and commits.lost_ids:
        parts.append(f"{len(commits.lost_ids)} of {commits.acknowledged} acknowledged commits lost")
    if not parts and not comparison.checksum_match:
        parts.append("checksum differs")
    return "; ".join(parts)


@dataclass(frozen=True)
class PersistenceReport:
    """The whole check: what ran where, and each phase."""

    storage_class: str | None
    volume_type: VolumeType
    size: str | None
    namespace: str
    image: str
    rows: int
    run_id: str
    phases: tuple[PhaseResult, ...]

    @property
    def verdict(self) -> Verdict:
        """fail if any phase failed; skipped if no disruption ran; else pass."""
        if any(p.verdict is Verdict.FAIL for p in self.phases):
            return Verdict.FAIL
        ran = [p for p in self.phases if p.phase != "seed" and p.verdict is Verdict.PASS]
        return Verdict.PASS if ran else Verdict.SKIPPED

    @property
    def failed_phases(self) -> list[str]:
        """Names of the phases that lost data or did not come back."""
        return [p.phase for p in self.phases if p.verdict is Verdict.FAIL]

    def to_dict(self) -> dict[str, Any]:
        """The PersistenceReport document."""
        return report_envelope(
            "PersistenceReport",
            {
                "storage_class": self.storage_class,
                "volume_type": self.volume_type.value,
                "size": self.size,
                "namespace": self.namespace,
                "image": self.image,
                "rows": self.rows,
                "run_id": self.run_id,
                "verdict": self.verdict.value,
                "phases": [p.to_dict() for p in self.phases],
            },
        )
