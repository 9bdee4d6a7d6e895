"""fio job files: the built-in profiles, rendering them, reading job files, and sizing them.

Built-in profiles (see :data:`PROFILES`):

* ``default`` — four jobs of the same shapes as kubestr's (``read_iops``/``write_iops`` 4k,
  ``read_bw``/``write_bw`` 128k, random, iodepth 64, libaio, direct, 2G, 15 s after a 2 s ramp),
  but **each job is a stonewall** so it runs alone, and latency is measured. Its numbers are
  therefore *not* comparable with kubestr's: kubestr runs its four jobs at the same time on one
  volume, so each of its numbers is a share of a contended device (use the ``kubestr`` profile
  to compare). Two latency jobs follow (4k, iodepth 1). Latency is never switched off (no
  ``gtod_reduce``), and ``percentile_list`` asks for p50/p95/p99/p99.9 so every job reports them.
* ``kubestr`` — kubestr's default run exactly (``pkg/fio/fio_jobs.go`` of kastenhq/kubestr,
  ``testJob1``): the same four jobs with kubestr's own options, ``gtod_reduce=1`` (so **no
  latency at all**), all four at the same time (no stonewall), each on its own 2G file. Use it
  to compare with kubestr's numbers, not to judge a class.
* ``etcd`` — etcd's disk check (``fio --rw=write --ioengine=sync --fdatasync=1 --size=22m
  --bs=2300``, from the IBM Cloud article by M. Olivi and M. Spreitzer the etcd docs point to):
  2300-byte sequential writes, each followed by fdatasync. It is judged by the p99 of the
  fdatasync latency against etcd's guidance of 10 ms (:data:`ETCD_FDATASYNC_P99_LIMIT_US`).
* ``quick`` — a 256M smoke test of about 12 seconds.
* ``database`` — 8k random 70/30 read/write with an fdatasync after every write, then a
  WAL-like sequential 8k write committed one I/O at a time.

The jobs of a profile share one test file (``filename``), so the volume needs the job ``size``
once rather than once per job, and the file is laid out only once — except ``kubestr``, whose
jobs each lay out their own file as kubestr's do (:attr:`FioProfile.shared_file`).

**Prefill on Block volumes.** On a Filesystem volume fio lays out (writes) its file before a read
job reads it. On a raw device nothing does: the read jobs would read blocks nobody wrote, and a
thin-provisioned or sparse device returns zeros for those at memory speed. So a profile rendered
for a device with ``prefill=True`` starts with one more job, :data:`PREFILL_JOB_NAME`: a
sequential 1 MiB write (iodepth 16, not time based, no ramp) over exactly the range its read jobs
read, ``[0, size)`` of the device, before them (the job after it has ``stonewall``). Its data is
fio's default random buffer content, not zeros, so a device that skips zero writes still stores
it. :mod:`kubectl_storage.core.fio.guards` takes that job out of the measured jobs and reports it
as the ``fio.block-prefill`` note.

The small INI reader here understands what is needed to check a job file before anything is
created: ``[global]`` and job sections (a ``[global]`` applies to the jobs after it), comments
(``;`` and ``#``), ``include`` lines, and the options that decide disk space (``size``,
``filesize``, ``nrfiles``, ``numjobs``, ``filename``, ``directory``, ``kb_base``). Real
validation with ``fio --parse-only`` happens elsewhere, where fio is available.

Pure module: text in, dataclasses and text out; included files are read through a callback the
caller supplies.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kubectl_storage.core.fio.choices import ProfileName as ProfileName  # re-exported
from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.report.findings import Finding, Severity

#: Where the benchmark pod mounts a Filesystem-mode volume.
DEFAULT_DIRECTORY = "/dataset"
#: Where the benchmark pod sees a Block-mode volume's device.
BLOCK_DEVICE_PATH = "/dev/kubectl-storage-block"
#: The one test file every job of a built-in profile shares inside the directory.
DEFAULT_TEST_FILENAME = "kubectl-storage-fio.dat"
#: Percentiles every built-in profile asks fio for (fio allows at most 20 entries).
PERCENTILE_LIST = "50:95:99:99.9"

#: Fraction of a filesystem volume assumed unusable for fio's files. ext4 reserves 5% of blocks
#: for root by default, and the benchmark pod runs as non-root so it cannot use them; the journal
#: (up to 1 GiB), inode tables and lost+found take a further 1-3%; XFS needs a few percent for
#: its log and metadata. 10% covers both with some slack.
FILESYSTEM_OVERHEAD_FRACTION = 0.10

#: ``rw=`` values fio 3.x accepts (``fio --cmdhelp=rw``).
VALID_RW_VALUES = frozenset(
    {
        "read",
        "write",
        "trim",
        "randread",
        "randwrite",
        "randtrim",
        "rw",
        "readwrite",
        "randrw",
        "trimwrite",
        "randtrimwrite",
    }
)

# Options whose bare presence means "on" in fio job files.
_FLAG_VALUE = "1"

#: The job that writes a device's read range before the read jobs (see the module docstring).
PREFILL_JOB_NAME = "kubectl-storage-prefill"
#: ``rw=`` values that read (a prefill is needed before them on a device).
READ_RW_VALUES = frozenset({"read", "randread", "rw", "readwrite", "randrw"})


@dataclass(frozen=True)
class FioJobSpec:
    """One job section of a built-in profile.

    Attributes:
        name: the section name, which becomes the job name in fio's output.
        options: the job's own options in file order.
    """

    name: str
    options: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class FioProfile:
    """A named built-in fio workload.

    Attributes:
        name: profile name as typed on the command line.
        description: one line for ``--help`` and reports.
        global_options: ``[global]`` options in file order; ``None`` values are bare flags.
        jobs: the job sections, in file order (each has ``stonewall`` unless the profile
            reproduces a tool that runs its jobs at once).
        shared_file: whether every job uses the one test file :data:`DEFAULT_TEST_FILENAME`;
            when ``False`` each job lays out its own file in the directory.
    """

    name: str
    description: str
    global_options: tuple[tuple[str, str | None], ...]
    jobs: tuple[FioJobSpec, ...]
    shared_file: bool = True


def _stonewalled(name: str, *options: tuple[str, str | None]) -> FioJobSpec:
    return FioJobSpec(name=name, options=(*options, ("stonewall", None)))


_COMMON_GLOBALS: tuple[tuple[str, str | None], ...] = (
    ("ioengine", "libaio"),
    ("direct", "1"),
    ("randrepeat", "0"),
    ("verify", "0"),
    ("percentile_list", PERCENTILE_LIST),
    ("time_based", None),
)

DEFAULT_PROFILE = FioProfile(
    name="default",
    description=(
        "4k IOPS and 128k bandwidth jobs at iodepth 64, each run alone, plus 4k iodepth-1 "
        "latency jobs, with latency percentiles; 2G file, 15s each after a 2s ramp"
    ),
    global_options=(*_COMMON_GLOBALS, ("size", "2G"), ("runtime", "15"), ("ramp_time", "2")),
    jobs=(
        _stonewalled("read_iops", ("bs", "4k"), ("iodepth", "64"), ("rw", "randread")),
        _stonewalled("write_iops", ("bs", "4k"), ("iodepth", "64"), ("rw", "randwrite")),
        _stonewalled("read_bw", ("bs", "128k"), ("iodepth", "64"), ("rw", "randread")),
        _stonewalled("write_bw", ("bs", "128k"), ("iodepth", "64"), ("rw", "randwrite")),
        _stonewalled("read_lat", ("bs", "4k"), ("iodepth", "1"), ("rw", "randread")),
        _stonewalled("write_lat", ("bs", "4k"), ("iodepth", "1"), ("rw", "randwrite")),
    ),
)

QUICK_PROFILE = FioProfile(
    name="quick",
    description="smoke test: 4k random read then write, iodepth 16, 256M file, 5s each",
    global_options=(*_COMMON_GLOBALS, ("size", "256M"), ("runtime", "5"), ("ramp_time", "1")),
    jobs=(
        _stonewalled("read_iops", ("bs", "4k"), ("iodepth", "16"), ("rw", "randread")),
        _stonewalled("write_iops", ("bs", "4k"), ("iodepth", "16"), ("rw", "randwrite")),
    ),
)

DATABASE_PROFILE = FioProfile(
    name="database",
    description=(
        "database-like: 8k random 70/30 read/write with fdatasync after each write, "
        "then 8k sequential commits at iodepth 1; 2G file, 30s each"
    ),
    global_options=(
        *_COMMON_GLOBALS,
        ("size", "2G"),
        ("runtime", "30"),
        ("ramp_time", "2"),
        ("bs", "8k"),
    ),
    jobs=(
        _stonewalled(
            "db_randrw",
            ("rw", "randrw"),
            ("rwmixread", "70"),
            ("iodepth", "16"),
            ("fdatasync", "1"),
        ),
        # A write-ahead log commits one small sequential write at a time and waits for it.
        _stonewalled("db_commit", ("rw", "write"), ("iodepth", "1"), ("fdatasync", "1")),
    ),
)


def _kubestr_job(section: str, name: str, bs: str, rw: str) -> FioJobSpec:
    # kubestr's job sections, option for option and in its order (pkg/fio/fio_jobs.go).
    return FioJobSpec(
        name=section,
        options=(
            ("name", name),
            ("bs", bs),
            ("iodepth", "64"),
            ("size", "2G"),
            ("readwrite", rw),
            ("time_based", None),
            ("ramp_time", "2s"),
            ("runtime", "15s"),
        ),
    )


KUBESTR_PROFILE = FioProfile(
    name="kubestr",
    description=(
        "kubestr's default run exactly: its four jobs at the same time, each on its own 2G "
        "file, with gtod_reduce=1 so no latency is measured; for comparison with kubestr only"
    ),
    global_options=(
        ("randrepeat", "0"),
        ("verify", "0"),
        ("ioengine", "libaio"),
        ("direct", "1"),
        ("gtod_reduce", "1"),
    ),
    jobs=(
        _kubestr_job("job1", "read_iops", "4K", "randread"),
        _kubestr_job("job2", "write_iops", "4K", "randwrite"),
        _kubestr_job("job3", "read_bw", "128K", "randread"),
        _kubestr_job("job4", "write_bw", "128k", "randwrite"),
    ),
    shared_file=False,
)

#: etcd's guidance: the 99th percentile of WAL fdatasync durations should stay below 10 ms.
ETCD_FDATASYNC_P99_LIMIT_US = 10_000.0
#: The job of the ``etcd`` profile whose fdatasync latency is judged.
ETCD_JOB_NAME = "etcd_fdatasync"

ETCD_PROFILE = FioProfile(
    name="etcd",
    description=(
        "etcd's disk check: 2300-byte sequential writes, fdatasync after each, 22m; "
        "passes when the fdatasync p99 is below 10 ms"
    ),
    global_options=(("percentile_list", PERCENTILE_LIST),),
    jobs=(
        FioJobSpec(
            name=ETCD_JOB_NAME,
            options=(
                ("rw", "write"),
                ("ioengine", "sync"),
                ("fdatasync", "1"),
                ("size", "22m"),
                ("bs", "2300"),
            ),
        ),
    ),
)

PROFILES: Mapping[str, FioProfile] = {
    profile.name: profile
    for profile in (DEFAULT_PROFILE, QUICK_PROFILE, DATABASE_PROFILE, KUBESTR_PROFILE, ETCD_PROFILE)
}


class FioJobError(ValueError):
    """A profile name, override or size in a job file is not usable."""


def render_profile(
    profile: str | FioProfile,
    *,
    runtime_s: int | None = None,
    ramp_time_s: int | None = None,
    size: str | None = None,
    directory: str | None = DEFAULT_DIRECTORY,
    filename: str | None = None,
    prefill: bool = False,
) -> str:
    """Render a built-in profile as fio job-file text.

    Filesystem volumes get ``directory=<directory>`` and ``filename=<DEFAULT_TEST_FILENAME>``
    (or ``filename`` when given; no ``filename`` for a profile whose jobs each have their own
    file). Block volumes pass the device path as ``filename`` (``/dev/xvda``) and
    ``directory=None``; fio then does I/O on the device itself. An override replaces the
    option wherever the profile sets it, in ``[global]`` or in a job. With ``prefill`` (a
    device only) and a profile that reads, the job :data:`PREFILL_JOB_NAME` comes first and
    writes the range the read jobs read (:func:`prefill_job`).

    Args:
        profile: a profile name from :data:`PROFILES` or a profile object.
        runtime_s: seconds each job measures, replacing the profile's ``runtime``.
        ramp_time_s: seconds each job runs before measuring, replacing ``ramp_time``.
        size: fio size (``512M``, ``4G``) replacing the profile's ``size``.
        directory: mount path of a Filesystem volume, or ``None`` for a Block volume.
        filename: test file name inside ``directory``, or the device path in Block mode.
        prefill: write the read jobs' range of the device before them.

    Returns:
        The job file text, ending with a newline.

    Raises:
        FioJobError: for an unknown profile, a negative or zero duration, a size fio would
            not accept, neither ``directory`` nor ``filename``, or ``prefill`` with a
            directory (fio lays out files itself).
    """
    chosen = _lookup_profile(profile)
    overrides: dict[str, str] = {}
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


# --------------------------------------------------------------------------------------------
# Reading job files


@dataclass(frozen=True)
class FioJobSection:
    """One job of a parsed job file, with the ``[global]`` options in force applied.

    Attributes:
        name: section name (the job name).
        options: effective options, lower-case keys; bare flags have the value ``"1"``.
        line: 1-based line number of the section header.
    """

    name: str
    options: Mapping[str, str]
    line: int


@dataclass(frozen=True)
class FioJobFile:
    """A parsed fio job file.

    Attributes:
        jobs: the job sections in file order.
        global_options: every option set in any ``[global]`` section (later ones win).
        includes: ``include`` targets that were not resolved (no resolver, or it failed).
        problems: (line number, message) for lines fio would reject.
    """

    jobs: tuple[FioJobSection, ...]
    global_options: Mapping[str, str]
    includes: tuple[str, ...] = ()
    problems: tuple[tuple[int, str], ...] = field(default=())


_SECTION = re.compile(r"^\[(?P<name>[^\]]*)\]\s*$")
_INLINE_COMMENT = re.compile(r"\s[;#].*$")


def parse_job_file(text: str, *, resolve_include: Callable[[str], str] | None = None) -> FioJobFile:
    """Read fio job-file text the way fio does, as far as sizing and validation need.

    Args:
        text: the job file.
        resolve_include: returns the text of a file named on an ``include`` line; when absent,
            or when it raises ``OSError``/``KeyError``, the include is listed as unresolved.

    Returns:
        The parsed job file; it never raises for bad content, which lands in ``problems``.
    """
    state = _ParseState()
    _parse_into(state, text, resolve_include, depth=0)
    state.close_job()
    return FioJobFile(
        jobs=tuple(state.jobs),
        global_options=dict(state.all_globals),
        includes=tuple(state.unresolved),
        problems=tuple(state.problems),
    )


@dataclass
class _ParseState:
    globals_now: dict[str, str] = field(default_factory=dict)
    all_globals: dict[str, str] = field(default_factory=dict)
    jobs: list[FioJobSection] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)
    section: str | None = None
    section_line: int = 0
    section_options: dict[str, str] = field(default_factory=dict)

    def close_job(self) -> None:
        if self.section is not None and self.section != "global":
            merged = {**self.globals_now, **self.section_options}
            self.jobs.append(FioJobSection(self.section, merged, self.section_line))
        self.section = None
        self.section_options = {}

    def set_option(self, key: str, value: str, line: int, raw: str) -> None:
        if self.section is None:
            self.problems.append((line, f"option {raw!r} is outside of any [section]"))
        elif self.section == "global":
            self.globals_now[key] = value
            self.all_globals[key] = value
        else:
            self.section_options[key] = value


_MAX_INCLUDE_DEPTH = 8


def _parse_into(
    state: _ParseState,
    text: str,
    resolve_include: Callable[[str], str] | None,
    *,
    depth: int,
) -> None:
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = _INLINE_COMMENT.sub("", raw_line).strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("include ") or line == "include":
            target = line[len("include") :].strip()
            _include(state, target, resolve_include, depth=depth)
            continue
        header = _SECTION.match(line)
        if header:
            state.close_job()
            name = header.group("name").strip()
            if not name:
                state.problems.append((number, "empty section name []"))
            state.section = name
            state.section_line = number
            continue
        if line.startswith("["):
            state.problems.append((number, f"malformed section header {line!r}"))
            continue
        key, sep, value = line.partition("=")
        key = key.strip().lower()
        state.set_option(key, value.strip() if sep else _FLAG_VALUE, number, line)


def _include(
    state: _ParseState,
    target: str,
    resolve_include: Callable[[str], str] | None,
    *,
    depth: int,
) -> None:
    if not target:
        return
    if resolve_include is None or depth >= _MAX_INCLUDE_DEPTH:
        state.unresolved.append(target)
        return
    try:
        included = resolve_include(target)
    except (OSError, KeyError):
        state.unresolved.append(target)
        return
    _parse_into(state, included, resolve_include, depth=depth + 1)


# --------------------------------------------------------------------------------------------
# Sizes


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
            file; :func:`validate_job_text` reports them).
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
        kb_base = _kb_base(options.get("kb_base"))
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
    per_clone = _clone_bytes(options, _kb_base(options.get("kb_base")))
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


def _kb_base(value: str | None) -> int:
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


# --------------------------------------------------------------------------------------------
# Validation without fio


def validate_job_text(
    text: str, *, resolve_include: Callable[[str], str] | None = None
) -> tuple[Finding, ...]:
    """Check what can be checked in a job file without running fio.

    Errors: lines fio rejects (options outside a section, malformed or empty section headers),
    no job sections, an unknown ``rw=`` value, a size that is not a fio size, a job doing file
    I/O in a directory with neither ``size`` nor ``filesize`` (fio --parse-only accepts that,
    then fails at run time). Warnings: unresolved ``include`` lines and ``gtod_reduce``, which
    switches off every latency measurement.

    Args:
        text: the job file.
        resolve_include: as for :func:`parse_job_file`.

    Returns:
        Findings in file order; empty when nothing is wrong.
    """
    parsed = parse_job_file(text, resolve_include=resolve_include)
    findings: list[Finding] = [
        _finding(
            "fio-job.syntax",
            Severity.ERROR,
            f"line {line}: {message}",
            "put every option under a [global] or [job-name] section header",
        )
        for line, message in parsed.problems
    ]
    if not parsed.jobs:
        findings.append(
            _finding(
                "fio-job.no-jobs",
                Severity.ERROR,
                "the job file defines no jobs (only [global] or nothing)",
                "add at least one [job-name] section",
            )
        )
    for target in parsed.includes:
        findings.append(
            _finding(
                "fio-job.include",
                Severity.WARN,
                f"include {target!r} was not read, so its options are not checked or sized",
                "inline the included file into the job file",
            )
        )
    for job in parsed.jobs:
        findings.extend(_job_findings(job))
    return tuple(findings)


def _job_findings(job: FioJobSection) -> list[Finding]:
    found: list[Finding] = []
    where = f"job [{job.name}] (line {job.line})"
    rw = job.options.get("rw", job.options.get("readwrite"))
    if rw is not None:
        # rw may carry a sequence modifier such as "randread:8".
        base = rw.split(":", 1)[0].strip().lower()
        if base not in VALID_RW_VALUES:
            found.append(
                _finding(
                    "fio-job.rw",
                    Severity.ERROR,
                    f"{where}: rw={rw} is not a fio I/O pattern",
                    "use one of: " + ", ".join(sorted(VALID_RW_VALUES)),
                )
            )
    for key in ("size", "filesize"):
        if key in job.options:
            try:
                parse_fio_size(job.options[key], kb_base=_kb_base(job.options.get("kb_base")))
            except FioJobError as exc:
                found.append(
                    _finding("fio-job.size", Severity.ERROR, f"{where}: {exc}", "write e.g. 2G")
                )
    uses_device = job.options.get("filename", "").startswith("/dev/")
    if "size" not in job.options and "filesize" not in job.options and not uses_device:
        found.append(
            _finding(
                "fio-job.missing-size",
                Severity.ERROR,
                f"{where}: no size or filesize, so fio cannot create its file in the directory",
                "add size=<bytes> (e.g. size=2G) to the job or to [global]",
            )
        )
    if job.options.get("gtod_reduce", "0") not in ("0", "false"):
        found.append(
            _finding(
                "fio-job.no-latency",
                Severity.WARN,
                f"{where}: gtod_reduce switches off latency measurement; no percentiles",
                "drop gtod_reduce to get p50/p99 completion latency",
            )
        )
    return found


def _finding(finding_id: str, severity: Severity, message: str, fix: str) -> Finding:
    return Finding(id=finding_id, severity=severity, message=message, fix=fix, source="fio")
