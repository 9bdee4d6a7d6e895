"""The pipeline stages `snapshot browse` and `snapshot cp` share: both restore the snapshot (or
a fresh one of a live PVC) into a temporary PVC and mount it read-only (restore.py), so what they
check and what they create is defined once, here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from kubectl_storage.core.k8s.manifests import Manifest
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.pipeline import Progress
from kubectl_storage.operations.preflight import ClusterFacts, Requirements
from kubectl_storage.operations.snapshot.common import PodSettings, SnapshotSource
from kubectl_storage.operations.snapshot.restore import (
    RestorePlan,
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

    def manifests(self) -> list[Manifest]:
        """Creation order (what --dry-run prints)."""
        return self.restore.manifests()


class RestoringCommand(Generic[RequestT, ReportT]):
    """Pipeline stages of a command that restores a snapshot and mounts it read-only.

    Subclasses give ``label``, ``validate`` and ``run``; requirements and the plan are the
    restore's, so browse and cp cannot drift apart in what they check or create.
    """

    rbac_name = "snapshot"
    label = ""

    def validate(self, request: RequestT) -> None:
        """Refuse bad input; pure."""
        raise NotImplementedError

    def requirements(self, request: RequestT) -> Requirements:
        """The snapshot API and the writes of a restore (and of a snapshot, with --pvc)."""
        return restore_requirements(request.source, request.pods)

    def plan_offline(self, request: RequestT) -> bool:
        """Restore class and size (and snapshot class with --pvc) all given."""
        return restore_offline(request.source)

    def plan(
        self, request: RequestT, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> MountPlan[RequestT]:
        """See :func:`plan_restore`."""
        restore = plan_restore(
            api, request.source, request.pods, self.label, facts=facts, run_id=run_id
        )
        return MountPlan(request, restore)

    def run(
        self, api: KubeApi, plan: MountPlan[RequestT], scope: RunScope, progress: Progress
    ) -> ReportT:
        """Mount the restore and do the command's work."""
        raise NotImplementedError
