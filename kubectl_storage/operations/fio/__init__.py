"""`kubectl storage fio`: benchmark StorageClasses with fio in restricted-level pods.

request.py holds what a run was asked for and its job file, validate.py every check without a
cluster, plan.py what a run creates (the manifests; what --dry-run prints), pod_commands.py what
runs inside the benchmark pod, run.py creates the plan class by class and runs fio (in one pod,
or ``fio --client`` driving ``--clients N`` servers); command.py ties them to the pipeline.
"""

from kubectl_storage.operations.fio.command import FIO_COMMAND
from kubectl_storage.operations.fio.plan import FioPlan
from kubectl_storage.operations.fio.request import FioRequest

__all__ = ["FIO_COMMAND", "FioPlan", "FioRequest"]
