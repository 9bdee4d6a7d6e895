"""The earlier snapshot of `snapshot check`: a restore must not return an older snapshot.

Before it writes the known files (or ranges), the check marks the source with random bytes and
takes a first VolumeSnapshot of it. A driver that restores the volume's previous snapshot
instead of the one asked for (the test driver's ``stale`` mode; in the wild, a mixed-up snapshot
handle or a restore served from a cache keyed by volume) then hands back exactly that first
state: the marker, and nothing written after it. With one snapshot per run that driver passed,
since the only snapshot was also the "previous" one.

Pure: the marker scripts and the judgement; the run takes the snapshot (operations/snapshot).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.snapshot.block_ranges import (
    BLOCK_DEVICE,
    EARLIER_RANGE,
    block_checksum_script,
    fill_range,
)
from kubectl_storage.core.snapshot.check_plan import CHECKSUM_SCRIPT, SOURCE_MOUNT

#: The file the check writes before its earlier snapshot, and never changes.
EARLIER_MARKER = "earlier-snapshot-marker.bin"
EARLIER_MARKER_BYTES = 4096
MARKERS = frozenset({EARLIER_MARKER, EARLIER_RANGE.name})


def earlier_script(root: str = SOURCE_MOUNT) -> str:
    """Write the marker file, fsync it and its directory; print every file's checksum."""
    q = shlex.quote(EARLIER_MARKER)
    return (
        "\n".join(
            [
                "set -eu",
                f"cd {shlex.quote(root)}",
                f"head -c {EARLIER_MARKER_BYTES} /dev/urandom > {q}",
                f"sync {q} .",
                CHECKSUM_SCRIPT,
            ]
        )
        + "\n"
    )


def block_earlier_script(device: str = BLOCK_DEVICE) -> str:
    """Fill the marker range, fsync the device; print the checksums of every known range."""
    head = ["set -eu", fill_range(device, EARLIER_RANGE), f"sync {shlex.quote(device)}"]
    return "\n".join(head) + "\n" + block_checksum_script(device)


def without_markers(sums: dict[str, str]) -> dict[str, str]:
    """Checksums without the marker: the file comparison judges what the check wrote later."""
    return {path: digest for path, digest in sums.items() if path not in MARKERS}


@dataclass(frozen=True)
class EarlierSnapshot:
    """The earlier snapshot and whether the restore handed it back."""

    name: str
    snapshot: str  # the one the restore was asked for
    marked: bool  # the marker was on the source when it was cut
    restore_is_earlier: bool
    what: str = "files"

    @property
    def setup_problems(self) -> list[str]:
        """Why this part proves nothing: the marker was never written."""
        if self.marked:
            return []
        return [f"the writer pod did not write the marker before the earlier snapshot {self.name}"]

    @property
    def problems(self) -> list[str]:
        """Why the check fails: the restore is the earlier snapshot."""
        if not self.restore_is_earlier:
            return []
        return [
            f"the restore of {self.snapshot} holds the source as it was at the earlier snapshot "
            f"{self.name} (its marker, none of the {self.what} written after it): the driver "
            "restored an older snapshot of the volume than the one asked for"
        ]

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "name": self.name,
            "marked": self.marked,
            "restoreIsEarlier": self.restore_is_earlier,
        }


def judge_earlier(
    name: str,
    snapshot: str,
    at_earlier: dict[str, str],
    at_snapshot: dict[str, str],
    restored: dict[str, str],
    *,
    what: str = "files",
) -> EarlierSnapshot:
    """Does the restore hold exactly what the source held at the earlier snapshot?

    Only a marked earlier state counts (an empty or zeroed restore is not "the earlier
    snapshot", it is missing data, which the file comparison reports), and only when the
    source changed between the two snapshots."""
    marked = bool(MARKERS & at_earlier.keys())
    paths = at_earlier.keys() | at_snapshot.keys()
    same = all(restored.get(path) == at_earlier.get(path) for path in paths)
    return EarlierSnapshot(
        name,
        snapshot,
        marked=marked,
        restore_is_earlier=marked and at_earlier != at_snapshot and same,
        what=what,
    )
