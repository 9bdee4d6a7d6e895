"""`kubectl storage snapshot check`: snapshot, restore and compare on a fresh volume."""

from __future__ import annotations

from typing import Annotated

import typer

from kubectl_storage.cli.context import options_of
from kubectl_storage.cli.finish import finish
from kubectl_storage.cli.options import (
    DryRunOpt,
    FsGroupOpt,
    KeepOpt,
    NodeOpt,
    NodeSelectorOpt,
    RegistryOpt,
    RunAsUserOpt,
    TimeoutOpt,
    TolerationOpt,
    parse_size,
)
from kubectl_storage.cli.snapshot.common import (
    ImageOpt,
    pod_settings_of,
)
from kubectl_storage.cli.snapshot.group import snapshot_app
from kubectl_storage.core.k8s.manifests import VolumeMode
from kubectl_storage.core.k8s.quantities import Size

# -- check ------------------------------------------------------------------------------------


@snapshot_app.command("check")
def check_command(
    ctx: typer.Context,
    storage_class: Annotated[
        str | None,
        typer.Option(
            "--storage-class", "-s", help="StorageClass to check (default: the default class)."
        ),
    ] = None,
    snapshot_class: Annotated[
        str | None,
        typer.Option(
            "--snapshot-class",
            help="VolumeSnapshotClass (default: the one of the class's driver).",
        ),
    ] = None,
    size: Annotated[
        Size,
        typer.Option(
            "--size",
            "-z",
            help="Size of the test PVC, a quantity with a unit.",
            parser=parse_size,
            metavar="SIZE",
        ),
    ] = "1Gi",  # type: ignore[assignment]  # typer runs the default through parse_size
    node: NodeOpt = None,
    node_selector: NodeSelectorOpt = None,
    toleration: TolerationOpt = None,
    run_as_user: RunAsUserOpt = None,
    fs_group: FsGroupOpt = None,
    image: ImageOpt = None,
    registry: RegistryOpt = None,
    timeout: TimeoutOpt = 300,
    keep: KeepOpt = False,
    dry_run: DryRunOpt = False,
    under_load: Annotated[
        bool,
        typer.Option(
            "--under-load",
            help="Cut the snapshot while a writer appends fsynced log records; the restore "
            "must hold a clean prefix with every record acknowledged before the snapshot.",
        ),
    ] = False,
    restore_node: Annotated[
        str | None,
        typer.Option(
            "--restore-node",
            help="Read the restore on this node (the source then avoids it), or 'other': on "
            "any node but the source's. Catches snapshots that only restore where they were "
            "taken.",
            metavar="NODE|other",
        ),
    ] = None,
    volume_mode: Annotated[
        VolumeMode,
        typer.Option(
            "--volume-mode",
            help="Filesystem, or Block: a raw block volume, checked by byte ranges of the device.",
        ),
    ] = VolumeMode.FILESYSTEM,
    freeze: Annotated[
        bool,
        typer.Option(
            "--freeze",
            help="Freeze the source filesystem (fsfreeze) from just before the snapshot until "
            "it is cut: an application-consistent cut. Needs a namespace that allows "
            "privileged pods; elsewhere the check runs without a freeze and says why.",
        ),
    ] = False,
) -> None:
    """Check that a StorageClass's snapshots restore exactly what was snapshotted.

    Writes files of several sizes (fsynced, checksums kept) to a new PVC, snapshots it, then
    changes the source (modifies a file in place, appends to one, deletes one, adds one),
    restores the snapshot into a second PVC mounted read-only, and compares: the restore must
    hold the snapshot-time content and none of the later change. Exit 1 when it does not.
    With --under-load a writer in the source pod appends checksummed, numbered records (fsync
    each) while the snapshot is cut: the restored log must be a clean prefix (no hole, at most
    the record in flight torn) holding every record acknowledged before the snapshot's
    creationTime. With --restore-node the restore is read on another node than the source: a
    snapshot that can be used only on the node that took it fails the check (exit 1). In
    --dry-run, 'other' shows the source's node as WRITER_NODE. With --freeze a freezer pod
    (root, CAP_SYS_ADMIN only) on the writer's node freezes the source filesystem for the cut
    and thaws it once the snapshot has a creationTime, or after 30 s at the latest; with
    --under-load no record may be acknowledged while frozen and none may be torn. Everything
    created is deleted afterwards, also on Ctrl-C (a frozen filesystem is thawed first).
    With --volume-mode Block the volumes are raw devices and the "files" are byte ranges of the
    device (first block, unaligned, 16 MiB): overwritten, zeroed and filled after the snapshot.

    Examples:

        kubectl storage snapshot check -s fast

        kubectl storage snapshot check -s fast --snapshot-class fast-snaps -z 10Gi

        kubectl storage snapshot check -s fast -o json > check.json

        kubectl storage snapshot check -s fast --under-load

        kubectl storage snapshot check -s fast --restore-node other

        kubectl storage snapshot check -s fast --under-load --freeze

        kubectl storage snapshot check -s fast --volume-mode Block

        kubectl storage snapshot check -s fast --snapshot-class fast-snaps --dry-run
    """
    from kubectl_storage.operations.snapshot import SNAPSHOT_CHECK_COMMAND, CheckRequest  # noqa: PLC0415 - runtime only
    from kubectl_storage.render.snapshot import write_check_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    pods = pod_settings_of(ctx)
    request = CheckRequest(
        pods=pods,
        storage_class=storage_class,
        size=size,
        snapshot_class=snapshot_class,
        under_load=under_load,
        restore_node=restore_node,
        freeze=freeze,
        volume_mode=volume_mode,
    )
    report = options.execute(
        SNAPSHOT_CHECK_COMMAND, request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if report is None:
        return
    options.emit(report, write_check_table)
    node_local = report.restore_placement is not None and report.restore_placement.node_local
    finish(
        report.outcome,
        message=f"snapshot check of StorageClass {report.storage_class}: "
        f"{report.outcome.verdict.value}: " + "; ".join(report.problems[:5]),
        hint="The class's snapshots restore only on the node that took them: a workload that "
        "moves to another node cannot be restored there. Use a class with shared storage "
        "for that, or check without --restore-node."
        if node_local
        else "The restore did not hold the snapshot-time content. Run with --keep to inspect "
        "the volumes, and report it to the CSI driver's maintainers with -o json output.",
    )
