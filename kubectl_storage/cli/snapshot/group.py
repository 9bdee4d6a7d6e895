"""The `kubectl storage snapshot` command group; its subcommands register on it."""

from __future__ import annotations

import typer

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
