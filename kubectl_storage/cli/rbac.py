"""`kubectl storage rbac`: the Role and ClusterRole each command needs. Needs no cluster."""

from __future__ import annotations

import sys
from typing import Annotated, Any, TextIO

import typer

from kubectl_storage.cli.context import options_of
from kubectl_storage.render.output import OutputFormat


def rbac_command(
    ctx: typer.Context,
    commands: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="COMMAND",
            help="Commands to grant (default: all): classes, cleanup, fio, iscsi, mount-audit, "
            "snapshot, validate-persistence.",
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Name of the roles (default: kubectl-storage[-COMMAND…])."),
    ] = None,
    users: Annotated[
        list[str] | None,
        typer.Option("--user", help="Also bind the roles to this user (repeatable)."),
    ] = None,
    groups: Annotated[
        list[str] | None,
        typer.Option("--group", help="Also bind the roles to this group (repeatable)."),
    ] = None,
    service_accounts: Annotated[
        list[str] | None,
        typer.Option(
            "--serviceaccount",
            help="Also bind the roles to this service account, as NAMESPACE:NAME (repeatable).",
        ),
    ] = None,
) -> None:
    """Print the minimal Role and ClusterRole that COMMANDs need, ready for kubectl apply.

    The Role holds what a command does in its namespace (-n; without -n the Role has no
    namespace and kubectl apply puts it in the context's, which is where the commands run);
    the ClusterRole holds nodes, StorageClasses, PersistentVolumes, snapshot classes and
    contents, and what is read in every namespace. With --user, --group or --serviceaccount,
    the RoleBinding and ClusterRoleBinding follow. -o wide lists each permission and why it is
    needed; -o json prints a v1 List. Needs no cluster.

    Examples:

        kubectl storage rbac

        kubectl storage rbac fio -n storage-tests | kubectl apply -f -

        kubectl storage rbac fio snapshot -n storage-tests --serviceaccount ci:storage-bench

        kubectl storage rbac mount-audit iscsi -o wide
    """
    from kubectl_storage.core.rbac.commands import UnknownCommandError, select_commands  # noqa: PLC0415 - loaded when the command runs, not for its --help
    from kubectl_storage.core.rbac.manifests import Subject, build_rbac_manifests, permission_rows  # noqa: PLC0415 - loaded when the command runs, not for its --help
    from kubectl_storage.errors import UsageError  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    try:
        selected = select_commands(commands or [])
    except UnknownCommandError as exc:
        raise UsageError(str(exc), "See 'kubectl storage rbac --help'.") from exc
    subjects = [Subject("User", u) for u in users or []]
    subjects += [Subject("Group", g) for g in groups or []]
    for value in service_accounts or []:
        try:
            subjects.append(Subject.service_account(value))
        except ValueError as exc:
            raise UsageError(
                f"--serviceaccount: {exc}", "Example: --serviceaccount ci:bench"
            ) from exc
    manifests = build_rbac_manifests(
        selected, namespace=options.namespace, name=name, subjects=subjects
    )
    _write(options.output, manifests, permission_rows(selected), options.stdout)


def _write(
    fmt: OutputFormat,
    manifests: list[dict[str, Any]],
    rows: list[dict[str, str]],
    out: TextIO = sys.stdout,
) -> None:
    from kubectl_storage.render.structured import write_json, write_yaml_documents  # noqa: PLC0415 - runtime only

    if fmt is OutputFormat.JSON:
        write_json({"apiVersion": "v1", "kind": "List", "items": manifests}, out)
    elif fmt is OutputFormat.WIDE:
        from kubectl_storage.render.tables import write_table  # noqa: PLC0415 - runtime only

        headers = ["command", "scope", "api group", "resources", "verbs", "why"]
        keys = ["command", "scope", "apiGroup", "resources", "verbs", "why"]
        write_table([[row[k] for k in keys] for row in rows], headers, out)
    else:
        # table (the default) and yaml: the manifests, for kubectl apply -f -
        write_yaml_documents(manifests, out)
    out.flush()
