"""`kubectl storage snapshot check`: write known files to a new PVC → snapshot → change the
source → restore into a second PVC → compare checksums: the restore must hold the snapshot-time
content and none of the change."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import RUN_ID, object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import (
    Manifest,
    PodIdentity,
    VolumeMode,
    build_pvc,
    build_workload_pod,
)
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.rbac import Condition
from kubectl_storage.core.snapshot.block_ranges import (
    BLOCK_DEVICE,
    RANGE_SIZES,
    block_change_script,
    block_checksum_script,
    block_plan_problems,
    block_size_problem,
    block_write_script,
    describe_block_change,
)
from kubectl_storage.core.snapshot.freeze import (
    ROLE_LABEL,
    FreezeResult,
    freeze_refusal,
    freezer_pod,
)
from kubectl_storage.core.snapshot.log_writer import (
    Ack,
)
from kubectl_storage.core.snapshot.restore_node import (
    OTHER,
    RestorePlacement,
    reader_affinity,
    volume_topology_refusal,
    writer_affinity,
)
from kubectl_storage.core.snapshot.snapshots import (
    ADDED,
    CHECK_FILES,
    SNAPSHOT_MOUNT,
    SOURCE_MOUNT,
    FileVerdict,
    SnapshotCheckReport,
    SnapshotChoiceError,
    StepTiming,
    build_volume_snapshot,
    change_script,
    check_size_problem,
    check_snapshot_class,
    checksum_script,
    choose_restore_size,
    choose_snapshot_class,
    compare_restore,
    content_name_of,
    describe_change,
    parse_checksums,
    plan_problems,
    snapshot_data_source,
    snapshot_settled,
    write_script,
)
from kubectl_storage.core.snapshot.under_load import UnderLoadResult, judge_under_load
from kubectl_storage.errors import (
    ClusterError,
    UsageError,
)
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.pipeline import Progress
from kubectl_storage.operations.preflight import ClusterFacts, Requirements
from kubectl_storage.operations.snapshot.common import (
    PodSettings,
    Step,
    choice_error,
    get_optional,
    restore_first_on_exit,
    run_script,
    timed,
    wait_pod,
    wait_snapshot_ready,
)
from kubectl_storage.operations.snapshot.freeze import Freeze, start_freeze, thaw_once_cut
from kubectl_storage.operations.snapshot.restore_node import (
    judge_placement,
    require_another_node,
    restore_where,
)
from kubectl_storage.operations.snapshot.under_load import (
    read_restored_log,
    start_writer,
    stop_writer,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckRequest:
    """Everything `snapshot check` was asked to do."""

    pods: PodSettings
    storage_class: str | None = None  # None: the cluster's default class
    size: Size = field(default_factory=lambda: Size.parse("1Gi"))
    snapshot_class: str | None = None
    under_load: bool = False  # a writer appends fsynced log records while the snapshot is cut
    #: Read the restore on this node, or on any node but the source's (``other``).
    restore_node: str | None = None
    #: Freeze the source filesystem around the cut (application-consistent), where allowed.
    freeze: bool = False
    #: ``Block``: raw block volumes, checked by byte ranges of the device.
    volume_mode: VolumeMode = VolumeMode.FILESYSTEM

    @property
    def block(self) -> bool:
        """Raw block volumes."""
        return self.volume_mode is VolumeMode.BLOCK


@dataclass(frozen=True)
class CheckManifests:
    """The five objects of a check, in creation order."""

    source_pvc: Manifest
    writer_pod: Manifest
    snapshot: Manifest
    restore_pvc: Manifest
    reader_pod: Manifest
    #: --freeze, where the namespace allows it: the pod that freezes the source filesystem.
    freezer_pod: Manifest | None = None

    def all(self) -> list[Manifest]:
        """Creation order."""
        freezer = [self.freezer_pod] if self.freezer_pod else []
        return [
            self.source_pvc,
            self.writer_pod,
            *freezer,
            self.snapshot,
            self.restore_pvc,
            self.reader_pod,
        ]


CHECK_COMMAND = "snapshot-check"


@dataclass(frozen=True)
class CheckScripts:
    """What the pods run and how it is judged: files on a filesystem, or ranges of a device."""

    write: str
    change: str
    read_restore: str
    sizes: dict[str, int]
    describe: Callable[[], list[str]]
    plan_problems: Callable[[dict[str, str], dict[str, str]], list[str]]


FILE_SCRIPTS = CheckScripts(
    write=write_script(),
    change=change_script(),
    read_restore=checksum_script(SNAPSHOT_MOUNT),
    sizes={f.path: f.size_bytes for f in (*CHECK_FILES, ADDED)},
    describe=describe_change,
    plan_problems=plan_problems,
)
BLOCK_SCRIPTS = CheckScripts(
    write=block_write_script(),
    change=block_change_script(),
    read_restore=block_checksum_script(),
    sizes=RANGE_SIZES,
    describe=describe_block_change,
    plan_problems=block_plan_problems,
)

#: In --dry-run with ``--restore-node other``: the writer's node, known once it runs.
WRITER_NODE = "WRITER_NODE"


def validate_check(request: CheckRequest) -> None:
    """Inputs that need no cluster: the size must hold the check's files.

    Raises:
        UsageError: the size is too small for the files.
    """
    problem = (block_size_problem if request.block else check_size_problem)(request.size.bytes)
    if problem:
        raise UsageError(f"-z {request.size} is too small: {problem}", "Example: -z 1Gi")
    if request.block and request.under_load:
        raise UsageError(
            "--under-load writes a log file and needs --volume-mode Filesystem",
            "Check the block volume without --under-load.",
        )
    node = request.pods.placement.node_name
    if request.restore_node and node and request.restore_node == node:
        raise UsageError(
            f"--restore-node {node} is the node the source runs on (--node {node}); the restore "
            "must be read on another node.",
            f"Name another node, or use --restore-node {OTHER}.",
        )


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
    restore_node: str | None = None,
    source_node: str | None = None,
    freeze: bool = False,
    volume_mode: VolumeMode = VolumeMode.FILESYSTEM,
) -> CheckManifests:
    """Every object the check creates, labelled for run ``run_id``.

    The restore's size is the snapshot's restoreSize, known once the snapshot is cut; until
    then (and in --dry-run) the restore PVC asks for the source's size. Likewise with
    ``--restore-node other`` the reader avoids the writer's node, known once the writer runs;
    until then (in --dry-run) that node is named ``WRITER_NODE``. With ``freeze`` a freezer pod
    joins the writer on its node.
    """
    name = object_name(CHECK_COMMAND, run_id)
    device = BLOCK_DEVICE if volume_mode is VolumeMode.BLOCK else None
    writer_placement = pods.placement
    reader_placement = pods.placement
    if restore_node:
        writer_placement = replace(pods.placement, affinity=writer_affinity(restore_node))
        reader_placement = replace(
            pods.placement,
            node_name=None,
            affinity=reader_affinity(
                restore_node, source_node or pods.placement.node_name or WRITER_NODE
            ),
        )

    def labelled(manifest: Manifest) -> Manifest:
        return with_run_labels(manifest, run_id, CHECK_COMMAND)

    writer_pod = labelled(
        build_workload_pod(
            f"{name}-writer",
            namespace,
            pods.image,
            pvc_name=f"{name}-source",
            mount_path=SOURCE_MOUNT,
            block_device_path=device,
            identity=identity,
            placement=writer_placement,
        )
    )
    freezer = None
    if freeze:
        writer_pod["metadata"]["labels"][ROLE_LABEL] = "writer"
        freezer = labelled(
            freezer_pod(
                f"{name}-freezer",
                namespace,
                pods.image,
                pvc=f"{name}-source",
                writer_labels={RUN_ID: run_id, ROLE_LABEL: "writer"},
            )
        )
    return CheckManifests(
        source_pvc=labelled(
            build_pvc(
                f"{name}-source", namespace, storage_class, size, volume_mode=str(volume_mode)
            )
        ),
        writer_pod=writer_pod,
        freezer_pod=freezer,
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
                volume_mode=str(volume_mode),
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
                block_device_path=device,
                read_only=True,
                identity=identity,
                placement=reader_placement,
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
    #: --freeze asked for but not possible here: why (the run is then crash-consistent).
    freeze_refusal: str | None = None

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
        raise choice_error(exc) from exc


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
        refusal = freeze_refusal(facts.pod_security, request.block) if request.freeze else None
        objects = check_manifests(
            facts.namespace,
            class_name,
            snapshot_class,
            request.size.text,
            request.pods,
            identity,
            run_id=run_id,
            restore_node=request.restore_node,
            freeze=request.freeze and refusal is None,
            volume_mode=request.volume_mode,
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
            freeze_refusal=refusal,
        )

    def run(
        self, api: KubeApi, plan: CheckPlan, scope: RunScope, progress: Progress
    ) -> SnapshotCheckReport:
        """See :func:`run_check`."""
        return run_check(api, plan, scope, progress.step)


def run_check(api: KubeApi, plan: CheckPlan, scope: RunScope, step: Step) -> SnapshotCheckReport:
    """Run the planned check and return its report (``verdict`` pass or fail)."""
    request = plan.request
    ns = plan.namespace
    timeout = request.pods.timeout_s
    label = f"StorageClass {plan.storage_class}"
    scripts = BLOCK_SCRIPTS if request.block else FILE_SCRIPTS
    what = "ranges of the device" if request.block else "files"
    steps: list[StepTiming] = []
    objects = plan.objects
    source_name = objects.source_pvc["metadata"]["name"]
    writer = objects.writer_pod["metadata"]["name"]
    snapshot_name = objects.snapshot["metadata"]["name"]

    with timed(steps, "provision source volume"):
        step(f"{label}: creating PVC {source_name} ({request.size}) and the writer pod")
        scope.create(kinds.PVC, objects.source_pvc, ns)
        scope.create(kinds.POD, objects.writer_pod, ns)
        source_node = str(
            dig(wait_pod(api, writer, source_name, ns, "writer", timeout), "spec", "nodeName")
        )
    if request.restore_node == OTHER:
        require_another_node(api, request.pods, source_node)
    with timed(steps, "write known files"):
        step(f"{label}: writing known {what} (fsynced) and their checksums")
        at_snapshot = parse_checksums(
            run_script(api, writer, scripts.write, ns, timeout, f"writing the known {what}")
        )
    if request.under_load:
        with timed(steps, "start log writer"):
            step(f"{label}: starting the log writer (fsynced records, kept running for the cut)")
            start_writer(api, writer, ns, timeout)
    freeze: Freeze | FreezeResult | None = None
    if objects.freezer_pod is not None:
        with timed(steps, "freeze source"):
            step(f"{label}: starting the freezer pod next to the writer")
            freeze = start_freeze(
                api, scope, objects.freezer_pod, source_name, ns, timeout,
                lambda text: step(f"{label}: {text}"),
            )  # fmt: skip
    elif request.freeze:
        freeze = FreezeResult(frozen=False, reason=plan.freeze_refusal)
        step(f"{label}: not freezing: {plan.freeze_refusal}; the cut is crash-consistent")
    requested_ns = time.time_ns()
    with timed(steps, "take snapshot"):
        step(f"{label}: taking VolumeSnapshot {snapshot_name} with class {plan.snapshot_class}")
        scope.create(kinds.VOLUME_SNAPSHOT, objects.snapshot, ns, settled=snapshot_settled)
        if isinstance(freeze, Freeze):
            thaw_once_cut(freeze, snapshot_name, lambda text: step(f"{label}: {text}"))
        step(f"{label}: waiting for the snapshot to be readyToUse")
        snapshot = wait_snapshot_ready(api, snapshot_name, ns, timeout)
    ready_ns = time.time_ns()
    acks: tuple[Ack, ...] = ()
    if request.under_load:
        with timed(steps, "stop log writer"):
            acks = stop_writer(api, writer, ns, timeout)
            step(f"{label}: the writer acknowledged {len(acks)} records")
    with timed(steps, "change source"):
        step(f"{label}: changing the source after the snapshot")
        after_change = parse_checksums(
            run_script(api, writer, scripts.change, ns, timeout, "changing the source")
        )
    content = get_optional(api, kinds.VOLUME_SNAPSHOT_CONTENT, content_name_of(snapshot))
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
        restore_node=request.restore_node,
        source_node=source_node,
        volume_mode=request.volume_mode,
    )
    restore_name = restored.restore_pvc["metadata"]["name"]
    reader = restored.reader_pod["metadata"]["name"]
    with (
        timed(steps, "restore snapshot"),
        restore_first_on_exit(api, scope, reader, restore_name, ns),
    ):
        step(f"{label}: restoring into PVC {restore_name} ({restore_size}, {size_reason})")
        scope.create(kinds.PVC, restored.restore_pvc, ns)
        scope.create(kinds.POD, restored.reader_pod, ns)
        where = (
            f" on {restore_where(request.restore_node, source_node)}"
            if request.restore_node
            else ""
        )
        step(f"{label}: waiting for the restored volume to be mounted (read-only){where}")
        reader_pod = wait_pod(
            api,
            reader,
            restore_name,
            ns,
            "reader",
            timeout,
            or_until=volume_topology_refusal if request.restore_node else None,
        )
    placement = None
    if request.restore_node:
        placement = judge_placement(
            api, request.restore_node, source_node, reader_pod, restore_name, ns
        )
        if placement.node_local:
            step(f"{label}: the restore cannot be read on another node: {placement.node_local}")
            return _report(
                plan,
                snapshot_name,
                restore_size,
                steps,
                placement=placement,
                driver=_driver(content, plan),
            )
    with timed(steps, "verify restore"):
        step(f"{label}: comparing checksums")
        in_restore = parse_checksums(
            run_script(api, reader, scripts.read_restore, ns, timeout, "reading the restore")
        )
        under_load = None
        if request.under_load:
            step(f"{label}: reading the restored log")
            under_load = judge_under_load(
                read_restored_log(api, reader, ns, timeout),
                acks,
                creation_time=dig(snapshot, "status", "creationTime"),
                requested_ns=requested_ns,
                ready_ns=ready_ns,
            )
    freeze_result = freeze.result() if isinstance(freeze, Freeze) else freeze
    if freeze_result is not None:
        torn = under_load.log.torn if under_load else None
        freeze_result = freeze_result.with_log(acks, torn.offset if torn else None)
    report = _report(
        plan,
        snapshot_name,
        restore_size,
        steps,
        placement=placement,
        driver=_driver(content, plan),
        files=tuple(compare_restore(at_snapshot, after_change, in_restore, scripts.sizes)),
        changes=tuple(scripts.describe()),
        setup_problems=tuple(scripts.plan_problems(at_snapshot, after_change)),
        under_load=under_load,
        freeze=freeze_result,
    )
    step(f"{label}: {report.verdict} ({report.total_seconds:.0f}s)")
    return report


def _driver(content: JsonDict | None, plan: CheckPlan) -> str:
    return str(dig(content, "spec", "driver") or "") or plan.provisioner


def _report(
    plan: CheckPlan,
    snapshot_name: str,
    restore_size: str,
    steps: list[StepTiming],
    *,
    driver: str,
    placement: RestorePlacement | None,
    files: tuple[FileVerdict, ...] = (),
    changes: tuple[str, ...] = (),
    setup_problems: tuple[str, ...] = (),
    under_load: UnderLoadResult | None = None,
    freeze: FreezeResult | None = None,
) -> SnapshotCheckReport:
    return SnapshotCheckReport(
        storage_class=plan.storage_class,
        snapshot_class=plan.snapshot_class,
        driver=driver,
        namespace=plan.namespace,
        size=plan.request.size.text,
        snapshot=snapshot_name,
        restore_size=restore_size,
        restore_storage_class=plan.storage_class,
        run_id=plan.run_id,
        steps=tuple(steps),
        files=files,
        changes=changes,
        setup_problems=setup_problems,
        under_load=under_load,
        restore_placement=placement,
        freeze=freeze,
        volume_mode=str(plan.request.volume_mode),
    )
