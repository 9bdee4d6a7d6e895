"""fio sizes: option values to bytes, the space a job file needs, and whether it fits a volume.

Separate from reading job files (:mod:`kubectl_storage.core.fio.job_file`): this is arithmetic
over the options a parsed job file (or fio's JSON echo of them) holds.

Pure module.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from kubectl_storage.core.fio.job_file import FioJobFile, parse_job_file
from kubectl_storage.core.k8s.quantities import format_bytes

#: Fraction of a filesystem volume assumed unusable for fio's files. ext4 reserves 5% of blocks
#: for root by default, and the benchmark pod runs as non-root so it cannot use them; the journal
#: (up to 1 GiB), inode tables and lost+found take a further 1-3%; XFS needs a few percent for
#: its log and metadata. 10% covers both with some slack.
FILESYSTEM_OVERHEAD_FRACTION = 0.10


class FioJobError(ValueError):
    """A profile name, override or size in a job file is not usable."""


_SIZE = re.compile(
    r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<suffix>[kmgtpe]?)(?P<iec>i?)b?$", re.IGNORECASE
)
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}


def parse_fio_size(text: str, *, kb_base: int = 1024) -> int | None:
    """Convert a fio size option to bytes, following fio's own (backwards) unit rules.

    With the default ``kb_base=1024``, ``k``/``kb``/``m``/``g``/``t`` are powers of 1024 and the
    IEC spellings ``kib``/``mib``… are powers of **1000** (fio keeps this for old scripts); with
    ``kb_base=1000`` it is the other way round. Suffixes are case-insensitive. A range such as
    ``1M-10M`` or ``1M:10M`` gives its upper end (the most a file can take). Checked against
    fio-3.33: ``size=8kib`` writes 8000 bytes, ``size=8k`` writes 8192.

    Args:
        text: the option value.
        kb_base: the job's ``kb_base`` (1024 or 1000).

    Returns:
        Bytes, or ``None`` for a percentage size (``50%``), which is relative to the existing
        file or device and therefore always fits.

    Raises:
        FioJobError: when the value is not a fio size.
    """
    value = text.strip()
    if value.endswith("%"):
        return None
    for separator in ("-", ":"):
        if separator in value[1:]:
            value = value.rsplit(separator, 1)[1].strip()
            break
    if value.lower().startswith("0x"):
        try:
            return int(value, 16)
        except ValueError as exc:
            raise FioJobError(f"{text!r} is not a fio size") from exc
    match = _SIZE.match(value)
    if not match:
        raise FioJobError(f"{text!r} is not a fio size (examples: 512M, 2G, 4096)")
    power = _POWERS[match.group("suffix").lower()]
    iec = bool(match.group("iec"))
    if iec and power == 0:
        raise FioJobError(f"{text!r} is not a fio size")
    base_1024 = (kb_base == 1024) != iec  # fio swaps the meaning of the IEC spelling
    multiplier = int((1024 if base_1024 else 1000) ** power)
    return math.ceil(float(match.group("number")) * multiplier)


@dataclass(frozen=True)
class FioSpaceEstimate:
    """How much space a job file needs on the volume.

    Attributes:
        total_bytes: bytes of files fio will lay out (files shared by jobs counted once).
        relative_jobs: jobs whose size is a percentage of an existing file or device; they
            always fit and add nothing to ``total_bytes``.
        unsized_jobs: jobs with neither ``size`` nor ``filesize`` (fio needs one to create a
            file; :func:`~kubectl_storage.core.fio.job_checks.validate_job_text` reports them).
    """

    total_bytes: int
    relative_jobs: tuple[str, ...] = ()
    unsized_jobs: tuple[str, ...] = ()


def estimate_job_space(job_file: FioJobFile | str) -> FioSpaceEstimate:
    """Bytes a job file's files need on the volume.

    Per job, one clone needs ``filesize * nrfiles`` when ``filesize`` is set, else ``size``
    (fio spreads ``size`` over the clone's files); ``numjobs`` clones each get their own files
    unless ``filename`` names them, in which case every job naming the same file shares it and
    the file needs the largest size asked of it.

    Args:
        job_file: a parsed job file or job-file text.

    Returns:
        The estimate.

    Raises:
        FioJobError: when a size option is not a fio size.
    """
    parsed = parse_job_file(job_file) if isinstance(job_file, str) else job_file
    shared_files: dict[tuple[str, str], int] = {}
    private_bytes = 0
    relative: list[str] = []
    unsized: list[str] = []
    for job in parsed.jobs:
        options = job.options
        kb_base = kb_base_of(options.get("kb_base"))
        per_clone = _clone_bytes(options, kb_base)
        if per_clone is None:
            if "size" in options or "filesize" in options:
                relative.append(job.name)
            else:
                unsized.append(job.name)
            continue
        clones = _positive_int(options.get("numjobs"), default=1)
        if "filename" in options:
            key = (options.get("directory", ""), options["filename"])
            shared_files[key] = max(shared_files.get(key, 0), per_clone)
        else:
            private_bytes += per_clone * clones
    return FioSpaceEstimate(
        total_bytes=private_bytes + sum(shared_files.values()),
        relative_jobs=tuple(relative),
        unsized_jobs=tuple(unsized),
    )


def job_data_bytes(options: Mapping[str, str]) -> int | None:
    """Bytes of file data one job (with all its ``numjobs`` clones) does I/O on: its data set.

    ``filesize * nrfiles`` or ``size`` per clone, times ``numjobs`` unless ``filename`` makes
    the clones share one file.

    Args:
        options: the job's effective options (``[global]`` then the job's own), as a parsed
            job file holds them or as fio echoes them in its JSON.

    Returns:
        Bytes, or ``None`` when the job file does not say (a percentage size, or a device or
        existing file used whole).

    Raises:
        FioJobError: when a size option is not a fio size.
    """
    per_clone = _clone_bytes(options, kb_base_of(options.get("kb_base")))
    if per_clone is None:
        return None
    if "filename" in options:
        return per_clone
    return per_clone * _positive_int(options.get("numjobs"), default=1)


def _clone_bytes(options: Mapping[str, str], kb_base: int) -> int | None:
    if "filesize" in options:
        file_bytes = parse_fio_size(options["filesize"], kb_base=kb_base)
        if file_bytes is None:
            return None
        return file_bytes * _positive_int(options.get("nrfiles"), default=1)
    if "size" in options:
        return parse_fio_size(options["size"], kb_base=kb_base)
    return None


def kb_base_of(value: str | None) -> int:
    """A job's ``kb_base`` option as a number: 1024 when unset, else 1000 or 1024."""
    if value is None:
        return 1024
    if value.strip() not in ("1000", "1024"):
        raise FioJobError(f"kb_base must be 1000 or 1024, got {value!r}")
    return int(value)


def _positive_int(value: str | None, *, default: int) -> int:
    if value is None:
        return default
    try:
        number = int(value.strip())
    except ValueError as exc:
        raise FioJobError(f"{value!r} is not a whole number") from exc
    return max(number, 1)


def check_fits(
    job_bytes: int,
    pvc_bytes: int,
    *,
    overhead_fraction: float = FILESYSTEM_OVERHEAD_FRACTION,
) -> str | None:
    """Say whether fio's files fit on the volume, keeping room for filesystem overhead.

    Only ``1 - overhead_fraction`` of a Filesystem volume is counted as usable (see
    :data:`FILESYSTEM_OVERHEAD_FRACTION` for why 10%). Pass ``overhead_fraction=0`` for a Block
    volume, where fio uses the raw device.

    Args:
        job_bytes: bytes the job needs (:attr:`FioSpaceEstimate.total_bytes`).
        pvc_bytes: requested size of the volume in bytes.
        overhead_fraction: share of the volume not available to files, 0 <= x < 1.

    Returns:
        ``None`` when it fits, otherwise a message saying by how much it does not and what
        volume size would do.
    """
    if not 0 <= overhead_fraction < 1:
        raise ValueError(f"overhead_fraction must be in [0, 1), got {overhead_fraction}")
    usable = math.floor(pvc_bytes * (1 - overhead_fraction))
    if job_bytes <= usable:
        return None
    shortfall = job_bytes - usable
    gib = 2**30
    needed_gib = math.ceil(job_bytes / (1 - overhead_fraction) / gib)
    room = (
        f"leaves about {format_bytes(usable)} after {overhead_fraction:.0%} filesystem overhead"
        if overhead_fraction
        else f"holds {format_bytes(usable)}"
    )
    return (
        f"the fio job needs {format_bytes(job_bytes)} on the volume, but a "
        f"{format_bytes(pvc_bytes)} volume {room}: {format_bytes(shortfall)} short. "
        f"Ask for at least {needed_gib}Gi, or give the job a smaller size."
    )
