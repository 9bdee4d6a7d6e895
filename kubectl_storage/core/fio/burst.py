"""Burst credits in fio's per-second IOPS and bandwidth logs: full speed, then a sustained drop.

Much cloud block storage sells a rate it keeps only while a credit bucket lasts. AWS gp2 volumes
(and st1/sc1 for throughput) spend I/O credits to burst above their baseline, and on smaller EC2
instance types the instance's own EBS bandwidth bursts for a while and then falls back, which
caps gp3 volumes too. Azure's credit-based bursting (Premium SSD P20 and smaller, Standard SSD,
and VM-level disk bursting) behaves the same way. A benchmark shorter than the bucket measures
the burst, not what an application gets afterwards, and one that outlasts the bucket averages
the two. The per-second log shows what happened: a plateau, then a much lower level that
stays low.

Log format: fio's HOWTO, "Log File Formats", and fio(1), "LOG FILE FORMATS". One row per entry:
``time (msec), value, data direction, block size, [offset,] [command priority]``. The value is
IOPS in ``*_iops.N.log`` and KiB/s in ``*_bw.N.log``; direction 0 is read, 1 write, 2 trim. With
``log_avg_msec`` fio writes one averaged row per window and direction, with block size and offset
0. fio-3.33 writes 5 columns (priority last, ``0x0000`` in hex with ``log_prio=1``), or 6 with
``log_offset=1``; fio before per-command priorities wrote 4 or 5. Each job writes its own file,
``<prefix>_iops.<job number>.log`` (tests/fixtures/fio/burst holds real fio-3.33 logs).

Pure module.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Literal

from kubectl_storage.core.k8s.quantities import format_bytes, format_count

DIRECTIONS: dict[int, str] = {0: "read", 1: "write", 2: "trim"}
LogKind = Literal["iops", "bw"]

# The thresholds, from the logs in tests/fixtures/fio/burst (fio-3.33, 36 s of 4k randread on a
# loop device, the machine's two cores shared with a CI run; SOURCES.md there):
# * The first RAMP_S windows are not judged: in the quiet runs they sit 12-19 % off the run's
#   median (steady: 127k and 130k IOPS against 147k; noisy: 123k and 132k against 115k).
# * Plateau and drop must each last MIN_PLATEAU_S / MIN_AFTER_S seconds. Single slow seconds
#   are common (steady's last second: 0.71 of its median; noisy: 0.69) but no five-second
#   window of a quiet run has a median below 0.85 of the run's; real credit buckets last
#   minutes, and a log must hold RAMP_S + 10 s to be judged at all.
# * The level after the drop must be at most MAX_AFTER_FRACTION of the plateau. No split of a
#   quiet run into two parts of 5 s or more leaves less than 0.999 of the level before it; the
#   burst runs fall to 0.002 (300 of 155k IOPS) and 0.093 (20k of 216k). Real buckets mostly
#   fall further than half (gp2 up to 500 GiB, Azure P15 and smaller: 1,100 or fewer of 3,500);
#   milder ones are missed on purpose (Azure P20: 2,300 of 3,500), noisier hosts than this one
#   would otherwise raise false alarms.
# * SUSTAINED_FRACTION of the seconds on each side must be on their side of the midpoint
#   between the two levels, so one lucky split between noise does not count as a drop.
RAMP_S = 2
MIN_PLATEAU_S = 5
MIN_AFTER_S = 5
MAX_AFTER_FRACTION = 0.5
SUSTAINED_FRACTION = 0.8

_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>iops|bw|lat|clat|slat)(?:\.(?P<job>\d+))?\.log$")


@dataclass(frozen=True)
class LogPoint:
    """One row of a fio log: the window's end (ms from job start), its value, its direction."""

    time_ms: int
    value: float
    direction: int
    block_size: int = 0


@dataclass(frozen=True)
class LogName:
    """What a log file's name says: ``burst_iops.1.log`` is job 1's IOPS log of ``burst``."""

    prefix: str
    kind: str
    job: int | None


@dataclass(frozen=True)
class Burst:
    """A plateau followed by a sustained drop.

    Attributes:
        direction: 0 read, 1 write, 2 trim.
        unit: ``IOPS`` or ``bytes/s``.
        plateau: the median per-second value over the plateau (after the ramp-up seconds).
        plateau_s: seconds from the job's start to the drop.
        level_after: the median per-second value from the drop to the end of the log.
        after_s: seconds of log after the drop.
        drop_s: the second of the job at which the first low window began.
        ratio: ``level_after / plateau`` (0.002: the rate fell to 0.2 % of the burst).
    """

    direction: int
    unit: str
    plateau: float
    plateau_s: int
    level_after: float
    after_s: int
    drop_s: int
    ratio: float

    @property
    def summary(self) -> str:
        """E.g. ``read burst: 155k IOPS for 10 s, then 300 IOPS (0.19% of it) for the next 26 s``"""
        return (
            f"{DIRECTIONS[self.direction]} burst: {_rate(self.plateau, self.unit)} for "
            f"{self.plateau_s} s, then {_rate(self.level_after, self.unit)} "
            f"({self.ratio:.2%} of it) for the next {self.after_s} s"
        )


@dataclass(frozen=True)
class BurstCheck:
    """The verdict on one direction's series: the burst, or why there is none."""

    burst: Burst | None
    reason: str


def _rate(value: float, unit: str) -> str:
    return f"{format_count(value)} IOPS" if unit == "IOPS" else f"{format_bytes(value)}/s"


def _deviations(values: Sequence[float]) -> list[float]:
    """``[k]``: the sum of ``|v - median(values[:k])|``, for every k, in O(n log n) (two heaps)."""
    low: list[float] = []  # the smaller half, negated (a max-heap); holds the odd one out
    high: list[float] = []
    low_sum = high_sum = 0.0
    out = [0.0]
    for value in values:
        moved = -heapq.heappushpop(low, -value)  # the larger of the value and low's top
        low_sum += value - moved
        heapq.heappush(high, moved)
        high_sum += moved
        if len(high) > len(low):
            moved = heapq.heappop(high)
            high_sum -= moved
            heapq.heappush(low, -moved)
            low_sum += moved
        mid = -low[0] if len(low) > len(high) else (high[0] - low[0]) / 2
        out.append(high_sum - low_sum + mid * (len(low) - len(high)))
    return out


def _int(field: str, line: str, number: int) -> int:
    try:
        return int(field, 16) if field.lower().startswith("0x") else int(field)
    except ValueError:
        raise ValueError(f"line {number}: {field!r} is not an integer: {line!r}") from None


def parse_fio_log(text: str) -> list[LogPoint]:
    """Parse the text of a fio IOPS, bandwidth or latency log; blank lines are skipped.

    Raises:
        ValueError: a row without 4-6 columns, a number that is not one, a negative time or
            value, or a direction other than 0, 1 or 2 (naming the line).
    """
    points: list[LogPoint] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split(",")]
        if not 4 <= len(fields) <= 6:
            raise ValueError(f"line {number}: {len(fields)} columns, fio writes 4-6: {line!r}")
        time_ms, direction, block_size = (_int(fields[i], line, number) for i in (0, 2, 3))
        for extra in fields[4:]:
            _int(extra, line, number)
        try:
            value = float(fields[1])
        except ValueError:
            raise ValueError(f"line {number}: {fields[1]!r} is not a number: {line!r}") from None
        if time_ms < 0 or not math.isfinite(value) or value < 0:
            raise ValueError(f"line {number}: negative or non-finite number: {line!r}")
        if direction not in DIRECTIONS:
            raise ValueError(f"line {number}: direction {direction} is not 0, 1 or 2: {line!r}")
        points.append(LogPoint(time_ms, value, direction, block_size))
    return points


def parse_log_name(name: str) -> LogName | None:
    """Split a fio log file name (``<prefix>_<kind>[.<job>].log``); ``None`` if it is not one."""
    match = _NAME.match(name)
    if not match:
        return None
    job = match.group("job")
    return LogName(match.group("prefix"), match.group("kind"), int(job) if job else None)


def per_second(points: Iterable[LogPoint], direction: int) -> list[tuple[int, float]]:
    """One direction's ``(second, value)`` pairs, ``second`` being the window's end rounded.

    Windows shorter than a second that fall in the same second are averaged (each is a rate).
    Seconds fio wrote no row for are left out, not made up.

    Raises:
        ValueError: a per-I/O log (block size not 0): it needs ``log_avg_msec`` windows.
    """
    buckets: dict[int, list[float]] = {}
    for point in points:
        if point.direction != direction:
            continue
        if point.block_size:
            raise ValueError(
                f"a per-I/O log (block size {point.block_size} at {point.time_ms} ms): "
                "run fio with log_avg_msec=1000 for per-second values"
            )
        buckets.setdefault(round(point.time_ms / 1000), []).append(point.value)
    return [(second, sum(vs) / len(vs)) for second, vs in sorted(buckets.items())]


def sum_series(*series: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Add up several jobs' series second by second (``numjobs`` writes one log per job)."""
    total: dict[int, float] = {}
    for one in series:
        for second, value in one:
            total[second] = total.get(second, 0.0) + value
    return sorted(total.items())


def check_burst(
    series: Sequence[tuple[int, float]], *, direction: int = 0, kind: LogKind = "iops"
) -> BurstCheck:
    """Look for a plateau and a sustained drop in one direction's per-second series."""
    scale, unit = (1.0, "IOPS") if kind == "iops" else (1024.0, "bytes/s")
    judged = [(second, value * scale) for second, value in series if second > RAMP_S]
    needed = MIN_PLATEAU_S + MIN_AFTER_S
    if len(judged) < needed:
        return BurstCheck(
            None,
            f"too short to tell: {len(judged)} s of log after the first {RAMP_S} s, "
            f"a burst needs {MIN_PLATEAU_S} s of plateau and {MIN_AFTER_S} s after the drop",
        )
    values = [value for _, value in judged]
    # The split that best explains the series as two levels (least absolute deviations).
    head, tail = _deviations(values), _deviations(values[::-1])[::-1]
    splits = range(MIN_PLATEAU_S, len(values) - MIN_AFTER_S + 1)
    split = min(splits, key=lambda k: head[k] + tail[k])
    before, after = values[:split], values[split:]
    plateau, level_after = median(before), median(after)
    if plateau <= 0 or level_after > MAX_AFTER_FRACTION * plateau:
        share = level_after / plateau if plateau > 0 else 1.0
        return BurstCheck(
            None,
            f"no drop: the best split leaves {share:.0%} of the level before it, "
            f"a burst ends at {MAX_AFTER_FRACTION:.0%} or less",
        )
    cut = (plateau + level_after) / 2
    high = sum(v > cut for v in before)
    low_at = [i for i, v in enumerate(after) if v < cut]
    if high < SUSTAINED_FRACTION * len(before) or len(low_at) < max(
        MIN_AFTER_S, SUSTAINED_FRACTION * len(after)
    ):
        return BurstCheck(
            None,
            f"not sustained: {high} of {len(before)} s above and {len(low_at)} of "
            f"{len(after)} s below the midpoint, needs {SUSTAINED_FRACTION:.0%} and "
            f"{MIN_AFTER_S} s",
        )
    first_low = judged[split + low_at[0]][0]  # the end of the first low window
    drop_s = first_low - 1
    burst = Burst(
        direction=direction,
        unit=unit,
        plateau=plateau,
        plateau_s=drop_s,
        level_after=level_after,
        after_s=judged[-1][0] - drop_s,
        drop_s=drop_s,
        ratio=level_after / plateau,
    )
    return BurstCheck(burst, burst.summary)


def detect_burst(
    points: Sequence[LogPoint], *, kind: LogKind = "iops", direction: int | None = None
) -> Burst | None:
    """The burst in ``direction`` (or in the first direction that has one), else ``None``."""
    wanted = [direction] if direction is not None else sorted({p.direction for p in points})
    for one in wanted:
        found = check_burst(per_second(points, one), direction=one, kind=kind).burst
        if found is not None:
            return found
    return None
