"""`kubectl storage snapshot cp`: copy files out of a snapshot."""

from __future__ import annotations

from typing import Annotated

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
    from kubectl_storage.core.snapshot.paths import parse_snapshot_ref  # noqa: PLC0415 - runtime only
    from kubectl_storage.operations.snapshot import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
        SNAPSHOT_COPY_COMMAND,
        CopyRequest,
        SnapshotSource,
    )
    from kubectl_storage.render.snapshot import write_copy_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    try:
        snapshot, path = parse_snapshot_ref(source)
    except ValueError as exc:
        raise UsageError(str(exc), "See kubectl storage snapshot cp --help.") from exc
    pods = pod_settings_of(ctx)

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
        SNAPSHOT_COPY_COMMAND, request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if report is not None:
        options.emit(report, write_copy_table)
