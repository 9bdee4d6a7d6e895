"""`kubectl storage fio`, the run: create a class's objects, run fio, parse, delete, next class.

One pod: its container runs fio once as it starts; the run collects that by exec, and runs
further repeats by exec. ``--clients N``: the pods run ``fio --server``;
``fio --client`` runs by exec in the first pod that came up and drives every server at once,
once per repeat. A client whose pod does not come up is reported with its reason and the others
still run; the command then exits 1. Objects go through the run scope, so an interrupted run
deletes them.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from kubectl_storage.core.fio.choices import Spread
from kubectl_storage.core.fio.clients import (
    ClientRuns,
    FioClient,
    client_arguments,
    parse_client_output,
)
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.local_disk import (
    LOCAL_DIRECTORY,
    PROBE_ROUNDS,
    LocalDiskRun,
    memory_backed,
)
from kubectl_storage.core.fio.profiles import DEFAULT_DIRECTORY
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.results import FioOutputError, FioResult
from kubectl_storage.core.fio.setup import TargetSetup, target_setup, volume_setup
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict, dig, labels_of, name_of
from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.k8s.scheduling import schedulable_nodes
from kubectl_storage.errors import ClusterError, FindingsError, ForbiddenError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import exec_in_pod, preload_exec_support
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import ObjectKey, pod_running, wait_for
from kubectl_storage.operations.fio.plan import FioPlan
from kubectl_storage.operations.fio.pod_commands import (
    CONFIG_PATH,
    OUTPUT_FORMAT,
    client_job_name,
    collect_first_run_command,
    fio_command,
    local_fio_command,
    probe_command,
    split_logs,
)
from kubectl_storage.operations.fio.request import FioRequest
from kubectl_storage.operations.pending import explain_pending, pending_hint
from kubectl_storage.operations.pipeline import Progress

log = logging.getLogger(__name__)

ResultT = TypeVar("ResultT")


@dataclass(frozen=True)
class ClassRun:
    """What one class (or the given PVC) produced."""

    target: str
    results: tuple[FioResult, ...]
    stderr: str = ""
    clients: ClientRuns | None = None  # --clients: who ran where, and each repeat's run
    setup: TargetSetup | None = None
    local: LocalDiskRun | None = None  # --compare-local: the same jobs on the node's disk
    logs: dict[str, str] | None = None  # the first run's per-second IOPS logs, by file name


def run_fio(api: KubeApi, plan: FioPlan, scope: RunScope, progress: Progress) -> FioReport:
    """Create the plan's objects class by class, run fio, and return the report."""
    request = plan.request
    if request.pvc and request.block:
        log.warning(
            "fio writes to the raw block device of PVC %s: what its jobs write over is lost",
            request.pvc,
        )
    elif request.pvc:
        log.warning(
            "fio writes a %s test file into PVC %s; it is removed afterwards",
            format_bytes(plan.job_bytes),
            request.pvc,
        )
    runs: dict[str, ClassRun] = {}
    targets = list(plan.targets)
    if request.parallel and len(targets) > 1:
        cancel = threading.Event()
        with ThreadPoolExecutor(max_workers=len(targets)) as pool:
            futures = {
                t: pool.submit(_run_target, api, scope, plan, t, progress, cancel) for t in targets
            }
            try:
                for target, future in futures.items():
                    runs[target] = future.result()
            except BaseException:
                cancel.set()
                raise
    else:
        for target in targets:
            runs[target] = _run_target(api, scope, plan, target, progress, None)
    context: dict[str, object] = {
        "namespace": plan.namespace,
        "size": request.size.text if not request.pvc else None,
        "pvc": request.pvc,
        "volume_mode": str(request.volume_mode),
        "run_id": plan.run_id,
    }
    if request.clients > 1:
        context["clients"] = request.clients
        context["shared_volume"] = request.one_volume
    return build_fio_report(
        {t: r.results for t, r in runs.items()},
        profile=request.profile if not request.job_file else "custom",
        context={k: v for k, v in context.items() if v is not None},
        stderr={t: r.stderr for t, r in runs.items()},
        client_runs={t: r.clients for t, r in runs.items() if r.clients is not None},
        setups={t: r.setup for t, r in runs.items() if r.setup is not None},
        local_disks={t: r.local for t, r in runs.items() if r.local is not None},
        logs={t: r.logs for t, r in runs.items() if r.logs is not None},
    )


def _run_target(
    api: KubeApi,
    scope: RunScope,
    plan: FioPlan,
    target: str,
    progress: Progress,
    cancel: threading.Event | None,
) -> ClassRun:
    request = plan.request
    step = progress.step
    manifests = plan.targets[target]
    pod_manifest = manifests[-1]
    pod_name = pod_manifest["metadata"]["name"]
    ns = plan.namespace
    created: list[ObjectKey] = []
    for manifest in manifests:
        if cancel is not None and cancel.is_set():
            raise ClusterError("cancelled", "")
        kind = kinds.kind_for(manifest["apiVersion"], manifest["kind"])
        scope.create(kind, manifest, ns)
        created.append((kind, manifest["metadata"]["name"], ns))
    preload_exec_support()
    label = f"StorageClass {target}" if not request.pvc else f"PVC {target}"
    pvc_name = _claim_of(pod_manifest) or target
    if request.clients > 1:
        measured = _run_clients(api, plan, target, label, progress)
        if not request.keep:
            scope.delete_now(*created)
        return measured
    step(f"{label}: waiting for the benchmark pod (the volume binds when it is scheduled)")
    try:
        pod = wait_for(
            api,
            kinds.POD,
            pod_name,
            pod_running("benchmark"),
            namespace=ns,
            timeout_s=request.timeout_s,
            what="Running",
            hint=pending_hint(ns, pvc_name, None if request.pvc else target),
        )
    except WaitTimeoutError as exc:
        raise explain_pending(
            api, exc, namespace=ns, pvc=pvc_name, placement=request.placement
        ) from None
    step(f"{label}: pod running; fio starts")
    results, stderr_text, first_mountinfo, logs = _repeat_fio(
        api,
        plan,
        pod_name,
        label,
        progress,
        # the first run started with the container (plan.first_run_command): collect it
        first=collect_first_run_command(_MOUNTINFO_START, _MOUNTINFO_END),
        then=fio_command(request),
        parse=parse_fio_output,
        failed=("fio", "Run with --keep to inspect the pod, or check the job file."),
    )
    setup = _setup(api, plan, target, [pod], first_mountinfo)
    local = None
    if request.compare_local:
        local = _run_on_local_disk(api, plan, pod, first_mountinfo, label, progress)
    if not request.keep:
        # Free the class's storage before the next class starts.
        scope.delete_now(*created)
    return ClassRun(target, tuple(results), stderr_text, setup=setup, local=local, logs=logs)


def _repeat_fio(
    api: KubeApi,
    plan: FioPlan,
    pod: str,
    label: str,
    progress: Progress,
    *,
    first: list[str],
    then: list[str],
    parse: Callable[[str], ResultT],
    failed: tuple[str, str],
) -> tuple[list[ResultT], str, str | None, dict[str, str] | None]:
    """fio --repeat times by exec in ``pod``: ``first`` also prints the volume's mountinfo
    (and the benchmark pod's first run its per-second logs), ``then`` is the command of the
    runs after it. The parsed runs, the last run's stderr, that mountinfo and those logs.

    Raises:
        FindingsError: a run printed no result (``failed``: what ran, and the hint).
    """
    repeat = plan.request.repeat
    results: list[ResultT] = []
    stderr_text = ""
    mountinfo: str | None = None
    logs: dict[str, str] | None = None
    for attempt in range(1, repeat + 1):
        started = time.monotonic()
        prefix = f"{label}: run {attempt}/{repeat}" if repeat > 1 else label
        outcome = exec_in_pod(
            api,
            pod,
            first if attempt == 1 else then,
            namespace=plan.namespace,
            timeout_s=plan.request.timeout_s + _expected_seconds(plan.job_text),
            on_tick=_ticker(progress.tick, prefix, started),
        )
        stderr_text = outcome.stderr
        stdout = outcome.stdout
        if attempt == 1:
            mountinfo, stdout = split_mountinfo(stdout)
            logs, stdout = split_logs(stdout)
        try:
            results.append(parse(stdout))
        except FioOutputError as exc:
            raise FindingsError(
                f"{failed[0]} on {label} produced no result (exit {outcome.exit_code}): "
                + (outcome.stderr.strip() or outcome.stdout.strip())[:800],
                failed[1],
            ) from exc
        progress.step(f"{prefix}: done in {time.monotonic() - started:.0f}s")
    return results, stderr_text, mountinfo, logs


def _run_on_local_disk(
    api: KubeApi,
    plan: FioPlan,
    pod: JsonDict,
    mountinfo: str | None,
    label: str,
    progress: Progress,
) -> LocalDiskRun:
    """The same jobs on the pod's emptyDir (the node's own disk), once, after the volume's; then
    the latency probe, PROBE_ROUNDS times on each side, interleaved (disk, volume, disk, ...)."""
    node = str(dig(pod, "spec", "nodeName") or "") or None
    volume = volume_setup(mountinfo, LOCAL_DIRECTORY) if mountinfo is not None else None
    if volume is not None and memory_backed(volume):
        why = f"the pod's emptyDir is {volume.fs_type}, memory rather than the node's disk"
        log.warning("%s: %s; nothing to compare with", label, why)
        return LocalDiskRun(node, volume, skipped=why)
    prefix = f"{label}: the same jobs on the node's own disk"
    result = _exec_fio(api, plan, pod, local_fio_command(), prefix, progress)
    if isinstance(result, str):
        why = f"fio there produced no result: {result}"
        log.warning("%s: %s", label, why)
        return LocalDiskRun(node, volume, skipped=why)
    on_disk: list[FioResult] = []
    on_volume: list[FioResult] = []
    for round_number in range(1, PROBE_ROUNDS + 1):
        for side, directory, kept in (
            ("the node's disk", LOCAL_DIRECTORY, on_disk),
            ("the volume", DEFAULT_DIRECTORY, on_volume),
        ):
            what = f"{label}: latency probe {round_number}/{PROBE_ROUNDS} on {side}"
            probed = _exec_fio(api, plan, pod, probe_command(directory), what, progress)
            if isinstance(probed, str):
                log.warning("%s: no result: %s", what, probed)
            else:
                kept.append(probed)
    return LocalDiskRun(
        node, volume, result, disk_probes=tuple(on_disk), volume_probes=tuple(on_volume)
    )


def _exec_fio(
    api: KubeApi,
    plan: FioPlan,
    pod: JsonDict,
    command: list[str],
    prefix: str,
    progress: Progress,
) -> FioResult | str:
    """One fio run by exec in the benchmark pod: its result, or what went wrong instead."""
    started = time.monotonic()
    progress.step(prefix)
    outcome = exec_in_pod(
        api,
        name_of(pod),
        command,
        namespace=plan.namespace,
        timeout_s=plan.request.timeout_s + _expected_seconds(plan.job_text),
        on_tick=_ticker(progress.tick, prefix, started),
    )
    try:
        result = parse_fio_output(outcome.stdout)
    except FioOutputError:
        said = (outcome.stderr.strip() or outcome.stdout.strip())[:300]
        return f"(exit {outcome.exit_code}) {said}"
    progress.step(f"{prefix}: done in {time.monotonic() - started:.0f}s")
    return result


def _run_clients(
    api: KubeApi, plan: FioPlan, target: str, label: str, progress: Progress
) -> ClassRun:
    """Wait for the server pods, then run ``fio --client`` in the first, once per repeat."""
    request = plan.request
    ns = plan.namespace
    pods = [m for m in plan.targets[target] if m["kind"] == "Pod"]
    progress.step(
        f"{label}: waiting for {len(pods)} fio server pods (the volumes bind when scheduled)"
    )
    deadline = time.monotonic() + request.timeout_s
    clients: list[FioClient] = []
    running_pods: list[JsonDict] = []
    for index, manifest in enumerate(pods):
        name = name_of(manifest)
        try:
            pod = wait_for(
                api,
                kinds.POD,
                name,
                pod_running("fio server"),
                namespace=ns,
                timeout_s=max(1.0, deadline - time.monotonic()),
                what="Running",
                hint=pending_hint(
                    ns, _claim_of(manifest) or target, None if request.pvc else target
                ),
            )
        except ClusterError as exc:
            current = api.get_or_none(kinds.POD, name, ns)
            node = dig(current, "spec", "nodeName")
            log.warning("%s: client %d (%s) did not start: %s", label, index, name, exc.message)
            for event in exc.events:
                log.warning("  %s", event)
            clients.append(FioClient(index, name, str(node) if node else None, None, exc.message))
            continue
        node, address = dig(pod, "spec", "nodeName"), dig(pod, "status", "podIP")
        clients.append(FioClient(index, name, str(node) if node else None, str(address or "")))
        running_pods.append(pod)
    running = [client for client in clients if client.error is None and client.address]
    if not running:
        raise ClusterError(
            f"{label}: none of the {len(pods)} fio server pods started",
            "Check the events above (kubectl describe pod -n " + ns + ").",
        )
    nodes = sorted({client.node or "?" for client in running})
    progress.step(
        f"{label}: {len(running)} of {len(pods)} clients running on {len(nodes)} node(s) "
        f"({', '.join(nodes)}); fio starts"
    )
    driver = running[0].pod
    arguments = client_arguments(
        [(str(c.address), f"{CONFIG_PATH}/{client_job_name(c.index)}") for c in running]
    )
    addresses = [str(client.address) for client in running]
    # one list serves the report's setup (the clients' nodes) and the packing note (every node
    # the clients could have gone to); None when nodes may not be listed
    listed_nodes = _list_nodes(api)
    eligible = _eligible_nodes(listed_nodes, request)
    fio = ["fio", OUTPUT_FORMAT, *arguments]
    runs, stderr_text, mountinfo, _ = _repeat_fio(
        api,
        plan,
        driver,
        label,
        progress,
        first=with_mountinfo(fio),
        then=fio,
        parse=lambda stdout: parse_client_output(stdout, addresses),
        failed=("fio --client", "Run with --keep to inspect the pods, or check the job file."),
    )
    setup = _setup(api, plan, target, running_pods, mountinfo, listed_nodes)
    return ClassRun(
        target,
        tuple(run.combined for run in runs),
        stderr_text,
        ClientRuns(tuple(clients), tuple(runs), request.spread, eligible),
        setup,
    )


def _list_nodes(api: KubeApi) -> list[JsonDict] | None:
    try:
        return api.list(kinds.NODE)
    except ClusterError:
        return None


def _eligible_nodes(nodes: list[JsonDict] | None, request: FioRequest) -> dict[str, str | None]:
    """The nodes the clients' pods could go to, with their zones (empty if unreadable)."""
    if nodes is None:
        return {}
    names = set(schedulable_nodes(nodes, request.placement))
    return {
        name_of(node): labels_of(node).get(Spread.ZONES.topology_key)
        for node in nodes
        if name_of(node) in names
    }


_MOUNTINFO_START = "@@kubectl-storage mountinfo"
_MOUNTINFO_END = "@@kubectl-storage end"


def with_mountinfo(command: list[str]) -> list[str]:
    """``command`` preceded by the pod's own mountinfo on stdout, between marker lines.

    The first fio run of a class also says how the volume is mounted, without an exec of its
    own (each exec is a round trip the benchmark's overhead would pay).
    """
    script = (
        f'echo "{_MOUNTINFO_START}"; cat /proc/self/mountinfo; echo "{_MOUNTINFO_END}"; exec "$@"'
    )
    return ["sh", "-c", script, "sh", *command]


def split_mountinfo(stdout: str) -> tuple[str | None, str]:
    """The mountinfo printed by :func:`with_mountinfo`, and the rest of stdout (fio's)."""
    start = stdout.find(_MOUNTINFO_START + "\n")
    end = stdout.find(_MOUNTINFO_END + "\n", start + 1)
    if start == -1 or end == -1:
        return None, stdout
    mountinfo = stdout[start + len(_MOUNTINFO_START) + 1 : end]
    return mountinfo, stdout[:start] + stdout[end + len(_MOUNTINFO_END) + 1 :]


def _setup(
    api: KubeApi,
    plan: FioPlan,
    target: str,
    pods: list[JsonDict],
    mountinfo: str | None,
    listed_nodes: list[JsonDict] | None = None,
) -> TargetSetup:
    """What the class's numbers were measured on; what cannot be read is left out.

    ``listed_nodes``: every node, when the caller has listed them; otherwise the pods' nodes
    are read one by one."""
    storage_class = plan.classes.get(target)
    names = sorted({str(n) for pod in pods if (n := dig(pod, "spec", "nodeName"))})
    nodes: list[JsonDict] = []
    if listed_nodes is not None:
        names, nodes = [], [node for node in listed_nodes if name_of(node) in names]
    for name in names:
        try:
            node = api.get_or_none(kinds.NODE, name)
        except ForbiddenError:
            log.info("not allowed to read node %s; the report leaves its kernel out", name)
            continue
        if node is not None:
            nodes.append(node)
    volume = None
    if mountinfo is not None and not plan.request.block:
        volume = volume_setup(mountinfo, DEFAULT_DIRECTORY)
    return target_setup(storage_class, nodes, volume)


def _ticker(step: Callable[[str], None], prefix: str, started: float) -> Callable[[], None]:
    return lambda: step(f"{prefix}: fio running, {time.monotonic() - started:.0f}s")


def _claim_of(pod: JsonDict) -> str | None:
    """The claim a benchmark pod mounts (the class's fresh PVC, or the one given with --pvc)."""
    for volume in dig(pod, "spec", "volumes") or []:
        claim = dig(volume, "persistentVolumeClaim", "claimName")
        if claim:
            return str(claim)
    return None


def _expected_seconds(job_text: str) -> float:
    """A generous upper bound of fio's runtime from runtime/ramp_time (for exec timeouts)."""

    runtimes = [int(m) for m in re.findall(r"^\s*runtime\s*=\s*(\d+)", job_text, re.M)]
    ramps = [int(m) for m in re.findall(r"^\s*ramp_time\s*=\s*(\d+)", job_text, re.M)]
    jobs = len(re.findall(r"^\s*\[(?!global\])[^\]]+\]", job_text, re.M)) or 1
    per_job = (max(runtimes) if runtimes else 60) + (max(ramps) if ramps else 0)
    return float(per_job * jobs * 2)
