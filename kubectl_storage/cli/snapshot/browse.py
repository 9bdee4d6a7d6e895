"""`kubectl storage snapshot browse`: a shell, a tree or a listing of a restored snapshot."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

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
)
from kubectl_storage.cli.snapshot.common import (
    ImageOpt,
    RestoreClassOpt,
    RestoreSizeOpt,
    pod_settings_of,
)
from kubectl_storage.cli.snapshot.group import snapshot_app
from kubectl_storage.errors import UsageError
from kubectl_storage.render.output import OutputFormat

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
        SNAPSHOT_BROWSE_COMMAND,
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
    pods = pod_settings_of(ctx)

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
        SNAPSHOT_BROWSE_COMMAND, request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
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
