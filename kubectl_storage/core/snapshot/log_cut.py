"""Whether several restored logs show one instant: cross-file order, upper and lower bounds.

Used by `snapshot check --under-load` (:mod:`.under_load`; issue 25 item 2). A writer that
alternates records over ``n`` files writes global record ``g`` (from 1) as record
``(g - 1) // n + 1`` of file ``(g - 1) % n``. Rules, over the clean prefixes
``k_0 .. k_{n-1}`` of the restored files (:func:`.log_prefix.check_log`):

* point-in-time: an image of one instant has ``k_0 >= k_1 >= ... >= k_{n-1} >= k_0 - 1``;
  anything else is a state no crash can leave → fail "not point-in-time";
* upper bound: no record whose write began after readyToUse (its timestamp later than the
  moment readyToUse was seen plus one second, the API's creationTime resolution) and no
  global seq above ``acknowledged_at_ready + 1`` (the count read right after readyToUse: the
  record after it may have been in flight) → fail "the snapshot holds writes from after it was
  cut";
* lower bound: every record acknowledged before the VolumeSnapshot was requested (a count read
  before the request, no clock) must be there → fail "lost acknowledged record"; a creationTime
  between the request (less its one second) and readyToUse tightens it; records missing only
  under that tighter bound name the creationTime as stamped after the cut (warn), apart from
  loss;
* the writer must have acknowledged records before the request and after readyToUse, else the
  run is inconclusive (a writer that died: ENOSPC, OOM).

"crash-consistent" is said only when the point-in-time rule held. Pure module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_storage.core.snapshot.log_prefix import LogVerdict
from kubectl_storage.core.snapshot.log_writer import Ack, acknowledged_before

SECOND_NS = 1_000_000_000


def in_file(global_count: int, files: int, index: int) -> int:
    """How many of global records 1..``global_count`` went to file ``index`` of ``files``."""
    return max(0, (global_count - index - 1 + files) // files)


def global_seq(index: int, file_seq: int, files: int) -> int:
    """The global seq of record ``file_seq`` (from 1) of file ``index``."""
    return (file_seq - 1) * files + index + 1


@dataclass(frozen=True)
class CutVerdict:
    """What the restored files say about the instant the snapshot was cut."""

    clean_prefixes: tuple[int, ...]
    point_in_time: bool
    #: "request" or "creationTime": which lower bound applied.
    lower_bound: str
    required: int
    problems: tuple[str, ...]
    warnings: tuple[str, ...]
    inconclusive: tuple[str, ...]

    @property
    def crash_consistent(self) -> bool:
        """Only a cut the cross-file check proved one instant is called crash-consistent."""
        return self.point_in_time and not self.problems and not self.inconclusive


def judge_cut(
    logs: Sequence[LogVerdict],
    acks: Sequence[Ack],
    *,
    acknowledged_at_request: int,
    acknowledged_at_ready: int,
    ready_ns: int,
    requested_ns: int,
    creation_ns: int | None,
) -> CutVerdict:
    """Judge the restored files ``logs`` (in write order) against the writer's acks and the
    counts read just before the request and just after readyToUse (rules: module docstring)."""
    n = len(logs)
    if n < 2:
        raise ValueError(f"the cross-file check needs at least two files, got {n}")
    ks = tuple(log.clean_prefix for log in logs)
    problems: list[str] = []
    warnings: list[str] = []
    inconclusive: list[str] = []
    point = all(ks[i] >= ks[i + 1] for i in range(n - 1)) and ks[-1] >= ks[0] - 1
    if not point:
        problems.append(
            f"not point-in-time: the files hold {', '.join(map(str, ks))} records in write "
            "order; an image of one instant keeps them within one of each other"
        )
    # Upper bound.
    after: list[str] = []
    for i, log in enumerate(logs):
        ts = log.clean_prefix_timestamp_ns
        if ts is not None and ts > ready_ns + SECOND_NS:
            after.append(f"file {i} record {ks[i]} was begun {(ts - ready_ns) / 1e9:.2f}s after")
        elif ks[i] and global_seq(i, ks[i], n) > acknowledged_at_ready + 1:
            after.append(
                f"file {i} holds global record {global_seq(i, ks[i], n)}, but only "
                f"{acknowledged_at_ready} were acknowledged when readyToUse was seen"
            )
    if after:
        problems.append(
            "the snapshot holds writes from after it was cut: " + "; ".join(after) + " readyToUse"
        )
    # Lower bound.
    required, bound = acknowledged_at_request, "request"
    plausible = creation_ns is not None and requested_ns - SECOND_NS <= creation_ns <= ready_ns
    if plausible and creation_ns is not None:
        by_time = acknowledged_before(acks, creation_ns)
        if by_time > required:
            required, bound = by_time, "creationTime"
    short = [i for i in range(n) if ks[i] < in_file(acknowledged_at_request, n, i)]
    if short:
        problems.append(
            f"lost acknowledged record: {acknowledged_at_request} records were acknowledged "
            f"before the VolumeSnapshot was requested, file {short[0]} holds {ks[short[0]]} "
            f"of its {in_file(acknowledged_at_request, n, short[0])}"
        )
    elif any(ks[i] < in_file(required, n, i) for i in range(n)):
        warnings.append(
            f"creationTime stamped after the cut: {required} records were acknowledged before "
            f"it, the restore holds {sum(ks)}; every record acknowledged before the request "
            "is there"
        )
    # The writer alive on both sides of the cut.
    if acknowledged_at_request < 1:
        inconclusive.append("the writer had acknowledged nothing before the request")
    if len(acks) <= acknowledged_at_ready:
        inconclusive.append(
            "the writer acknowledged nothing after readyToUse (it died: ENOSPC, OOM?)"
        )
    return CutVerdict(
        clean_prefixes=ks,
        point_in_time=point,
        lower_bound=bound,
        required=required,
        problems=tuple(problems),
        warnings=tuple(warnings),
        inconclusive=tuple(inconclusive),
    )
