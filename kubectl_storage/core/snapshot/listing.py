"""Listings of a mounted snapshot: the find(1) command that lists it, and its parsed entries.

`snapshot browse --ls PATH` and `--tree` with -o json|yaml run :func:`listing_command` in the
pod that mounts the restored snapshot and turn its output into a :class:`SnapshotListing`.
Pure: text in, data out.
"""

from __future__ import annotations

import shlex
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import PASSED

#: find(1) -printf format: one NUL-terminated field each, eight per entry.
LISTING_FORMAT = r"%y\0%m\0%s\0%T@\0%u\0%g\0%l\0%P\0"
_LISTING_FIELDS = 8


@dataclass(frozen=True)
class ListingEntry:
    """One file or directory inside a snapshot."""

    path: str
    type: str  # file, directory, symlink, other
    mode: int  # permission bits
    size_bytes: int
    modified: float  # seconds since the epoch
    user: str
    group: str
    link_target: str | None = None

    @property
    def mode_text(self) -> str:
        """``-rw-r--r--`` as ls prints it."""
        kind = {"file": stat.S_IFREG, "directory": stat.S_IFDIR, "symlink": stat.S_IFLNK}
        return stat.filemode(kind.get(self.type, stat.S_IFIFO) | self.mode)

    @property
    def modified_text(self) -> str:
        """The modification time as an ISO 8601 UTC timestamp."""
        return _epoch_iso(self.modified)

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "path": self.path,
            "type": self.type,
            "mode": f"{self.mode:04o}",
            "sizeBytes": self.size_bytes,
            "modified": self.modified_text,
            "user": self.user,
            "group": self.group,
            "linkTarget": self.link_target,
        }


def _epoch_iso(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).isoformat().replace("+00:00", "Z")


_TYPES = {"f": "file", "d": "directory", "l": "symlink"}


def listing_command(path_in_pod: str, *, recursive: bool) -> list[str]:
    """The command that lists ``path_in_pod`` (a directory's entries, or the file itself)."""
    quoted = shlex.quote(path_in_pod)
    fmt = shlex.quote(LISTING_FORMAT)
    depth = "-mindepth 1" if recursive else "-mindepth 1 -maxdepth 1"
    file_fmt = shlex.quote(LISTING_FORMAT.replace("%P", "%f"))
    script = (
        f"if [ -d {quoted} ] && [ ! -L {quoted} ]; then find {quoted} {depth} -printf {fmt}; "
        f"elif [ -e {quoted} ] || [ -L {quoted} ]; then find {quoted} -maxdepth 0 -printf "
        f"{file_fmt}; else echo 'no such file or directory' >&2; exit 3; fi"
    )
    return ["sh", "-c", script]


def parse_listing(text: str) -> tuple[ListingEntry, ...]:
    """Parse the output of :func:`listing_command`, sorted by path."""
    fields = text.split("\0")
    entries = []
    for i in range(0, len(fields) - _LISTING_FIELDS + 1, _LISTING_FIELDS):
        kind, mode, size, mtime, user, group, link, path = fields[i : i + _LISTING_FIELDS]
        kind = kind.strip()
        if not kind:
            continue
        entries.append(
            ListingEntry(
                path=path,
                type=_TYPES.get(kind, "other"),
                mode=int(mode, 8) if mode else 0,
                size_bytes=int(size) if size.isdigit() else 0,
                modified=float(mtime) if mtime else 0.0,
                user=user,
                group=group,
                link_target=link or None,
            )
        )
    entries.sort(key=lambda e: e.path)
    return tuple(entries)


@dataclass(frozen=True)
class SnapshotListing:
    """The SnapshotListing report (`browse --ls`, and `--tree` with -o json|yaml).

    Attributes:
        snapshot: what was listed (a snapshot's name, or ``PVC <name>``).
        path: the listed path, from the snapshot's root (``/`` for all of it).
        recursive: whether subdirectories were listed too (``--tree``).
        entries: the entries, sorted by path.
    """

    snapshot: str
    path: str
    recursive: bool
    entries: tuple[ListingEntry, ...]

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return report_envelope(
            "SnapshotListing",
            PASSED,  # it lists what is there; nothing to judge
            {
                "snapshot": self.snapshot,
                "path": self.path,
                "recursive": self.recursive,
                "entries": [e.to_dict() for e in self.entries],
            },
        )


def build_listing_report(
    snapshot: str, path: str, entries: tuple[ListingEntry, ...], *, recursive: bool
) -> SnapshotListing:
    """The listing of ``path`` (as given by the user) in ``snapshot``."""
    return SnapshotListing(snapshot, "/" + path.strip("/"), recursive, entries)
