"""`kubectl storage snapshot list`."""

from __future__ import annotations

from typing import Annotated

import typer

from kubectl_storage.cli.context import options_of
from kubectl_storage.cli.snapshot.group import snapshot_app

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
