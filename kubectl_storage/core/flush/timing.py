"""What a flush measured, as far as timing can tell: one classification used by the fio
command's ``fio.cache-sync-latency`` guard and by validate-persistence's fsync probe.

Three classes (:class:`FlushClass`), decided in :func:`classify_flush` and nowhere else:

``memory-backed``
    The writes themselves complete at memory speed, and so does the flush: nothing left the
    host's memory (tmpfs, ``emptyDir`` with ``medium: Memory``, a flush that does nothing).
    A power loss loses what was acknowledged.
``acknowledged without a flush``
    Direct writes take device time, but fdatasync returns at once. That is how a
    power-loss-protected cache looks (enterprise NVMe with capacitors, an NVRAM-backed array, a
    block device that declares no volatile write cache), and also how a cache that lies looks
    (a hypervisor disk with cache=unsafe, a device or library that drops flushes). Timing
    cannot tell them apart; only a power-loss test can, so the class says "unverified" and
    is not a warning.
``flushed``
    The flush itself takes device time: it reached a durable medium as far as timing can
    tell. Whether that medium keeps the data across a power loss was not tested.

Which writes count: with direct I/O (``direct=1``) a write's completion latency is the
device's, so "the writes complete at memory speed" is read from it. With buffered writes the
write only copies into the page cache (memory speed on any storage), and it is the fdatasync
that writes the data out; a buffered fdatasync below the floor therefore had no time to write
the data anywhere, and is memory-backed. A buffered job cannot see a flush apart from the
write-out, so it never yields "acknowledged without a flush": it needs a direct job for that.

Pure module, standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: Below this median (µs) an I/O cannot have left the host's memory. Where the number comes
#: from: this project's heuristic, carried over from the fio guards and the probe (issue 15),
#: not a vendor figure. Its basis: a small write to the fastest flash takes about 10 µs seen
#: from an application and a network round trip inside a data centre tens of µs over TCP, a
#: few over RDMA (both unverified here: no such device or fabric on this machine). Measured on
#: this machine (fio-3.33, kernel 6.18; tests/fixtures/fio/SOURCES.md and
#: tests/fixtures/validate_persistence/SOURCES.md, the probe's own jobs, load below 1):
#: memory: direct 4k writes 0.84 µs and their fdatasync 0.22 µs on tmpfs, buffered fdatasync
#: 0.09-0.25 µs; devices: direct 4k writes 41.7-52.5 µs on ext4 on a loop device (9.3 µs on the
#: virtio disk itself), fdatasync that flushes 183 µs (loop, write back), buffered fdatasync
#: 68 µs (virtio disk) to 518 µs; and the flush a write-through device does not need: 1.05 µs
#: (issue 26 saw 0.96 µs). The tightest margins are tmpfs's direct writes (6 times under the
#: floor), the unneeded flush (4.8 times under) and the virtio disk's direct writes (1.9 times
#: over); a device or fabric faster than 5 µs end to end would read as memory (unverified).
FLUSH_FLOOR_US = 5.0


class FlushClass(StrEnum):
    """What a flush measured (the JSON value)."""

    MEMORY = "memory-backed"
    NO_FLUSH = "acknowledged-without-flush"
    FLUSHED = "flushed"


@dataclass(frozen=True)
class FlushReading:
    """A classification and the figures it rests on."""

    kind: FlushClass
    #: Median flush (fsync/fdatasync) latency, µs.
    sync_us: float
    #: Median write completion latency, µs (None when not measured).
    write_us: float | None
    #: Whether the writes' latency includes the device's (direct I/O, O_SYNC/O_DSYNC writes) or
    #: only a copy into the page cache (buffered).
    writes_direct: bool

    @property
    def label(self) -> str:
        """A few words for a summary line."""
        return LABELS[self.kind]

    @property
    def warns(self) -> bool:
        """Whether a power loss would lose acknowledged data for sure (memory-backed): the only
        class that undercuts a pass. "Acknowledged without a flush" is unverified, not a
        warning: a power-loss-protected device looks the same."""
        return self.kind is FlushClass.MEMORY

    def explanation(self) -> str:
        """One sentence with the numbers: what was measured and what it means."""
        sync = f"{self.sync_us:g} µs"
        if self.kind is FlushClass.MEMORY:
            if self.writes_direct and self.write_us is not None:
                seen = (
                    f"direct writes complete in {self.write_us:g} µs and fdatasync returns in "
                    f"{sync} (median), both below {FLUSH_FLOOR_US:g} µs"
                )
            else:
                seen = (
                    f"fdatasync returns in {sync} (median) although it had to write out the "
                    f"buffered data, below the {FLUSH_FLOOR_US:g} µs no device or network round "
                    "trip fits in"
                )
            return (
                f"memory-backed: {seen}: the data stayed in memory (memory-backed storage, or a "
                "flush that does nothing), so a power loss loses what was acknowledged"
            )
        if self.kind is FlushClass.NO_FLUSH:
            return (
                f"acknowledged without a flush: direct writes take device time "
                f"({_us(self.write_us)} median) but fdatasync returns in {sync}: a "
                "power-loss-protected cache, or a cache that lies; only a power-loss test (a "
                "node crash or power cut) can tell, and none was run (unverified)"
            )
        return (
            f"flushed: fdatasync takes {sync} (median), device time: the flush reached a "
            "durable medium as far as timing can tell (a power loss was not tested)"
        )


LABELS = {
    FlushClass.MEMORY: "memory-backed",
    FlushClass.NO_FLUSH: "acknowledged without a flush (unverified)",
    FlushClass.FLUSHED: "flushed to a durable medium as far as timing can tell",
}


def _us(value: float | None) -> str:
    return "not measured" if value is None else f"{value:g} µs"


def classify_flush(
    *, sync_us: float | None, write_us: float | None, writes_direct: bool
) -> FlushReading | None:
    """Classify one job's median flush and write latencies (µs); None without a flush figure.

    - the flush takes at least :data:`FLUSH_FLOOR_US`: flushed;
    - it is faster, and the writes are buffered: memory-backed (the fdatasync had the
      write-out to do and no time to do it);
    - it is faster, the writes are direct and complete below the floor too: memory-backed;
    - it is faster, the writes are direct and take device time (or their time was not
      measured): acknowledged without a flush.
    """
    if sync_us is None:
        return None
    if sync_us >= FLUSH_FLOOR_US:
        kind = FlushClass.FLUSHED
    elif not writes_direct or (write_us is not None and write_us < FLUSH_FLOOR_US):
        # Buffered: the fdatasync had the write-out to do. Direct: the writes are memory-fast.
        kind = FlushClass.MEMORY
    else:
        kind = FlushClass.NO_FLUSH
    return FlushReading(kind, sync_us, write_us, writes_direct)
