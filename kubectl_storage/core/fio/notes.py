"""fio notes: the note ids, the :class:`FioNote` a guard gives, and the confidence summary.

Separate from the guards that give notes (:mod:`kubectl_storage.core.fio.guards` and the modules
it calls) so every guard, the report and the statistics share one note model and one list of
which ids make a class suspect. The rules behind each id are described in
:mod:`kubectl_storage.core.fio.guards`.

Pure module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.report.findings import Severity

NOTE_DATASET_SMALL = "fio.dataset-small"
NOTE_CACHE_WRITE = "fio.cache-write-latency"
NOTE_CACHE_SYNC = "fio.cache-sync-latency"
#: Direct writes take device time but the flush returns at once: unverified, not suspect.
NOTE_SYNC_NO_FLUSH = "fio.sync-without-flush"
NOTE_AIO_LIMIT = "fio.env-aio-max-nr"
NOTE_NO_SPACE = "fio.env-no-space"
NOTE_READ_ONLY = "fio.env-read-only"
NOTE_JOB_ERROR = "fio.job-error"
#: fio's verify read back other data than was written (error 84, EILSEQ).
NOTE_VERIFY_FAILED = "fio.verify-failed"
NOTE_NO_IO = "fio.no-io"
NOTE_MIXED = "fio.mixed-directions"
NOTE_LATENCY_OFF = "fio.latency-off"
NOTE_UPPER_BOUND = "fio.percentiles-upper-bound"
NOTE_KUBESTR_MODE = "fio.kubestr-mode"
NOTE_ETCD = "fio.etcd-fdatasync"
NOTE_UNWRITTEN_READ = "fio.block-unwritten-read"
NOTE_PREFILL = "fio.block-prefill"
NOTE_FASTER_THAN_LOCAL = "fio.faster-than-local-disk"
NOTE_LOCAL_DISK = "fio.local-disk"
NOTE_CLIENTS_PACKED = "fio.clients-packed"
NOTE_NOT_CHECKED = "fio.not-checked"
#: A job asked fio for steady state (``steadystate=``) and did not attain it: suspect.
NOTE_NOT_STEADY = "fio.not-steady"
#: A job asked fio for steady state and attained it: info.
NOTE_STEADY = "fio.steady"
#: A job's per-second rate fell for good after a plateau (burst credits spent): suspect.
NOTE_BURST = "fio.burst"

#: Notes that make a class's numbers suspect.
SUSPECT_NOTES = frozenset(
    {
        NOTE_DATASET_SMALL,
        NOTE_CACHE_WRITE,
        NOTE_CACHE_SYNC,
        NOTE_AIO_LIMIT,
        NOTE_NO_SPACE,
        NOTE_READ_ONLY,
        NOTE_JOB_ERROR,
        NOTE_VERIFY_FAILED,
        NOTE_NO_IO,
        NOTE_UNWRITTEN_READ,
        NOTE_FASTER_THAN_LOCAL,
        NOTE_NOT_STEADY,
        NOTE_BURST,
    }
)

#: Notes that say a cache, not the storage, answered: a verdict on the class (etcd's) cannot
#: stand next to them.
CACHE_NOTES = frozenset(
    {NOTE_DATASET_SMALL, NOTE_CACHE_WRITE, NOTE_CACHE_SYNC, NOTE_FASTER_THAN_LOCAL}
)

#: Notes that say fio reported an error number for the job they name.
JOB_ERROR_NOTES = frozenset(
    {NOTE_AIO_LIMIT, NOTE_NO_SPACE, NOTE_READ_ONLY, NOTE_JOB_ERROR, NOTE_VERIFY_FAILED}
)

CONFIDENCE_TRUSTED = "trusted"


@dataclass(frozen=True)
class FioNote:
    """One guard's verdict on a job (or a whole run when ``job`` is ``None``).

    Attributes:
        id: stable name of the rule, e.g. ``fio.dataset-small``.
        severity: info, warn or error.
        message: what was seen, with the numbers.
        fix: what to do about it.
        job: the job's name, ``None`` for what concerns the run or the class.
        reason: a few words for the confidence summary.
    """

    id: str
    severity: Severity
    message: str
    fix: str
    job: str | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order (the ``id``/``severity``/``message``/``fix`` keys a
        rendered findings list uses, plus ``job``)."""
        return {
            "id": self.id,
            "severity": self.severity.value,
            "job": self.job,
            "message": self.message,
            "fix": self.fix,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioNote:
        """Read a note back from a saved report (an unknown severity reads as info)."""
        try:
            severity = Severity(str(data.get("severity", "info")))
        except ValueError:
            severity = Severity.INFO
        job = data.get("job")
        return cls(
            id=str(data.get("id", "")),
            severity=severity,
            message=str(data.get("message", "")),
            fix=str(data.get("fix") or ""),
            job=str(job) if job is not None else None,
        )


def dedupe(notes: Iterable[FioNote]) -> list[FioNote]:
    """Keep the first note of each ``(id, job)``; drop a job-less note when a job's note of the
    same id says it already (fio's error line repeats the JSON's error number)."""
    kept: list[FioNote] = []
    seen: set[tuple[str, str | None]] = set()
    for note in notes:
        key = (note.id, note.job)
        if key not in seen:
            seen.add(key)
            kept.append(note)
    with_job = {note.id for note in kept if note.job is not None}
    return [note for note in kept if note.job is not None or note.id not in with_job]


def confidence(notes: Iterable[FioNote]) -> str:
    """The class's one-line summary, which users read first.

    ``"suspect: "`` and the reasons of every suspect note, in order; then, when a guard could
    not run (a ``fio.not-checked`` note), ``"not checked: "`` and which (after the suspect
    reasons, or alone); ``"trusted"`` only when every guard ran and none found anything.
    """
    reasons: list[str] = []
    unchecked: list[str] = []
    for note in notes:
        if note.id in SUSPECT_NOTES and (note.reason or note.id) not in reasons:
            reasons.append(note.reason or note.id)
        elif note.id == NOTE_NOT_CHECKED and (note.reason or note.message) not in unchecked:
            unchecked.append(note.reason or note.message)
    parts = []
    if reasons:
        parts.append("suspect: " + "; ".join(reasons))
    if unchecked:
        parts.append("not checked: " + "; ".join(unchecked))
    return "; ".join(parts) if parts else CONFIDENCE_TRUSTED
