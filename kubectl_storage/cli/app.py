"""The `kubectl storage` command line: global options, subcommands, errors to exit codes.

This is the only module that exits the process. Everything below it raises our errors
(errors.py), and ``main`` turns them into one ``error:`` paragraph on stderr and an exit code.

Subcommands are registered lazily, all from one table (cli/commands.py, which completion reads
too): :class:`LazyGroup` imports a command's module only when that command runs, its help is
shown or its arguments are completed. ``kubectl storage --help`` lists every command
from the table alone (tests/cli/test_completion.py checks the table against the docstrings).
"""

from __future__ import annotations

import difflib
import importlib
import logging
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any, NoReturn, cast

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandInfo, TyperInfo

from kubectl_storage import __version__
from kubectl_storage.cli.commands import (
    BARE_FLAGS,
    COMMANDS,
    DEFAULT_COMMAND,
    ROOT_HELP,
    VALUE_FLAGS,
    CommandEntry,
)
from kubectl_storage.cli.context import GlobalOptions
from kubectl_storage.cli.help_format import tidy_help, tidy_param
from kubectl_storage.cli.options import positive_seconds, seconds
from kubectl_storage.errors import StorageToolError
from kubectl_storage.exit_codes import ExitCode
from kubectl_storage.logs import setup_logging
from kubectl_storage.render.output import OutputFormat

PROG_NAME = "kubectl storage"
#: kubectl (1.26+) completes `kubectl storage …` by running this executable from PATH.
COMPLETER_NAME = "kubectl_complete-storage"


class LazyGroup(TyperGroup):
    """The root command group: knows every subcommand from :data:`COMMANDS`, imports one only
    when it is needed, and gives every command kubectl-style help labels (cli/help_format.py).
    """

    def __init__(self, **attrs: Any) -> None:
        """As TyperGroup; the root's own options get the tidy help labels too."""
        super().__init__(**attrs)
        self._listing = False
        tidy_help(self)

    def list_commands(self, ctx: Any) -> list[str]:
        """Every subcommand, in the table's order, without importing any."""
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The subcommand, imported on first use; while help lists the commands, a stand-in
        that carries only the table's one-line help."""
        loaded = self.commands.get(cmd_name)
        if loaded is not None:
            return loaded
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if self._listing:
            return TyperCommand(cmd_name, help=entry.help, short_help=entry.help)
        command = self._load(cmd_name, entry)
        tidy_help(command, ctx)
        self.commands[cmd_name] = command
        return command

    def _load(self, name: str, entry: CommandEntry) -> Any:
        target = getattr(importlib.import_module(entry.module), entry.attr)
        if isinstance(target, typer.Typer):  # a command group (snapshot list|check|…)
            return typer.main.get_group_from_info(
                TyperInfo(target, name=name),
                pretty_exceptions_short=app.pretty_exceptions_short,
                suggest_commands=self.suggest_commands,
                rich_markup_mode=self.rich_markup_mode,
            )
        return typer.main.get_command_from_info(
            CommandInfo(name=name, callback=target),
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=self.rich_markup_mode,
        )

    def get_help_option(self, ctx: Any) -> Any:
        """-h/--help, with the tidy help label like every other flag."""
        option = super().get_help_option(ctx)
        if option is not None:
            tidy_param(option)
        return option

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The root's help: the command list comes from the table, nothing is imported."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        """As TyperGroup, with "Did you mean" suggestions taken from the table."""
        try:
            return super().resolve_command(ctx, args)
        except typer.TyperException as exc:
            message = getattr(exc, "message", None)
            if isinstance(message, str) and args and "Did you mean" not in message:
                matches = difflib.get_close_matches(args[0], list(COMMANDS))
                if matches:
                    suggestions = ", ".join(repr(m) for m in matches)
                    cast(Any, exc).message = f"{message.rstrip('.')}. Did you mean {suggestions}?"
            raise


app = typer.Typer(
    name="kubectl-storage",
    help=ROOT_HELP,
    no_args_is_help=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    cls=LazyGroup,
    rich_markup_mode="markdown",
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            show_default=False,
            help="More detail on stderr (repeatable).",
        ),
    ] = 0,
    quiet: Annotated[
        int,
        typer.Option(
            "--quiet", "-q", count=True, show_default=False, help="Only errors on stderr."
        ),
    ] = 0,
    request_timeout: Annotated[
        float | None,
        typer.Option(
            "--request-timeout",
            help="How long to wait for any single API request: seconds, or a duration (30s).",
            parser=seconds,
            callback=positive_seconds,
        ),
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
        _run_default_command(ctx)


def _run_default_command(ctx: typer.Context) -> None:
    """`kubectl storage` alone: run the default command as if it had been named."""
    group = ctx.command
    assert isinstance(group, LazyGroup)
    command = group.get_command(ctx, DEFAULT_COMMAND)
    with command.make_context(DEFAULT_COMMAND, [], parent=ctx) as sub_ctx:
        command.invoke(sub_ctx)


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
        if name in VALUE_FLAGS:
            front.append(arg)
            if "=" not in arg and i + 1 < len(args):
                front.append(args[i + 1])
                i += 1
        elif name in BARE_FLAGS or (len(arg) > 2 and arg[0] == "-" and set(arg[1:]) <= {"v"}):
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
    given = list(sys.argv[1:] if argv is None else argv)
    if given and given[0] in ("__complete", "__completeNoDesc"):
        # cobra's hidden completion command, as kubectl_complete-storage and the shell scripts
        # of `kubectl storage completion` call it: never parsed as options of a command.
        # Imported only here: ~5 ms (protocol.py) that --help and every command would pay.
        from kubectl_storage.cli.completion import complete_main  # noqa: PLC0415

        root = typer.main.get_command(app)
        return complete_main(given[1:], root, descriptions=given[0] == "__complete")
    args = hoist_global_options(given)
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
    """Console-script entry point; run as kubectl_complete-storage (a link to or copy of the
    executable), it answers kubectl's completion requests."""
    if Path(sys.argv[0]).stem == COMPLETER_NAME:
        sys.exit(run(["__complete", *sys.argv[1:]]))
    sys.exit(run())
