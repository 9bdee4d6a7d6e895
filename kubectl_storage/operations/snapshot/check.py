"""`kubectl storage snapshot check`: write known files to a new PVC → snapshot → change the
source → restore into a second PVC → compare checksums: the restore must hold the snapshot-time
content and none of the change."""

from __future__ import annotations

import logging
import time
from functools import partial

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.snapshot.check_plan import FileVerdict, compare_restore, parse_checksums
from kubectl_storage.core.snapshot.check_report import SnapshotCheckReport, StepTiming
from kubectl_storage.core.snapshot.class_choice import SnapshotChoiceError, choose_restore_size
from kubectl_storage.core.snapshot.earlier import EarlierSnapshot, judge_earlier, without_markers
from kubectl_storage.core.snapshot.freeze import (
    FreezeResult,
)
from kubectl_storage.core.snapshot.log_writer import (
    Ack,
)
from kubectl_storage.core.snapshot.restore_node import (
    OTHER,
    RestorePlacement,
    volume_topology_refusal,
)
from kubectl_storage.core.snapshot.snapshot_list import content_name_of, snapshot_settled
from kubectl_storage.core.snapshot.under_load import UnderLoadResult, judge_under_load
from kubectl_storage.errors import (
    ClusterError,
)
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.pipeline import Command
from kubectl_storage.operations.preflight import ClusterFacts
from kubectl_storage.operations.snapshot.check_plan import (
    BLOCK_SCRIPTS,
    CHECK_COMMAND,
    FILE_SCRIPTS,
    CheckPlan,
    CheckRequest,
    check_manifests,
    check_requirements,
    plan_check,
    validate_check,
)
from kubectl_storage.operations.snapshot.common import (
    Step,
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
    count_acks,
    read_restored_logs,
    start_writer,
    stop_writer,
)

log = logging.getLogger(__name__)


def read_snapshot_classes(
    api: KubeApi, request: CheckRequest, facts: ClusterFacts
) -> list[JsonDict]:
    """The gather stage: the VolumeSnapshotClasses the plan chooses from."""
    return api.list(kinds.VOLUME_SNAPSHOT_CLASS)


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
    earlier_name = objects.earlier_snapshot["metadata"]["name"]

    with timed(steps, "provision source volume"):
        step(f"{label}: creating PVC {source_name} ({request.size}) and the writer pod")
        scope.create(kinds.PVC, objects.source_pvc, ns)
        scope.create(kinds.POD, objects.writer_pod, ns)
        writer_pod = wait_pod(
            api, writer, source_name, ns, "writer", timeout, placement=request.pods.placement
        )
        source_node = str(dig(writer_pod, "spec", "nodeName"))
    if request.restore_node == OTHER:
        require_another_node(api, request.pods, source_node)
    with timed(steps, "take earlier snapshot"):
        step(f"{label}: marking the source and taking the earlier VolumeSnapshot {earlier_name}")
        at_earlier = parse_checksums(
            run_script(api, writer, scripts.earlier, ns, timeout, "writing the marker")
        )
        scope.create(kinds.VOLUME_SNAPSHOT, objects.earlier_snapshot, ns, settled=snapshot_settled)
        # Cut and ready before anything else is written: its content is the marker alone.
        wait_snapshot_ready(api, earlier_name, ns, timeout)
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
        step(f"{label}: not freezing: {plan.freeze_refusal}")
    at_request = count_acks(api, writer, ns, timeout) if request.under_load else 0
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
    at_ready = 0
    if request.under_load:
        at_ready = count_acks(api, writer, ns, timeout)
        with timed(steps, "stop log writer"):
            acks = stop_writer(api, writer, ns, timeout)
            step(
                f"{label}: the writer acknowledged {len(acks)} records ({at_request} before "
                f"the request, {at_ready} at readyToUse)"
            )
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
            placement=None if request.restore_node else request.pods.placement,
            or_until=volume_topology_refusal if request.restore_node else None,
        )
    placement = None
    if request.restore_node:
        placement = judge_placement(
            api, request.restore_node, source_node, reader_pod, restore_name, ns
        )
    # This restore's report, however far the check got.
    report_of = partial(
        _report,
        plan,
        snapshot_name,
        restore_size,
        steps,
        placement=placement,
        driver=_driver(content, plan),
    )
    if placement is not None and placement.node_local:
        step(f"{label}: the restore cannot be read on another node: {placement.node_local}")
        return report_of()
    with timed(steps, "verify restore"):
        step(f"{label}: comparing checksums")
        in_restore = parse_checksums(
            run_script(api, reader, scripts.read_restore, ns, timeout, "reading the restore")
        )
        under_load = None
        if request.under_load:
            step(f"{label}: reading the restored logs")
            under_load = judge_under_load(
                read_restored_logs(api, reader, ns, timeout),
                acks,
                creation_time=dig(snapshot, "status", "creationTime"),
                requested_ns=requested_ns,
                ready_ns=ready_ns,
                acknowledged_at_request=at_request,
                acknowledged_at_ready=at_ready,
            )
    freeze_result = freeze.result() if isinstance(freeze, Freeze) else freeze
    if freeze_result is not None:
        torn = next((log.torn for log in under_load.logs if log.torn), None) if under_load else None
        freeze_result = freeze_result.with_log(acks, torn.offset if torn else None)
    earlier = judge_earlier(
        earlier_name, snapshot_name, at_earlier, at_snapshot, in_restore, what=what
    )
    at_snapshot, after_change, in_restore = (
        without_markers(sums) for sums in (at_snapshot, after_change, in_restore)
    )
    report = report_of(
        files=tuple(compare_restore(at_snapshot, after_change, in_restore, scripts.sizes)),
        changes=tuple(scripts.describe()),
        setup_problems=tuple(scripts.plan_problems(at_snapshot, after_change)),
        earlier=earlier,
        under_load=under_load,
        freeze=freeze_result,
    )
    step(f"{label}: {report.outcome.verdict.value} ({report.total_seconds:.0f}s)")
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
    earlier: EarlierSnapshot | None = None,
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
        earlier=earlier,
    )


SNAPSHOT_CHECK_COMMAND: Command[CheckRequest, list[JsonDict], CheckPlan, SnapshotCheckReport] = (
    Command(
        rbac_name="snapshot",
        label=CHECK_COMMAND,
        validate=validate_check,
        requirements=check_requirements,
        # Both classes named: nothing to look up.
        plan_offline=lambda r: r.storage_class is not None and r.snapshot_class is not None,
        gather=read_snapshot_classes,
        plan=plan_check,
        run=lambda api, plan, scope, progress: run_check(api, plan, scope, progress.step),
    )
)
