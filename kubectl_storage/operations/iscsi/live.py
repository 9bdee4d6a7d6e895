"""The live path: privileged debug pods on the chosen nodes, then one report."""

from __future__ import annotations

import logging

from kubectl_storage.core.iscsi.report import IscsiReport
from kubectl_storage.core.nodes.collect import ISCSI_SECTIONS
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.operations.iscsi.node import build_node_report, build_report
from kubectl_storage.operations.node_capture import read_volume_objects
from kubectl_storage.operations.node_inspection import (
    InspectionCommand,
    InspectionKind,
    NodeOutput,
    inspection_command,
)

log = logging.getLogger(__name__)

#: What the pod collects: the iSCSI sections plus mountinfo, to find which claim uses a device.
SECTIONS = (*ISCSI_SECTIONS, "mountinfo")

# iscsi runs the host's tools in the host root: privileged.
ISCSI_INSPECTION = InspectionKind("iscsi", SECTIONS, privileged=True)


def iscsi_command() -> InspectionCommand[IscsiReport]:
    """The pipeline command: privileged debug pods on the chosen nodes, then
    :func:`inspect_iscsi`."""
    return inspection_command(ISCSI_INSPECTION, inspect_iscsi)


def inspect_iscsi(api: KubeApi, outputs: list[NodeOutput]) -> IscsiReport:
    """Name the claims behind the nodes' LUNs, evaluate, report."""
    log.info("reading pods, volumes and claims")
    objects = read_volume_objects(api)
    nodes = [build_node_report(output.capture(), objects) for output in outputs]
    return build_report(nodes, source="cluster")
