"""`kubectl storage iscsi`."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from kubectl_storage.core.report.findings import FailOn

if TYPE_CHECKING:
    from kubectl_storage.core.iscsi.report import IscsiReport


def iscsi_command(
    ctx: typer.Context,
    nodes: NodesArg = None,
    selector: SelectorOpt = None,
    all_nodes: AllNodesOpt = False,
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
    """Show iSCSI sessions and dm-multipath maps of nodes, and check them.

    A privileged debug pod per node runs the host's own multipathd, multipath and iscsiadm
    (chroot into the host root, read-only) and reads sysfs; the claims behind each LUN come
    from the kubelet's mounts. -o wide adds a sanlun-like view: claim, LUN, dm device and
    each path, active or passive. A node without iSCSI is reported as such, not as an error.
    Exits 1 when a finding is at or above --fail-on.

    Examples:

        kubectl storage iscsi --all-nodes

        kubectl storage iscsi worker-1 -o wide

        kubectl storage iscsi -l storage=iscsi --fail-on warn -o json

        kubectl storage iscsi --from-file multipath-ll.txt --from-file session-P3.txt --node-name w1

        kubectl storage iscsi --from-file sanlun-lun-show-p.txt

        kubectl storage iscsi --from-file w1=w1/multipath-ll.txt --from-file w2=w2/multipath-ll.txt
    """
    options = options_of(ctx)
    report: IscsiReport | None
    if from_file:
        check_offline(nodes, selector, all_nodes, dry_run)
        from kubectl_storage.operations.iscsi import iscsi_files  # noqa: PLC0415 - runtime only

        report = iscsi_files(from_file, node_name)
    else:
        from kubectl_storage.operations.iscsi import ISCSI_INSPECTION, iscsi_command  # noqa: PLC0415 - runtime only

        report = run_live(
            options,
            ISCSI_INSPECTION,
            iscsi_command(),
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
    from kubectl_storage.render.iscsi import write_iscsi_table  # noqa: PLC0415 - runtime only

    options.emit(report, write_iscsi_table)
    finish(report, fail_on)
