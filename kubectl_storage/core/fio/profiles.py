"""fio's built-in job profiles, as data: the workloads ``--profile`` names.

Kept apart from rendering them (:mod:`kubectl_storage.core.fio.profile_render`) so the table of
workloads reads on its own. Built-in profiles (see :data:`PROFILES`):

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
* ``database`` — 8k random 70/30 read/write where every write is synchronized as it completes
  (``sync=dsync``: O_DSYNC, a write followed by fdatasync in one call), then a WAL-like
  sequential 8k write committed one I/O at a time (``fdatasync=1``). The mixed job does not use
  ``fdatasync=1``: fio before 3.38 (the toolbox image's Debian fio is 3.33) issues that sync
  after every I/O of a job that also reads, reads included (fio's ``get_rw_ddir`` in ``io_u.c``
  checks only that the write count is a multiple of N; fixed by fio commit 704a8cfe, "io_u:
  Ensure fsync only after write(s)", first in fio-3.38). Measured on this project's machine
  with fio-3.33: 4008 fdatasync calls for 2756 reads and 1257 writes, each a flush of the
  device; with ``sync=dsync`` no call after a read (docs/commands/fio.md).

The jobs of a profile share one test file (``filename``), so the volume needs the job ``size``
once rather than once per job, and the file is laid out only once — except ``kubestr``, whose
jobs each lay out their own file as kubestr's do (:attr:`FioProfile.shared_file`).

Pure module: data only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: Where the benchmark pod mounts a Filesystem-mode volume.
DEFAULT_DIRECTORY = "/dataset"
#: Where the benchmark pod sees a Block-mode volume's device.
BLOCK_DEVICE_PATH = "/dev/kubectl-storage-block"
#: The one test file every job of a built-in profile shares inside the directory.
DEFAULT_TEST_FILENAME = "kubectl-storage-fio.dat"
#: Percentiles every built-in profile asks fio for (fio allows at most 20 entries).
PERCENTILE_LIST = "50:95:99:99.9"


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
        "database-like: 8k random 70/30 read/write with each write synchronized (O_DSYNC), "
        "then 8k sequential commits with fdatasync at iodepth 1; 2G file, 30s each"
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
            # O_DSYNC writes, not fdatasync=1, which fio < 3.38 also issues after every read
            ("sync", "dsync"),
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
