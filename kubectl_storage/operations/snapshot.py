"""`kubectl storage snapshot list|check|browse|cp`.

* list: VolumeSnapshots with their content, class, driver, readiness and size, and whether the
  source PVC still exists.
* check: write known files to a new PVC → snapshot → change the source → restore into a second
  PVC → compare checksums: the restore must hold the snapshot-time content and none of the change.
* browse / cp: restore a snapshot (or a fresh snapshot of a live PVC) into a temporary PVC,
  mount it read-only in a restricted pod, then open a shell, list files, or copy them out with tar.

Every input and the cluster are checked before anything is created; everything created goes
through the run scope, so it is deleted on success, failure, timeout, Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import logging
import posixpath
import shutil
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import (
    Manifest,
    PodIdentity,
    PodPlacement,
    build_pvc,
    build_workload_pod,
)
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.k8s.quantities import Size, format_bytes
from kubectl_storage.core.rbac import Condition
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.snapshot.snapshots import (
    SNAPSHOT_MOUNT,
    SOURCE_MOUNT,
    RestoreClassChoice,
    SnapshotCheckReport,
    SnapshotChoiceError,
    SnapshotList,
    StepTiming,
    build_listing_report,
    build_snapshot_list,
    build_volume_snapshot,
    change_script,
    check_size_problem,
    check_snapshot_class,
    checksum_script,
    choose_restore_class,
    choose_restore_size,
    choose_snapshot_class,
    compare_restore,
    content_name_of,
    describe_change,
    listing_command,
    parse_checksums,
    parse_listing,
    plan_problems,
    snapshot_data_source,
    snapshot_path,
    snapshot_settled,
    write_script,
)
from kubectl_storage.errors import (
    ClusterError,
    ForbiddenError,
    NotFoundError,
    UsageError,
    WaitTimeoutError,
)
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.kube.events import events_for
from kubectl_storage.kube.podexec import ExecResult, exec_in_pod
from kubectl_storage.kube.podstream import exec_interactive, exec_to_sink, interrupted
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for
from kubectl_storage.operations.pipeline import Progress
from kubectl_storage.operations.preflight import ClusterFacts, Requirements, require_snapshot_api

log = logging.getLogger(__name__)

Step = Callable[[str], None]


# -- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodSettings:
    """How our pods run: image, placement, identity, and the run's waits and cleanup."""

    image: str
    placement: PodPlacement = field(default_factory=PodPlacement)
    identity: PodIdentity | None = None  # None: decide from the namespace (OpenShift assigns)
    timeout_s: float = 300
    keep: bool = False


@dataclass(frozen=True)
class CheckRequest:
    """Everything `snapshot check` was asked to do."""

    pods: PodSettings
    storage_class: str | None = None  # None: the cluster's default class
    size: Size = field(default_factory=lambda: Size.parse("1Gi"))
    snapshot_class: str | None = None


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


class BrowseMode(StrEnum):
    """What browse does once the snapshot is mounted."""

    SHELL = "shell"
    TREE = "tree"
    LS = "ls"


@dataclass(frozen=True)
class BrowseRequest:
    """Everything `snapshot browse` was asked to do."""

    source: SnapshotSource
    pods: PodSettings
    mode: BrowseMode = BrowseMode.SHELL
    path: str = ""
    structured: bool = False  # -o json|yaml: --tree returns entries, not tree's text
    stdin_fd: int = 0
    stdout_fd: int = 1
    term: str = "xterm"
    has_terminal: bool = True  # stdin and stdout are a terminal (the shell needs one)


@dataclass(frozen=True)
class BrowseResult:
    """What browse produced: tree's text, a SnapshotListing, or nothing (after a shell)."""

    text: str | None = None
    report: dict[str, Any] | None = None


@dataclass(frozen=True)
class CopyRequest:
    """Everything `snapshot cp` was asked to do."""

    source: SnapshotSource
    path: str
    destination: str
    pods: PodSettings
    force: bool = False


def _storage_class(api: KubeApi, name: str) -> JsonDict:
    storage_class = api.get_or_none(kinds.STORAGE_CLASS, name)
    if storage_class is None:
        existing = sorted(
            str((sc.get("metadata") or {}).get("name")) for sc in api.list(kinds.STORAGE_CLASS)
        )
        raise NotFoundError(
            f"StorageClass {name} does not exist",
            "Available: "
            + (", ".join(existing) or "none")
            + " (kubectl storage classes lists them).",
        )
    return storage_class


def _choice(exc: SnapshotChoiceError) -> UsageError:
    return UsageError(exc.message, exc.hint)


def _get_optional(api: KubeApi, kind: kinds.ResourceKind, name: str | None) -> JsonDict | None:
    """Read a cluster-scoped object we only use for details; None when absent or forbidden."""
    if not name:
        return None
    try:
        return api.get_or_none(kind, name)
    except ForbiddenError:
        log.debug("not allowed to read %s %s; going without it", kind.kind, name)
        return None


# -- waiting ----------------------------------------------------------------------------------


def _wait_pod(
    api: KubeApi, pod: str, pvc: str, namespace: str, role: str, timeout_s: float
) -> None:
    """Wait for the pod to run; on timeout add the PVC's events (a restore fails there)."""
    try:
        wait_for(
            api,
            kinds.POD,
            pod,
            pod_running(role),
            namespace=namespace,
            timeout_s=timeout_s,
            what="Running",
            hint=(
                f"If PVC {pvc} stays Pending, its events say why (kubectl describe pvc {pvc} "
                f"-n {namespace}): no provisioner, a restore the driver refused, quota. If the "
                "pod is Pending, check node taints (--toleration) and --node-selector."
            ),
        )
    except WaitTimeoutError as exc:
        claim = api.get_or_none(kinds.PVC, pvc, namespace)
        extra = [f"PVC {pvc}: {line}" for line in events_for(api, claim)] if claim else []
        raise WaitTimeoutError(exc.message, exc.hint, [*exc.events, *extra]) from None


def _wait_snapshot_ready(api: KubeApi, name: str, namespace: str, timeout_s: float) -> JsonDict:
    reported: set[str] = set()

    def ready(snapshot: JsonDict) -> bool:
        status = snapshot.get("status") or {}
        message = (status.get("error") or {}).get("message")
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


def _exec(
    api: KubeApi, pod: str, command: list[str], namespace: str, timeout_s: float
) -> ExecResult:
    """exec_in_pod, with a Ctrl-C while the exec connects kept a Ctrl-C (exit 130)."""
    try:
        return exec_in_pod(api, pod, command, namespace=namespace, timeout_s=timeout_s)
    except ClusterError as exc:
        if interrupted(exc):
            raise KeyboardInterrupt from None
        raise


def _run_script(
    api: KubeApi, pod: str, script: str, namespace: str, timeout_s: float, what: str
) -> str:
    outcome = _exec(api, pod, ["sh", "-c", script], namespace, timeout_s)
    if outcome.exit_code != 0:
        raise ClusterError(
            f"{what} failed in pod {pod} (exit {outcome.exit_code}): "
            + (outcome.stderr.strip() or outcome.stdout.strip())[:800],
            "Run with --keep to inspect the pod and its volume.",
        )
    return outcome.stdout


@contextmanager
def _restore_first_on_exit(
    api: KubeApi, scope: RunScope, pod: str, pvc: str, namespace: str
) -> Iterator[None]:
    """On any way out of the block (error, Ctrl-C, SIGTERM), delete the restore pod and PVC and
    wait until they are gone, before the run scope deletes the snapshot.

    The snapshot controller keeps a VolumeSnapshot that a Pending PVC is being restored from
    (finalizer volumesnapshot-as-source-protection) and does not look at it again when that PVC
    goes away, only at its next resync (15 minutes by default): deleting both at once, as the
    scope does, can leave the snapshot terminating that long.
    """
    try:
        yield
    except BaseException:
        if not scope.keep:
            for kind, name in ((kinds.POD, pod), (kinds.PVC, pvc)):
                try:
                    scope.delete_now(kind, name, namespace)
                except Exception as exc:  # noqa: BLE001 - the scope retries; the first error wins
                    log.debug("could not delete %s %s first: %s", kind.kind, name, exc)
        raise


@contextmanager
def _timed(steps: list[StepTiming], name: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    steps.append(StepTiming(name, time.monotonic() - started))


# -- list -------------------------------------------------------------------------------------


def list_snapshots(
    api: KubeApi,
    namespace: str | None,
    *,
    all_namespaces: bool = False,
    now: datetime | None = None,
) -> SnapshotList:
    """Read VolumeSnapshots (one namespace or all) with their contents, classes and PVCs."""
    require_snapshot_api(api)
    ns = None if all_namespaces else (namespace or api.namespace)
    snapshots = api.list(kinds.VOLUME_SNAPSHOT, ns, all_namespaces=all_namespaces)
    contents: list[JsonDict] = []
    classes: list[JsonDict] = []
    pvcs: list[JsonDict] | None = None
    if snapshots:
        # Details only: a user who may list snapshots but not cluster-scoped contents still
        # gets the list, with fewer columns filled.
        try:
            contents = api.list(kinds.VOLUME_SNAPSHOT_CONTENT)
        except ForbiddenError:
            log.info("not allowed to list VolumeSnapshotContents; drivers may be missing")
        try:
            classes = api.list(kinds.VOLUME_SNAPSHOT_CLASS)
        except ForbiddenError:
            log.debug("not allowed to list VolumeSnapshotClasses")
        try:
            pvcs = api.list(kinds.PVC, ns, all_namespaces=all_namespaces)
        except ForbiddenError:
            log.debug("not allowed to list PVCs; source PVC presence unknown")
    return build_snapshot_list(
        snapshots,
        contents,
        classes,
        now=now or datetime.now(UTC),
        namespace=ns,
        pvcs=pvcs,
    )


# -- check ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckManifests:
    """The five objects of a check, in creation order."""

    source_pvc: Manifest
    writer_pod: Manifest
    snapshot: Manifest
    restore_pvc: Manifest
    reader_pod: Manifest

    def all(self) -> list[Manifest]:
        """Creation order."""
        return [self.source_pvc, self.writer_pod, self.snapshot, self.restore_pvc, self.reader_pod]


CHECK_COMMAND = "snapshot-check"


def validate_check(request: CheckRequest) -> None:
    """Inputs that need no cluster: the size must hold the check's files.

    Raises:
        UsageError: the size is too small for the files.
    """
    problem = check_size_problem(request.size.bytes)
    if problem:
        raise UsageError(f"-z {request.size} is too small: {problem}", "Example: -z 1Gi")


def check_manifests(
    namespace: str,
    storage_class: str,
    snapshot_class: str,
    size: str,
    pods: PodSettings,
    identity: PodIdentity,
    *,
    run_id: str,
    restore_size: str | None = None,
) -> CheckManifests:
    """Every object the check creates, labelled for run ``run_id``.

    The restore's size is the snapshot's restoreSize, known once the snapshot is cut; until
    then (and in --dry-run) the restore PVC asks for the source's size.
    """
    name = object_name(CHECK_COMMAND, run_id)

    def labelled(manifest: Manifest) -> Manifest:
        return with_run_labels(manifest, run_id, CHECK_COMMAND)

    return CheckManifests(
        source_pvc=labelled(build_pvc(f"{name}-source", namespace, storage_class, size)),
        writer_pod=labelled(
            build_workload_pod(
                f"{name}-writer",
                namespace,
                pods.image,
                pvc_name=f"{name}-source",
                mount_path=SOURCE_MOUNT,
                identity=identity,
                placement=pods.placement,
            )
        ),
        snapshot=labelled(
            build_volume_snapshot(
                name, namespace, pvc_name=f"{name}-source", snapshot_class=snapshot_class
            )
        ),
        restore_pvc=labelled(
            build_pvc(
                f"{name}-restore",
                namespace,
                storage_class,
                restore_size or size,
                data_source=snapshot_data_source(name),
            )
        ),
        reader_pod=labelled(
            build_workload_pod(
                f"{name}-reader",
                namespace,
                pods.image,
                pvc_name=f"{name}-restore",
                mount_path=SNAPSHOT_MOUNT,
                read_only=True,
                identity=identity,
                placement=pods.placement,
            )
        ),
    )


@dataclass(frozen=True)
class CheckPlan:
    """A planned check: the class pair and the objects, for one run id."""

    run_id: str
    namespace: str
    storage_class: str
    snapshot_class: str
    request: CheckRequest
    identity: PodIdentity
    objects: CheckManifests
    provisioner: str = ""

    def manifests(self) -> list[Manifest]:
        """Creation order (what --dry-run prints)."""
        return self.objects.all()


def choose_check_snapshot_class(
    storage_class: JsonDict, snapshot_classes: list[JsonDict], given: str | None
) -> str:
    """The VolumeSnapshotClass the check uses: the given one if it fits, else the driver's.

    Raises:
        UsageError: no snapshot class fits (none for the driver, or several without a default).
    """
    try:
        if given:
            check_snapshot_class(given, storage_class, snapshot_classes)
            return given
        return choose_snapshot_class(storage_class, snapshot_classes)
    except SnapshotChoiceError as exc:
        raise _choice(exc) from exc


class CheckCommand:
    """`kubectl storage snapshot check` as pipeline stages."""

    rbac_name = "snapshot"
    label = CHECK_COMMAND

    def validate(self, request: CheckRequest) -> None:
        """See :func:`validate_check`."""
        validate_check(request)

    def requirements(self, request: CheckRequest) -> Requirements:
        """The class (or the default one), the snapshot API, and the writes of a check."""
        return Requirements(
            storage_classes=(request.storage_class,) if request.storage_class else (),
            default_storage_class=request.storage_class is None,
            snapshot_api=True,
            conditions=frozenset({Condition.TAKE_SNAPSHOT, Condition.RESTORE}),
            doing="check snapshots",
        )

    def plan_offline(self, request: CheckRequest) -> bool:
        """Both classes named: nothing to look up."""
        return request.storage_class is not None and request.snapshot_class is not None

    def plan(
        self, request: CheckRequest, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> CheckPlan:
        """Choose the snapshot class (from the cluster unless both are named) and build."""
        class_name = request.storage_class or str(facts.default_storage_class)
        storage_class = facts.storage_classes.get(class_name, {})
        if api is None:
            snapshot_class = str(request.snapshot_class)
        else:
            snapshot_class = choose_check_snapshot_class(
                storage_class, api.list(kinds.VOLUME_SNAPSHOT_CLASS), request.snapshot_class
            )
        identity = facts.identity(request.pods.identity)
        objects = check_manifests(
            facts.namespace,
            class_name,
            snapshot_class,
            request.size.text,
            request.pods,
            identity,
            run_id=run_id,
        )
        return CheckPlan(
            run_id=run_id,
            namespace=facts.namespace,
            storage_class=class_name,
            snapshot_class=snapshot_class,
            request=request,
            identity=identity,
            objects=objects,
            provisioner=str(storage_class.get("provisioner") or ""),
        )

    def run(self, api: KubeApi, plan: CheckPlan, scope: RunScope, progress: Progress) -> JsonDict:
        """See :func:`run_check`."""
        return run_check(api, plan, scope, progress.step)


def run_check(api: KubeApi, plan: CheckPlan, scope: RunScope, step: Step) -> JsonDict:
    """Run the planned check and return the SnapshotCheckReport dict (``verdict``)."""
    request = plan.request
    ns = plan.namespace
    timeout = request.pods.timeout_s
    label = f"StorageClass {plan.storage_class}"
    steps: list[StepTiming] = []
    objects = plan.objects
    source_name = objects.source_pvc["metadata"]["name"]
    writer = objects.writer_pod["metadata"]["name"]
    snapshot_name = objects.snapshot["metadata"]["name"]

    with _timed(steps, "provision source volume"):
        step(f"{label}: creating PVC {source_name} ({request.size}) and the writer pod")
        scope.create(kinds.PVC, objects.source_pvc, ns)
        scope.create(kinds.POD, objects.writer_pod, ns)
        _wait_pod(api, writer, source_name, ns, "writer", timeout)
    with _timed(steps, "write known files"):
        step(f"{label}: writing known files (fsynced) and their checksums")
        at_snapshot = parse_checksums(
            _run_script(api, writer, write_script(), ns, timeout, "writing the known files")
        )
    with _timed(steps, "take snapshot"):
        step(f"{label}: taking VolumeSnapshot {snapshot_name} with class {plan.snapshot_class}")
        scope.create(kinds.VOLUME_SNAPSHOT, objects.snapshot, ns, settled=snapshot_settled)
        step(f"{label}: waiting for the snapshot to be readyToUse")
        snapshot = _wait_snapshot_ready(api, snapshot_name, ns, timeout)
    with _timed(steps, "change source"):
        step(f"{label}: changing the source after the snapshot")
        after_change = parse_checksums(
            _run_script(api, writer, change_script(), ns, timeout, "changing the source")
        )
    content = _get_optional(api, kinds.VOLUME_SNAPSHOT_CONTENT, content_name_of(snapshot))
    source_pvc = api.get_or_none(kinds.PVC, source_name, ns)
    try:
        restore_size, size_reason = choose_restore_size(
            snapshot=snapshot, content=content, source_pvc=source_pvc
        )
    except SnapshotChoiceError as exc:
        raise ClusterError(exc.message, exc.hint) from exc
    restored = check_manifests(
        ns,
        plan.storage_class,
        plan.snapshot_class,
        request.size.text,
        request.pods,
        plan.identity,
        run_id=plan.run_id,
        restore_size=restore_size,
    )
    restore_name = restored.restore_pvc["metadata"]["name"]
    reader = restored.reader_pod["metadata"]["name"]
    with (
        _timed(steps, "restore snapshot"),
        _restore_first_on_exit(api, scope, reader, restore_name, ns),
    ):
        step(f"{label}: restoring into PVC {restore_name} ({restore_size}, {size_reason})")
        scope.create(kinds.PVC, restored.restore_pvc, ns)
        scope.create(kinds.POD, restored.reader_pod, ns)
        step(f"{label}: waiting for the restored volume to be mounted (read-only)")
        _wait_pod(api, reader, restore_name, ns, "reader", timeout)
    with _timed(steps, "verify restore"):
        step(f"{label}: comparing checksums")
        in_restore = parse_checksums(
            _run_script(
                api, reader, checksum_script(SNAPSHOT_MOUNT), ns, timeout, "reading the restore"
            )
        )
    driver = str(dig(content, "spec", "driver") or "") or plan.provisioner
    report = SnapshotCheckReport(
        storage_class=plan.storage_class,
        snapshot_class=plan.snapshot_class,
        driver=driver,
        namespace=ns,
        size=request.size.text,
        snapshot=snapshot_name,
        restore_size=restore_size,
        restore_storage_class=plan.storage_class,
        run_id=plan.run_id,
        steps=tuple(steps),
        files=compare_restore(at_snapshot, after_change, in_restore),
        changes=tuple(describe_change()),
        setup_problems=tuple(plan_problems(at_snapshot, after_change)),
    )
    step(f"{label}: {report.verdict} ({report.total_seconds:.0f}s)")
    return report.to_dict()


# -- restoring for browse and cp --------------------------------------------------------------


@dataclass(frozen=True)
class RestoreObjects:
    """The objects of one restore, in creation order."""

    snapshot_name: str
    temporary_snapshot: Manifest | None
    pvc: Manifest
    pod: Manifest

    def all(self) -> list[Manifest]:
        """Creation order."""
        first = [self.temporary_snapshot] if self.temporary_snapshot else []
        return [*first, self.pvc, self.pod]


@dataclass(frozen=True)
class RestorePlan:
    """What browse and cp create, decided before anything is."""

    source: SnapshotSource
    pods: PodSettings
    command: str
    identity: PodIdentity
    restore_class: RestoreClassChoice
    size: str | None  # None: known once the (temporary) snapshot is ready
    size_reason: str
    snapshot_class: str | None = None  # of the temporary snapshot (--pvc)
    run_id: str = ""

    def objects(self, *, size: str | None = None) -> RestoreObjects:
        """The labelled manifests; ``size`` overrides an unknown restore size."""
        source = self.source
        ns = source.namespace
        run_id = self.run_id
        name = object_name(self.command, run_id)
        temporary = None
        snapshot_name = str(source.snapshot)
        if source.pvc:
            snapshot_name = f"{name}-snap"
            temporary = build_volume_snapshot(
                snapshot_name, ns, pvc_name=source.pvc, snapshot_class=self.snapshot_class or ""
            )
        pvc = build_pvc(
            f"{name}-restore",
            ns,
            self.restore_class.name,
            size or self.size or UNKNOWN_SIZE,
            data_source=snapshot_data_source(snapshot_name),
        )
        pod = build_workload_pod(
            name,
            ns,
            self.pods.image,
            pvc_name=f"{name}-restore",
            mount_path=SNAPSHOT_MOUNT,
            read_only=True,
            identity=self.identity,
            placement=self.pods.placement,
        )

        def labelled(manifest: Manifest) -> Manifest:
            return with_run_labels(manifest, run_id, self.command)

        return RestoreObjects(
            snapshot_name,
            labelled(temporary) if temporary else None,
            labelled(pvc),
            labelled(pod),
        )

    def manifests(self) -> list[Manifest]:
        """Creation order (what --dry-run prints; an unknown size shows as RESTORESIZE)."""
        return self.objects().all()


#: The restore size in --dry-run output when it is only known once the snapshot is ready.
UNKNOWN_SIZE = "RESTORESIZE"


def _needs_cluster(what: str) -> UsageError:
    return UsageError(
        f"--dry-run without a cluster cannot tell {what}",
        "Give --storage-class and --size (and --snapshot-class with --pvc), or connect.",
    )


def plan_restore(
    api: KubeApi | None,
    source: SnapshotSource,
    pods: PodSettings,
    command: str,
    *,
    facts: ClusterFacts,
    run_id: str,
) -> RestorePlan:
    """Decide the restore class and size (reading only); ``api`` None for an offline dry run.

    Raises:
        NotFoundError: the snapshot, PVC or a class does not exist.
        UsageError: the restore class or size cannot be told, or the snapshot is being deleted.
    """
    plan = RestorePlan(
        source,
        pods,
        command,
        facts.identity(pods.identity),
        RestoreClassChoice(source.storage_class or "", "given with --storage-class"),
        source.size.text if source.size else None,
        "given with --size" if source.size else "decided when the snapshot is ready",
        source.snapshot_class,
        run_id,
    )
    if api is None:
        if not source.storage_class or (source.pvc and not source.snapshot_class):
            raise _needs_cluster("the restore class")
        if not source.pvc and not source.size:
            raise _needs_cluster("the restore size")
        return plan
    try:
        if source.pvc:
            return _plan_from_pvc(api, plan)
        return _plan_from_snapshot(api, plan)
    except SnapshotChoiceError as exc:
        raise _choice(exc) from exc


def _plan_from_snapshot(api: KubeApi, plan: RestorePlan) -> RestorePlan:
    source = plan.source
    name = str(source.snapshot)
    snapshot = api.get_or_none(kinds.VOLUME_SNAPSHOT, name, source.namespace)
    if snapshot is None:
        raise NotFoundError(
            f'VolumeSnapshot "{name}" does not exist in namespace {source.namespace}',
            f"kubectl storage snapshot list -n {source.namespace} shows the snapshots there.",
        )
    if (snapshot.get("metadata") or {}).get("deletionTimestamp"):
        raise UsageError(f"VolumeSnapshot {name} is being deleted", "")
    content = _get_optional(api, kinds.VOLUME_SNAPSHOT_CONTENT, content_name_of(snapshot))
    spec = snapshot.get("spec") or {}
    driver = (content or {}).get("spec", {}).get("driver")
    if not driver and spec.get("volumeSnapshotClassName"):
        vsc = _get_optional(api, kinds.VOLUME_SNAPSHOT_CLASS, spec["volumeSnapshotClassName"])
        driver = (vsc or {}).get("driver")
    pvc_name = (spec.get("source") or {}).get("persistentVolumeClaimName")
    source_pvc = api.get_or_none(kinds.PVC, pvc_name, source.namespace) if pvc_name else None
    restore_class = choose_restore_class(
        snapshot_name=name,
        driver=str(driver) if driver else None,
        source_pvc=source_pvc,
        storage_classes=api.list(kinds.STORAGE_CLASS),
        given=source.storage_class,
    )
    plan = replace(plan, restore_class=restore_class)
    if (snapshot.get("status") or {}).get("readyToUse") is not True:
        return plan  # the size is decided once it is ready
    size, reason = choose_restore_size(
        snapshot=snapshot,
        content=content,
        source_pvc=source_pvc,
        given=source.size.text if source.size else None,
    )
    return replace(plan, size=size, size_reason=reason)


def _plan_from_pvc(api: KubeApi, plan: RestorePlan) -> RestorePlan:
    source = plan.source
    pvc_name = str(source.pvc)
    pvc = api.get_or_none(kinds.PVC, pvc_name, source.namespace)
    if pvc is None:
        raise NotFoundError(
            f'PVC "{pvc_name}" does not exist in namespace {source.namespace}',
            "Check the name and the namespace (-n).",
        )
    phase = (pvc.get("status") or {}).get("phase")
    if phase != "Bound":
        raise UsageError(
            f"PVC {pvc_name} is {phase or 'not bound'}; only a bound PVC can be snapshotted",
            "Wait until it is Bound (a WaitForFirstConsumer claim binds when a pod uses it).",
        )
    class_name = (pvc.get("spec") or {}).get("storageClassName")
    if not class_name:
        raise UsageError(
            f"PVC {pvc_name} has no StorageClass, so no snapshot class can be told",
            "Snapshots need a CSI volume with a StorageClass.",
        )
    storage_class = _storage_class(api, str(class_name))
    snapshot_classes = api.list(kinds.VOLUME_SNAPSHOT_CLASS)
    if source.snapshot_class:
        check_snapshot_class(source.snapshot_class, storage_class, snapshot_classes)
        vsc = source.snapshot_class
    else:
        vsc = choose_snapshot_class(storage_class, snapshot_classes)
    restore_class = choose_restore_class(
        snapshot_name=f"of PVC {pvc_name}",
        driver=str(storage_class.get("provisioner") or "") or None,
        source_pvc=pvc,
        storage_classes=api.list(kinds.STORAGE_CLASS),
        given=source.storage_class,
    )
    return replace(plan, restore_class=restore_class, snapshot_class=vsc)


def _when_ready(api: KubeApi, plan: RestorePlan) -> RestorePlan:
    """Wait for a snapshot that is not ready yet, then decide its restore size (before any
    object is created: an interrupt here leaves nothing behind)."""
    source = plan.source
    if not (source.snapshot and plan.size is None):
        return plan
    log.info("waiting for VolumeSnapshot %s to be readyToUse", source.snapshot)
    _wait_snapshot_ready(api, source.snapshot, source.namespace, plan.pods.timeout_s)
    try:
        return _plan_from_snapshot(api, plan)
    except SnapshotChoiceError as exc:
        raise _choice(exc) from exc


@dataclass(frozen=True)
class BrowsePlan:
    """A planned browse: the request and its restore."""

    request: BrowseRequest
    restore: RestorePlan

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.restore.run_id

    def manifests(self) -> list[Manifest]:
        """Creation order (what --dry-run prints)."""
        return self.restore.manifests()


@dataclass(frozen=True)
class CopyPlan:
    """A planned copy: the request and its restore."""

    request: CopyRequest
    restore: RestorePlan

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.restore.run_id

    def manifests(self) -> list[Manifest]:
        """Creation order (what --dry-run prints)."""
        return self.restore.manifests()


def _restore_requirements(source: SnapshotSource) -> Requirements:
    conditions = {Condition.RESTORE}
    if source.pvc:
        conditions.add(Condition.TAKE_SNAPSHOT)
    return Requirements(
        snapshot_api=True,
        conditions=frozenset(conditions),
        doing="restore snapshots into a temporary PVC",
    )


def _restore_offline(source: SnapshotSource) -> bool:
    """Whether --dry-run can plan the restore from the flags alone."""
    if not source.storage_class:
        return False
    if source.pvc:
        return source.snapshot_class is not None
    return source.size is not None


class BrowseCommand:
    """`kubectl storage snapshot browse` as pipeline stages."""

    rbac_name = "snapshot"
    label = "snapshot-browse"

    def validate(self, request: BrowseRequest) -> None:
        """See :func:`validate_browse`."""
        validate_browse(request)

    def requirements(self, request: BrowseRequest) -> Requirements:
        """The snapshot API and the writes of a restore (and of a snapshot, with --pvc)."""
        return _restore_requirements(request.source)

    def plan_offline(self, request: BrowseRequest) -> bool:
        """Restore class and size (and snapshot class with --pvc) all given."""
        return _restore_offline(request.source)

    def plan(
        self, request: BrowseRequest, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> BrowsePlan:
        """See :func:`plan_restore`."""
        restore = plan_restore(
            api, request.source, request.pods, self.label, facts=facts, run_id=run_id
        )
        return BrowsePlan(request, restore)

    def run(
        self, api: KubeApi, plan: BrowsePlan, scope: RunScope, progress: Progress
    ) -> BrowseResult:
        """See :func:`run_browse`."""
        return run_browse(api, plan, scope, progress.step)


class CopyCommand:
    """`kubectl storage snapshot cp` as pipeline stages."""

    rbac_name = "snapshot"
    label = "snapshot-cp"

    def validate(self, request: CopyRequest) -> None:
        """See :func:`validate_copy`."""
        validate_copy(request)

    def requirements(self, request: CopyRequest) -> Requirements:
        """The snapshot API and the writes of a restore."""
        return _restore_requirements(request.source)

    def plan_offline(self, request: CopyRequest) -> bool:
        """Restore class and size given."""
        return _restore_offline(request.source)

    def plan(
        self, request: CopyRequest, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> CopyPlan:
        """See :func:`plan_restore`."""
        restore = plan_restore(
            api, request.source, request.pods, self.label, facts=facts, run_id=run_id
        )
        return CopyPlan(request, restore)

    def run(self, api: KubeApi, plan: CopyPlan, scope: RunScope, progress: Progress) -> JsonDict:
        """See :func:`run_copy`."""
        return run_copy(api, plan, scope, progress.step)


def _mount_snapshot(api: KubeApi, scope: RunScope, plan: RestorePlan, step: Step) -> str:
    """Create (temporary snapshot →) restore PVC → pod, wait until it runs; the pod's name."""
    source, pods = plan.source, plan.pods
    ns = source.namespace
    objects = plan.objects()
    size, size_reason = plan.size, plan.size_reason
    if objects.temporary_snapshot is not None:
        step(
            f"PVC {source.pvc}: taking temporary VolumeSnapshot {objects.snapshot_name} "
            f"(class {plan.snapshot_class})"
        )
        scope.create(
            kinds.VOLUME_SNAPSHOT, objects.temporary_snapshot, ns, settled=snapshot_settled
        )
        snapshot = _wait_snapshot_ready(api, objects.snapshot_name, ns, pods.timeout_s)
        if size is None:
            content = _get_optional(api, kinds.VOLUME_SNAPSHOT_CONTENT, content_name_of(snapshot))
            source_pvc = api.get_or_none(kinds.PVC, str(source.pvc), ns)
            try:
                size, size_reason = choose_restore_size(
                    snapshot=snapshot, content=content, source_pvc=source_pvc
                )
            except SnapshotChoiceError as exc:
                raise ClusterError(exc.message, exc.hint) from exc
            objects = plan.objects(size=size)
    pvc_name = objects.pvc["metadata"]["name"]
    pod_name = objects.pod["metadata"]["name"]
    step(
        f"restoring {objects.snapshot_name} into PVC {pvc_name} (class "
        f"{plan.restore_class.name}: {plan.restore_class.reason}; size {size}: {size_reason})"
    )
    with _restore_first_on_exit(api, scope, pod_name, pvc_name, ns):
        scope.create(kinds.PVC, objects.pvc, ns)
        scope.create(kinds.POD, objects.pod, ns)
        step(f"waiting for pod {pod_name} to mount the restored volume read-only at /snapshot")
        _wait_pod(api, pod_name, pvc_name, ns, "browse", pods.timeout_s)
    return str(pod_name)


# -- browse -----------------------------------------------------------------------------------


def _in_snapshot(path: str) -> str:
    try:
        return snapshot_path(path)
    except ValueError as exc:
        raise UsageError(str(exc), "Paths are relative to the snapshot's root.") from exc


def _shell_command(term: str) -> list[str]:
    script = (
        f"cd {SNAPSHOT_MOUNT} && if command -v bash >/dev/null 2>&1; "
        "then exec bash --norc --noprofile -i; else exec sh -i; fi"
    )
    safe_term = "".join(c for c in term if c.isalnum() or c in "-._") or "xterm"
    return [
        "env",
        f"TERM={safe_term}",
        "HOME=/tmp",
        "HISTFILE=/tmp/.shell_history",
        r"PS1=snapshot:\w\$ ",
        "sh",
        "-c",
        script,
    ]


def validate_browse(request: BrowseRequest) -> str:
    """Inputs that need no cluster; returns the path in the pod.

    Raises:
        UsageError: neither or both of SNAP and --pvc, or a path outside the snapshot.
    """
    source = request.source
    if bool(source.snapshot) == bool(source.pvc):
        raise UsageError(
            "give a snapshot name or --pvc NAME, not both"
            if source.snapshot
            else "give the snapshot to browse (or --pvc NAME to snapshot a live PVC first)",
            "Example: kubectl storage snapshot browse data-snap --tree",
        )
    if source.snapshot_class and not source.pvc:
        raise UsageError(
            "--snapshot-class only applies with --pvc (an existing snapshot has its class)", ""
        )
    in_pod = _in_snapshot(request.path)
    if request.mode is BrowseMode.SHELL and not request.has_terminal:
        raise UsageError(
            "browse opens an interactive shell, which needs a terminal (stdin and stdout are "
            "not one)",
            "Use --tree [PATH] or --ls PATH to print a listing, or `kubectl storage snapshot "
            "cp SNAP:PATH LOCAL` to copy files out.",
        )
    return in_pod


def run_browse(api: KubeApi, planned: BrowsePlan, scope: RunScope, step: Step) -> BrowseResult:
    """Mount the snapshot read-only, then open a shell, print a tree, or list a directory."""
    request = planned.request
    in_pod = validate_browse(request)
    pods = request.pods
    plan = _when_ready(api, planned.restore)
    ns = request.source.namespace
    pod = _mount_snapshot(api, scope, plan, step)
    name = request.source.snapshot or f"PVC {request.source.pvc}"
    if request.mode is BrowseMode.SHELL:
        step(
            f"shell in {name} at {SNAPSHOT_MOUNT} (read-only); type exit or press Ctrl-D "
            "to leave, and the temporary volume is deleted"
        )
        exec_interactive(
            api,
            pod,
            _shell_command(request.term),
            namespace=ns,
            stdin_fd=request.stdin_fd,
            stdout_fd=request.stdout_fd,
        )
        return BrowseResult()
    recursive = request.mode is BrowseMode.TREE
    if recursive and not request.structured:
        script = (
            '[ -e "$1" ] || { echo "no such file or directory" >&2; exit 3; }; '
            'exec env LC_ALL=C.UTF-8 tree -a -h "$1"'
        )
        text = _listing_exec(api, pod, ["sh", "-c", script, "sh", in_pod], ns, pods, request)
        return BrowseResult(text=text)
    output = _listing_exec(
        api, pod, listing_command(in_pod, recursive=recursive), ns, pods, request
    )
    entries = parse_listing(output)
    return BrowseResult(
        report=build_listing_report(name, request.path, entries, recursive=recursive)
    )


def _listing_exec(
    api: KubeApi,
    pod: str,
    command: list[str],
    namespace: str,
    pods: PodSettings,
    request: BrowseRequest,
) -> str:
    outcome = _exec(api, pod, command, namespace, pods.timeout_s)
    if outcome.exit_code == 3:
        raise NotFoundError(
            f"{request.path or '/'} does not exist in {request.source.label}",
            "Paths are relative to the snapshot's root; --tree without a path shows it all.",
        )
    if outcome.exit_code != 0 and not outcome.stdout:
        raise ClusterError(
            f"listing {request.path or '/'} failed (exit {outcome.exit_code}): "
            + outcome.stderr.strip()[:800],
            "",
        )
    if outcome.stderr.strip():
        log.warning("%s", outcome.stderr.strip()[:800])
    return outcome.stdout


# -- cp ---------------------------------------------------------------------------------------


def copy_destination(request: CopyRequest) -> Path:
    """Where the copy lands: DEST, or DEST/NAME when DEST is an existing directory.

    Raises:
        UsageError: it exists and --force was not given, or its directory does not exist.
    """
    in_pod = _in_snapshot(request.path)
    item = posixpath.basename(in_pod) if in_pod != SNAPSHOT_MOUNT else str(request.source.snapshot)
    dest = Path(request.destination)
    target = dest / item if dest.is_dir() and not dest.is_symlink() else dest
    if not target.parent.is_dir():
        raise UsageError(
            f"the directory {target.parent} does not exist", "Create it first, or copy elsewhere."
        )
    if (target.exists() or target.is_symlink()) and not request.force:
        raise UsageError(
            f"{target} exists; not overwriting it", "Give --force to overwrite, or another path."
        )
    return target


def validate_copy(request: CopyRequest) -> Path:
    """Inputs that need no cluster; returns the local target.

    Raises:
        UsageError: no snapshot name, a path outside the snapshot, an existing target.
    """
    if not request.source.snapshot:
        raise UsageError("give the source as SNAPSHOT:PATH", "Example: data-snap:/etc/app.conf")
    return copy_destination(request)


@dataclass
class _CopyStats:
    files: int = 0
    directories: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def run_copy(api: KubeApi, planned: CopyPlan, scope: RunScope, step: Step) -> JsonDict:
    """Copy a file or directory out of the snapshot with tar over exec; a SnapshotCopy report."""
    request = planned.request
    target = validate_copy(request)
    pods = request.pods
    plan = _when_ready(api, planned.restore)
    in_pod = _in_snapshot(request.path)
    ns = request.source.namespace
    if in_pod == SNAPSHOT_MOUNT:
        workdir, item = SNAPSHOT_MOUNT, "."
    else:
        workdir, item = posixpath.dirname(in_pod), posixpath.basename(in_pod)
    script = (
        '[ -e "$1/$2" ] || [ -L "$1/$2" ] || { echo "no such file or directory" >&2; exit 3; }; '
        'cd "$1" && exec tar -cf - -- "$2"'
    )
    command = ["sh", "-c", script, "sh", workdir, item]
    stats = _CopyStats()
    pod = _mount_snapshot(api, scope, plan, step)
    step(f"copying {request.source.snapshot}:{request.path or '/'} to {target}")
    with tempfile.TemporaryFile(dir=target.parent, prefix=".ks-cp-") as spool:
        result = exec_to_sink(
            api,
            pod,
            command,
            spool.write,
            namespace=ns,
            timeout_s=pods.timeout_s,
            on_tick=lambda n: step(f"received {format_bytes(n)}"),
        )
        if result.exit_code == 3:
            raise NotFoundError(
                f"{request.path or '/'} does not exist in snapshot {request.source.snapshot}",
                "kubectl storage snapshot browse SNAP --tree shows what is there.",
            )
        if result.exit_code != 0:
            raise ClusterError(
                f"tar could not read {request.path or '/'} (exit {result.exit_code}): "
                + result.stderr.strip()[:800],
                "Files the pod's user cannot read need --run-as-user/--fs-group of their "
                "owner. Nothing was written locally.",
            )
        spool.seek(0)
        _extract_and_place(spool, target, root=item == ".", force=request.force, stats=stats)
    for name in stats.skipped:
        log.warning("skipped %s", name)
    return report_envelope(
        "SnapshotCopy",
        {
            "snapshot": request.source.snapshot,
            "namespace": ns,
            "path": "/" + request.path.strip("/"),
            "destination": str(target),
            "files": stats.files,
            "directories": stats.directories,
            "bytes": stats.bytes,
            "skipped": stats.skipped,
            "runId": scope.run_id,
        },
    )


def _safe_member(member: tarfile.TarInfo, dest: str, stats: _CopyStats) -> tarfile.TarInfo | None:
    """Refuse paths and links that leave ``dest``; keep permission bits (but no set-id bits)."""
    try:
        tarfile.data_filter(member, dest)  # raises for absolute paths, escapes, outside links
    except tarfile.SpecialFileError:
        stats.skipped.append(f"{member.name} (device, FIFO or socket)")
        return None
    except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError):
        stats.skipped.append(f"{member.name} (link to {member.linkname}, outside the copy)")
        return None
    except tarfile.FilterError as exc:
        raise ClusterError(
            f"refusing an unsafe entry in the copy: {exc}", "Nothing outside the target is written."
        ) from exc
    if member.isreg():
        stats.files += 1
        stats.bytes += member.size
    elif member.isdir() and member.name.rstrip("/") not in (".", ""):
        stats.directories += 1
    # Permission bits as in the snapshot, without set-id and sticky bits; ownership stays ours
    # (-1 and empty names leave it unchanged even when run as root).
    return member.replace(mode=member.mode & 0o777, uid=-1, gid=-1, uname="", gname="", deep=False)


def _extract_and_place(
    spool: IO[bytes], target: Path, *, root: bool, force: bool, stats: _CopyStats
) -> None:
    """Extract into a staging directory beside ``target``, then move it into place."""
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".ks-cp-"))
    try:
        with tarfile.open(fileobj=spool, mode="r:") as archive:
            members = []
            for member in archive.getmembers():
                safe = _safe_member(member, str(staging), stats)
                if safe is not None:
                    members.append(safe)
            # Directory modes are applied last by extractall, so read-only ones still fill.
            archive.extractall(staging, members=members, filter="fully_trusted")
        if root:
            staged = staging  # the "." entry gave it the snapshot root's mode
        else:
            entries = list(staging.iterdir())
            if len(entries) != 1:
                raise ClusterError("the copy held no file", "")
            staged = entries[0]
        _place(staged, target, force=force)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _place(staged: Path, target: Path, *, force: bool) -> None:
    exists = target.exists() or target.is_symlink()
    if exists and not force:
        raise UsageError(f"{target} appeared meanwhile; not overwriting it", "Give --force.")
    if not exists:
        staged.replace(target)
        return
    staged_is_dir = staged.is_dir() and not staged.is_symlink()
    target_is_dir = target.is_dir() and not target.is_symlink()
    if staged_is_dir != target_is_dir:
        raise UsageError(
            f"{target} is a {'directory' if target_is_dir else 'file'} and the copy is not",
            "Remove it or copy to another path.",
        )
    if not staged_is_dir:
        staged.replace(target)
        return
    # --force on a directory: merge, replacing files of the same name.
    for child in list(staged.iterdir()):
        _place(child, target / child.name, force=True)
    target.chmod(stat.S_IMODE(staged.stat().st_mode))
