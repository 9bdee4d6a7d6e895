"""`kubectl storage mount-audit`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kubectl_storage.cli.context import options_of
from kubectl_storage.cli.node_commands import (
    AllNodesOpt,
    DryRunOpt,
    FromFileOpt,
    ImageOpt,
    KeepOpt,
    NodeNameOpt,
    NodesArg,
    ParallelOpt,
    RegistryOpt,
    SelectorOpt,
    TimeoutOpt,
    check_offline,
    finish,
    run_live,
)
from kubectl_storage.cli.options import FailOnOpt
from kubectl_storage.core.mount_audit.vendors import VendorProfile
from kubectl_storage.core.report.findings import FailOn

if TYPE_CHECKING:
    from kubectl_storage.core.mount_audit.report import MountAuditReport


def mount_audit_command(
    ctx: typer.Context,
    nodes: NodesArg = None,
    selector: SelectorOpt = None,
    all_nodes: AllNodesOpt = False,
    profile: Annotated[
        VendorProfile | None,
        typer.Option(
            "--profile",
            case_sensitive=False,
            help="Judge every mount by this vendor's guidance: efs, azure-files, anf, filestore, "
            "ontap, generic (default: detected per mount from the CSI driver or server name).",
        ),
    ] = None,
    fail_on: FailOnOpt = FailOn.ERROR,
    parallel: ParallelOpt = 10,
    timeout: TimeoutOpt = 120,
    image: ImageOpt = None,
    registry: RegistryOpt = None,
    keep: KeepOpt = False,
    dry_run: DryRunOpt = False,
    from_file: FromFileOpt = None,
    node_name: NodeNameOpt = None,
) -> None:
    """Audit NFS mounts on nodes against vendor guidance and what each PV asked for.

    Reads /proc/1/mountinfo and /proc/1/mountstats of each node through a short-lived debug
    pod (hostPID, host root read-only, not privileged), maps kubelet mount paths back to pods,
    PVCs and PVs, and lists the pod volumes it found, NFS or not. Exits 1 when a finding is at
    or above --fail-on.

    Examples:

        kubectl storage mount-audit --all-nodes

        kubectl storage mount-audit worker-1 worker-2 --profile anf -o json

        kubectl storage mount-audit -l node-role.kubernetes.io/worker= --fail-on warn

        kubectl storage mount-audit --from-file mountinfo --from-file mountstats --node-name w1

        kubectl storage mount-audit --from-file w1=w1/mountinfo --from-file pv-pvc-sc.json

        kubectl storage mount-audit --all-nodes --dry-run
    """
    vendor = profile.value if profile is not None else None
    options = options_of(ctx)
    report: MountAuditReport | None
    if from_file:
        check_offline(nodes, selector, all_nodes, dry_run)
        from kubectl_storage.operations.mount_audit import audit_files  # noqa: PLC0415 - runtime only

        report = audit_files(from_file, node_name, vendor)
    else:
        from kubectl_storage.operations.mount_audit import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
            MOUNT_AUDIT_INSPECTION,
            mount_audit_command,
        )

        report = run_live(
            options,
            MOUNT_AUDIT_INSPECTION,
            mount_audit_command(vendor),
            nodes=nodes,
            selector=selector,
            all_nodes=all_nodes,
            parallel=parallel,
            timeout=timeout,
            image=image,
            registry=registry,
            keep=keep,
            dry_run=dry_run,
            node_name=node_name,
        )
        if report is None:
            return
    from kubectl_storage.render.mount_audit import write_mount_audit_table  # noqa: PLC0415 - runtime only

    options.emit(report, write_mount_audit_table)
    finish(report, fail_on)
