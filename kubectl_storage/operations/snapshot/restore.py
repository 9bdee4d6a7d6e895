"""Restoring a snapshot (or a fresh snapshot of a live PVC) into a temporary PVC mounted
read-only in a restricted pod: what browse and cp share."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import PodIdentity, build_pvc, build_workload_pod
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.rbac.commands import Condition
from kubectl_storage.core.snapshot.class_choice import (
    RestoreClassChoice,
    SnapshotChoiceError,
    check_snapshot_class,
    choose_restore_class,
    choose_restore_size,
    choose_snapshot_class,
)
from kubectl_storage.core.snapshot.manifests import build_volume_snapshot, snapshot_data_source
from kubectl_storage.core.snapshot.paths import SNAPSHOT_MOUNT, snapshot_path
from kubectl_storage.core.snapshot.snapshot_list import content_name_of, snapshot_settled
from kubectl_storage.errors import (
    ClusterError,
    UsageError,
)
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.preflight import ClusterFacts, Requirements
from kubectl_storage.operations.snapshot.common import (
    PodSettings,
    SnapshotSource,
    Step,
    choice_error,
    get_optional,
    restore_first_on_exit,
    storage_class_in,
    wait_pod,
    wait_snapshot_ready,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RestoreObjects:
    """The objects of one restore, in creation order."""

    snapshot_name: str
    temporary_snapshot: JsonDict | None
    pvc: JsonDict
    pod: JsonDict

    def all(self) -> list[JsonDict]:
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

        def labelled(manifest: JsonDict) -> JsonDict:
            return with_run_labels(manifest, run_id, self.command)

        return RestoreObjects(
            snapshot_name,
            labelled(temporary) if temporary else None,
            labelled(pvc),
            labelled(pod),
        )

    def manifests(self) -> list[JsonDict]:
        """Creation order (what --dry-run prints; an unknown size shows as RESTORESIZE)."""
        return self.objects().all()


#: The restore size in --dry-run output when it is only known once the snapshot is ready.
UNKNOWN_SIZE = "RESTORESIZE"


def _needs_cluster(what: str) -> UsageError:
    return UsageError(
        f"--dry-run without a cluster cannot tell {what}",
        "Give --storage-class and --size (and --snapshot-class with --pvc), or connect.",
    )


@dataclass(frozen=True)
class RestoreInputs:
    """What a restore's plan decides from, read once after preflight (the gather stage)."""

    storage_classes: list[JsonDict]
    #: Restoring a VolumeSnapshot: the snapshot, its content, its class (read only when the
    #: content does not name the driver) and the PVC it was taken of, while that exists.
    snapshot: JsonDict | None = None
    content: JsonDict | None = None
    snapshot_class: JsonDict | None = None
    #: The snapshot's source PVC, or the live PVC given with --pvc.
    source_pvc: JsonDict | None = None
    #: With --pvc: the classes the temporary snapshot can be taken with.
    snapshot_classes: list[JsonDict] = field(default_factory=list)


def gather_restore(api: KubeApi, source: SnapshotSource, facts: ClusterFacts) -> RestoreInputs:
    """The restore's reads; preflight has already found the named snapshot or PVC."""
    if source.pvc:
        return RestoreInputs(
            storage_classes=api.list(kinds.STORAGE_CLASS),
            source_pvc=facts.pvcs[source.pvc],
            snapshot_classes=api.list(kinds.VOLUME_SNAPSHOT_CLASS),
        )
    return _read_snapshot(api, facts.snapshots[str(source.snapshot)], source.namespace)


def _read_snapshot(api: KubeApi, snapshot: JsonDict, namespace: str) -> RestoreInputs:
    content = get_optional(api, kinds.VOLUME_SNAPSHOT_CONTENT, content_name_of(snapshot))
    spec = snapshot.get("spec") or {}
    vsc = None
    if not dig(content, "spec", "driver") and spec.get("volumeSnapshotClassName"):
        vsc = get_optional(api, kinds.VOLUME_SNAPSHOT_CLASS, spec["volumeSnapshotClassName"])
    pvc_name = dig(spec, "source", "persistentVolumeClaimName")
    return RestoreInputs(
        storage_classes=api.list(kinds.STORAGE_CLASS),
        snapshot=snapshot,
        content=content,
        snapshot_class=vsc,
        source_pvc=api.get_or_none(kinds.PVC, pvc_name, namespace) if pvc_name else None,
    )


def plan_restore(
    inputs: RestoreInputs | None,
    source: SnapshotSource,
    pods: PodSettings,
    command: str,
    *,
    facts: ClusterFacts,
    run_id: str,
) -> RestorePlan:
    """Decide the restore class and size; pure (``inputs`` None for an offline dry run).

    Raises:
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
    if inputs is None:
        if not source.storage_class or (source.pvc and not source.snapshot_class):
            raise _needs_cluster("the restore class")
        if not source.pvc and not source.size:
            raise _needs_cluster("the restore size")
        return plan
    try:
        if source.pvc:
            return _plan_from_pvc(plan, inputs)
        return _plan_from_snapshot(plan, inputs)
    except SnapshotChoiceError as exc:
        raise choice_error(exc) from exc


def _refuse_block(what: str, volume_mode: object) -> None:
    """Browse and cp read files: a raw block volume has none (and restoring it as a filesystem
    is refused by the provisioner, which would only show at the timeout)."""
    if volume_mode == "Block":
        raise UsageError(
            f"{what} is of a raw block volume (volumeMode Block): snapshot browse and cp read "
            "files, and a block device has no files to read",
            "`kubectl storage snapshot check --volume-mode Block` checks that block snapshots "
            "restore; to read one, restore it into a Block PVC and attach that to a pod.",
        )


def _plan_from_snapshot(plan: RestorePlan, inputs: RestoreInputs) -> RestorePlan:
    name = str(plan.source.snapshot)
    snapshot, content, source_pvc = inputs.snapshot or {}, inputs.content, inputs.source_pvc
    if dig(snapshot, "metadata", "deletionTimestamp"):
        raise UsageError(f"VolumeSnapshot {name} is being deleted", "")
    driver = dig(content, "spec", "driver") or dig(inputs.snapshot_class, "driver")
    # The content records the mode since external-snapshotter 6; the source PVC says it too.
    mode = dig(content, "spec", "sourceVolumeMode") or dig(source_pvc, "spec", "volumeMode")
    _refuse_block(f"VolumeSnapshot {name}", mode)
    restore_class = choose_restore_class(
        snapshot_name=name,
        driver=str(driver) if driver else None,
        source_pvc=source_pvc,
        storage_classes=inputs.storage_classes,
        given=plan.source.storage_class,
    )
    plan = replace(plan, restore_class=restore_class)
    if dig(snapshot, "status", "readyToUse") is not True:
        return plan  # the size is decided once it is ready
    size, reason = choose_restore_size(
        snapshot=snapshot,
        content=content,
        source_pvc=source_pvc,
        given=plan.source.size.text if plan.source.size else None,
    )
    return replace(plan, size=size, size_reason=reason)


def _plan_from_pvc(plan: RestorePlan, inputs: RestoreInputs) -> RestorePlan:
    source = plan.source
    pvc_name = str(source.pvc)
    pvc = inputs.source_pvc or {}
    _refuse_block(f"PVC {pvc_name}", dig(pvc, "spec", "volumeMode"))
    phase = dig(pvc, "status", "phase")
    if phase != "Bound":
        raise UsageError(
            f"PVC {pvc_name} is {phase or 'not bound'}; only a bound PVC can be snapshotted",
            "Wait until it is Bound (a WaitForFirstConsumer claim binds when a pod uses it).",
        )
    class_name = dig(pvc, "spec", "storageClassName")
    if not class_name:
        raise UsageError(
            f"PVC {pvc_name} has no StorageClass, so no snapshot class can be told",
            "Snapshots need a CSI volume with a StorageClass.",
        )
    storage_class = storage_class_in(str(class_name), inputs.storage_classes)
    if source.snapshot_class:
        check_snapshot_class(source.snapshot_class, storage_class, inputs.snapshot_classes)
        vsc = source.snapshot_class
    else:
        vsc = choose_snapshot_class(storage_class, inputs.snapshot_classes)
    restore_class = choose_restore_class(
        snapshot_name=f"of PVC {pvc_name}",
        driver=str(storage_class.get("provisioner") or "") or None,
        source_pvc=pvc,
        storage_classes=inputs.storage_classes,
        given=source.storage_class,
    )
    return replace(plan, restore_class=restore_class, snapshot_class=vsc)


def when_ready(api: KubeApi, plan: RestorePlan) -> RestorePlan:
    """Wait for a snapshot that is not ready yet, then decide its restore size (before any
    object is created: an interrupt here leaves nothing behind)."""
    source = plan.source
    if not (source.snapshot and plan.size is None):
        return plan
    log.info("waiting for VolumeSnapshot %s to be readyToUse", source.snapshot)
    snapshot = wait_snapshot_ready(api, source.snapshot, source.namespace, plan.pods.timeout_s)
    try:
        return _plan_from_snapshot(plan, _read_snapshot(api, snapshot, source.namespace))
    except SnapshotChoiceError as exc:
        raise choice_error(exc) from exc


def restore_requirements(source: SnapshotSource, pods: PodSettings) -> Requirements:
    """The snapshot API, the named snapshot or PVC and node, and the writes of a restore (and
    of a snapshot, with --pvc)."""
    conditions = {Condition.RESTORE}
    if source.pvc:
        conditions.add(Condition.TAKE_SNAPSHOT)
    return Requirements(
        snapshot_api=True,
        pvcs=(source.pvc,) if source.pvc else (),
        snapshots=(source.snapshot,) if source.snapshot else (),
        nodes=(pods.placement.node_name,) if pods.placement.node_name else (),
        conditions=frozenset(conditions),
        doing="restore snapshots into a temporary PVC",
    )


def restore_offline(source: SnapshotSource) -> bool:
    """Whether --dry-run can plan the restore from the flags alone."""
    if not source.storage_class:
        return False
    if source.pvc:
        return source.snapshot_class is not None
    return source.size is not None


def mount_snapshot(api: KubeApi, scope: RunScope, plan: RestorePlan, step: Step) -> str:
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
        snapshot = wait_snapshot_ready(api, objects.snapshot_name, ns, pods.timeout_s)
        if size is None:
            content = get_optional(api, kinds.VOLUME_SNAPSHOT_CONTENT, content_name_of(snapshot))
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
    with restore_first_on_exit(api, scope, pod_name, pvc_name, ns):
        scope.create(kinds.PVC, objects.pvc, ns)
        scope.create(kinds.POD, objects.pod, ns)
        step(f"waiting for pod {pod_name} to mount the restored volume read-only at /snapshot")
        wait_pod(api, pod_name, pvc_name, ns, "browse", pods.timeout_s, placement=pods.placement)
    return str(pod_name)


def in_snapshot(path: str) -> str:
    try:
        return snapshot_path(path)
    except ValueError as exc:
        raise UsageError(str(exc), "Paths are relative to the snapshot's root.") from exc
