"""`kubectl storage fio`, the validate stage: every check that needs no cluster.

Counts and flag combinations, the job file (with ``fio --parse-only`` where fio is installed
here), and whether the job fits the volume asked for.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from pathlib import Path

from kubectl_storage.core.fio.clients import own_file_problem
from kubectl_storage.core.fio.job_sizes import FioJobError, check_fits, estimate_job_space
from kubectl_storage.core.fio.local_disk import (
    local_job_text,
)
from kubectl_storage.core.fio.paths import outside_volume
from kubectl_storage.core.fio.profiles import BLOCK_DEVICE_PATH, DEFAULT_DIRECTORY
from kubectl_storage.core.k8s.manifests import SCRATCH_DIRECTORY
from kubectl_storage.errors import UsageError
from kubectl_storage.kube.podexec import preload_exec_support
from kubectl_storage.operations.fio.request import FioRequest, build_job_text

log = logging.getLogger(__name__)


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
    if request.until_steady and request.job_file:
        raise UsageError(
            "--until-steady renders fio's steady-state options into the built-in profiles' "
            f"timed jobs; a job file runs as written, and {request.job_file} is yours",
            "Put steadystate=, ss_dur= and ss_ramp= in the job file itself (fio(1), 'Steady "
            "state'): the report then says per job whether fio found it steady.",
        )
    job_text = build_job_text(request)
    _validate_placement(request, job_text)
    if request.compare_local:
        _validate_compare_local(request, job_text)
    fio_complaint = check_with_local_fio(job_text)
    if fio_complaint:
        raise UsageError(
            f"fio rejects the job file: {fio_complaint}", "Fix the job file and try again."
        )
    if not request.pvc:
        check_job_fits(request, job_text, request.size.bytes)


def _validate_placement(request: FioRequest, job_text: str) -> None:
    """Refuse a job file whose I/O would not go to the volume (core/fio/paths.py)."""
    device = BLOCK_DEVICE_PATH if request.block else None
    where = outside_volume(job_text, mount_path=DEFAULT_DIRECTORY, device=device)
    if where is None:
        return
    volume = f"the volume's device {device}" if device else f"the volume, at {DEFAULT_DIRECTORY}"
    elsewhere = (
        "the pod's emptyDir on the node's own disk, so fio would report the node's disk as the "
        "class's"
        if where.path == SCRATCH_DIRECTORY or where.path.startswith(SCRATCH_DIRECTORY + "/")
        else "the pod's read-only root file system, where fio fails"
    )
    raise UsageError(
        f"the fio job file {request.job_file}: {where.said()}, which is not {volume}: {elsewhere}",
        "Leave directory= and absolute file names out (the run points fio at the volume), "
        + (f"or use filename={device}." if device else f"or use paths under {DEFAULT_DIRECTORY}."),
    )


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


def check_job_fits(request: FioRequest, job_text: str, volume_bytes: int) -> int:
    """The bytes the job's files need on one volume (every client's on a shared one).

    Raises:
        UsageError: they do not fit ``volume_bytes``, with the room the file system keeps.
    """
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
