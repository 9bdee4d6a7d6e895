"""The verdict of `snapshot check --under-load`: the restored logs against what was acknowledged.

The writer (:mod:`.log_writer`) alternates fsynced records over two files in two directories
while the snapshot is cut. Each restored file must be a clean prefix of its log
(:func:`.log_prefix.check_log`: holes, reordering, garbage, a torn record that was not the one in
flight), and the two together must show one instant, hold nothing written after readyToUse and
everything acknowledged before the VolumeSnapshot was requested (:func:`.log_cut.judge_cut`).
:func:`judge_under_load` puts these together with what the run measured around the cut, and
:attr:`UnderLoadResult.outcome` is the verdict on the project's model (core/report).

Pure module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_storage.core.report.verdict import Outcome, judge
from kubectl_storage.core.snapshot.log_cut import CutVerdict, judge_cut
from kubectl_storage.core.snapshot.log_prefix import LogVerdict, check_log
from kubectl_storage.core.snapshot.log_record import DEFAULT_RECORD_SIZE
from kubectl_storage.core.snapshot.log_writer import (
    LOG_FILES,
    Ack,
    acknowledged_before,
    written_between,
)


@dataclass(frozen=True)
class UnderLoadResult:
    """What the logs showed.

    Attributes:
        records_acknowledged: records the writer acknowledged in all.
        acknowledged_at_request: the count read right before the VolumeSnapshot was created.
        acknowledged_at_ready: the count read right after readyToUse was seen.
        acknowledged_before_snapshot: the highest of them acknowledged before creationTime
            (``None`` when the snapshot gave no creationTime).
        written_during_cut: records acknowledged between the snapshot's request and
            readyToUse.
        written_after_ready: records acknowledged after readyToUse: none may be restored.
        request_to_ready_s: seconds from creating the VolumeSnapshot to readyToUse.
        creation_time: the snapshot's creationTime as the API gave it.
        logs: each restored file's verdict, in write order (:data:`.log_writer.LOG_FILES`).
        cut: what the files together say about the instant of the cut.
    """

    records_acknowledged: int
    acknowledged_at_request: int
    acknowledged_at_ready: int
    acknowledged_before_snapshot: int | None
    written_during_cut: int
    written_after_ready: int
    request_to_ready_s: float
    creation_time: str | None
    logs: tuple[LogVerdict, ...]
    cut: CutVerdict

    @property
    def problems(self) -> list[str]:
        """Every reason the restored logs fail: each file's (with its offsets), then the cut's."""
        found = [
            f"log {name}: {problem}"
            for name, log in zip(LOG_FILES, self.logs, strict=True)
            for problem in log.problems
        ]
        return found + list(self.cut.problems)

    @property
    def outcome(self) -> Outcome:
        """fail on any problem; inconclusive when the writer was not alive on both sides of the
        cut; warn when creationTime was stamped after the cut; else pass."""
        return judge(fail=self.problems, inconclusive=self.cut.inconclusive, warn=self.cut.warnings)

    @property
    def crash_consistent(self) -> bool:
        """Only a cut the cross-file check proved one instant, with nothing else wrong."""
        return self.cut.crash_consistent and not self.problems

    @property
    def record_size(self) -> int:
        """The writer's record size."""
        return self.logs[0].record_size

    @property
    def clean_prefix(self) -> int:
        """Records in the clean prefixes of all files together."""
        return sum(self.cut.clean_prefixes)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            **self.outcome.to_dict(),
            "crashConsistent": self.crash_consistent,
            "pointInTime": self.cut.point_in_time,
            "recordsAcknowledged": self.records_acknowledged,
            "acknowledgedAtRequest": self.acknowledged_at_request,
            "acknowledgedAtReady": self.acknowledged_at_ready,
            "acknowledgedBeforeSnapshot": self.acknowledged_before_snapshot,
            "lowerBound": self.cut.lower_bound,
            "requiredRecords": self.cut.required,
            "writtenDuringCut": self.written_during_cut,
            "writtenAfterReady": self.written_after_ready,
            "requestToReadySeconds": round(self.request_to_ready_s, 2),
            "snapshotCreationTime": self.creation_time,
            "recordSize": self.record_size,
            "cleanPrefix": self.clean_prefix,
            "files": [
                _file_dict(name, log) for name, log in zip(LOG_FILES, self.logs, strict=True)
            ],
            "problems": self.problems,
            "warnings": list(self.cut.warnings),
            "inconclusive": list(self.cut.inconclusive),
        }


def _file_dict(name: str, log: LogVerdict) -> dict[str, Any]:
    torn = log.torn
    return {
        "path": name,
        "restoredLogBytes": log.log_bytes,
        "cleanPrefix": log.clean_prefix,
        "recordsIntact": log.records_intact,
        "tornRecord": None
        if torn is None
        else {
            "offset": torn.offset,
            "length": torn.length,
            "seq": torn.seq,
            "reason": str(torn.reason),
            "inFlight": log.in_flight_torn,
        },
        "problems": list(log.problems),
        "notes": list(log.notes),
    }


def creation_time_ns(text: str | None) -> int | None:
    """An RFC 3339 creationTime as nanoseconds since the epoch (``None`` when absent or bad)."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def judge_under_load(
    restored_logs: Sequence[bytes],
    acks: tuple[Ack, ...],
    *,
    creation_time: str | None,
    requested_ns: int,
    ready_ns: int,
    acknowledged_at_request: int,
    acknowledged_at_ready: int,
    record_size: int = DEFAULT_RECORD_SIZE,
) -> UnderLoadResult:
    """Judge the restored logs of one under-load check.

    Args:
        restored_logs: each log file's bytes as read from the restored volume, in write order.
        acks: the writer's acknowledgements.
        creation_time: the VolumeSnapshot's ``status.creationTime``.
        requested_ns: when the VolumeSnapshot was created (the pod clock's epoch).
        ready_ns: when it was seen readyToUse.
        acknowledged_at_request: the writer's count read right before the request.
        acknowledged_at_ready: its count read right after readyToUse.
        record_size: the writer's record size.
    """
    moment = creation_time_ns(creation_time)
    # Loss is judged once, across the files, by judge_cut (the request's count, no clock).
    logs = tuple(
        check_log(data, record_size=record_size, acknowledged_before_snapshot=None)
        for data in restored_logs
    )
    cut = judge_cut(
        logs,
        acks,
        acknowledged_at_request=acknowledged_at_request,
        acknowledged_at_ready=acknowledged_at_ready,
        ready_ns=ready_ns,
        requested_ns=requested_ns,
        creation_ns=moment,
    )
    return UnderLoadResult(
        records_acknowledged=len(acks),
        acknowledged_at_request=acknowledged_at_request,
        acknowledged_at_ready=acknowledged_at_ready,
        acknowledged_before_snapshot=acknowledged_before(acks, moment) if moment else None,
        written_during_cut=written_between(acks, requested_ns, ready_ns),
        written_after_ready=len(acks) - acknowledged_at_ready,
        request_to_ready_s=max(0.0, (ready_ns - requested_ns) / 1e9),
        creation_time=creation_time,
        logs=logs,
        cut=cut,
    )
