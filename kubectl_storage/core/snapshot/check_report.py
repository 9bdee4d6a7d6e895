"""The SnapshotCheckReport of `snapshot check`: the steps' timings and every part's result.

Separate from the check's plan (:mod:`kubectl_storage.core.snapshot.check_plan`): this holds
what the check found (files, under-load log, restore node, freeze) and judges the outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import Outcome, Verdict, judge
from kubectl_storage.core.snapshot.check_plan import FileVerdict
from kubectl_storage.core.snapshot.earlier import EarlierSnapshot
from kubectl_storage.core.snapshot.freeze import FreezeResult
from kubectl_storage.core.snapshot.restore_node import RestorePlacement
from kubectl_storage.core.snapshot.under_load import UnderLoadResult


@dataclass(frozen=True)
class StepTiming:
    """How long one step of the check took."""

    name: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {"name": self.name, "seconds": round(self.seconds, 2)}


@dataclass(frozen=True)
class SnapshotCheckReport:
    """The result of `snapshot check`: did a restore hold exactly the snapshot-time content?"""

    storage_class: str
    snapshot_class: str
    driver: str
    namespace: str
    size: str
    snapshot: str
    restore_size: str
    restore_storage_class: str
    run_id: str
    steps: tuple[StepTiming, ...]
    files: tuple[FileVerdict, ...]
    changes: tuple[str, ...]
    setup_problems: tuple[str, ...] = field(default=())
    #: ``--under-load``: the log written while the snapshot was cut, as restored.
    under_load: UnderLoadResult | None = None
    #: ``--restore-node``: where the source and the restore were read.
    restore_placement: RestorePlacement | None = None
    #: ``--freeze``: what the freeze did around the cut.
    freeze: FreezeResult | None = None
    #: ``Block``: the "files" are byte ranges of the raw device (core/snapshot/block_ranges.py).
    volume_mode: str = "Filesystem"
    #: The snapshot cut before the known content was written: the restore must not be it.
    earlier: EarlierSnapshot | None = None

    @property
    def problems(self) -> list[str]:
        """Every reason the check failed."""
        found = list(self.setup_problems)
        found += self.earlier.setup_problems + self.earlier.problems if self.earlier else []
        found += self.restore_placement.problems if self.restore_placement else []
        found += self.freeze.problems if self.freeze else []
        found += [f.problem for f in self.files if f.problem]
        return found + (self.under_load.problems if self.under_load else [])

    @property
    def outcome(self) -> Outcome:
        """fail when the restore did not hold the snapshot-time content (``file:<path>``), the
        restore node or the freeze went wrong (``restore-node``, ``freeze``), the restore was the
        earlier snapshot (``earlier-snapshot``), or the log written
        under load was not a clean cut (``under-load``); inconclusive when the writer's own plan
        went wrong (``setup``), since then the restore was compared with nothing certain, or the
        log writer was not alive on both sides of the cut (``under-load``); warn when the cut
        passed but its creationTime was stamped after it (``under-load``)."""
        fail = (
            ["restore-node"] if self.restore_placement and self.restore_placement.problems else []
        )
        fail += ["freeze"] if self.freeze and self.freeze.problems else []
        fail += ["earlier-snapshot"] if self.earlier and self.earlier.problems else []
        fail += [f"file:{f.path}" for f in self.files if f.problem]
        fail += ["under-load"] if self.under_load and self.under_load.problems else []
        load = self.under_load.outcome.verdict if self.under_load else None
        setup = self.setup_problems or (self.earlier and self.earlier.setup_problems)
        inconclusive = ["setup"] if setup else []
        inconclusive += ["under-load"] if load is Verdict.INCONCLUSIVE else []
        return judge(
            fail=fail,
            inconclusive=inconclusive,
            warn=["under-load"] if load is Verdict.WARN else [],
        )

    @property
    def total_seconds(self) -> float:
        """Sum of the steps."""
        return sum(s.seconds for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        """The report with apiVersion and kind."""
        return report_envelope(
            "SnapshotCheckReport",
            self.outcome,
            {
                "storageClass": self.storage_class,
                "snapshotClass": self.snapshot_class,
                "driver": self.driver,
                "namespace": self.namespace,
                "size": self.size,
                "volumeMode": self.volume_mode,
                "snapshot": self.snapshot,
                "restoreSize": self.restore_size,
                "restoreStorageClass": self.restore_storage_class,
                "runId": self.run_id,
                "totalSeconds": round(self.total_seconds, 2),
                "steps": [s.to_dict() for s in self.steps],
                "changesAfterSnapshot": list(self.changes),
                "files": [f.to_dict() for f in self.files],
                **({"underLoad": self.under_load.to_dict()} if self.under_load else {}),
                **(
                    {"restorePlacement": self.restore_placement.to_dict()}
                    if self.restore_placement
                    else {}
                ),
                **({"freeze": self.freeze.to_dict()} if self.freeze else {}),
                **({"earlierSnapshot": self.earlier.to_dict()} if self.earlier else {}),
                "problems": self.problems,
            },
        )
