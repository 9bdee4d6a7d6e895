"""The `kubectl storage` command line: global options, subcommands, errors to exit codes.

This is the only module that exits the process. Everything below it raises our errors
(errors.py), and ``main`` turns them into one ``error:`` paragraph on stderr and an exit code.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import Annotated, NoReturn

import typer

from kubectl_storage import __version__
from kubectl_storage.cli.classes import classes_command
from kubectl_storage.cli.cleanup import cleanup_command
from kubectl_storage.cli.context import GlobalOptions
from kubectl_storage.errors import StorageToolError
from kubectl_storage.exit_codes import ExitCode
from kubectl_storage.logs import setup_logging
from kubectl_storage.render.output import OutputFormat

PROG_NAME = "kubectl storage"

app = typer.Typer(
    name="kubectl-storage",
    help=(
        "Check that a cluster's storage can be trusted: benchmark StorageClasses, check "
        "snapshots and persistence, audit NFS and iSCSI on nodes.\n\n"
        "Without a subcommand, lists the storage classes (same as `kubectl storage classes`). "
        "Global options (--kubeconfig, --context, -n, -o, -v, -q, --request-timeout) may come "
        "before or after the subcommand, as with kubectl."
    ),
    no_args_is_help=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Global flags that take a value, and those that do not; used to accept them after the subcommand.
_VALUE_FLAGS = {
    "--kubeconfig",
    "--context",
    "-n",
    "--namespace",
    "-o",
    "--output",
    "--request-timeout",
}
_BARE_FLAGS = {"-v", "--verbose", "-q", "--quiet"}


def _version_callback(value: bool) -> None:
    if value:
        sys.stdout.write(f"kubectl-storage {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    kubeconfig: Annotated[
        str | None,
        typer.Option("--kubeconfig", help="Path to the kubeconfig file (default: $KUBECONFIG)."),
    ] = None,
    context: Annotated[
        str | None, typer.Option("--context", help="The kubeconfig context to use.")
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", help="Namespace to work in (default: the context's)."),
    ] = None,
    output: Annotated[
        OutputFormat,
        typer.Option("--output", "-o", help="Output format.", case_sensitive=False),
    ] = OutputFormat.TABLE,
    verbose: Annotated[
        int,
        typer.Option("--verbose", "-v", count=True, help="More detail on stderr (repeatable)."),
    ] = 0,
    quiet: Annotated[
        int, typer.Option("--quiet", "-q", count=True, help="Only errors on stderr.")
    ] = 0,
    request_timeout: Annotated[
        float | None,
        typer.Option("--request-timeout", help="Seconds to wait for any single API request."),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Set up the options every command shares."""
    if request_timeout is not None and request_timeout <= 0:
        raise typer.BadParameter(
            "must be a positive number of seconds", param_hint="--request-timeout"
        )
    options = GlobalOptions(
        kubeconfig=kubeconfig,
        context=context,
        namespace=namespace,
        output=output,
        verbosity=verbose - quiet,
        request_timeout_s=request_timeout,
    )
    ctx.obj = options
    setup_logging(options.verbosity)
    if ctx.invoked_subcommand is None:
        ctx.invoke(classes_command, ctx)


app.command("classes")(classes_command)
app.command("cleanup")(cleanup_command)


def _register_optional_commands() -> None:
    """Subcommands whose modules are added as their features land."""
    import importlib  # noqa: PLC0415

    for module_name, command_name, attr in (
        ("kubectl_storage.cli.fio", "fio", "fio_command"),
        ("kubectl_storage.cli.mount_audit", "mount-audit", "mount_audit_command"),
        ("kubectl_storage.cli.iscsi", "iscsi", "iscsi_command"),
        ("kubectl_storage.cli.snapshot", "snapshot", "snapshot_app"),
        (
            "kubectl_storage.cli.validate_persistence",
            "validate-persistence",
            "validate_persistence_command",
        ),
        ("kubectl_storage.cli.rbac", "rbac", "rbac_command"),
    ):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        target = getattr(module, attr)
        if isinstance(target, typer.Typer):
            app.add_typer(target, name=command_name)  # a command group (snapshot list|check|…)
        else:
            app.command(command_name)(target)


_register_optional_commands()


def hoist_global_options(args: list[str]) -> list[str]:
    """Move global flags given after the subcommand to the front, as kubectl accepts them."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest.extend(args[i:])
            break
        name = arg.split("=", 1)[0]
        if name in _VALUE_FLAGS:
            front.append(arg)
            if "=" not in arg and i + 1 < len(args):
                front.append(args[i + 1])
                i += 1
        elif name in _BARE_FLAGS or (len(arg) > 2 and arg[0] == "-" and set(arg[1:]) <= {"v"}):
            front.append(arg)
        elif len(arg) > 2 and arg[:2] in ("-n", "-o") and not arg.startswith("--"):
            front.append(arg)  # -nfoo / -ojson
        else:
            rest.append(arg)
        i += 1
    return front + rest


def _verbosity_of(args: list[str]) -> int:
    count = 0
    for arg in args:
        if arg == "--verbose":
            count += 1
        elif len(arg) > 1 and arg[0] == "-" and arg[1] != "-" and set(arg[1:]) <= {"v"}:
            count += len(arg) - 1
    return count


def _help_command(exc: Exception) -> str:
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", "") or ""
    sub = path[len(PROG_NAME) :].strip() if path.startswith(PROG_NAME) else ""
    return f"{PROG_NAME} {sub}".strip()


def print_error(error: StorageToolError) -> None:
    """One `error:` paragraph: what happened, what to do, and the events that explain it."""
    lines = [f"error: {error.message}"]
    if error.hint:
        lines.append(f"  {error.hint}")
    if error.events:
        lines.append("  Recent events:")
        lines.extend(f"    {event}" for event in error.events)
    sys.stderr.write("\n".join(lines) + "\n")


def run(argv: list[str] | None = None) -> int:
    """Run the command line and return the exit code (no sys.exit; used by tests too)."""
    args = hoist_global_options(list(sys.argv[1:] if argv is None else argv))
    verbosity = _verbosity_of(args)
    try:
        # Without standalone mode, typer returns the code of a typer.Exit instead of raising it.
        returned = app(args=args, prog_name=PROG_NAME, standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        return ExitCode.INTERRUPTED
    except typer.TyperException as exc:
        # Usage errors (unknown flag, bad value): typer's message names the flag.
        sys.stderr.write(f"error: {exc.format_message()}\n  See '{_help_command(exc)} --help'.\n")
        return ExitCode.ERROR
    except StorageToolError as exc:
        if verbosity >= 3:
            traceback.print_exc()
        print_error(exc)
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK  # the reader went away (e.g. `| head`); nothing more to say
    except Exception as exc:
        if verbosity >= 3:
            traceback.print_exc()
        logging.getLogger(__name__).debug("unexpected error", exc_info=True)
        sys.stderr.write(
            f"error: unexpected {type(exc).__name__}: {exc}\n"
            "  This is a bug in kubectl-storage; run again with -vvv for the traceback and "
            "report it.\n"
        )
        return ExitCode.ERROR
    return returned if isinstance(returned, int) else ExitCode.OK


def main() -> NoReturn:
    """Console-script entry point."""
    sys.exit(run())
