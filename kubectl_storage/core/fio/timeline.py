"""Each job's IOPS second by second, from fio's per-second logs, and the burst guard on it.

The benchmark pod's first run asks fio for one IOPS log per job, averaged over each second
(``--write_iops_log`` and ``--log_avg_msec=1000``, in the pod's command).
fio numbers the files by job: ``log_iops.<n>.log``, n counting every job it started from 1, in
the order its JSON lists them, a ``numjobs`` clone being a job of its own. With
``group_reporting`` the JSON lists a section's clones once, so a section stands for ``numjobs``
files; when the files and the JSON's jobs do not add up, nothing is guessed.

The guard (``fio.burst``, suspect) reports a job whose rate fell for good after a plateau
(:func:`kubectl_storage.core.fio.burst.check_burst`, which says where its thresholds come from):
its mean averages a burst and what follows, and neither is what the class sustains. A job too
short to tell is left alone (the quick profile's 5 s): the guard says nothing rather than
"trusted" or "not checked" for every short job. When the logs were expected and cannot be read
or matched, the class is "not checked: burst". Saved reports carry the series (``timeline``)
so ``--chart`` can draw them later; an offline fio JSON has none.

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.burst import (
    DIRECTIONS,
    Burst,
    check_burst,
    parse_fio_log,
    parse_log_name,
    per_second,
    sum_series,
)
from kubectl_storage.core.fio.notes import NOTE_BURST, NOTE_NOT_CHECKED, FioNote
from kubectl_storage.core.fio.results import FioJobResult, FioResult
from kubectl_storage.core.report.findings import Severity

_DIRECTION_NUMBER = {name: number for number, name in DIRECTIONS.items()}


@dataclass(frozen=True)
class JobTimeline:
    """One direction of one job, IOPS per second of the first run (``numjobs`` clones added).

    Attributes:
        job: the job's name.
        direction: ``read``, ``write`` or ``trim``.
        iops: ``(second, IOPS)`` pairs, the second being the window's end after the ramp.
        burst: the plateau and drop found in it, ``None`` when there is none.
    """

    job: str
    direction: str
    iops: tuple[tuple[int, float], ...]
    burst: Burst | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: job, direction, iops as ``[[second, value], ...]``, burst or null."""
        burst = self.burst
        return {
            "job": self.job,
            "direction": self.direction,
            "iops": [[second, round(value, 1)] for second, value in self.iops],
            "burst": None
            if burst is None
            else {
                "plateau_iops": round(burst.plateau, 1),
                "plateau_s": burst.plateau_s,
                "after_iops": round(burst.level_after, 1),
                "after_s": burst.after_s,
                "drop_s": burst.drop_s,
                "ratio": round(burst.ratio, 4),
                "summary": burst.summary,
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobTimeline:
        """Read a saved timeline back (the burst is judged again from the series)."""
        direction = str(data.get("direction", "read"))
        pairs = tuple(
            (int(pair[0]), float(pair[1]))
            for pair in data.get("iops") or ()
            if isinstance(pair, Sequence) and len(pair) == 2
        )
        number = _DIRECTION_NUMBER.get(direction, 0)
        return cls(
            str(data.get("job", "")), direction, pairs, check_burst(pairs, direction=number).burst
        )


def _files_per_job(result: FioResult, files: int) -> list[tuple[str, int]] | None:
    """``(job name, how many log files it stands for)`` in fio's order, ``None`` if no reading
    adds up to ``files``. fio's JSON does not echo ``group_reporting`` (a flag), so both
    readings are tried: one file per listed job (clones listed one by one), or ``numjobs``
    files per listed job (a section's clones reported once). When every ``numjobs`` is 1 the
    two are the same."""
    one_each = [(job.name, 1) for job in result.jobs]
    if len(one_each) == files:
        return one_each
    grouped = []
    for job in result.jobs:
        options = {**result.global_options, **job.job_options}
        try:
            clones = max(int(options.get("numjobs", "1")), 1)
        except ValueError:
            clones = 1
        grouped.append((job.name, clones))
    return grouped if sum(n for _, n in grouped) == files else None


def job_timelines(
    logs: Mapping[str, str], result: FioResult
) -> tuple[tuple[JobTimeline, ...], str | None]:
    """Every job's per-direction series from the first run's IOPS logs, each judged for a
    burst; or no series and why they could not be matched to the jobs."""
    numbered: dict[int, str] = {}
    for name, text in logs.items():
        parsed = parse_log_name(name)
        if parsed is None or parsed.kind != "iops" or parsed.job is None:
            continue
        numbered[parsed.job] = text
    owners = _files_per_job(result, len(numbered))
    if owners is None or sorted(numbered) != list(range(1, len(numbered) + 1)):
        return (), (
            f"fio wrote {len(numbered)} per-second IOPS logs for the {len(result.jobs)} jobs "
            "it reported, and they do not match"
        )
    errors = {job.name for job in result.jobs if job.error}
    series: dict[tuple[str, int], list[list[tuple[int, float]]]] = {}
    number = 0
    try:
        for job_name, files in owners:
            for _ in range(files):
                number += 1
                points = parse_fio_log(numbered[number])
                for direction in sorted({p.direction for p in points}):
                    one = per_second(points, direction)
                    series.setdefault((job_name, direction), []).append(one)
    except ValueError as exc:
        return (), f"a per-second log could not be read: {exc}"
    timelines = []
    for (job_name, direction), parts in series.items():
        summed = sum_series(*parts)
        if not any(value for _, value in summed):
            continue  # a direction the job logged but did no I/O in
        burst = None if job_name in errors else check_burst(summed, direction=direction).burst
        timelines.append(JobTimeline(job_name, DIRECTIONS[direction], tuple(summed), burst))
    return tuple(timelines), None


def burst_notes(
    timelines: Sequence[JobTimeline], unmatched: str | None, measured: Sequence[FioJobResult]
) -> list[FioNote]:
    """``fio.burst`` for each job whose rate dropped for good; ``fio.not-checked`` when the
    logs could not be matched to the jobs. Only jobs in ``measured`` (not a Block prefill)."""
    if unmatched is not None:
        return [
            FioNote(
                NOTE_NOT_CHECKED,
                Severity.INFO,
                f"burst credits: not checked: {unmatched}",
                "leave write_iops_log and log_avg_msec out of the job file (they replace the "
                "log this guard reads), and do not report several sections as one "
                "(group_reporting), to have it checked",
                None,
                "burst (no per-second log)",
            )
        ]
    names = {job.name for job in measured}
    notes = []
    for timeline in timelines:
        if timeline.burst is None or timeline.job not in names:
            continue
        notes.append(
            FioNote(
                NOTE_BURST,
                Severity.WARN,
                f"job {timeline.job}: {timeline.burst.summary}: its numbers average a burst "
                "and what came after; neither is what the class sustains",
                "run the job longer than the credit bucket lasts (a gp2 volume's can last "
                "30 minutes) and read the rate after the drop, or use a class with a "
                "provisioned rate; --chart draws the timeline",
                timeline.job,
                f"{timeline.job}: {timeline.direction} burst for {timeline.burst.plateau_s} s, "
                f"then {timeline.burst.ratio:.1%} of it",
            )
        )
    return notes
