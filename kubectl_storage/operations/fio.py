"""`kubectl storage fio`: benchmark StorageClasses with fio in restricted-level pods.

Steps per class: validate inputs (size, job file, fit) → check the cluster (class, namespace,
permissions) → create ConfigMap + PVC + pod through the run scope → wait until the pod runs
(a WaitForFirstConsumer claim binds then) → exec fio, once per repeat → parse → delete that
class's objects → next class. Nothing is created until every check has passed.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kubectl_storage.core.fio.jobs import (
    DEFAULT_DIRECTORY,
    PROFILES,
    FioJobError,
    check_fits,
    estimate_job_space,
    render_profile,
    validate_job_text,
)
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.results import FioOutputError, FioResult, parse_fio_output
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import (
    Manifest,
    PodIdentity,
    PodPlacement,
    VolumeMode,
    build_configmap,
    build_pvc,
    build_workload_pod,
)
from kubectl_storage.core.k8s.objects import pvc_capacity
from kubectl_storage.core.k8s.quantities import Size, format_bytes, parse_size_bytes
from kubectl_storage.core.rbac import Condition
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.errors import ClusterError, FindingsError, UsageError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import exec_in_pod, preload_exec_support
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for
from kubectl_storage.operations.pipeline import Progress
from kubectl_storage.operations.preflight import ClusterFacts, Requirements

log = logging.getLogger(__name__)

JOB_FILE_NAME = "job.fio"
CONFIG_PATH = "/etc/kubectl-storage"
BLOCK_DEVICE_PATH = "/dev/kubectl-storage-block"
COMMAND = "fio"


@dataclass(frozen=True)
class FioRequest:
    """Everything `kubectl storage fio` was asked to do, typed and complete."""

    storage_classes: tuple[str, ...] = ()  # empty and no pvc: the cluster's default class
    size: Size = field(default_factory=lambda: Size.parse("100Gi"))
    pvc: str | None = None
    volume_mode: VolumeMode = VolumeMode.FILESYSTEM
    profile: str = "default"
    job_file: str | None = None  # path of the user's job file
    runtime_s: int | None = None
    ramp_time_s: int | None = None
    image: str = ""
    placement: PodPlacement = field(default_factory=PodPlacement)
    identity: PodIdentity | None = None  # None: decide from the namespace (OpenShift assigns)
    timeout_s: float = 300
    keep: bool = False
    parallel: bool = False
    repeat: int = 1

    @property
    def block(self) -> bool:
        """Whether the volume is a raw block device."""
        return self.volume_mode is VolumeMode.BLOCK


@dataclass(frozen=True)
class FioPlan:
    """The validated request: job text and the labelled manifests per class (or the PVC)."""

    request: FioRequest
    namespace: str
    run_id: str
    job_text: str
    job_bytes: int
    targets: dict[str, list[Manifest]]  # target (class or pvc) -> manifests, creation order

    def manifests(self) -> list[Manifest]:
        """All manifests the run creates, in creation order (what --dry-run prints)."""
        return [m for manifests in self.targets.values() for m in manifests]


def build_job_text(request: FioRequest) -> str:
    """The fio job file: the user's, or the chosen profile rendered for the volume mode."""
    block = request.block
    if request.job_file:
        if request.runtime_s is not None or request.ramp_time_s is not None:
            raise UsageError(
                "--runtime and --ramp-time apply to the built-in profiles, not to a job file",
                f"Set runtime= and ramp_time= in {request.job_file} instead.",
            )
        try:
            text = Path(request.job_file).read_text()
        except OSError as exc:
            raise UsageError(
                f"cannot read the fio job file {request.job_file}: {exc.strerror}",
                "Give the path of an fio job file with -f.",
            ) from exc
        errors = [f for f in validate_job_text(text) if f.severity is Severity.ERROR]
        if errors:
            raise UsageError(
                f"the fio job file {request.job_file} is not valid: "
                + "; ".join(f.message for f in errors),
                errors[0].fix,
            )
        return text
    if request.profile not in PROFILES:
        raise UsageError(
            f"unknown fio profile {request.profile!r}",
            f"Choose one of: {', '.join(PROFILES)}; or give a job file with -f.",
        )
    try:
        return render_profile(
            request.profile,
            runtime_s=request.runtime_s,
            ramp_time_s=request.ramp_time_s,
            directory=None if block else DEFAULT_DIRECTORY,
            filename=BLOCK_DEVICE_PATH if block else None,
        )
    except FioJobError as exc:
        raise UsageError(str(exc), "Check --runtime and --ramp-time.") from exc


def check_with_local_fio(job_text: str) -> str | None:
    """Run ``fio --parse-only`` on the job when fio is installed here; the error text or None."""
    fio = shutil.which("fio")
    if not fio:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".fio", delete=False) as handle:
        handle.write(job_text)
        path = handle.name
    try:
        proc = subprocess.run(
            [fio, "--parse-only", path], capture_output=True, text=True, timeout=30, check=False
        )
    finally:
        Path(path).unlink(missing_ok=True)
    if proc.returncode != 0:
        return (proc.stderr or proc.stdout).strip().replace(path, "job file")
    return None


def validate_fio(request: FioRequest) -> None:
    """Every check that needs no cluster: counts, the job file (with fio --parse-only where fio
    is installed here), and whether the job fits the volume size asked for."""
    if request.repeat < 1:
        raise UsageError("--repeat must be at least 1", "Example: --repeat 3")
    if request.timeout_s <= 0:
        raise UsageError("--timeout must be a positive number of seconds", "Example: --timeout 600")
    if request.storage_classes and request.pvc:
        raise UsageError("give either -s/--storage-class or --pvc, not both", "")
    job_text = build_job_text(request)
    fio_complaint = check_with_local_fio(job_text)
    if fio_complaint:
        raise UsageError(
            f"fio rejects the job file: {fio_complaint}", "Fix the job file and try again."
        )
    if not request.pvc:
        _check_fits(request, job_text, request.size.bytes)


def _check_fits(request: FioRequest, job_text: str, volume_bytes: int) -> int:
    estimate = estimate_job_space(job_text)
    overhead = 0.0 if request.block else 0.10
    misfit = check_fits(estimate.total_bytes, volume_bytes, overhead_fraction=overhead)
    if misfit:
        flag = f"--pvc {request.pvc}" if request.pvc else f"-z {request.size}"
        raise UsageError(f"{misfit} ({flag})", "Raise -z/--size or lower the job's size.")
    return estimate.total_bytes


def requirements(request: FioRequest) -> Requirements:
    """What preflight checks: the classes (or the default one), the PVC, the writes."""
    return Requirements(
        storage_classes=request.storage_classes,
        default_storage_class=not request.storage_classes and not request.pvc,
        pvcs=(request.pvc,) if request.pvc else (),
        conditions=frozenset() if request.pvc else frozenset({Condition.NEW_VOLUME}),
        doing="run fio benchmarks",
    )


def plan_fio(request: FioRequest, facts: ClusterFacts, run_id: str) -> FioPlan:
    """The labelled manifests per class, for this run id (also what --dry-run prints)."""
    job_text = build_job_text(request)
    if request.pvc:
        capacity = pvc_capacity(facts.pvcs.get(request.pvc))
        volume_bytes = parse_size_bytes(capacity) if capacity else request.size.bytes
        job_bytes = _check_fits(request, job_text, volume_bytes)
        targets = [request.pvc]
    else:
        job_bytes = estimate_job_space(job_text).total_bytes
        targets = list(request.storage_classes) or [str(facts.default_storage_class)]
    identity = facts.identity(request.identity)
    manifests = {
        target: [
            with_run_labels(m, run_id, COMMAND)
            for m in _manifests_for(request, facts.namespace, target, run_id, job_text, identity)
        ]
        for target in targets
    }
    return FioPlan(request, facts.namespace, run_id, job_text, job_bytes, manifests)


def _manifests_for(
    request: FioRequest,
    ns: str,
    target: str,
    run_id: str,
    job_text: str,
    identity: PodIdentity,
) -> list[Manifest]:
    suffix = _short(target)
    cm_name = object_name(COMMAND, run_id, suffix)
    pod_name = object_name(COMMAND, run_id, suffix)
    out = [build_configmap(cm_name, ns, {JOB_FILE_NAME: job_text})]
    if request.pvc:
        pvc_name = request.pvc
    else:
        pvc_name = object_name(COMMAND, run_id, suffix)
        out.append(
            build_pvc(pvc_name, ns, target, request.size.text, volume_mode=request.volume_mode)
        )
    out.append(
        build_workload_pod(
            pod_name,
            ns,
            request.image,
            pvc_name=pvc_name,
            mount_path=DEFAULT_DIRECTORY,
            block_device_path=BLOCK_DEVICE_PATH if request.block else None,
            configmap_name=cm_name,
            configmap_path=CONFIG_PATH,
            identity=identity,
            placement=request.placement,
        )
    )
    return out


def _short(target: str) -> str:
    return target[:30]


class FioCommand:
    """`kubectl storage fio` as pipeline stages (operations/pipeline.py)."""

    rbac_name = COMMAND
    label = COMMAND

    def validate(self, request: FioRequest) -> None:
        """See :func:`validate_fio`."""
        validate_fio(request)

    def requirements(self, request: FioRequest) -> Requirements:
        """See :func:`requirements`."""
        return requirements(request)

    def plan_offline(self, request: FioRequest) -> bool:
        """Named classes plan from the flags; the default class and a PVC's size need reads."""
        return bool(request.storage_classes) and not request.pvc

    def plan(
        self, request: FioRequest, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> FioPlan:
        """See :func:`plan_fio`."""
        return plan_fio(request, facts, run_id)

    def run(self, api: KubeApi, plan: FioPlan, scope: RunScope, progress: Progress) -> FioReport:
        """See :func:`run_fio`."""
        return run_fio(api, plan, scope, progress)


# -- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassRun:
    """What one class (or the given PVC) produced."""

    target: str
    results: tuple[FioResult, ...]
    stderr: str = ""


def run_fio(api: KubeApi, plan: FioPlan, scope: RunScope, progress: Progress) -> FioReport:
    """Create the plan's objects class by class, run fio, and return the report."""
    request = plan.request
    if request.pvc:
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
    context = {
        "namespace": plan.namespace,
        "size": request.size.text if not request.pvc else None,
        "pvc": request.pvc,
        "volume_mode": str(request.volume_mode),
        "run_id": plan.run_id,
    }
    return build_fio_report(
        {t: r.results for t, r in runs.items()},
        profile=request.profile if not request.job_file else "custom",
        context={k: v for k, v in context.items() if v is not None},
        stderr={t: r.stderr for t, r in runs.items()},
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
    created: list[tuple[kinds.ResourceKind, str]] = []
    for manifest in manifests:
        if cancel is not None and cancel.is_set():
            raise ClusterError("cancelled", "")
        kind = kinds.kind_for(manifest["apiVersion"], manifest["kind"])
        scope.create(kind, manifest, ns)
        created.append((kind, manifest["metadata"]["name"]))
    preload_exec_support()
    label = f"StorageClass {target}" if not request.pvc else f"PVC {target}"
    step(f"{label}: waiting for the benchmark pod (the volume binds when it is scheduled)")
    wait_for(
        api,
        kinds.POD,
        pod_name,
        pod_running("benchmark"),
        namespace=ns,
        timeout_s=request.timeout_s,
        what="Running",
        hint=_pending_hint(ns, target),
    )
    step(f"{label}: pod running; fio starts")
    results: list[FioResult] = []
    stderr_text = ""
    for attempt in range(1, request.repeat + 1):
        started = time.monotonic()
        prefix = f"{label}: run {attempt}/{request.repeat}" if request.repeat > 1 else label
        command = ["fio", "--output-format=json"]
        if not request.block:
            # fio writes where it runs unless told otherwise, and the root filesystem is
            # read-only: point a user's job file without `directory=` at the volume.
            command.append(f"--directory={DEFAULT_DIRECTORY}")
        command.append(f"{CONFIG_PATH}/{JOB_FILE_NAME}")
        outcome = exec_in_pod(
            api,
            pod_name,
            command,
            namespace=ns,
            timeout_s=request.timeout_s + _expected_seconds(plan.job_text),
            on_tick=_ticker(progress.tick, prefix, started),
        )
        stderr_text = outcome.stderr
        try:
            result = parse_fio_output(outcome.stdout)
        except FioOutputError as exc:
            raise FindingsError(
                f"fio on {label} produced no result (exit {outcome.exit_code}): "
                + (outcome.stderr.strip() or outcome.stdout.strip())[:800],
                "Run with --keep to inspect the pod, or check the job file.",
            ) from exc
        results.append(result)
        step(f"{prefix}: done in {time.monotonic() - started:.0f}s")
    if not request.keep:
        # Free the class's storage before the next class starts.
        for kind, name in reversed(created):
            scope.delete_now(kind, name, ns)
    return ClassRun(target, tuple(results), stderr_text)


def _ticker(step: Callable[[str], None], prefix: str, started: float) -> Callable[[], None]:
    return lambda: step(f"{prefix}: fio running, {time.monotonic() - started:.0f}s")


def _pending_hint(namespace: str, target: str) -> str:
    return (
        "If the PVC stays Pending, check that the StorageClass's provisioner runs "
        f"(kubectl get pvc -n {namespace}; kubectl describe storageclass {target}). "
        "If the pod is Pending, check node taints (--toleration) and resources."
    )


def _expected_seconds(job_text: str) -> float:
    """A generous upper bound of fio's runtime from runtime/ramp_time (for exec timeouts)."""

    runtimes = [int(m) for m in re.findall(r"^\s*runtime\s*=\s*(\d+)", job_text, re.M)]
    ramps = [int(m) for m in re.findall(r"^\s*ramp_time\s*=\s*(\d+)", job_text, re.M)]
    jobs = len(re.findall(r"^\s*\[(?!global\])[^\]]+\]", job_text, re.M)) or 1
    per_job = (max(runtimes) if runtimes else 60) + (max(ramps) if ramps else 0)
    return float(per_job * jobs * 2)
