"""The pipeline stages `snapshot browse` and `snapshot cp` share: both restore the snapshot (or
a fresh one of a live PVC) into a temporary PVC and mount it read-only (restore.py), so what they
check and what they create is defined once, here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.pipeline import Command, Progress
from kubectl_storage.operations.snapshot.common import PodSettings, SnapshotSource
from kubectl_storage.operations.snapshot.restore import (
    RestoreInputs,
    RestorePlan,
    gather_restore,
    plan_restore,
    restore_offline,
    restore_requirements,
)


class RestoringRequest(Protocol):
    """What a command that mounts a restored snapshot was asked: the source and the pods."""

    @property
    def source(self) -> SnapshotSource:
        """The snapshot (or live PVC) to restore."""
        ...

    @property
    def pods(self) -> PodSettings:
        """Image, identity, placement and timeout of the pod that mounts it."""
        ...


RequestT = TypeVar("RequestT", bound=RestoringRequest)
ReportT = TypeVar("ReportT")


@dataclass(frozen=True)
class MountPlan(Generic[RequestT]):
    """A planned browse or cp: the request and the restore that serves it."""

    request: RequestT
    restore: RestorePlan

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.restore.run_id

    def manifests(self) -> list[JsonDict]:
        """Creation order (what --dry-run prints)."""
        return self.restore.manifests()


def restoring_command(
    label: str,
    validate: Callable[[RequestT], object],
    run: Callable[[KubeApi, MountPlan[RequestT], RunScope, Progress], ReportT],
) -> Command[RequestT, RestoreInputs, MountPlan[RequestT], ReportT]:
    """The stages of a command that restores a snapshot and mounts it read-only: requirements,
    gather and plan are the restore's, so browse and cp cannot drift apart in what they check
    or create; ``validate`` and ``run`` are the command's own."""
    return Command(
        rbac_name="snapshot",
        label=label,
        validate=validate,
        requirements=lambda request: restore_requirements(request.source, request.pods),
        # Restore class and size (and snapshot class with --pvc) all given.
        plan_offline=lambda request: restore_offline(request.source),
        gather=lambda api, request, facts: gather_restore(api, request.source, facts),
        plan=lambda request, facts, inputs, run_id: MountPlan(
            request,
            plan_restore(inputs, request.source, request.pods, label, facts=facts, run_id=run_id),
        ),
        run=run,
    )
