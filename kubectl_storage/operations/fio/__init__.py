"""`kubectl storage fio`: benchmark StorageClasses with fio in restricted-level pods.

plan.py decides what a run creates (the request, job files, manifests; what --dry-run prints),
run.py creates it class by class and runs fio (in one pod, or ``fio --client`` driving
``--clients N`` servers), command.py ties both to the pipeline.
"""

from kubectl_storage.operations.fio.command import FioCommand
from kubectl_storage.operations.fio.plan import FioPlan, FioRequest

__all__ = ["FioCommand", "FioPlan", "FioRequest"]
