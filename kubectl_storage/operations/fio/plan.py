"""`kubectl storage fio`, the plan: what one run creates, decided up front.

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
from dataclasses import dataclass, field

from kubectl_storage.core.fio.clients import client_job_text
from kubectl_storage.core.fio.job_sizes import estimate_job_space
from kubectl_storage.core.fio.local_disk import (
    LOCAL_JOB_FILE_NAME,
    PROBE_JOB_FILE_NAME,
    local_job_text,
    probe_job_text,
    with_local_disk,
)
from kubectl_storage.core.fio.profiles import BLOCK_DEVICE_PATH, DEFAULT_DIRECTORY
from kubectl_storage.core.k8s.labels import RUN_ID, object_name, with_run_labels
from kubectl_storage.core.k8s.manifests import (
    PodIdentity,
    build_configmap,
    build_pvc,
    build_workload_pod,
)
from kubectl_storage.core.k8s.objects import JsonDict, pvc_capacity
from kubectl_storage.core.k8s.quantities import parse_size_bytes
from kubectl_storage.core.rbac.commands import Condition
from kubectl_storage.operations.fio.pod_commands import (
    CONFIG_PATH,
    JOB_FILE_NAME,
    client_job_name,
    first_run_command,
)
from kubectl_storage.operations.fio.request import FioRequest, build_job_text
from kubectl_storage.operations.fio.validate import check_job_fits
from kubectl_storage.operations.preflight import ClusterFacts, Requirements

log = logging.getLogger(__name__)

COMMAND = "fio"
#: Labels that tell the clients of one class apart (topology spread, and who is who).
CLIENT_LABEL = "kubectl-storage/fio-client"
TARGET_LABEL = "kubectl-storage/fio-target"


@dataclass(frozen=True)
class FioPlan:
    """The validated request: job text and the labelled manifests per class (or the PVC)."""

    request: FioRequest
    namespace: str
    run_id: str
    job_text: str
    job_bytes: int
    targets: dict[str, list[JsonDict]]  # target (class or pvc) -> manifests, creation order
    #: target -> its StorageClass object as preflight read it (for the report's setup)
    classes: dict[str, JsonDict] = field(default_factory=dict)

    def manifests(self) -> list[JsonDict]:
        """All manifests the run creates, in creation order (what --dry-run prints)."""
        return [m for manifests in self.targets.values() for m in manifests]


def requirements(request: FioRequest) -> Requirements:
    """What preflight checks: the classes (or the default one), the PVC, the writes."""
    return Requirements(
        storage_classes=request.storage_classes,
        default_storage_class=not request.storage_classes and not request.pvc,
        pvcs=(request.pvc,) if request.pvc else (),
        nodes=(request.placement.node_name,) if request.placement.node_name else (),
        conditions=frozenset() if request.pvc else frozenset({Condition.NEW_VOLUME}),
        doing="run fio benchmarks",
    )


def plan_fio(request: FioRequest, facts: ClusterFacts, run_id: str) -> FioPlan:
    """The labelled manifests per class, for this run id (also what --dry-run prints)."""
    job_text = build_job_text(request)
    if request.pvc:
        capacity = pvc_capacity(facts.pvcs.get(request.pvc))
        volume_bytes = parse_size_bytes(capacity) if capacity else request.size.bytes
        job_bytes = check_job_fits(request, job_text, volume_bytes)
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
) -> list[JsonDict]:
    suffix = _short(target)
    cm_name = object_name(COMMAND, run_id, suffix)
    pod_name = object_name(COMMAND, run_id, suffix)
    job_files = {JOB_FILE_NAME: job_text}
    if request.compare_local:
        job_files[LOCAL_JOB_FILE_NAME] = local_job_text(job_text)
        job_files[PROBE_JOB_FILE_NAME] = probe_job_text()
    out = [build_configmap(cm_name, ns, job_files)]
    if request.pvc:
        pvc_name = request.pvc
    else:
        pvc_name = object_name(COMMAND, run_id, suffix)
        out.append(
            build_pvc(pvc_name, ns, target, request.size.text, volume_mode=request.volume_mode)
        )
    pod = _benchmark_pod(
        request, ns, pod_name, pvc_name, cm_name, identity, first_run_command(request)
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
) -> list[JsonDict]:
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
        name = object_name(COMMAND, run_id, f"{suffix}-c{index}")
        # The server runs the jobs the client sends; it writes nothing of its own.
        pod = _benchmark_pod(request, ns, name, claim, cm_name, identity, ["fio", "--server"])
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


def _benchmark_pod(
    request: FioRequest,
    ns: str,
    name: str,
    claim: str,
    configmap: str,
    identity: PodIdentity,
    command: list[str],
) -> JsonDict:
    """A restricted pod with the claim (mounted, or its device in Block mode) and the job files."""
    return build_workload_pod(
        name,
        ns,
        request.image,
        pvc_name=claim,
        mount_path=DEFAULT_DIRECTORY,
        block_device_path=BLOCK_DEVICE_PATH if request.block else None,
        configmap_name=configmap,
        configmap_path=CONFIG_PATH,
        identity=identity,
        placement=request.placement,
        command=command,
    )


def _short(target: str) -> str:
    return target[:30]
