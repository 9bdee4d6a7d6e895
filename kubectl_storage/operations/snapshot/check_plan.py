"""`kubectl storage snapshot check`, the request and the plan: what one check creates, decided
up front (--dry-run prints exactly this), and the scripts its pods run: files on a filesystem, or
byte ranges of a raw device."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from kubectl_storage.core.k8s.labels import RUN_ID, object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import (
    PodIdentity,
    VolumeMode,
    build_pvc,
    build_workload_pod,
)
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.rbac.commands import Condition
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
from kubectl_storage.core.snapshot.check_plan import (
    ADDED,
    CHECK_FILES,
    SOURCE_MOUNT,
    change_script,
    check_size_problem,
    checksum_script,
    describe_change,
    plan_problems,
    write_script,
)
from kubectl_storage.core.snapshot.class_choice import (
    SnapshotChoiceError,
    check_snapshot_class,
    choose_snapshot_class,
)
from kubectl_storage.core.snapshot.earlier import block_earlier_script, earlier_script
from kubectl_storage.core.snapshot.freeze import (
    ROLE_LABEL,
    freeze_refusal,
    freezer_pod,
)
from kubectl_storage.core.snapshot.manifests import build_volume_snapshot, snapshot_data_source
from kubectl_storage.core.snapshot.paths import SNAPSHOT_MOUNT
from kubectl_storage.core.snapshot.restore_node import (
    OTHER,
    reader_affinity,
    writer_affinity,
)
from kubectl_storage.errors import (
    UsageError,
)
from kubectl_storage.operations.preflight import ClusterFacts, Requirements
from kubectl_storage.operations.snapshot.common import (
    PodSettings,
    choice_error,
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
    """The six objects of a check, in creation order."""

    source_pvc: JsonDict
    writer_pod: JsonDict
    #: Cut before the known content is written: a restore must not hand it back (earlier.py).
    earlier_snapshot: JsonDict
    snapshot: JsonDict
    restore_pvc: JsonDict
    reader_pod: JsonDict
    #: --freeze, where the namespace allows it: the pod that freezes the source filesystem.
    freezer_pod: JsonDict | None = None

    def all(self) -> list[JsonDict]:
        """Creation order."""
        freezer = [self.freezer_pod] if self.freezer_pod else []
        return [
            self.source_pvc,
            self.writer_pod,
            self.earlier_snapshot,
            *freezer,
            self.snapshot,
            self.restore_pvc,
            self.reader_pod,
        ]


CHECK_COMMAND = "snapshot-check"


@dataclass(frozen=True)
class CheckScripts:
    """What the pods run and how it is judged: files on a filesystem, or ranges of a device."""

    earlier: str
    write: str
    change: str
    read_restore: str
    sizes: dict[str, int]
    describe: Callable[[], list[str]]
    plan_problems: Callable[[dict[str, str], dict[str, str]], list[str]]


FILE_SCRIPTS = CheckScripts(
    earlier=earlier_script(),
    write=write_script(),
    change=change_script(),
    read_restore=checksum_script(SNAPSHOT_MOUNT),
    sizes={f.path: f.size_bytes for f in (*CHECK_FILES, ADDED)},
    describe=describe_change,
    plan_problems=plan_problems,
)
BLOCK_SCRIPTS = CheckScripts(
    earlier=block_earlier_script(),
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

    def labelled(manifest: JsonDict) -> JsonDict:
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
        earlier_snapshot=labelled(
            build_volume_snapshot(
                f"{name}-earlier",
                namespace,
                pvc_name=f"{name}-source",
                snapshot_class=snapshot_class,
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
    #: --freeze asked for but not possible here: why (the run then goes without one).
    freeze_refusal: str | None = None

    def manifests(self) -> list[JsonDict]:
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


def check_requirements(request: CheckRequest) -> Requirements:
    """The class (or the default one), the snapshot API, the named nodes, and the writes of a
    check."""
    return Requirements(
        storage_classes=(request.storage_class,) if request.storage_class else (),
        default_storage_class=request.storage_class is None,
        snapshot_api=True,
        nodes=tuple(
            n for n in (request.pods.placement.node_name, request.restore_node) if n and n != OTHER
        ),
        conditions=frozenset({Condition.TAKE_SNAPSHOT, Condition.RESTORE}),
        doing="check snapshots",
    )


def plan_check(
    request: CheckRequest,
    facts: ClusterFacts,
    snapshot_classes: list[JsonDict] | None,
    run_id: str,
) -> CheckPlan:
    """Choose the snapshot class (``snapshot_classes`` is None offline, when both classes are
    named) and build the check's objects; pure."""
    class_name = request.storage_class or str(facts.default_storage_class)
    storage_class = facts.storage_classes.get(class_name, {})
    if snapshot_classes is None:
        snapshot_class = str(request.snapshot_class)
    else:
        snapshot_class = choose_check_snapshot_class(
            storage_class, snapshot_classes, request.snapshot_class
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
