"""`kubectl storage fio`, the request and the plan: what one run creates, decided up front.

Per class (or the given PVC): a ConfigMap with the job file, a PVC and a restricted pod whose
container runs fio once as soon as it starts, keeps the output in its /tmp, and then idles: the
run collects that first result by exec, and runs any further ``--repeat`` by exec. With
``--clients N``: N pods running ``fio --server``, each on its own PVC (or all on one
ReadWriteMany PVC with ``--shared``), spread over nodes, one job file per client. Nothing is
created here; --dry-run prints exactly this plan.
"""

from __future__ import annotations

import logging
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from kubectl_storage.core.fio.clients import Spread, client_job_text, own_file_problem
from kubectl_storage.core.fio.jobs import (
    BLOCK_DEVICE_PATH,
    DEFAULT_DIRECTORY,
    PROFILES,
    FioJobError,
    check_fits,
    estimate_job_space,
    render_profile,
    validate_job_text,
)
from kubectl_storage.core.fio.local_disk import (
    LOCAL_DIRECTORY,
    LOCAL_JOB_FILE_NAME,
    local_job_text,
    with_local_disk,
)
from kubectl_storage.core.k8s.labels import RUN_ID, object_name, with_run_labels
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
from kubectl_storage.core.k8s.quantities import Size, parse_size_bytes
from kubectl_storage.core.rbac import Condition
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.errors import UsageError
from kubectl_storage.kube.podexec import preload_exec_support
from kubectl_storage.operations.preflight import ClusterFacts, Requirements

log = logging.getLogger(__name__)

JOB_FILE_NAME = "job.fio"
CONFIG_PATH = "/etc/kubectl-storage"
COMMAND = "fio"
#: Labels that tell the clients of one class apart (topology spread, and who is who).
CLIENT_LABEL = "kubectl-storage/fio-client"
TARGET_LABEL = "kubectl-storage/fio-target"


#: Where the pod's own first fio run leaves its output (/tmp is the pod's emptyDir).
FIRST_RUN = "/tmp/kubectl-storage-fio"


def fio_command(request: FioRequest) -> list[str]:
    """The fio command line of one run in the benchmark pod."""
    command = ["fio", "--output-format=json"]
    if not request.block:
        # fio writes where it runs unless told otherwise, and the root filesystem is read-only:
        # point a user's job file without `directory=` at the volume.
        command.append(f"--directory={DEFAULT_DIRECTORY}")
    command.append(f"{CONFIG_PATH}/{JOB_FILE_NAME}")
    return command


def first_run_command(request: FioRequest) -> list[str]:
    """The benchmark container's command: fio at once, its output kept, then idle.

    Running the first fio as the container starts, instead of by exec once the pod shows
    Running, saves the kubelet's delay in reporting the container as started (up to a second:
    its pod lifecycle relist period) and the exec's round trips. The mountinfo is kept too
    (how the volume is mounted, for the report). When fio has finished, the script opens the
    FIFO ``done`` for writing, which waits for the run's collecting exec
    (:func:`collect_first_run_command`) to open it for reading, then sleeps like any idle pod
    (``--keep``, and ``--repeat`` runs by exec). A container restarted after fio ended does
    not run it again.
    """
    words = " ".join(shlex.quote(word) for word in fio_command(request))
    script = (
        # A restarted container finds the pod's /tmp as its first run left it: fio ran to the
        # end once (rc is there), so it must not run again over the collected result.
        f"d={FIRST_RUN}; if [ ! -e $d/rc ]; then "
        "mkdir -p $d && { [ -p $d/done ] || mkfifo $d/done; }; "
        "cat /proc/self/mountinfo > $d/mountinfo; "
        f"{words} > $d/stdout 2> $d/stderr; "
        'echo "$?" > $d/rc.tmp && mv $d/rc.tmp $d/rc; '
        "fi; "
        "echo done > $d/done; "
        "exec sleep 86400"
    )
    return ["sh", "-c", script]


def collect_first_run_command(mountinfo_start: str, mountinfo_end: str) -> list[str]:
    """The exec that waits for the container's own fio run to end and prints what it left.

    stdout: the mountinfo between the marker lines, then fio's stdout; stderr: fio's; exit
    status: fio's. Reading the FIFO returns when the container's script has written to it,
    that is when fio has ended; it is waited for first in case the exec arrives before the
    script made it.
    """
    script = (
        f"d={FIRST_RUN}; "
        "while [ ! -p $d/done ]; do sleep 0.1; done; "
        "cat $d/done > /dev/null; "
        f'echo "{mountinfo_start}"; cat $d/mountinfo; echo "{mountinfo_end}"; '
        "cat $d/stdout; cat $d/stderr >&2; "
        'exit "$(cat $d/rc)"'
    )
    return ["sh", "-c", script]


def client_job_name(index: int) -> str:
    """The ConfigMap key of client ``index``'s job file."""
    return f"job-{index}.fio"


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
    clients: int = 1  # fio --server pods per class, driven by one fio --client
    shared: bool = False  # all clients on one ReadWriteMany PVC
    spread: Spread = Spread.NODES
    #: On a Block volume, write the read jobs' range before them (off: --no-prefill).
    prefill: bool = True
    #: Also run the jobs on an emptyDir on the node's own disk, and compare (--compare-local).
    compare_local: bool = False

    @property
    def block(self) -> bool:
        """Whether the volume is a raw block device."""
        return self.volume_mode is VolumeMode.BLOCK

    @property
    def one_volume(self) -> bool:
        """Whether several clients share one volume (``--shared``, or a given PVC)."""
        return self.clients > 1 and (self.shared or self.pvc is not None)


@dataclass(frozen=True)
class FioPlan:
    """The validated request: job text and the labelled manifests per class (or the PVC)."""

    request: FioRequest
    namespace: str
    run_id: str
    job_text: str
    job_bytes: int
    targets: dict[str, list[Manifest]]  # target (class or pvc) -> manifests, creation order
    #: target -> its StorageClass object as preflight read it (for the report's setup)
    classes: dict[str, Manifest] = field(default_factory=dict)

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
            prefill=block and request.prefill,
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
    # fio takes ~0.15 s of CPU to parse; the Kubernetes client's import (connect() needs it
    # next, and the first exec) runs meanwhile on the other core instead of after it.
    preload_exec_support()
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
    _validate_clients(request)
    job_text = build_job_text(request)
    if request.compare_local:
        _validate_compare_local(request, job_text)
    fio_complaint = check_with_local_fio(job_text)
    if fio_complaint:
        raise UsageError(
            f"fio rejects the job file: {fio_complaint}", "Fix the job file and try again."
        )
    if not request.pvc:
        _check_fits(request, job_text, request.size.bytes)


def _validate_clients(request: FioRequest) -> None:
    if request.clients < 1:
        raise UsageError("--clients must be at least 1", "Example: --clients 3")
    if request.shared and request.clients < 2:
        raise UsageError("--shared needs --clients 2 or more", "Example: --clients 3 --shared")
    if request.clients > 1 and request.block and (request.shared or request.pvc):
        raise UsageError(
            "several clients cannot share one raw block volume (each would overwrite the "
            "others' blocks)",
            "Drop --shared (each client gets its own volume), or use --volume-mode Filesystem.",
        )
    if request.clients > 1 and request.job_file and (request.shared or request.pvc):
        problem = own_file_problem(Path(request.job_file).read_text())
        if problem:
            raise UsageError(
                f"the job file {request.job_file} cannot be shared by the clients: {problem}",
                "Remove filename=/filename_format= (each client then writes its own files), "
                "or drop --shared.",
            )


def _validate_compare_local(request: FioRequest, job_text: str) -> None:
    flag = "--compare-local"
    if request.clients > 1:
        raise UsageError(
            f"{flag} runs with one client: the node's disk is compared in the benchmark pod",
            f"Drop --clients, or run {flag} on its own first.",
        )
    if request.parallel and len(request.storage_classes) > 1:
        raise UsageError(
            f"{flag} measures the node's disk while nothing else of the run does I/O; with "
            "--parallel the other classes' jobs would run beside it (and may share its disk)",
            f"Drop --parallel: with {flag} the classes run one after another.",
        )
    if request.block:
        raise UsageError(
            f"{flag} compares a Filesystem volume with the node's disk: a Block volume's jobs "
            "address the device, which has no counterpart on the node",
            f"Use --volume-mode Filesystem with {flag}.",
        )
    try:
        local_job_text(job_text)
    except FioJobError as exc:
        raise UsageError(
            f"{flag}: {exc}",
            "Leave directory= out of the job file (the volume is the default) or set it to "
            f"{DEFAULT_DIRECTORY}, and give file names relative to it.",
        ) from exc


def local_fio_command() -> list[str]:
    """The fio command line of the run on the node's disk (``--compare-local``)."""
    return [
        "fio",
        "--output-format=json",
        f"--directory={LOCAL_DIRECTORY}",
        f"{CONFIG_PATH}/{LOCAL_JOB_FILE_NAME}",
    ]


def _check_fits(request: FioRequest, job_text: str, volume_bytes: int) -> int:
    estimate = estimate_job_space(job_text)
    overhead = 0.0 if request.block else 0.10
    # Clients on one volume each lay out their own files.
    needed = estimate.total_bytes * (request.clients if request.one_volume else 1)
    misfit = check_fits(needed, volume_bytes, overhead_fraction=overhead)
    if misfit:
        flag = f"--pvc {request.pvc}" if request.pvc else f"-z {request.size}"
        if request.one_volume:
            flag += f", {request.clients} clients on one volume"
        raise UsageError(f"{misfit} ({flag})", "Raise -z/--size or lower the job's size.")
    return needed


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
    build = _client_manifests if request.clients > 1 else _manifests_for
    manifests = {
        target: [
            with_run_labels(m, run_id, COMMAND)
            for m in build(request, facts.namespace, target, run_id, job_text, identity)
        ]
        for target in targets
    }
    classes = {t: facts.storage_classes[t] for t in targets if t in facts.storage_classes}
    return FioPlan(request, facts.namespace, run_id, job_text, job_bytes, manifests, classes)


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
    job_files = {JOB_FILE_NAME: job_text}
    if request.compare_local:
        job_files[LOCAL_JOB_FILE_NAME] = local_job_text(job_text)
    out = [build_configmap(cm_name, ns, job_files)]
    if request.pvc:
        pvc_name = request.pvc
    else:
        pvc_name = object_name(COMMAND, run_id, suffix)
        out.append(
            build_pvc(pvc_name, ns, target, request.size.text, volume_mode=request.volume_mode)
        )
    pod = build_workload_pod(
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
        command=first_run_command(request),
    )
    if request.compare_local:
        pod = with_local_disk(pod, job_files[LOCAL_JOB_FILE_NAME])
    out.append(pod)
    return out


def _client_manifests(
    request: FioRequest,
    ns: str,
    target: str,
    run_id: str,
    job_text: str,
    identity: PodIdentity,
) -> list[Manifest]:
    """ConfigMap (a job file per client), the PVC(s), and one fio server pod per client."""
    suffix = _short(target)
    count = request.clients
    directory = DEFAULT_DIRECTORY
    # Each client's files carry its number: needed on one shared volume, and it points a job
    # file without directory= at the volume (fio --server starts in the read-only root).
    jobs = {
        client_job_name(i): job_text
        if request.block
        else client_job_text(job_text, i, directory=directory)
        for i in range(count)
    }
    cm_name = object_name(COMMAND, run_id, suffix)
    out = [build_configmap(cm_name, ns, jobs)]
    if request.pvc:
        claims = [request.pvc] * count
    elif request.shared:
        shared = object_name(COMMAND, run_id, suffix)
        out.append(
            build_pvc(
                shared,
                ns,
                target,
                request.size.text,
                volume_mode=request.volume_mode,
                access_mode="ReadWriteMany",
            )
        )
        claims = [shared] * count
    else:
        claims = [object_name(COMMAND, run_id, f"{suffix}-{i}") for i in range(count)]
        out += [
            build_pvc(name, ns, target, request.size.text, volume_mode=request.volume_mode)
            for name in claims
        ]
    group = re.sub(r"[^A-Za-z0-9_.-]", "-", suffix).strip("-._") or "pvc"
    for index, claim in enumerate(claims):
        pod = build_workload_pod(
            object_name(COMMAND, run_id, f"{suffix}-c{index}"),
            ns,
            request.image,
            pvc_name=claim,
            mount_path=DEFAULT_DIRECTORY,
            block_device_path=BLOCK_DEVICE_PATH if request.block else None,
            configmap_name=cm_name,
            configmap_path=CONFIG_PATH,
            identity=identity,
            placement=request.placement,
            # The server runs the jobs the client sends; it writes nothing of its own.
            command=["fio", "--server"],
        )
        pod["metadata"].setdefault("labels", {}).update(
            {CLIENT_LABEL: str(index), TARGET_LABEL: group}
        )
        pod["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": request.spread.topology_key,
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {TARGET_LABEL: group, RUN_ID: run_id}},
            }
        ]
        out.append(pod)
    return out


def _short(target: str) -> str:
    return target[:30]
