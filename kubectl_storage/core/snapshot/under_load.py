"""The verdict of `snapshot check --under-load`: the restored log against what was acknowledged.

A snapshot cut while the writer (:mod:`.log_writer`) appends must restore a clean prefix of its
log (:func:`.log_prefix.check_log`), and that prefix must hold every record whose fsync had
returned before the snapshot's ``creationTime``, the moment the storage system says the point
in time was taken (CSI ``Snapshot.creation_time``). :func:`judge_under_load` puts the two
together with what the run measured around the cut.

Pure module.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_storage.core.snapshot.log_prefix import LogVerdict, check_log
from kubectl_storage.core.snapshot.log_record import DEFAULT_RECORD_SIZE
from kubectl_storage.core.snapshot.log_writer import Ack, acknowledged_before, written_between


@dataclass(frozen=True)
class UnderLoadResult:
    """What the log showed.

    Attributes:
        records_acknowledged: records the writer acknowledged in all.
        acknowledged_before_snapshot: the highest of them acknowledged before creationTime
            (``None`` when the snapshot gave no creationTime: nothing can be counted lost).
        written_during_cut: records acknowledged between the snapshot's request and
            readyToUse.
        request_to_ready_s: seconds from creating the VolumeSnapshot to readyToUse.
        creation_time: the snapshot's creationTime as the API gave it.
        log: the restored log's verdict.
    """

    records_acknowledged: int
    acknowledged_before_snapshot: int | None
    written_during_cut: int
    request_to_ready_s: float
    creation_time: str | None
    log: LogVerdict

    @property
    def problems(self) -> list[str]:
        """Every reason the restored log fails, each naming its offset."""
        return [f"log: {problem}" for problem in self.log.problems]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        torn = self.log.torn
        return {
            "recordsAcknowledged": self.records_acknowledged,
            "acknowledgedBeforeSnapshot": self.acknowledged_before_snapshot,
            "writtenDuringCut": self.written_during_cut,
            "requestToReadySeconds": round(self.request_to_ready_s, 2),
            "snapshotCreationTime": self.creation_time,
            "recordSize": self.log.record_size,
            "restoredLogBytes": self.log.log_bytes,
            "cleanPrefix": self.log.clean_prefix,
            "recordsIntact": self.log.records_intact,
            "tornRecord": None
            if torn is None
            else {
                "offset": torn.offset,
                "length": torn.length,
                "seq": torn.seq,
                "reason": str(torn.reason),
                "inFlight": self.log.in_flight_torn,
            },
            "problems": self.problems,
            "notes": list(self.log.notes),
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
    restored_log: bytes,
    acks: tuple[Ack, ...],
    *,
    creation_time: str | None,
    requested_ns: int,
    ready_ns: int,
    record_size: int = DEFAULT_RECORD_SIZE,
) -> UnderLoadResult:
    """Judge the restored log of one under-load check.

    Args:
        restored_log: the log file's bytes as read from the restored volume.
        acks: the writer's acknowledgements.
        creation_time: the VolumeSnapshot's ``status.creationTime``.
        requested_ns: when the VolumeSnapshot was created (the pod clock's epoch).
        ready_ns: when it was seen readyToUse.
        record_size: the writer's record size.
    """
    moment = creation_time_ns(creation_time)
    before = acknowledged_before(acks, moment) if moment is not None else None
    verdict = check_log(restored_log, record_size=record_size, acknowledged_before_snapshot=before)
    return UnderLoadResult(
        records_acknowledged=len(acks),
        acknowledged_before_snapshot=before,
        written_during_cut=written_between(acks, requested_ns, ready_ns),
        request_to_ready_s=max(0.0, (ready_ns - requested_ns) / 1e9),
        creation_time=creation_time,
        log=verdict,
    )
