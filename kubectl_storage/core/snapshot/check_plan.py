"""The snapshot check's plan: the known files, the change after the snapshot, and the verdict.

Pure: the files of several sizes written before the snapshot, the change made after it, the
shell scripts that write and checksum them, and :func:`compare_restore`, which says whether a
restore holds exactly the snapshot-time content. Separate from the check's report
(:mod:`kubectl_storage.core.snapshot.check_report`), which only gathers the results.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.snapshot.log_writer import LOG_DIR

#: Where the check's writer pod mounts the source volume.
SOURCE_MOUNT = "/data"


@dataclass(frozen=True)
class KnownFile:
    """A file the check writes before the snapshot: random bytes of a known size."""

    path: str
    size_bytes: int


#: Several sizes: empty, under a block, one block, not block-aligned, 1 MiB, 16 MiB nested.
CHECK_FILES = (
    KnownFile("empty.bin", 0),
    KnownFile("tiny.txt", 100),
    KnownFile("block-4k.bin", 4096),
    KnownFile("odd-12345.bin", 12345),
    KnownFile("medium-1m.bin", 1024 * 1024),
    KnownFile("dir/nested/large-16m.bin", 16 * 1024 * 1024),
)
#: What changes after the snapshot: one file modified in place, one appended to, one deleted,
#: one added. The restore must show none of it.
MODIFIED_IN_PLACE = "medium-1m.bin"
APPENDED = "odd-12345.bin"
DELETED = "block-4k.bin"
ADDED = KnownFile("dir/added-after-snapshot.bin", 64 * 1024)
#: Smallest volume the check accepts: the files plus filesystem overhead, with room to spare.
CHECK_MIN_BYTES = 64 * 1024 * 1024


def check_files_bytes() -> int:
    """Bytes the check writes before the snapshot."""
    return sum(f.size_bytes for f in CHECK_FILES)


def check_size_problem(size_bytes: int) -> str | None:
    """Why a volume of ``size_bytes`` is too small for the check, or None."""
    if size_bytes < CHECK_MIN_BYTES:
        return (
            f"the check writes {format_bytes(check_files_bytes() + ADDED.size_bytes)} and needs "
            f"a volume of at least {format_bytes(CHECK_MIN_BYTES)}"
        )
    return None


# The --under-load log has its own check (under_load.py); the file checksums leave it out.
CHECKSUM_SCRIPT = (
    f"find . \\( -path ./lost+found -o -path ./{LOG_DIR} \\) -prune -o -type f -print0 "
    "| LC_ALL=C sort -z | xargs -0 -r sha256sum"
)


def _dirs_of(paths: list[str]) -> list[str]:
    dirs = {"."}
    for path in paths:
        parent = posixpath.dirname(path)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(dirs)


def write_script(root: str = SOURCE_MOUNT) -> str:
    """Write the known files with random content, fsync files and directories, print checksums."""
    paths = [f.path for f in CHECK_FILES]
    lines = ["set -eu", f"cd {shlex.quote(root)}"]
    for directory in _dirs_of(paths):
        if directory != ".":
            lines.append(f"mkdir -p {shlex.quote(directory)}")
    for known in CHECK_FILES:
        lines.append(f"head -c {known.size_bytes} /dev/urandom > {shlex.quote(known.path)}")
    # sync(1) with arguments fsyncs each one; directories too, so the new entries are durable.
    lines.append("sync " + " ".join(shlex.quote(p) for p in [*paths, *_dirs_of(paths)]))
    lines.append(CHECKSUM_SCRIPT)
    return "\n".join(lines) + "\n"


def change_script(root: str = SOURCE_MOUNT) -> str:
    """Change the source after the snapshot (modify in place, append, delete, add); checksums."""
    added_dir = posixpath.dirname(ADDED.path) or "."
    q = shlex.quote
    lines = [
        "set -eu",
        f"cd {q(root)}",
        # 4 KiB overwritten in place at 40 KiB: a snapshot sharing blocks would show it.
        f"dd if=/dev/urandom of={q(MODIFIED_IN_PLACE)} bs=4096 count=1 seek=10 "
        "conv=notrunc,fsync status=none",
        f"printf 'appended after the snapshot\\n' >> {q(APPENDED)}",
        f"rm -f {q(DELETED)}",
        f"mkdir -p {q(added_dir)}",
        f"head -c {ADDED.size_bytes} /dev/urandom > {q(ADDED.path)}",
        f"sync {q(MODIFIED_IN_PLACE)} {q(APPENDED)} {q(ADDED.path)} {q(added_dir)} .",
        CHECKSUM_SCRIPT,
    ]
    return "\n".join(lines) + "\n"


def checksum_script(root: str) -> str:
    """Print the checksums of every regular file under ``root``."""
    return f"set -eu\ncd {shlex.quote(root)}\n{CHECKSUM_SCRIPT}\n"


def parse_checksums(text: str) -> dict[str, str]:
    """``sha256sum`` output (``HASH  ./path``) as {path: hash}, paths without the ``./``."""
    sums: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        escaped = line.startswith("\\")
        if escaped:
            line = line[1:]
        digest, sep, path = line.partition("  ")
        if not sep:
            digest, sep, path = line.partition(" *")
        if not sep or len(digest) != 64:
            continue
        if escaped:
            path = path.replace("\\n", "\n").replace("\\\\", "\\")
        if path.startswith("./"):
            path = path[2:]
        sums[path] = digest.lower()
    return sums


class FileStatus(StrEnum):
    """What the restore holds for one path."""

    OK = "ok"
    ABSENT = "absent"  # created after the snapshot and rightly not in the restore
    MISSING = "missing"
    LATER_CONTENT = "later-content"  # the content written after the snapshot
    DIFFERS = "differs"
    LATER_FILE = "later-file"  # a file created after the snapshot
    UNEXPECTED = "unexpected"


_STATUS_TEXT = {
    FileStatus.MISSING: "is missing from the restore",
    FileStatus.LATER_CONTENT: "holds the content written after the snapshot",
    FileStatus.DIFFERS: "differs from the snapshot-time content",
    FileStatus.LATER_FILE: "was created after the snapshot but is in the restore",
    FileStatus.UNEXPECTED: "is in the restore but was never written",
}


@dataclass(frozen=True)
class FileVerdict:
    """One path: its checksum at snapshot time, after the change, and in the restore."""

    path: str
    status: FileStatus
    size_bytes: int | None
    snapshot_sha256: str | None
    restored_sha256: str | None
    changed_after_snapshot: bool

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "path": self.path,
            "status": str(self.status),
            "sizeBytes": self.size_bytes,
            "snapshotSha256": self.snapshot_sha256,
            "restoredSha256": self.restored_sha256,
            "changedAfterSnapshot": self.changed_after_snapshot,
        }

    @property
    def problem(self) -> str | None:
        """A sentence when the path is wrong in the restore."""
        if self.status in (FileStatus.OK, FileStatus.ABSENT):
            return None
        return f"{self.path} {_STATUS_TEXT[self.status]}"


def compare_restore(
    at_snapshot: dict[str, str],
    after_change: dict[str, str],
    restored: dict[str, str],
    sizes: Mapping[str, int] | None = None,
) -> tuple[FileVerdict, ...]:
    """Judge every path: the restore must equal ``at_snapshot`` and hold none of the change.

    ``sizes`` are the paths' sizes for the report (default: the filesystem check's files)."""
    if sizes is None:
        sizes = {f.path: f.size_bytes for f in (*CHECK_FILES, ADDED)}
    verdicts = []
    for path in sorted(set(at_snapshot) | set(restored) | set(after_change)):
        expected = at_snapshot.get(path)
        got = restored.get(path)
        later = after_change.get(path)
        changed = later != expected
        if expected is None and got is None:
            status = FileStatus.ABSENT
        elif expected is None:
            status = FileStatus.LATER_FILE if later is not None else FileStatus.UNEXPECTED
        elif got is None:
            status = FileStatus.MISSING
        elif got == expected:
            status = FileStatus.OK
        elif later is not None and got == later:
            status = FileStatus.LATER_CONTENT
        else:
            status = FileStatus.DIFFERS
        verdicts.append(FileVerdict(path, status, sizes.get(path), expected, got, changed))
    return tuple(verdicts)


def plan_problems(at_snapshot: dict[str, str], after_change: dict[str, str]) -> list[str]:
    """Why the check itself is void: files not written, or the later change not made."""
    problems = []
    missing = [f.path for f in CHECK_FILES if f.path not in at_snapshot]
    if missing:
        problems.append("the writer pod did not write " + ", ".join(missing))
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    for path in (MODIFIED_IN_PLACE, APPENDED):
        if path in at_snapshot and after_change.get(path) in (None, at_snapshot[path]):
            problems.append(f"the change after the snapshot did not modify {path}")
    if DELETED in after_change:
        problems.append(f"the change after the snapshot did not delete {DELETED}")
    if ADDED.path not in after_change:
        problems.append(f"the change after the snapshot did not add {ADDED.path}")
    if at_snapshot.get("empty.bin") not in (None, empty):
        problems.append("empty.bin was not empty when written")
    return problems


def describe_change() -> list[str]:
    """The change made after the snapshot, in words (the report keeps it)."""
    return [
        f"modified 4KiB in place in {MODIFIED_IN_PLACE}",
        f"appended a line to {APPENDED}",
        f"deleted {DELETED}",
        f"added {ADDED.path} ({format_bytes(ADDED.size_bytes)})",
    ]
