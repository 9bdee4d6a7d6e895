"""What the snapshot subcommands share: pod settings, the snapshot source, waits, exec."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.manifests import (
    PodIdentity,
    PodPlacement,
)
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.snapshot.check_report import StepTiming
from kubectl_storage.core.snapshot.class_choice import SnapshotChoiceError
from kubectl_storage.errors import (
    ClusterError,
    ForbiddenError,
    NotFoundError,
    UsageError,
    WaitTimeoutError,
)
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import ExecResult, exec_in_pod
from kubectl_storage.kube.podstream import interrupted
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for
from kubectl_storage.operations.pending import explain_pending, pending_hint

log = logging.getLogger(__name__)

Step = Callable[[str], None]


@dataclass(frozen=True)
class PodSettings:
    """How our pods run: image, placement, identity, and the run's waits and cleanup."""

    image: str
    placement: PodPlacement = field(default_factory=PodPlacement)
    identity: PodIdentity | None = None  # None: decide from the namespace (OpenShift assigns)
    timeout_s: float = 300
    keep: bool = False


@dataclass(frozen=True)
class SnapshotSource:
    """What browse and cp restore: a snapshot, or a fresh snapshot of a live PVC."""

    namespace: str
    snapshot: str | None = None
    pvc: str | None = None
    snapshot_class: str | None = None  # for --pvc
    storage_class: str | None = None  # the restore class, when it cannot be inferred
    size: Size | None = None  # the restore size, when the snapshot does not report one

    @property
    def label(self) -> str:
        """How messages name it."""
        return f"snapshot {self.snapshot}" if self.snapshot else f"PVC {self.pvc}"


def storage_class_in(name: str, storage_classes: list[JsonDict]) -> JsonDict:
    """The StorageClass ``name`` among the cluster's classes, or NotFoundError naming them."""
    by_name = {str(dig(sc, "metadata", "name")): sc for sc in storage_classes}
    if name not in by_name:
        raise NotFoundError(
            f"StorageClass {name} does not exist",
            "Available: "
            + (", ".join(sorted(by_name)) or "none")
            + " (kubectl storage classes lists them).",
        )
    return by_name[name]


def choice_error(exc: SnapshotChoiceError) -> UsageError:
    return UsageError(exc.message, exc.hint)


def get_optional(api: KubeApi, kind: kinds.ResourceKind, name: str | None) -> JsonDict | None:
    """Read a cluster-scoped object we only use for details; None when absent or forbidden."""
    if not name:
        return None
    try:
        return api.get_or_none(kind, name)
    except ForbiddenError:
        log.debug("not allowed to read %s %s; going without it", kind.kind, name)
        return None


# -- waiting ----------------------------------------------------------------------------------


def wait_pod(
    api: KubeApi,
    pod: str,
    pvc: str,
    namespace: str,
    role: str,
    timeout_s: float,
    *,
    placement: PodPlacement | None = None,
    or_until: Callable[[JsonDict], object] | None = None,
) -> JsonDict:
    """Wait for the pod to run (or for ``or_until`` to return something true); the pod.

    On timeout the PVC's events are added (a restore fails there), and the taints that keep
    the pod off every node it may go to."""
    running = pod_running(role)

    def done(obj: JsonDict) -> bool:
        return bool(or_until and or_until(obj)) or running(obj)

    try:
        return wait_for(
            api,
            kinds.POD,
            pod,
            done,
            namespace=namespace,
            timeout_s=timeout_s,
            what="Running",
            hint=pending_hint(namespace, pvc),
        )
    except WaitTimeoutError as exc:
        raise explain_pending(api, exc, namespace=namespace, pvc=pvc, placement=placement) from None


def wait_snapshot_ready(api: KubeApi, name: str, namespace: str, timeout_s: float) -> JsonDict:
    reported: set[str] = set()

    def ready(snapshot: JsonDict) -> bool:
        status = snapshot.get("status") or {}
        message = dig(status, "error", "message")
        if message and message not in reported:
            reported.add(message)
            log.warning("VolumeSnapshot %s: %s (still waiting)", name, message)
        return status.get("readyToUse") is True

    return wait_for(
        api,
        kinds.VOLUME_SNAPSHOT,
        name,
        ready,
        namespace=namespace,
        timeout_s=timeout_s,
        what="readyToUse",
        hint=(
            f"kubectl describe volumesnapshot {name} -n {namespace} shows the snapshot "
            "controller's and the driver's view; check that the CSI snapshotter sidecar runs."
        ),
    )


def exec_tool(
    api: KubeApi,
    pod: str,
    command: list[str],
    namespace: str,
    timeout_s: float,
    *,
    witness_exit: bool = False,
) -> ExecResult:
    """exec_in_pod, with a Ctrl-C while the exec connects kept a Ctrl-C (exit 130)."""
    try:
        return exec_in_pod(
            api, pod, command, namespace=namespace, timeout_s=timeout_s, witness_exit=witness_exit
        )
    except ClusterError as exc:
        if interrupted(exc):
            raise KeyboardInterrupt from None
        raise


def run_script(
    api: KubeApi, pod: str, script: str, namespace: str, timeout_s: float, what: str
) -> str:
    """Run a shell script in the pod; its stdout, or ClusterError naming ``what``. The pod has
    a shell, so the exit status is witnessed by it (a cut-off exec never reads as success)."""
    return run_tool(api, pod, ["sh", "-c", script], namespace, timeout_s, what, witness_exit=True)


def run_tool(
    api: KubeApi,
    pod: str,
    command: list[str],
    namespace: str,
    timeout_s: float,
    what: str,
    *,
    witness_exit: bool = False,
) -> str:
    """Run a command in the pod; its stdout, or ClusterError naming ``what``."""
    outcome = exec_tool(api, pod, command, namespace, timeout_s, witness_exit=witness_exit)
    if outcome.exit_code != 0:
        raise ClusterError(
            f"{what} failed in pod {pod} (exit {outcome.exit_code}): "
            + (outcome.stderr.strip() or outcome.stdout.strip())[:800],
            "Run with --keep to inspect the pod and its volume.",
        )
    return outcome.stdout


@contextmanager
def restore_first_on_exit(
    api: KubeApi, scope: RunScope, pod: str, pvc: str, namespace: str
) -> Iterator[None]:
    """On any way out of the block (error, Ctrl-C, SIGTERM), delete the restore pod and PVC and
    wait until they are gone, before the run scope deletes the snapshot.

    The snapshot controller keeps a VolumeSnapshot that a Pending PVC is being restored from
    (finalizer volumesnapshot-as-source-protection) and does not look at it again when that PVC
    goes away, only at its next resync (15 minutes by default): deleting both at once, as the
    scope does, can leave the snapshot terminating that long. Even in this order the controller
    can handle the snapshot's deletion a moment before it sees the PVC go (11 minutes in CI);
    the scope's wait then nudges the snapshot (kube.waits.nudge).
    """
    try:
        yield
    except BaseException:
        if not scope.keep:
            for kind, name in ((kinds.POD, pod), (kinds.PVC, pvc)):
                try:
                    scope.delete_now((kind, name, namespace))
                except Exception as exc:  # noqa: BLE001 - the scope retries; the first error wins
                    log.debug("could not delete %s %s first: %s", kind.kind, name, exc)
        raise


@contextmanager
def timed(steps: list[StepTiming], name: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    steps.append(StepTiming(name, time.monotonic() - started))
