"""`kubectl storage fio`, the request: everything a run was asked for, and its job file.

Nothing here reads the cluster: the job file is the user's (read from disk) or a built-in
profile rendered for the volume mode.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from kubectl_storage.core.fio.choices import Spread
from kubectl_storage.core.fio.job_checks import validate_job_text
from kubectl_storage.core.fio.job_sizes import FioJobError
from kubectl_storage.core.fio.profile_render import render_profile
from kubectl_storage.core.fio.profiles import BLOCK_DEVICE_PATH, DEFAULT_DIRECTORY, PROFILES
from kubectl_storage.core.k8s.manifests import (
    PodIdentity,
    PodPlacement,
    VolumeMode,
)
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.errors import UsageError

log = logging.getLogger(__name__)


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
    #: End each timed job of a built-in profile once fio finds it steady (--until-steady).
    until_steady: bool = False

    @property
    def block(self) -> bool:
        """Whether the volume is a raw block device."""
        return self.volume_mode is VolumeMode.BLOCK

    @property
    def one_volume(self) -> bool:
        """Whether several clients share one volume (``--shared``, or a given PVC)."""
        return self.clients > 1 and (self.shared or self.pvc is not None)


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
            until_steady=request.until_steady,
        )
    except FioJobError as exc:
        fix = "Check --runtime and --ramp-time."
        if request.until_steady:
            fix = "Drop --until-steady, or use the default, quick or database profile."
        raise UsageError(str(exc), fix) from exc
