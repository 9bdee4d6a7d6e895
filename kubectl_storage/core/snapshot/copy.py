"""The SnapshotCopy report: what `kubectl storage snapshot cp` copied out of a snapshot."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import PASSED


@dataclass(frozen=True)
class SnapshotCopy:
    """What one `snapshot cp` wrote locally.

    Attributes:
        snapshot: the VolumeSnapshot copied from.
        namespace: its namespace.
        path: the copied path, from the snapshot's root.
        destination: the local file or directory written.
        files: regular files written.
        directories: directories written (the copied root not counted).
        bytes: bytes of the regular files.
        skipped: entries not written, each with the reason (devices, links leaving the copy).
        run_id: the run's id (its temporary objects carried it).
    """

    snapshot: str
    namespace: str
    path: str
    destination: str
    files: int
    directories: int
    bytes: int
    skipped: tuple[str, ...]
    run_id: str

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return report_envelope(
            "SnapshotCopy",
            PASSED,  # it copied what was asked; a failure to copy is an error, not a verdict
            {
                "snapshot": self.snapshot,
                "namespace": self.namespace,
                "path": self.path,
                "destination": self.destination,
                "files": self.files,
                "directories": self.directories,
                "bytes": self.bytes,
                "skipped": list(self.skipped),
                "runId": self.run_id,
            },
        )
