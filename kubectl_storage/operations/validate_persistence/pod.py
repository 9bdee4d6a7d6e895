"""The MySQL pod of a run: SQL through its client container, waits until it runs and answers,
and the readings taken beside the rows (the server's durability settings, the fsync probe).

Every SQL statement runs by exec in the pod's client container; the password reaches the client
through MYSQL_PWD from the Secret, so it is never in argv, in logs or on the screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.validate_persistence.durability import (
    DURABILITY_SQL,
    DurabilitySettings,
    judge_durability,
    parse_variables,
)
from kubectl_storage.core.validate_persistence.mysql import (
    CLIENT_CONTAINER,
    MYSQL_CONTAINER,
    PROBE_CONTAINER,
    READY_SQL,
    MysqlDeployment,
    VolumeType,
    is_missing_table_error,
    pod_name_for,
    pvc_name_for,
    sql_command,
)
from kubectl_storage.core.validate_persistence.probe import (
    FsyncProbe,
    parse_probe,
    probe_command,
    probe_failed,
)
from kubectl_storage.core.validate_persistence.rows import DUMP_SQL, StoredRow, parse_dump
from kubectl_storage.errors import ClusterError, ForbiddenError, StorageToolError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import ExecResult, exec_in_pod
from kubectl_storage.kube.waits import pod_running, wait_for
from kubectl_storage.operations.pending import explain_pending, pending_hint
from kubectl_storage.operations.validate_persistence.request import PersistenceRequest

#: Exit codes of a server container we stopped ourselves (SIGKILL, SIGTERM) or that ended cleanly.
_EXPECTED_EXITS = (0, 137, 143)
#: The probe writes 22 MiB with an fdatasync per 2300 bytes: minutes on slow storage.
PROBE_TIMEOUT_S = 600


class DataUnavailable(Exception):  # noqa: N818 - an outcome of a phase, not a program error
    """MySQL did not come back after a disruption: a failed phase, not a failed run."""


class MysqlPod:
    """One run's pod and its client."""

    def __init__(
        self,
        api: KubeApi,
        request: PersistenceRequest,
        deployment: MysqlDeployment,
        step: Callable[[str], None],
    ) -> None:
        self.api = api
        self.request = request
        self.deployment = deployment
        self.ns = request.namespace
        self.pod = pod_name_for(deployment.name)
        self.step = step

    # -- the client ------------------------------------------------------------------------
    def exec(
        self,
        command: list[str],
        *,
        container: str = CLIENT_CONTAINER,
        timeout_s: float | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        """Run ``command`` in one of the pod's containers; its exit status is witnessed by the
        container's shell, so a stream cut by a kubelet restart never reads as a success (an
        acknowledged commit, an empty table)."""
        return exec_in_pod(
            self.api,
            self.pod,
            command,
            namespace=self.ns,
            container=container,
            timeout_s=timeout_s or self.request.timeout_s,
            stdin=stdin,
            witness_exit=True,
        )

    def sql(self, statement: str, *, timeout_s: float | None = None) -> ExecResult:
        """One statement through the client container."""
        return self.exec(sql_command(statement), timeout_s=timeout_s)

    def read_table(self) -> tuple[tuple[StoredRow, ...], bool]:
        """All rows, and whether the table (or database) is gone."""
        result = self.sql(DUMP_SQL)
        if result.exit_code != 0:
            if is_missing_table_error(result.stderr):
                return (), True
            raise ClusterError(
                f"reading the table failed (exit {result.exit_code}): "
                + result.stderr.strip()[:500],
                "Run with --keep and read the server log: "
                f"kubectl logs -n {self.ns} {self.pod} -c {MYSQL_CONTAINER}",
            )
        try:
            return parse_dump(result.stdout), False
        except ValueError as exc:
            raise ClusterError(f"the table dump could not be read: {exc}", "") from exc

    def read_durability(self) -> DurabilitySettings:
        """The server's durability settings, judged."""
        result = self.sql(DURABILITY_SQL)
        if result.exit_code != 0:
            raise ClusterError(
                f"reading the server's durability settings failed (exit {result.exit_code}): "
                + result.stderr.strip()[:300],
                "The image must be a MySQL-compatible server (--image).",
            )
        return judge_durability(parse_variables(result.stdout))

    def run_probe(self) -> FsyncProbe:
        """etcd's fdatasync job on the data volume, in the probe container."""
        try:
            result = self.exec(
                probe_command(),
                container=PROBE_CONTAINER,
                timeout_s=max(PROBE_TIMEOUT_S, self.request.timeout_s),
            )
        except StorageToolError as exc:
            return probe_failed(f"the probe could not run: {exc.message}")
        probe = parse_probe(result.stdout)
        if probe.error and result.stderr.strip():
            return probe_failed(f"{probe.error}; fio said: {result.stderr.strip()[:300]}")
        return probe

    # -- waiting ---------------------------------------------------------------------------
    def get_pod(self) -> JsonDict | None:
        """The pod as the API has it now (None between a delete and its re-creation)."""
        return self.api.get_or_none(kinds.POD, self.pod, self.ns)

    def node(self) -> str | None:
        """The node the pod is on now."""
        name = dig(self.get_pod() or {}, "spec", "nodeName")
        return str(name) if name else None

    def wait_pod(self, predicate: Callable[[JsonDict], bool], what: str) -> JsonDict:
        """Wait for the pod (by name) to satisfy ``predicate`` and run."""

        runs = pod_running("MySQL")  # stops early on image pull errors

        def ready(pod: JsonDict) -> bool:
            # The pod being replaced ends (Failed) while it terminates: judge only the one
            # waited for.
            return predicate(pod) and runs(pod) and running(pod)

        pvc = (
            pvc_name_for(self.deployment.name)
            if self.deployment.volume_type is VolumeType.PVC
            else None
        )
        try:
            return wait_for(
                self.api,
                kinds.POD,
                self.pod,
                ready,
                namespace=self.ns,
                timeout_s=self.request.timeout_s,
                what=what,
                comes_back=True,  # the StatefulSet makes the pod again under the same name
                hint=pending_hint(self.ns, pvc, self.request.storage_class)
                if pvc
                else "If the pod is Pending, check node taints (--toleration) and resources.",
            )
        except WaitTimeoutError as exc:
            raise explain_pending(
                self.api, exc, namespace=self.ns, pvc=pvc, placement=self.request.placement
            ) from None

    def wait_answering(self, started: float) -> float:
        """Poll ``SELECT 1`` until MySQL answers; seconds since ``started``.

        Raises:
            DataUnavailable: the server keeps failing to start (its log is in the message).
            WaitTimeoutError: it did not answer within --timeout.
        """
        deadline = time.monotonic() + self.request.timeout_s
        next_note = time.monotonic() + 15
        last_error = ""
        while True:
            pod = self.get_pod()
            if pod is not None and running(pod):
                failure = server_failure(pod)
                if failure:
                    raise DataUnavailable(f"MySQL does not start: {failure}")
                try:
                    result = self.sql(READY_SQL, timeout_s=30)
                except ForbiddenError:
                    raise
                except StorageToolError as exc:
                    last_error = exc.message
                else:
                    if result.exit_code == 0:
                        return time.monotonic() - started
                    last_error = result.stderr.strip()
            now = time.monotonic()
            if now >= deadline:
                raise WaitTimeoutError(
                    f"MySQL in pod {self.pod} did not answer within "
                    f"{self.request.timeout_s:.0f}s"
                    + (f" (last error: {last_error[:300]})" if last_error else ""),
                    "Raise --timeout if the cluster is only slow; run with --keep and read "
                    f"`kubectl logs -n {self.ns} {self.pod} -c {MYSQL_CONTAINER}`.",
                )
            if now >= next_note:
                self.step(f"still waiting for MySQL to answer ({now - started:.0f}s)")
                next_note = now + 15
            time.sleep(1)


# -- pod status -----------------------------------------------------------------------------


def uid_of(pod: JsonDict) -> str | None:
    """The pod's uid: a recreated pod has the same name and a new uid."""
    uid = dig(pod, "metadata", "uid")
    return str(uid) if uid else None


def running(pod: JsonDict) -> bool:
    """Running, not being deleted, its client container up."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") != "Running":
        return False
    states = {c.get("name"): c.get("state") or {} for c in status.get("containerStatuses") or []}
    return "running" in states.get(CLIENT_CONTAINER, {})


def server_failure(pod: JsonDict) -> str:
    """The server's last log lines when it keeps crashing on its own ('' when it does not)."""
    for cs in dig(pod, "status", "containerStatuses") or []:
        if cs.get("name") != MYSQL_CONTAINER:
            continue
        waiting = dig(cs, "state", "waiting") or {}
        last = dig(cs, "lastState", "terminated") or {}
        if waiting.get("reason") == "CrashLoopBackOff" and last.get("exitCode") not in (
            _EXPECTED_EXITS
        ):
            message = (last.get("message") or "").strip()
            tail = " | ".join(message.splitlines()[-6:])
            return f"the server container exited with code {last.get('exitCode')}" + (
                f": {tail}" if tail else ""
            )
    return ""
