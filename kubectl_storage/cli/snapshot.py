"""`kubectl storage snapshot list|check|browse|cp`."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kubectl_storage.cli.context import options_of
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
    placement_from_flags,
)
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.errors import FindingsError, UsageError
from kubectl_storage.render.output import OutputFormat

if TYPE_CHECKING:
    from kubectl_storage.operations.snapshot import PodSettings

snapshot_app = typer.Typer(
    help=(
        "List, check, browse and copy out of VolumeSnapshots, all from the terminal.\n\n"
        "Examples:\n\n"
        "    kubectl storage snapshot list -A\n\n"
        "    kubectl storage snapshot check -s fast\n\n"
        "    kubectl storage snapshot browse data-snap --tree\n\n"
        "    kubectl storage snapshot cp data-snap:/etc/app.conf ./app.conf"
    ),
    invoke_without_command=True,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@snapshot_app.callback()
def snapshot_group(ctx: typer.Context) -> None:
    """Without a subcommand, show the help (exit 0, as kubectl does for command groups)."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


# -- options shared by the commands that create pods ------------------------------------------

ImageOpt = Annotated[str | None, typer.Option("--image", help="Toolbox image (sh, tar, tree).")]
RestoreClassOpt = Annotated[
    str | None,
    typer.Option(
        "--storage-class",
        "-s",
        help="Restore into this class (default: the source PVC's, else the driver's class).",
    ),
]
RestoreSizeOpt = Annotated[
    Size | None,
    typer.Option(
        "--size",
        "-z",
        help="Size of the restored PVC (default: its restoreSize).",
        parser=parse_size,
        metavar="SIZE",
    ),
]


def _pod_settings(
    *,
    node: str | None,
    node_selector: str | None,
    toleration: list[str] | None,
    run_as_user: int | None,
    fs_group: int | None,
    image: str | None,
    registry: str | None,
    timeout: float,
    keep: bool,
) -> PodSettings:
    from kubectl_storage.core.k8s.images import TOOLBOX_IMAGE, with_registry  # noqa: PLC0415 - runtime only
    from kubectl_storage.core.k8s.manifests import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
        PodIdentity,
    )
    from kubectl_storage.operations.snapshot import PodSettings  # noqa: PLC0415 - runtime only

    placement = placement_from_flags(
        "snapshot", node=node, node_selector=node_selector, toleration=toleration
    )
    identity = None
    if run_as_user is not None or fs_group is not None:
        identity = PodIdentity(run_as_user if run_as_user is not None else 1000, fs_group)
    return PodSettings(
        image=image or with_registry(TOOLBOX_IMAGE, registry),
        placement=placement,
        identity=identity,
        timeout_s=timeout,
        keep=keep,
    )


# -- list -------------------------------------------------------------------------------------


@snapshot_app.command("list")
def list_command(
    ctx: typer.Context,
    all_namespaces: Annotated[
        bool, typer.Option("--all-namespaces", "-A", help="Snapshots of every namespace.")
    ] = False,
) -> None:
    """List VolumeSnapshots: source, class, driver, readiness, restore size, age, errors.

    A source PVC that no longer exists shows as `pvc/NAME (gone)`; a pre-provisioned snapshot
    shows its content. `-o wide` adds the bound content, creation time and snapshot handle.

    Examples:

        kubectl storage snapshot list

        kubectl storage snapshot list -A -o wide

        kubectl storage snapshot list -n db -o json
    """
    from kubectl_storage.operations.snapshot import list_snapshots  # noqa: PLC0415 - runtime only
    from kubectl_storage.render.snapshot import write_snapshot_list_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    namespace = options.resolved_namespace()
    result = list_snapshots(options.connect(), namespace, all_namespaces=all_namespaces)
    options.emit(result, write_snapshot_list_table)


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
) -> None:
    """Check that a StorageClass's snapshots restore exactly what was snapshotted.

    Writes files of several sizes (fsynced, checksums kept) to a new PVC, snapshots it, then
    changes the source (modifies a file in place, appends to one, deletes one, adds one),
    restores the snapshot into a second PVC mounted read-only, and compares: the restore must
    hold the snapshot-time content and none of the later change. Exit 1 when it does not.
    Everything created is deleted afterwards, also on Ctrl-C.

    Examples:

        kubectl storage snapshot check -s fast

        kubectl storage snapshot check -s fast --snapshot-class fast-snaps -z 10Gi

        kubectl storage snapshot check -s fast -o json > check.json

        kubectl storage snapshot check -s fast --snapshot-class fast-snaps --dry-run
    """
    from kubectl_storage.operations.snapshot import CheckCommand, CheckRequest  # noqa: PLC0415 - runtime only
    from kubectl_storage.render.snapshot import write_check_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    pods = _pod_settings(
        node=node,
        node_selector=node_selector,
        toleration=toleration,
        run_as_user=run_as_user,
        fs_group=fs_group,
        image=image,
        registry=registry,
        timeout=timeout,
        keep=keep,
    )
    request = CheckRequest(
        pods=pods, storage_class=storage_class, size=size, snapshot_class=snapshot_class
    )
    report = options.execute(
        CheckCommand(), request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if report is None:
        return
    options.emit(report, write_check_table)
    if report.verdict != "pass":
        raise FindingsError(
            f"snapshot check of StorageClass {report.storage_class} failed: "
            + "; ".join(report.problems[:5]),
            "The restore did not hold the snapshot-time content. Run with --keep to inspect "
            "the volumes, and report it to the CSI driver's maintainers with -o json output.",
        )


# -- browse -----------------------------------------------------------------------------------


@snapshot_app.command("browse")
def browse_command(
    ctx: typer.Context,
    snapshot: Annotated[
        str | None,
        typer.Argument(metavar="SNAP", help="VolumeSnapshot to browse (omit with --pvc)."),
    ] = None,
    path: Annotated[
        str | None,
        typer.Argument(metavar="[PATH]", help="Path inside the snapshot for --tree and --ls."),
    ] = None,
    tree: Annotated[
        bool, typer.Option("--tree", help="Print the tree of PATH (default: all) and exit.")
    ] = False,
    ls: Annotated[
        bool, typer.Option("--ls", help="List the directory PATH (like ls -l) and exit.")
    ] = False,
    pvc: Annotated[
        str | None,
        typer.Option("--pvc", help="Snapshot this live PVC first (deleted afterwards)."),
    ] = None,
    snapshot_class: Annotated[
        str | None,
        typer.Option(
            "--snapshot-class", help="Class for the --pvc snapshot (default: the driver's)."
        ),
    ] = None,
    restore_class: RestoreClassOpt = None,
    size: RestoreSizeOpt = None,
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
) -> None:
    """Look inside a snapshot: a shell, a tree or a listing, from the terminal.

    Restores the snapshot into a temporary PVC, mounts it read-only at /snapshot in a
    restricted toolbox pod, then opens an interactive shell there (needs a terminal; Ctrl-]
    detaches), or with --tree/--ls prints and exits. The temporary PVC and pod are deleted when
    the shell exits and on Ctrl-C. Works for pre-provisioned snapshots and when the source PVC
    is gone (--storage-class picks the restore class when it cannot be inferred).

    Examples:

        kubectl storage snapshot browse data-snap

        kubectl storage snapshot browse data-snap --tree

        kubectl storage snapshot browse data-snap --ls var/log

        kubectl storage snapshot browse --pvc data --snapshot-class fast-snaps --tree

        kubectl storage snapshot browse old-snap --storage-class fast --tree -o json
    """
    from kubectl_storage.operations.snapshot import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
        BrowseCommand,
        BrowseMode,
        BrowseRequest,
        SnapshotSource,
    )
    from kubectl_storage.render.snapshot import write_listing_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    if tree and ls:
        raise UsageError("give --tree or --ls, not both", "")
    if pvc and snapshot and path is None:
        snapshot, path = None, snapshot  # with --pvc the one argument is the path
    mode = BrowseMode.TREE if tree else BrowseMode.LS if ls else BrowseMode.SHELL
    if path is not None and mode is BrowseMode.SHELL:
        raise UsageError(
            f"a PATH ({path}) is only used with --tree or --ls", "The shell starts at /snapshot."
        )
    pods = _pod_settings(
        node=node,
        node_selector=node_selector,
        toleration=toleration,
        run_as_user=run_as_user,
        fs_group=fs_group,
        image=image,
        registry=registry,
        timeout=timeout,
        keep=keep,
    )

    request = BrowseRequest(
        source=SnapshotSource(
            namespace=options.resolved_namespace(),
            snapshot=snapshot,
            pvc=pvc,
            snapshot_class=snapshot_class,
            storage_class=restore_class,
            size=size,
        ),
        pods=pods,
        mode=mode,
        path=path or "",
        structured=options.output in (OutputFormat.JSON, OutputFormat.YAML),
        term=os.environ.get("TERM", "xterm"),
        # A --dry-run prints the plan and needs no terminal for the shell it would open.
        has_terminal=dry_run or (_is_tty(sys.stdin) and _is_tty(sys.stdout)),
    )
    result = options.execute(
        BrowseCommand(), request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if result is None:
        return
    if result.text is not None:
        options.stdout.write(result.text)
        options.stdout.flush()
    elif result.report is not None:
        options.emit(result.report, write_listing_table)


def _is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


# -- cp ---------------------------------------------------------------------------------------


@snapshot_app.command("cp")
def cp_command(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(metavar="SNAP:PATH", help="Snapshot and the path inside it.")
    ],
    destination: Annotated[
        str, typer.Argument(metavar="LOCAL", help="Local file or directory to copy to.")
    ],
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Overwrite LOCAL if it exists.")
    ] = False,
    restore_class: RestoreClassOpt = None,
    size: RestoreSizeOpt = None,
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
) -> None:
    """Copy a file or directory out of a snapshot (tar over exec; bytes and modes kept).

    Restores the snapshot into a temporary PVC mounted read-only, streams `tar` out of the pod
    and unpacks it locally. When LOCAL is an existing directory the copy goes inside it. An
    existing target is never overwritten without --force. Set-id bits and ownership are not
    copied; devices, FIFOs and links pointing outside the copy are skipped.

    Examples:

        kubectl storage snapshot cp data-snap:/etc/app.conf ./app.conf

        kubectl storage snapshot cp data-snap:var/log ./logs-from-snapshot

        kubectl storage snapshot cp data-snap:/ ./whole-volume --force
    """
    from kubectl_storage.core.snapshot.snapshots import parse_snapshot_ref  # noqa: PLC0415 - runtime only
    from kubectl_storage.operations.snapshot import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
        CopyCommand,
        CopyRequest,
        SnapshotSource,
    )
    from kubectl_storage.render.snapshot import write_copy_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    try:
        snapshot, path = parse_snapshot_ref(source)
    except ValueError as exc:
        raise UsageError(str(exc), "See kubectl storage snapshot cp --help.") from exc
    pods = _pod_settings(
        node=node,
        node_selector=node_selector,
        toleration=toleration,
        run_as_user=run_as_user,
        fs_group=fs_group,
        image=image,
        registry=registry,
        timeout=timeout,
        keep=keep,
    )

    request = CopyRequest(
        source=SnapshotSource(
            namespace=options.resolved_namespace(),
            snapshot=snapshot,
            storage_class=restore_class,
            size=size,
        ),
        path=path,
        destination=destination,
        pods=pods,
        force=force,
    )
    report = options.execute(
        CopyCommand(), request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if report is not None:
        options.emit(report, write_copy_table)
