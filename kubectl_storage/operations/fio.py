"""`kubectl storage fio`: benchmark StorageClasses with fio in restricted-level pods.

Steps per class: validate inputs (size, job file, fit) → check the cluster (class, namespace,
permissions) → create ConfigMap + PVC + pod through the run scope → wait until the pod runs
(a WaitForFirstConsumer claim binds then) → exec fio, once per repeat → parse → delete that
class's objects → next class. Nothing is created until every check has passed.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubectl_storage.core.fio.jobs import (
    DEFAULT_DIRECTORY,
    PROFILES,
    FioJobError,
    check_fits,
    estimate_job_space,
    render_profile,
    validate_job_text,
)
from kubectl_storage.core.fio.results import FioOutputError, FioResult, parse_fio_output
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import object_name
from kubectl_storage.core.k8s.manifests import (
    Manifest,
    PodIdentity,
    PodPlacement,
    build_configmap,
    build_pvc,
    build_workload_pod,
)
from kubectl_storage.core.k8s.quantities import QuantityError, format_bytes, parse_size_bytes
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.errors import ClusterError, FindingsError, NotFoundError, UsageError
from kubectl_storage.kube.access import AccessRequest, require_access
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import exec_in_pod, preload_exec_support
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import pod_running, wait_for

log = logging.getLogger(__name__)

JOB_FILE_NAME = "job.fio"
CONFIG_PATH = "/etc/kubectl-storage"
BLOCK_DEVICE_PATH = "/dev/kubectl-storage-block"
OPENSHIFT_UID_ANNOTATION = "openshift.io/sa.scc.uid-range"


@dataclass(frozen=True)
class FioRequest:
    """Everything `kubectl storage fio` was asked to do."""

    storage_classes: tuple[str, ...]
    namespace: str
    size: str = "100Gi"
    pvc: str | None = None
    volume_mode: str = "Filesystem"
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


@dataclass(frozen=True)
class FioPlan:
    """The validated request: job text and the manifests per class."""

    request: FioRequest
    job_text: str
    job_bytes: int
    size_bytes: int
    manifests: dict[str, list[Manifest]]  # target (class or pvc) -> manifests to create


def build_job_text(request: FioRequest) -> str:
    """The fio job file: the user's, or the chosen profile rendered for the volume mode."""
    block = request.volume_mode == "Block"
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


def plan_fio(request: FioRequest, pvc_bytes: int | None = None) -> FioPlan:
    """Validate everything that needs no cluster and build the manifests (also for --dry-run)."""
    if request.repeat < 1:
        raise UsageError("--repeat must be at least 1", "Example: --repeat 3")
    if request.volume_mode not in ("Filesystem", "Block"):
        raise UsageError(
            f"--volume-mode must be Filesystem or Block, not {request.volume_mode!r}", ""
        )
    try:
        size_bytes = parse_size_bytes(request.size, what="--size")
    except QuantityError as exc:
        raise UsageError(str(exc), "Example: -z 20Gi") from exc
    job_text = build_job_text(request)
    fio_complaint = check_with_local_fio(job_text)
    if fio_complaint:
        raise UsageError(
            f"fio rejects the job file: {fio_complaint}", "Fix the job file and try again."
        )
    estimate = estimate_job_space(job_text)
    volume_bytes = pvc_bytes if pvc_bytes is not None else size_bytes
    overhead = 0.0 if request.volume_mode == "Block" else 0.10
    misfit = check_fits(estimate.total_bytes, volume_bytes, overhead_fraction=overhead)
    if misfit:
        flag = f"--pvc {request.pvc}" if request.pvc else f"-z {request.size}"
        raise UsageError(f"{misfit} ({flag})", "Raise -z/--size or lower the job's size.")
    manifests: dict[str, list[Manifest]] = {}
    targets = [request.pvc] if request.pvc else list(request.storage_classes)
    for target in targets:
        manifests[target] = _manifests_for(request, target, "RUNID", job_text)
    return FioPlan(request, job_text, estimate.total_bytes, size_bytes, manifests)


def _manifests_for(request: FioRequest, target: str, run_id: str, job_text: str) -> list[Manifest]:
    ns = request.namespace
    suffix = _short(target)
    cm_name = object_name("fio", run_id, suffix)
    pod_name = object_name("fio", run_id, suffix)
    identity = request.identity or PodIdentity()
    out = [build_configmap(cm_name, ns, {JOB_FILE_NAME: job_text})]
    if request.pvc:
        pvc_name = request.pvc
    else:
        pvc_name = object_name("fio", run_id, suffix)
        out.append(build_pvc(pvc_name, ns, target, request.size, volume_mode=request.volume_mode))
    block = request.volume_mode == "Block"
    out.append(
        build_workload_pod(
            pod_name,
            ns,
            request.image,
            pvc_name=pvc_name,
            mount_path=DEFAULT_DIRECTORY,
            block_device_path=BLOCK_DEVICE_PATH if block else None,
            configmap_name=cm_name,
            configmap_path=CONFIG_PATH,
            identity=identity,
            placement=request.placement,
        )
    )
    return out


def _short(target: str) -> str:
    return target[:30]


def dry_run_manifests(plan: FioPlan) -> list[Manifest]:
    """All manifests the run would create, in creation order."""
    return [m for manifests in plan.manifests.values() for m in manifests]


# -- cluster checks -------------------------------------------------------------------------


def check_cluster(api: KubeApi, request: FioRequest) -> tuple[int | None, PodIdentity]:
    """Fail before creating anything: classes, PVC, namespace, permissions; choose the UID."""
    ns_obj = api.get_or_none(kinds.NAMESPACE, request.namespace)
    if ns_obj is None:
        raise NotFoundError(
            f'namespace "{request.namespace}" does not exist',
            "Create it (kubectl create namespace NAME) or choose another with -n.",
        )
    pvc_bytes: int | None = None
    if request.pvc:
        pvc = api.get_or_none(kinds.PVC, request.pvc, request.namespace)
        if pvc is None:
            raise NotFoundError(
                f'PVC "{request.pvc}" does not exist in namespace {request.namespace}',
                "Check the name and the namespace (-n).",
            )
        capacity = ((pvc.get("status") or {}).get("capacity") or {}).get("storage") or (
            (pvc.get("spec") or {}).get("resources", {}).get("requests", {}).get("storage")
        )
        pvc_bytes = parse_size_bytes(str(capacity)) if capacity else None
    else:
        existing = {(sc.get("metadata") or {}).get("name") for sc in api.list(kinds.STORAGE_CLASS)}
        missing = [c for c in request.storage_classes if c not in existing]
        if missing:
            raise NotFoundError(
                f"StorageClass {', '.join(missing)} does not exist",
                "Available: "
                + (", ".join(sorted(str(e) for e in existing)) or "none")
                + " (kubectl storage classes lists them).",
            )
    checks = [
        AccessRequest("create", "pods", namespace=request.namespace),
        AccessRequest("create", "pods", namespace=request.namespace, subresource="exec"),
        AccessRequest("create", "configmaps", namespace=request.namespace),
    ]
    if not request.pvc:
        checks.append(
            AccessRequest("create", "persistentvolumeclaims", namespace=request.namespace)
        )
    require_access(api, checks, "run fio benchmarks")
    identity = request.identity
    if identity is None:
        annotations = (ns_obj.get("metadata") or {}).get("annotations") or {}
        # OpenShift assigns UIDs from a namespace range and rejects others.
        openshift = OPENSHIFT_UID_ANNOTATION in annotations
        identity = PodIdentity(None, None) if openshift else PodIdentity()
    return pvc_bytes, identity


# -- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassRun:
    """What one class (or the given PVC) produced."""

    target: str
    results: tuple[FioResult, ...]
    stderr: str = ""


def run_fio(
    api: KubeApi,
    request: FioRequest,
    *,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark and return the FioReport dict.

    Raises:
        FindingsError: fio reported job errors (the report is attached as ``report``).
    """
    pvc_bytes, identity = check_cluster(api, request)
    request = _with_identity(request, identity)
    plan = plan_fio(request, pvc_bytes)
    step = on_step or (lambda message: log.info("%s", message))
    if request.pvc:
        log.warning(
            "fio writes a %s test file into PVC %s; it is removed afterwards",
            format_bytes(plan.job_bytes),
            request.pvc,
        )
    runs: dict[str, ClassRun] = {}
    with RunScope(api, "fio", keep=request.keep, cleanup_timeout_s=request.timeout_s) as scope:
        targets = list(plan.manifests)
        if request.parallel and len(targets) > 1:
            cancel = threading.Event()
            with ThreadPoolExecutor(max_workers=len(targets)) as pool:
                futures = {
                    t: pool.submit(_run_target, api, scope, request, plan, t, step, cancel)
                    for t in targets
                }
                try:
                    for target, future in futures.items():
                        runs[target] = future.result()
                except BaseException:
                    cancel.set()
                    raise
        else:
            for target in targets:
                runs[target] = _run_target(api, scope, request, plan, target, step, None)
    extra = {
        "namespace": request.namespace,
        "size": request.size if not request.pvc else None,
        "pvc": request.pvc,
        "volume_mode": request.volume_mode,
        "run_id": scope.run_id,
    }
    return build_fio_report(
        {t: r.results for t, r in runs.items()},
        profile=request.profile if not request.job_file else "custom",
        extra={k: v for k, v in extra.items() if v is not None},
    )


def _with_identity(request: FioRequest, identity: PodIdentity) -> FioRequest:
    from dataclasses import replace  # noqa: PLC0415 - tiny, local use

    return replace(request, identity=identity)


def _run_target(
    api: KubeApi,
    scope: RunScope,
    request: FioRequest,
    plan: FioPlan,
    target: str,
    step: Callable[[str], None],
    cancel: threading.Event | None,
) -> ClassRun:
    manifests = _manifests_for(request, target, scope.run_id, plan.job_text)
    pod_manifest = manifests[-1]
    pod_name = pod_manifest["metadata"]["name"]
    ns = request.namespace
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
        hint=_pending_hint(api, request, target, manifests),
    )
    step(f"{label}: pod running; fio starts")
    results: list[FioResult] = []
    stderr_text = ""
    for attempt in range(1, request.repeat + 1):
        started = time.monotonic()
        prefix = f"{label}: run {attempt}/{request.repeat}" if request.repeat > 1 else label
        command = ["fio", "--output-format=json"]
        if request.volume_mode != "Block":
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
            on_tick=_ticker(step, prefix, started),
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


def _pending_hint(api: KubeApi, request: FioRequest, target: str, manifests: list[Manifest]) -> str:
    return (
        "If the PVC stays Pending, check that the StorageClass's provisioner runs "
        f"(kubectl get pvc -n {request.namespace}; kubectl describe storageclass {target}). "
        "If the pod is Pending, check node taints (--toleration) and resources."
    )


def _expected_seconds(job_text: str) -> float:
    """A generous upper bound of fio's runtime from runtime/ramp_time (for exec timeouts)."""
    import re  # noqa: PLC0415

    runtimes = [int(m) for m in re.findall(r"^\s*runtime\s*=\s*(\d+)", job_text, re.M)]
    ramps = [int(m) for m in re.findall(r"^\s*ramp_time\s*=\s*(\d+)", job_text, re.M)]
    jobs = len(re.findall(r"^\s*\[(?!global\])[^\]]+\]", job_text, re.M)) or 1
    per_job = (max(runtimes) if runtimes else 60) + (max(ramps) if ramps else 0)
    return float(per_job * jobs * 2)
