"""`kubectl storage fio` as the pipeline's stages (operations/pipeline.py)."""

from __future__ import annotations

from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.operations.fio.plan import COMMAND, FioPlan, plan_fio, requirements
from kubectl_storage.operations.fio.request import FioRequest
from kubectl_storage.operations.fio.run import run_fio
from kubectl_storage.operations.fio.validate import validate_fio
from kubectl_storage.operations.pipeline import Command, nothing_to_gather

FIO_COMMAND: Command[FioRequest, None, FioPlan, FioReport] = Command(
    rbac_name=COMMAND,
    label=COMMAND,
    validate=validate_fio,
    requirements=requirements,
    # Named classes plan from the flags; the default class and a PVC's size need preflight.
    plan_offline=lambda request: bool(request.storage_classes) and not request.pvc,
    gather=nothing_to_gather,
    plan=lambda request, facts, _nothing, run_id: plan_fio(request, facts, run_id),
    run=run_fio,
)
