"""`kubectl storage classes`."""

from __future__ import annotations

import typer

from kubectl_storage.cli.context import options_of


def classes_command(ctx: typer.Context) -> None:
    """List StorageClasses, VolumeSnapshotClasses and CSI drivers, with notes on what is odd.

    Examples:

        kubectl storage classes

        kubectl storage classes -o json

        kubectl storage -o wide classes
    """
    from kubectl_storage.operations.classes import list_classes  # noqa: PLC0415 - runtime only
    from kubectl_storage.render.classes import write_classes_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    report = list_classes(options.connect())
    options.emit(report, write_classes_table)
