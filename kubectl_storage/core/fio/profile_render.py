"""Rendering a built-in fio profile as job-file text, with overrides and the prefill job.

Separate from the profile table (:mod:`kubectl_storage.core.fio.profiles`): this is the code that
turns a profile plus the command line's overrides and target into the text fio reads.

**Prefill on Block volumes.** On a Filesystem volume fio lays out (writes) its file before a read
job reads it. On a raw device nothing does: the read jobs would read blocks nobody wrote, and a
thin-provisioned or sparse device returns zeros for those at memory speed. So a profile rendered
for a device with ``prefill=True`` starts with one more job, :data:`PREFILL_JOB_NAME`: a
sequential 1 MiB write (iodepth 16, not time based, no ramp) over exactly the range its read jobs
read, ``[0, size)`` of the device, before them (the job after it has ``stonewall``). Its data is
fio's default random buffer content, not zeros, so a device that skips zero writes still stores
it. :mod:`kubectl_storage.core.fio.guards` takes that job out of the measured jobs and reports it
as the ``fio.block-prefill`` note.

Pure module: text out.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubectl_storage.core.fio.job_sizes import FioJobError, parse_fio_size
from kubectl_storage.core.fio.profiles import (
    DEFAULT_DIRECTORY,
    DEFAULT_TEST_FILENAME,
    PROFILES,
    FioJobSpec,
    FioProfile,
)
from kubectl_storage.core.fio.until_steady import (
    DEFAULT_MAX_RUNTIME_S,
    NOT_STEADY_PROFILES,
    shortest_max_runtime_s,
    steady_options,
)

#: The job that writes a device's read range before the read jobs (see the module docstring).
PREFILL_JOB_NAME = "kubectl-storage-prefill"
#: ``rw=`` values that read (a prefill is needed before them on a device).
READ_RW_VALUES = frozenset({"read", "randread", "rw", "readwrite", "randrw"})
#: ``rw=`` values that write.
WRITE_RW_VALUES = frozenset({"write", "randwrite", "rw", "readwrite", "randrw", "trimwrite"})


def render_profile(
    profile: str | FioProfile,
    *,
    runtime_s: int | None = None,
    ramp_time_s: int | None = None,
    size: str | None = None,
    directory: str | None = DEFAULT_DIRECTORY,
    filename: str | None = None,
    prefill: bool = False,
    until_steady: bool = False,
) -> str:
    """Render a built-in profile as fio job-file text.

    Filesystem volumes get ``directory=<directory>`` and ``filename=<DEFAULT_TEST_FILENAME>``
    (or ``filename`` when given; no ``filename`` for a profile whose jobs each have their own
    file). Block volumes pass the device path as ``filename`` (``/dev/xvda``) and
    ``directory=None``; fio then does I/O on the device itself. An override replaces the
    option wherever the profile sets it, in ``[global]`` or in a job. With ``prefill`` (a
    device only) and a profile that reads, the job :data:`PREFILL_JOB_NAME` comes first and
    writes the range the read jobs read (:func:`prefill_job`). With ``until_steady`` each
    timed job (``time_based``) gets fio's ``steadystate``, ``ss_dur`` and ``ss_ramp``
    (:mod:`kubectl_storage.core.fio.until_steady`) and ``runtime`` becomes the most it may
    run: ``runtime_s``, or :data:`DEFAULT_MAX_RUNTIME_S`; the prefill job never gets them.

    Args:
        profile: a profile name from :data:`PROFILES` or a profile object.
        runtime_s: seconds each job measures, replacing the profile's ``runtime``.
        ramp_time_s: seconds each job runs before measuring, replacing ``ramp_time``.
        size: fio size (``512M``, ``4G``) replacing the profile's ``size``.
        directory: mount path of a Filesystem volume, or ``None`` for a Block volume.
        filename: test file name inside ``directory``, or the device path in Block mode.
        prefill: write the read jobs' range of the device before them.
        until_steady: end each timed job once fio finds it steady.

    Returns:
        The job file text, ending with a newline.

    Raises:
        FioJobError: for an unknown profile, a negative or zero duration, a size fio would
            not accept, neither ``directory`` nor ``filename``, ``prefill`` with a
            directory (fio lays out files itself), or ``until_steady`` with a profile it does
            not apply to or a runtime too short for fio's window.
    """
    chosen = _lookup_profile(profile)
    overrides: dict[str, str] = {}
    if until_steady:
        _check_until_steady(chosen, runtime_s)
        runtime_s = DEFAULT_MAX_RUNTIME_S if runtime_s is None else runtime_s
    if runtime_s is not None:
        if runtime_s <= 0:
            raise FioJobError(f"runtime must be at least 1 second, got {runtime_s}")
        overrides["runtime"] = str(runtime_s)
    if ramp_time_s is not None:
        if ramp_time_s < 0:
            raise FioJobError(f"ramp time cannot be negative, got {ramp_time_s}")
        overrides["ramp_time"] = str(ramp_time_s)
    if size is not None:
        if parse_fio_size(size) is None:
            raise FioJobError(f"size {size!r} must be an absolute fio size such as 512M or 4G")
        overrides["size"] = size
    target = _target_options(directory, filename, shared=chosen.shared_file)
    if prefill and directory:
        raise FioJobError("a prefill applies to a device (Block volume); fio lays out files itself")
    first = prefill_job(chosen, overrides) if prefill else None

    unused = dict(overrides)
    job_lines: list[str] = []
    if first is not None:
        job_lines.append("")
        job_lines.append("; writes the range the read jobs read, so that they read written blocks")
        job_lines.append(f"[{first.name}]")
        job_lines.extend(_option_line(key, value) for key, value in first.options)
    for index, job in enumerate(chosen.jobs):
        job_lines.append("")
        job_lines.append(f"[{job.name}]")
        for key, value in job.options:
            if key in overrides:
                unused.pop(key, None)
                value = overrides[key]
            job_lines.append(_option_line(key, value))
        if until_steady and _timed(chosen, job):
            job_lines.extend(_option_line(key, value) for key, value in steady_options())
        if first is not None and index == 0 and ("stonewall", None) not in job.options:
            job_lines.append("stonewall")  # the jobs start once the prefill has ended
    lines = [f"; kubectl-storage fio profile '{chosen.name}': {chosen.description}", "[global]"]
    for key, value in chosen.global_options:
        if key in overrides:
            unused.pop(key, None)
            value = overrides[key]
        lines.append(_option_line(key, value))
    lines.extend(_option_line(key, value) for key, value in unused.items())
    lines.extend(_option_line(key, value) for key, value in target)
    lines.extend(job_lines)
    return "\n".join(lines) + "\n"


def prefill_job(
    profile: str | FioProfile, overrides: Mapping[str, str] | None = None
) -> FioJobSpec | None:
    """The job that writes, before the profile's read jobs, exactly the range they read.

    Every read job of a built-in profile reads ``[0, size)`` of the device (no ``offset``), so
    the range is ``[0, largest size)``; with a read job that has no size (the whole device) the
    prefill has none either. Sequential 1 MiB writes at iodepth 16 with the profile's engine and
    ``direct``, not time based, no ramp (every byte written is counted), no runtime limit.

    Args:
        profile: a profile name or object.
        overrides: options replacing the profile's wherever it sets them (``size``).

    Returns:
        The job, or ``None`` when the profile has no read job.
    """
    chosen = _lookup_profile(profile)
    replaced = dict(overrides or {})
    globals_now = {key: replaced.get(key, value) for key, value in chosen.global_options}
    sizes: dict[str, int | None] = {}  # each read job's size as written -> bytes
    for job in chosen.jobs:
        options = {**globals_now, **{k: replaced.get(k, v) for k, v in job.options}}
        rw = options.get("rw", options.get("readwrite")) or "read"
        if rw.split(":", 1)[0].strip().lower() not in READ_RW_VALUES:
            continue
        size = options.get("size") or ""
        sizes[size] = parse_fio_size(size) if size else None
    if not sizes:
        return None
    prefill: list[tuple[str, str | None]] = [("rw", "write"), ("bs", "1M"), ("iodepth", "16")]
    if "" not in sizes:
        # the largest, as the profile spells it (2G rather than 2147483648)
        prefill.append(("size", max(sizes, key=lambda text: sizes[text] or 0)))
    prefill += [("offset", "0"), ("time_based", "0"), ("runtime", "0"), ("ramp_time", "0")]
    return FioJobSpec(PREFILL_JOB_NAME, tuple(prefill))


def _check_until_steady(profile: FioProfile, runtime_s: int | None) -> None:
    why = NOT_STEADY_PROFILES.get(profile.name)
    if why is not None:
        raise FioJobError(f"--until-steady does not apply to the {profile.name} profile: {why}")
    shortest = shortest_max_runtime_s()
    if runtime_s is not None and runtime_s < shortest:
        raise FioJobError(
            f"with --until-steady, --runtime is the most each job may run, and {runtime_s} s "
            f"leaves fio no full steady-state window (ss_ramp + ss_dur + 1 s = {shortest} s)"
        )


def _timed(profile: FioProfile, job: FioJobSpec) -> bool:
    options = dict(profile.global_options) | dict(job.options)
    return "time_based" in options and options["time_based"] in (None, "1")


def _lookup_profile(profile: str | FioProfile) -> FioProfile:
    if isinstance(profile, FioProfile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        known = ", ".join(PROFILES)
        raise FioJobError(f"unknown fio profile {profile!r}; choose one of: {known}") from None


def _target_options(
    directory: str | None, filename: str | None, *, shared: bool = True
) -> tuple[tuple[str, str | None], ...]:
    if directory:
        if not shared and not filename:
            return (("directory", directory),)
        return (("directory", directory), ("filename", filename or DEFAULT_TEST_FILENAME))
    if filename:
        return (("filename", filename),)
    raise FioJobError("give a directory (Filesystem volume) or a device filename (Block volume)")


def _option_line(key: str, value: str | None) -> str:
    return key if value is None else f"{key}={value}"
