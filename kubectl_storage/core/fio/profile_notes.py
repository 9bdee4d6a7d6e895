"""Verdicts and notes that belong to a profile: etcd's fdatasync check and the kubestr mode.

Separate from the guards that judge any job (:mod:`kubectl_storage.core.fio.guards`): these are
asked for by the ``etcd`` and ``kubestr`` profiles only.

Pure module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.notes import CACHE_NOTES, NOTE_ETCD, NOTE_KUBESTR_MODE, FioNote
from kubectl_storage.core.fio.profiles import ETCD_FDATASYNC_P99_LIMIT_US
from kubectl_storage.core.fio.results import FioJobResult
from kubectl_storage.core.report.findings import Severity

ETCD_PASS = "pass"
ETCD_FAIL = "fail"
ETCD_UNKNOWN = "unknown"


@dataclass(frozen=True)
class EtcdVerdict:
    """etcd's storage check on one class: fdatasync p99 against etcd's guidance.

    Attributes:
        job: the etcd job's name, ``None`` when the class ran none.
        fdatasync_p99_us: the worst run's p99, ``None`` when not measured.
        limit_us: the limit it was judged against.
        verdict: ``pass``, ``fail`` or ``unknown``.
        runs: how many runs were judged.
    """

    job: str | None
    fdatasync_p99_us: float | None
    limit_us: float
    verdict: str
    runs: int

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "job": self.job,
            "fdatasync_p99_us": self.fdatasync_p99_us,
            "limit_us": self.limit_us,
            "verdict": self.verdict,
            "runs": self.runs,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EtcdVerdict:
        """Read a verdict back from a saved report."""
        p99, limit, job = data.get("fdatasync_p99_us"), data.get("limit_us"), data.get("job")
        return cls(
            job=str(job) if job is not None else None,
            fdatasync_p99_us=float(p99) if isinstance(p99, int | float) else None,
            limit_us=float(limit) if isinstance(limit, int | float) else 0.0,
            verdict=str(data.get("verdict", ETCD_UNKNOWN)),
            runs=int(data.get("runs") or 0),
        )


def etcd_verdict(
    runs: Sequence[FioJobResult],
    *,
    limit_us: float = ETCD_FDATASYNC_P99_LIMIT_US,
    cache_notes: Sequence[FioNote] = (),
) -> EtcdVerdict:
    """etcd's storage check: the p99 of the fdatasync latency against its 10 ms guidance.

    With repeats the worst run decides.

    Args:
        runs: the etcd job of each run.
        limit_us: the p99 limit in microseconds.
        cache_notes: the notes of a cache guard (:data:`~kubectl_storage.core.fio.notes.
            CACHE_NOTES`) that fired on the class: with one, a fast fdatasync shows a cache's
            speed, so the class cannot be said to pass.

    Returns:
        The verdict: ``pass`` (below the limit), ``fail``, or ``unknown`` when a run has no
        fdatasync percentile (the job failed, or latency was switched off) or, below the
        limit, a cache guard fired (a slow flush fails whatever answered it).
    """
    p99s = [job.sync.lat_p99_us if job.sync is not None else None for job in runs]
    measured = [value for value in p99s if value is not None]
    cached = any(note.id in CACHE_NOTES for note in cache_notes)
    if not runs or len(measured) != len(p99s) or (cached and max(measured) < limit_us):
        verdict, worst = ETCD_UNKNOWN, (max(measured) if measured else None)
    else:
        worst = max(measured)
        verdict = ETCD_PASS if worst < limit_us else ETCD_FAIL
    return EtcdVerdict(
        job=runs[0].name if runs else None,
        fdatasync_p99_us=worst,
        limit_us=limit_us,
        verdict=verdict,
        runs=len(runs),
    )


def etcd_note(verdict: EtcdVerdict, cache_notes: Sequence[FioNote] = ()) -> FioNote:
    """The note stating an :func:`etcd_verdict` in words (``cache_notes`` as given to it)."""
    p99 = verdict.fdatasync_p99_us
    limit_ms = verdict.limit_us / 1000
    job = verdict.job
    cached = list(dict.fromkeys(note.id for note in cache_notes if note.id in CACHE_NOTES))
    if verdict.verdict == ETCD_UNKNOWN and p99 is not None and cached:
        return FioNote(
            NOTE_ETCD,
            Severity.WARN,
            f"etcd check unknown: fdatasync p99 {p99 / 1000:.2f} ms is below etcd's "
            f"{limit_ms:g} ms, but a cache answered ({', '.join(cached)}), so it says nothing "
            "about how long a flush to stable storage takes",
            "run the etcd profile on a class whose flushes reach stable storage; see the "
            "cache notes",
            job,
        )
    if verdict.verdict == ETCD_UNKNOWN or p99 is None:
        return FioNote(
            NOTE_ETCD,
            Severity.WARN,
            "etcd check: no fdatasync latency was measured, so the class cannot be judged",
            "see the job's error; the etcd profile needs latency measurement on",
            job,
        )
    shown = f"{p99 / 1000:.2f} ms"
    if verdict.verdict == ETCD_PASS:
        return FioNote(
            NOTE_ETCD,
            Severity.INFO,
            f"etcd check passed: fdatasync p99 {shown} is below etcd's {limit_ms:g} ms",
            "",
            job,
        )
    return FioNote(
        NOTE_ETCD,
        Severity.WARN,
        f"etcd check failed: fdatasync p99 {shown} is above etcd's {limit_ms:g} ms guidance; "
        "etcd on this class risks slow WAL writes and leader elections",
        "use a class with lower write-flush latency (local SSD, provisioned IOPS) for etcd",
        job,
    )


def kubestr_mode_note() -> FioNote:
    """The report-wide note of the ``kubestr`` profile."""
    return FioNote(
        NOTE_KUBESTR_MODE,
        Severity.INFO,
        "kubestr's default run, reproduced: gtod_reduce=1 switches latency off (no latency, "
        "no percentiles), and the four jobs run at the same time on one volume, so each number "
        "is a share of it, comparable with kubestr's and not with the default profile's",
        "use the default profile to judge a class",
    )
