"""How options and arguments show in ``--help``: kubectl's way, applied once at the root.

typer labels every value with its Python type (``--keep <bool>``, ``-s <list[str]>``). kubectl's
help shows a flag as just the flag, and a value's kind only where it says something. The lazy
command group (cli/app.py) hands every command it loads to :func:`tidy_help`, so the command
modules keep declaring options the plain typer way and all of them read the same:

* a boolean flag or a counter (``--keep``, ``-v``) shows no value at all;
* a repeatable option shows its element (``-s, --storage-class TEXT``), not ``list[str]``;
* a value shows as ``TEXT``, ``INT``, ``FLOAT`` or ``PATH``, choices as ``[table|json|…]``;
* an argument's name says what it is (``NODE...``), so it gets a label only when it is not
  text.

Only the help rendering changes: the parameters' metavars, used in usage lines and error
messages, stay as the modules set them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typer.core import TyperArgument, TyperOption

if TYPE_CHECKING:
    import typer

# typer's type names → what help shows; None: nothing.
_LABELS: dict[str, str | None] = {
    "str": "TEXT",
    "int": "INT",
    "float": "FLOAT",
    "bool": None,
    "path": "PATH",
    "file": "FILE",
    "directory": "DIR",
}


def value_label(typer_label: str | None) -> str | None:
    """kubectl-style label for typer's ``<type>`` string: the element of a list, no ``bool``."""
    if not typer_label:
        return None
    inner = typer_label.strip()
    if inner.startswith("<") and inner.endswith(">"):
        inner = inner[1:-1]
    while inner.startswith("list[") and inner.endswith("]"):
        inner = inner[len("list[") : -1]
    if "|" in inner:
        return f"[{inner}]"  # choices
    lowered = inner.lower()
    if lowered in _LABELS:
        return _LABELS[lowered]
    return inner.upper() or None


class _TidyOption(TyperOption):
    """A typer option whose help shows kubectl's labels (see the module docstring)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        """The value label in help; None for flags and counters."""
        if self.is_flag or self.count:
            return None
        if self.metavar is not None:
            return self.metavar
        label = value_label(self.display_type(ctx))
        if label is not None and self.nargs != 1:
            label += "..."
        return label


class _TidyArgument(TyperArgument):
    """A typer argument whose help shows a label only when the value is not text."""

    def display_type_rich(self, ctx: Any) -> str | None:
        """None for text (the argument's name says it), else the element's label."""
        label = value_label(self.display_type(ctx))
        return None if label == "TEXT" else label


def tidy_param(param: Any) -> None:
    """Switch one typer parameter to the kubectl-style help labels (others are left alone)."""
    if type(param) is TyperOption:
        param.__class__ = _TidyOption
    elif type(param) is TyperArgument:
        param.__class__ = _TidyArgument


def tidy_help(command: Any, ctx: typer.Context | None = None) -> None:
    """Apply the labels to a command, its help option and, for a group, every subcommand.

    ``ctx`` is the parent's context: the help option (-h/--help) is created from the names it
    inherits and cached on the command, so that it can be tidied too.
    """
    for param in getattr(command, "params", ()):
        tidy_param(param)
    own_names = (getattr(command, "context_settings", None) or {}).get("help_option_names")
    if (
        ctx is not None
        and hasattr(command, "get_help_option")
        and own_names in (None, ctx.help_option_names)
    ):
        help_option = command.get_help_option(ctx)
        if help_option is not None:
            tidy_param(help_option)
    for sub in (getattr(command, "commands", None) or {}).values():
        tidy_help(sub, ctx)
