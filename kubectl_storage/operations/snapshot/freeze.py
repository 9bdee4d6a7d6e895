"""`snapshot check --freeze` in the cluster: start the freezer next to the writer, freeze, and
thaw as soon as the snapshot is cut, or when the run ends in any way before that (the scope's
undo runs before anything is deleted; a pod deleted while frozen would leave the volume frozen).
What the freeze means for the verdict is pure (core/snapshot/freeze.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.core.snapshot.freeze import (
    FREEZE_WATCHDOG_S,
    FreezeResult,
    freeze_command,
    freeze_failure,
    thaw_command,
)
from kubectl_storage.errors import ClusterError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.kube.waits import wait_for
from kubectl_storage.operations.snapshot.common import Step, exec_tool, wait_pod

log = logging.getLogger(__name__)


@dataclass
class Freeze:
    """A freeze in progress: thaw() ends it once (later calls do nothing)."""

    api: KubeApi
    pod: str
    namespace: str
    timeout_s: float
    frozen_ns: int
    undo: Callable[[], None]
    thawed_ns: int | None = None
    thawed_by: str | None = None
    cut_while_frozen: bool = False

    def thaw(self) -> None:
        """Thaw now, through the scope's registered undo (so it is not done twice)."""
        self.undo()

    def _thaw(self) -> None:
        if self.thawed_ns is not None:
            return
        outcome = exec_tool(self.api, self.pod, thaw_command(), self.namespace, self.timeout_s)
        self.thawed_ns = time.time_ns()
        said = outcome.stdout.strip()
        if outcome.exit_code != 0 or said not in ("thawed", "watchdog"):
            raise ClusterError(
                f"could not thaw the source filesystem in pod {self.pod} (exit "
                f"{outcome.exit_code}): {(outcome.stderr or outcome.stdout).strip()[:400]}",
                f"Its watchdog thaws it {FREEZE_WATCHDOG_S}s after the freeze.",
            )
        self.thawed_by = "run" if said == "thawed" else "watchdog"

    def result(self) -> FreezeResult:
        """What the freeze did (before the log is judged)."""
        return FreezeResult(
            frozen=True,
            frozen_ns=self.frozen_ns,
            thawed_ns=self.thawed_ns,
            thawed_by=self.thawed_by,
            cut_while_frozen=self.cut_while_frozen,
        )


def start_freeze(
    api: KubeApi,
    scope: RunScope,
    freezer: JsonDict,
    pvc: str,
    namespace: str,
    timeout_s: float,
    step: Step,
) -> Freeze | FreezeResult:
    """Create the freezer and freeze; a Freeze to thaw later, or why it could not freeze."""
    name = str(dig(freezer, "metadata", "name"))
    scope.create(kinds.POD, freezer, namespace)
    wait_pod(api, name, pvc, namespace, "freezer", timeout_s)
    outcome = exec_tool(api, name, freeze_command(), namespace, timeout_s)
    if outcome.exit_code != 0 or outcome.stdout.strip() != "frozen":
        why = freeze_failure(outcome.exit_code, outcome.stdout, outcome.stderr)
        step(f"not freezing: {why}")
        return FreezeResult(frozen=False, reason=why)
    frozen_ns = time.time_ns()
    holder: list[Freeze] = []
    undo = scope.defer(f"thaw the source filesystem (pod {name})", lambda: holder[0]._thaw())
    freeze = Freeze(api, name, namespace, timeout_s, frozen_ns, undo)
    holder.append(freeze)
    step(f"source filesystem frozen (the watchdog thaws it after {FREEZE_WATCHDOG_S}s)")
    return freeze


def thaw_once_cut(freeze: Freeze, snapshot: str, step: Step) -> None:
    """Wait until the snapshot is cut (it has a creationTime, or is readyToUse), then thaw.

    Not beyond the watchdog: a cut that takes longer is thawed anyway, and the result says the
    snapshot was not cut while frozen."""
    left = FREEZE_WATCHDOG_S - (time.time_ns() - freeze.frozen_ns) / 1e9 - 2
    try:
        wait_for(
            freeze.api,
            kinds.VOLUME_SNAPSHOT,
            snapshot,
            lambda s: bool(dig(s, "status", "creationTime") or dig(s, "status", "readyToUse")),
            namespace=freeze.namespace,
            timeout_s=max(1.0, left),
            what="cut (creationTime set)",
        )
        freeze.cut_while_frozen = True
    except WaitTimeoutError:
        log.warning("VolumeSnapshot %s was not cut within the freeze; thawing", snapshot)
    freeze.thaw()
    seconds = (int(freeze.thawed_ns or 0) - freeze.frozen_ns) / 1e9
    step(f"source filesystem thawed after {seconds:.1f}s ({freeze.thawed_by})")
