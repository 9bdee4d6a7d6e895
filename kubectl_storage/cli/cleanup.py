"""`kubectl storage cleanup`."""

from __future__ import annotations

from typing import Annotated

import typer

from kubectl_storage.cli.context import options_of
from kubectl_storage.cli.finish import finish
from kubectl_storage.cli.options import positive_seconds, seconds


def cleanup_command(
    ctx: typer.Context,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Delete what is found (without it: list only).")
    ] = False,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Only objects of this run.")
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", help="Only objects older than this (e.g. 30m, 1h, 2d)."),
    ] = None,
    all_namespaces: Annotated[
        bool,
        typer.Option("--all-namespaces", "-A", help="Look in every namespace (the default)."),
    ] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            help="How long to wait for deletions to finish: seconds, or a duration (2m).",
            parser=seconds,
            callback=positive_seconds,
        ),
    ] = 120,
) -> None:
    """Find objects that kubectl-storage runs left behind, and delete them with --yes.

    Only objects labelled app.kubernetes.io/managed-by=kubectl-storage are ever listed or
    deleted. Looks in all namespaces unless -n is given. Exits 1 when leftovers are listed
    but not deleted, so scripts can tell.

    Examples:

        kubectl storage cleanup

        kubectl storage cleanup --yes

        kubectl storage cleanup --run-id a1b2c3d4 --yes

        kubectl storage cleanup -n storage-tests --older-than 1h --yes
    """
    from kubectl_storage.core.cleanup import parse_duration_s  # noqa: PLC0415 - runtime only
    from kubectl_storage.errors import UsageError  # noqa: PLC0415 - runtime only
    from kubectl_storage.operations.cleanup import CleanupRequest, cleanup  # noqa: PLC0415 - runtime only
    from kubectl_storage.render.cleanup import write_cleanup_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    older_than_s = None
    if older_than is not None:
        try:
            older_than_s = parse_duration_s(older_than)
        except ValueError as exc:
            raise UsageError(f"--older-than: {exc}", "Example: --older-than 1h") from exc
    api = options.connect()
    request = CleanupRequest(
        namespace=None if all_namespaces or not options.namespace else options.namespace,
        run_id=run_id,
        older_than_s=older_than_s,
        delete=yes,
        timeout_s=timeout,
    )
    report = cleanup(api, request)
    options.emit(report, write_cleanup_table)
    finish(
        report.outcome,
        message="objects of earlier runs are still there"
        + (" after the delete" if report.deleted else ""),
        hint="" if report.deleted else "Delete them with --yes (the list above).",
    )
