"""The entry point: answers the few command lines that need no typer, else runs cli/app.py.

Start-up is felt on every TAB (issue 28). Importing typer and the root's modules costs more
than the rest of a ``--help``, so three answers are given here from the command table
(cli/commands.py) with the standard library only, and everything else goes to :mod:`app`:

* ``kubectl storage --help`` / ``-h`` with plain help (``TYPER_USE_RICH`` off, as the binaries
  set it): the same text as typer's, byte for byte, at every terminal width (click's
  formatting, below, is what typer prints it with);
* ``--version``;
* ``__complete WORD`` / ``__completeNoDesc WORD`` (and ``kubectl_complete-storage WORD``) where
  WORD is the first word and not a flag: the subcommands, as cli/completion answers them.

tests/cli/test_fastpath.py runs every answer here against typer's for the same argv, so the two
cannot drift apart. Nothing here imports typer, and this module must stay cheap to import.
"""

from __future__ import annotations

import os
import sys

from kubectl_storage import __version__
from kubectl_storage.cli.commands import COMMANDS, ROOT_HELP

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from typing import NoReturn

PROG_NAME = "kubectl storage"
#: kubectl (1.26+) completes `kubectl storage …` by running this executable from PATH.
COMPLETER_NAME = "kubectl_complete-storage"
#: cobra's ShellCompDirective for "no file names" (cli/completion/protocol.py NO_FILE_COMP).
_NO_FILE_COMP = 4

#: The root's options as typer's plain help shows them (app.py ``root``): term, help + extra.
#: The test compares the whole text with typer's, so a change to app.py's options fails there.
ROOT_OPTION_ROWS: tuple[tuple[str, str], ...] = (
    ("--kubeconfig TEXT", "Path to the kubeconfig file (default: $KUBECONFIG)."),
    ("--context TEXT", "The kubeconfig context to use."),
    ("-n, --namespace TEXT", "Namespace to work in (default: the context's)."),
    ("-o, --output [table|wide|json|yaml]", "Output format.  [default: table]"),
    ("-v, --verbose", "More detail on stderr (repeatable)."),
    ("-q, --quiet", "Only errors on stderr."),
    (
        "--request-timeout FLOAT",
        "How long to wait for any single API request: seconds, or a duration (30s).",
    ),
    ("--version", "Print the version."),
    ("-h, --help", "Show this message and exit."),
)
ROOT_USAGE_ARGS = "[OPTIONS] COMMAND [ARGS]..."


def plain_help() -> bool:
    """Whether typer prints plain help: ``TYPER_USE_RICH`` read as typer reads it (its
    ``parse_boolean_env_var``, default on)."""
    value = os.environ.get("TYPER_USE_RICH")
    return value is not None and value.lower() in ("n", "no", "f", "false", "off", "0")


def help_width() -> int:
    """click's HelpFormatter width: the terminal's columns (``shutil.get_terminal_size``, without
    importing shutil), at most 80, minus 2, at least 50."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return max(min(columns, 80) - 2, 50)


def _wrap(text: str, width: int, initial: str = "", subsequent: str = "") -> list[str]:
    """click's ``wrap_text`` for the texts here (one paragraph each, no ``\\b`` blocks)."""
    import textwrap  # noqa: PLC0415 - only help wraps text; completion and --version do not

    class _Wrapper(textwrap.TextWrapper):
        def _handle_long_word(  # click's: cut a long word at the line's end, never elsewhere
            self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int
        ) -> None:
            space_left = max(width - cur_len, 1)
            last = reversed_chunks[-1]
            cur_line.append(last[:space_left])
            reversed_chunks[-1] = last[space_left:]

    wrapper = _Wrapper(
        width, initial_indent=initial, subsequent_indent=subsequent, replace_whitespace=False
    )
    return wrapper.wrap(text.expandtabs())


def _paragraphs(text: str, width: int, indent: str) -> list[str]:
    """click's ``HelpFormatter.write_text``: each paragraph joined and wrapped, a blank line
    between them."""
    lines: list[str] = []
    for number, paragraph in enumerate(p for p in text.split("\n\n") if p.strip()):
        if number:
            lines.append("")
        rows = paragraph.strip("\n").splitlines()
        first = rows[0].lstrip()
        extra = " " * (len(rows[0]) - len(first))  # click keeps a paragraph's own indent
        joined = " ".join([first, *rows[1:]])
        lines.extend(_wrap(joined, width, indent + extra, indent + extra))
    return lines


def _definitions(rows: list[tuple[str, str]], width: int, indent: int = 2) -> list[str]:
    """click's ``HelpFormatter.write_dl`` (col_max 30, col_spacing 2)."""
    first_col = min(max(len(term) for term, _ in rows), 30) + 2
    text_width = max(width - first_col - 2, 10)
    lines: list[str] = []
    for term, text in rows:
        head = " " * indent + term
        wrapped = _wrap(text, text_width) or [""]
        if len(term) <= first_col - 2:
            lines.append(head + " " * (first_col - len(term)) + wrapped[0])
        else:
            lines.append(head)
            lines.append(" " * (first_col + indent) + wrapped[0])
        lines.extend(" " * (first_col + indent) + line for line in wrapped[1:])
    return lines


def root_help(width: int) -> str:
    """``kubectl storage --help`` as typer prints it in plain mode at this formatter width."""
    prefix = f"Usage: {PROG_NAME} "
    if width >= len(prefix) + 20:
        usage = _wrap(ROOT_USAGE_ARGS, width, prefix, " " * len(prefix))
    else:  # click puts the arguments on the next line
        usage = [prefix, *_wrap(ROOT_USAGE_ARGS, width, " " * 11, " " * 11)]
    lines = [*usage, "", *_paragraphs(ROOT_HELP, width, "  ")]
    lines += ["", "Options:", *_definitions(list(ROOT_OPTION_ROWS), width)]
    commands = [(name, entry.help) for name, entry in COMMANDS.items()]
    lines += ["", "Commands:", *_definitions(commands, width)]
    return "\n".join(lines) + "\n"


def completion_of_subcommands(word: str, descriptions: bool) -> str:
    """cli/completion's answer for the first word when it is not a flag: the subcommands."""
    out = []
    for name, entry in COMMANDS.items():
        if name.startswith(word):
            text = " ".join(entry.help.split()) if descriptions else ""
            out.append(f"{name}\t{text}" if text else name)
    out.append(f":{_NO_FILE_COMP}")
    return "\n".join(out) + "\n"


def quick_answer(args: list[str]) -> str | None:
    """The output for ``args`` (the words after the program's name) when this module can give
    it without typer, else None."""
    if len(args) == 1:
        if args[0] in ("--help", "-h"):
            return root_help(help_width()) if plain_help() else None
        if args[0] == "--version":
            return f"kubectl-storage {__version__}\n"
    first_word = len(args) == 2 and not args[1].startswith("-")
    if first_word and args[0] in ("__complete", "__completeNoDesc"):
        return completion_of_subcommands(args[1], descriptions=args[0] == "__complete")
    return None


def main() -> NoReturn:
    """Console-script entry point (``kubectl-storage``, ``kubectl_complete-storage``,
    ``python -m kubectl_storage``, the binaries): a quick answer, or cli/app.py's ``main``."""
    args = sys.argv[1:]
    # Path(argv[0]).stem, as app.py reads it, without importing pathlib (~5 ms)
    if os.path.splitext(os.path.basename(sys.argv[0]))[0] == COMPLETER_NAME:  # noqa: PTH119, PTH122
        args = ["__complete", *args]
    answer = quick_answer(args)
    if answer is None:
        from kubectl_storage.cli.app import main as app_main  # noqa: PLC0415 - the slow path

        app_main()
    try:
        sys.stdout.write(answer)
        sys.stdout.flush()
    except BrokenPipeError:  # as app.py: the reader went away (`| head`)
        pass
    sys.exit(0)
