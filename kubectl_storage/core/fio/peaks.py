"""What a class's summary line quotes: each peak with the job it comes from, and the failed jobs.

The summary line is the one people copy into a ticket, so each number in it names its job:
the highest IOPS and the highest bandwidth of a direction are often two jobs (the ``default``
profile's 4k ``read_iops`` job has the IOPS, its 128k ``read_bw`` job the bandwidth), and a
pair of them written as "peak read N IOPS, M MiB/s" reads as one run that did both.

Only jobs fio reported no error for count. A job that failed stopped part way, and what it
measured until then is not the class's speed: an ENOSPC run (fio-3.33 on a full tmpfs,
tests/fixtures/fio) reported 514,000 write IOPS for the I/Os before the file system filled up.
Such a job is listed as failed, with what its error number means, instead.

Pure module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_storage.core.fio.env_errors import error_summary
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.results import CONTRACT_DIRECTIONS


@dataclass(frozen=True)
class JobValue:
    """A value and the job that measured it."""

    value: float
    job: str


@dataclass(frozen=True)
class DirectionPeaks:
    """The summary's numbers for one direction (``read``, ``write`` or ``mixed``).

    Attributes:
        direction: the direction.
        iops: the highest IOPS of a job without error (a direction without one is left out).
        bw_kib_s: the highest bandwidth (KiB/s) of a job without error, maybe another job.
        best_clat_p99_us: the lowest completion-latency p99 of a job without error.
    """

    direction: str
    iops: JobValue
    bw_kib_s: JobValue | None
    best_clat_p99_us: JobValue | None


@dataclass(frozen=True)
class FailedJob:
    """A job fio reported an error for.

    Attributes:
        name: the job's name.
        error: fio's error number.
        summary: a few words on what it means (``error 28, ENOSPC``).
    """

    name: str
    error: int
    summary: str


@dataclass(frozen=True)
class ClassPeaks:
    """Everything the summary line of one class says.

    Attributes:
        directions: the directions some job without error did I/O in, in contract order.
        failed: the jobs with an error, in report order; none of their numbers is above.
    """

    directions: tuple[DirectionPeaks, ...]
    failed: tuple[FailedJob, ...]


def class_peaks(jobs: Sequence[FioJobSummary]) -> ClassPeaks:
    """The peaks of each direction over the jobs without error, and the failed jobs.

    Args:
        jobs: a class's jobs (means over the repeats); a job with an error in any repeat is
            a failed job.

    Returns:
        The summary's numbers.
    """
    counted = [job for job in jobs if not job.error]
    directions = []
    for direction in CONTRACT_DIRECTIONS:
        iops = _extreme(counted, f"{direction}_iops", highest=True)
        if iops is None:
            continue
        directions.append(
            DirectionPeaks(
                direction,
                iops,
                _extreme(counted, f"{direction}_bw_kib_s", highest=True),
                _extreme(counted, f"{direction}_clat_p99_us", highest=False),
            )
        )
    failed = tuple(
        FailedJob(job.name, job.error, error_summary(job.error)) for job in jobs if job.error
    )
    return ClassPeaks(tuple(directions), failed)


def _extreme(jobs: Sequence[FioJobSummary], metric: str, *, highest: bool) -> JobValue | None:
    """The job with the highest (or lowest) non-zero ``metric``; the first one on a tie."""
    best: JobValue | None = None
    for job in jobs:
        value = job.value(metric)
        if not value:
            continue
        if best is None or (value > best.value if highest else value < best.value):
            best = JobValue(value, job.name)
    return best
