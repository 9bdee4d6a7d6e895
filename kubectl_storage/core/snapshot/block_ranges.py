"""`snapshot check --volume-mode Block`: the check on a raw block volume, with byte ranges of the
device where the filesystem check has files.

Before the snapshot the writer fills known ranges with random bytes (unaligned ones included)
and fsyncs the device; after it, it overwrites 4 KiB inside one range, zeroes another (a raw
device's "delete") and fills one that was zeros at the snapshot (its "add"). The restored device
must hold every range as it was at the snapshot. Ranges are named like files (``range@1MiB``),
so the comparison and the report are the filesystem check's own.

Pure: the ranges, the shell scripts for the pods (GNU dd with byte offsets), the plan checks.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kubectl_storage.core.k8s.quantities import format_bytes

#: Where the pods see the device.
BLOCK_DEVICE = "/dev/xvda"

KIB = 1024
MIB = 1024 * KIB


@dataclass(frozen=True)
class KnownRange:
    """A byte range of the device the check writes and reads back."""

    name: str
    offset: int
    length: int


#: The first block (where filesystems keep their superblock), 1 MiB at 1 MiB, an unaligned
#: range, and 16 MiB at 16 MiB.
BLOCK_RANGES = (
    KnownRange("range@0", 0, 4 * KIB),
    KnownRange("range@1MiB", MIB, MIB),
    KnownRange("range@8MiB+12345", 8 * MIB + 12345, 12345),
    KnownRange("range@16MiB", 16 * MIB, 16 * MIB),
)
#: Zeros at the snapshot, random bytes after it: the restore must still hold zeros.
ADDED_RANGE = KnownRange("range@40MiB", 40 * MIB, 64 * KIB)
#: Random bytes before the check's earlier snapshot (core/snapshot/earlier.py), then left alone.
EARLIER_RANGE = KnownRange("earlier@48MiB", 48 * MIB, 4 * KIB)
#: After the snapshot: 4 KiB overwritten at 40 KiB into this range, and that range zeroed.
MODIFIED_RANGE = "range@1MiB"
MODIFIED_AT = 40 * KIB
ZEROED_RANGE = "range@0"
#: The device must reach past the last range, with room.
BLOCK_MIN_BYTES = 64 * MIB

RANGE_SIZES = {r.name: r.length for r in (*BLOCK_RANGES, ADDED_RANGE)}


def _fill(device: str, offset: int, length: int, source: str = "/dev/urandom") -> str:
    q = shlex.quote
    return (
        f"head -c {length} {source} | dd of={q(device)} bs=1M iflag=fullblock "
        f"oflag=seek_bytes seek={offset} conv=notrunc status=none"
    )


def fill_range(device: str, known: KnownRange) -> str:
    """The shell line that fills ``known`` with random bytes."""
    return _fill(device, known.offset, known.length)


def _checksums(device: str) -> list[str]:
    q = shlex.quote
    lines = []
    for known in (*BLOCK_RANGES, ADDED_RANGE, EARLIER_RANGE):
        lines.append(
            f"printf '%s  %s\\n' \"$(dd if={q(device)} bs=1M iflag=skip_bytes,count_bytes "
            f'skip={known.offset} count={known.length} status=none | sha256sum | cut -c1-64)" '
            f"{q(known.name)}"
        )
    return lines


def block_write_script(device: str = BLOCK_DEVICE) -> str:
    """Fill the known ranges, zero the one added later, flush the device; print checksums."""
    lines = ["set -eu"]
    lines += [_fill(device, r.offset, r.length) for r in BLOCK_RANGES]
    lines.append(_fill(device, ADDED_RANGE.offset, ADDED_RANGE.length, "/dev/zero"))
    lines.append(f"sync {shlex.quote(device)}")  # fsync(2) of the device
    lines += _checksums(device)
    return "\n".join(lines) + "\n"


def block_change_script(device: str = BLOCK_DEVICE) -> str:
    """After the snapshot: overwrite 4 KiB in one range, zero another, fill the added one."""
    modified = next(r for r in BLOCK_RANGES if r.name == MODIFIED_RANGE)
    zeroed = next(r for r in BLOCK_RANGES if r.name == ZEROED_RANGE)
    lines = [
        "set -eu",
        _fill(device, modified.offset + MODIFIED_AT, 4 * KIB),
        _fill(device, zeroed.offset, zeroed.length, "/dev/zero"),
        _fill(device, ADDED_RANGE.offset, ADDED_RANGE.length),
        f"sync {shlex.quote(device)}",
        *_checksums(device),
    ]
    return "\n".join(lines) + "\n"


def block_checksum_script(device: str = BLOCK_DEVICE) -> str:
    """Print the checksums of the known ranges of ``device``."""
    return "\n".join(["set -eu", *_checksums(device)]) + "\n"


def block_size_problem(size_bytes: int) -> str | None:
    """Why a device of ``size_bytes`` is too small for the ranges, or None."""
    if size_bytes < BLOCK_MIN_BYTES:
        return (
            f"the block check writes ranges up to {format_bytes(ADDED_RANGE.offset)} into the "
            f"device and needs one of at least {format_bytes(BLOCK_MIN_BYTES)}"
        )
    return None


def block_plan_problems(at_snapshot: dict[str, str], after_change: dict[str, str]) -> list[str]:
    """Why the block check itself is void: ranges not read, or the later change not made."""
    problems = []
    missing = [r.name for r in (*BLOCK_RANGES, ADDED_RANGE) if r.name not in at_snapshot]
    if missing:
        problems.append("the writer pod did not read back " + ", ".join(missing))
    for name in (MODIFIED_RANGE, ZEROED_RANGE, ADDED_RANGE.name):
        if name in at_snapshot and after_change.get(name) in (None, at_snapshot[name]):
            problems.append(f"the change after the snapshot did not change {name}")
    return problems


def describe_block_change() -> list[str]:
    """The change made after the snapshot, in words."""
    return [
        f"overwrote 4KiB at +{format_bytes(MODIFIED_AT)} in {MODIFIED_RANGE}",
        f"zeroed {ZEROED_RANGE}",
        f"filled {ADDED_RANGE.name} ({format_bytes(ADDED_RANGE.length)}, zeros at the snapshot)",
    ]
