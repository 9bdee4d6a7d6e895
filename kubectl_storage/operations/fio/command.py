"""`kubectl storage fio` as the pipeline's stages (operations/pipeline.py)."""

from __future__ import annotations

from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.fio.plan import COMMAND, FioPlan, plan_fio, requirements
from kubectl_storage.operations.fio.request import FioRequest
from kubectl_storage.operations.fio.run import run_fio
from kubectl_storage.operations.fio.validate import validate_fio
from kubectl_storage.operations.pipeline import Progress
from kubectl_storage.operations.preflight import ClusterFacts, Requirements


class FioCommand:
    """`kubectl storage fio` as pipeline stages (operations/pipeline.py)."""

    rbac_name = COMMAND
    label = COMMAND

    def validate(self, request: FioRequest) -> None:
        """See :func:`validate_fio`."""
        validate_fio(request)

    def requirements(self, request: FioRequest) -> Requirements:
        """See :func:`requirements`."""
        return requirements(request)

    def plan_offline(self, request: FioRequest) -> bool:
        """Named classes plan from the flags; the default class and a PVC's size need reads."""
        return bool(request.storage_classes) and not request.pvc

    def plan(
        self, request: FioRequest, facts: ClusterFacts, run_id: str, api: KubeApi | None
    ) -> FioPlan:
        """See :func:`plan_fio`."""
        return plan_fio(request, facts, run_id)

    def run(self, api: KubeApi, plan: FioPlan, scope: RunScope, progress: Progress) -> FioReport:
        """See :func:`run_fio`."""
        return run_fio(api, plan, scope, progress)
