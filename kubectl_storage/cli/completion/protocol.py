"""Shell completion, the kubectl way: cobra's ``__complete`` protocol, and scripts for shells.

kubectl (1.26 and later) completes ``kubectl storage …`` by running ``kubectl_complete-storage``
from PATH with the words after ``storage``, the last one being the word under the cursor (empty
after a space). The executable prints one candidate per line, ``value<TAB>description``, then
``:<directive>``, a number whose bits tell the shell what else to do (cobra's
ShellCompDirective: 1 error, 2 no space after the value, 4 no file names, 16 directories only;
0 the shell's default, file names). ``kubectl_complete-storage`` runs ``kubectl-storage
__complete WORD…``, handled here; ``kubectl storage completion bash|zsh|fish`` prints scripts
that ask the same question, for running ``kubectl-storage`` directly.

Candidates: subcommands (from the command table, nothing imported), flags of the command being
typed plus the global ones, choices, and from the cluster StorageClass names (-s), node names
(--node, the NODE arguments of iscsi and mount-audit), PVCs (--pvc), VolumeSnapshots (the
snapshot argument of snapshot browse/check/cp), snapshot classes, namespaces (-n) and contexts
(--context). Cluster lookups honour --kubeconfig, --context and -n given on the line and take
at most two seconds (kube/names.py). A completion prints nothing on stderr and always exits 0;
when anything fails, the only line is the directive.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import typer

from kubectl_storage.cli.commands import COMMANDS, GLOBAL_FLAGS
from kubectl_storage.cli.help_format import value_label  # app.py has imported it already

if TYPE_CHECKING:
    from kubectl_storage.kube.names import Name

# cobra's ShellCompDirective bits.
ERROR = 1
NO_SPACE = 2
NO_FILE_COMP = 4
FILTER_DIRS = 16
DEFAULT = 0

DEBUG_ENV = "KUBECTL_STORAGE_COMPLETE_DEBUG"  # 1: keep stderr (tracebacks) while completing


@dataclass
class Completions:
    """What to print: candidates (value, description) and the directive."""

    candidates: list[tuple[str, str]] = field(default_factory=list)
    directive: int = NO_FILE_COMP

    def lines(self, descriptions: bool = True) -> list[str]:
        """cobra's output: one candidate per line, then ``:<directive>``."""
        out = []
        for value, help_text in self.candidates:
            text = " ".join(help_text.split()) if descriptions else ""
            out.append(f"{value}\t{text}" if text else value)
        out.append(f":{self.directive}")
        return out


# -- walking the words typed so far ------------------------------------------------------------


@dataclass
class _State:
    """Where the words typed so far leave us."""

    command: Any
    ctx: Any
    root: Any
    root_ctx: Any
    path: list[str] = field(default_factory=list)  # subcommand names below the root
    positionals: list[str] = field(default_factory=list)  # the current command's arguments
    used: set[str] = field(default_factory=set)  # names of the options given
    globals: dict[str, str] = field(default_factory=dict)  # --kubeconfig, --context, -n
    pending: Any = None  # an option whose value is the word being completed
    end_of_options: bool = False  # after "--"
    unknown: bool = False  # an unknown subcommand: nothing to offer


def _context(command: Any, name: str, parent: Any = None) -> Any:
    settings = dict(getattr(command, "context_settings", None) or {})
    return typer.Context(command, parent=parent, info_name=name, resilient_parsing=True, **settings)


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands") and hasattr(command, "get_command")


def _options(command: Any, ctx: Any) -> list[Any]:
    return [p for p in command.get_params(ctx) if p.param_type_name == "option"]


def _global_options(root: Any, ctx: Any) -> list[Any]:
    """The root's options that may also come after the subcommand (app.py hoists them)."""
    return [p for p in _options(root, ctx) if set(p.opts) & GLOBAL_FLAGS]


def _takes_value(option: Any) -> bool:
    return not (getattr(option, "is_flag", False) or getattr(option, "count", False))


def _find_option(state: _State, word: str) -> tuple[Any, str | None, bool]:
    """(option, value given in the same word, whether it is a global one) for ``word``."""
    name, eq, value = word.partition("=")
    scopes = [(_options(state.command, state.ctx), state.command is state.root)]
    if state.command is not state.root:
        scopes.append((_global_options(state.root, state.root_ctx), True))
    for options, is_global in scopes:
        for option in options:
            if name in option.opts or name in option.secondary_opts:
                return option, (value if eq else None), is_global
        if not word.startswith("--") and len(word) > 2:  # -sfast, -ojson, -vv
            for option in options:
                if word[:2] in option.opts:
                    attached = word[2:] if _takes_value(option) else None
                    return option, attached, is_global
    return None, None, False


def _walk(root: Any, words: list[str]) -> _State:
    root_ctx = _context(root, "kubectl storage")
    state = _State(command=root, ctx=root_ctx, root=root, root_ctx=root_ctx)
    is_global = False
    for word in words:
        if state.pending is not None:
            if is_global:
                state.globals[state.pending.name] = word
            state.pending = None
            continue
        if not state.end_of_options and word == "--":
            state.end_of_options = True
            continue
        if not state.end_of_options and word.startswith("-") and word != "-":
            option, value, is_global = _find_option(state, word)
            if option is None:
                continue  # unknown: the command will say so when it runs
            state.used.add(option.name)
            if _takes_value(option) and value is None:
                state.pending = option
            elif is_global and value is not None:
                state.globals[option.name] = value
            continue
        if _is_group(state.command) and not state.positionals:
            sub = state.command.get_command(state.ctx, word)
            if sub is None:
                state.unknown = True
                return state
            state.path.append(word)
            state.ctx = _context(sub, word, parent=state.ctx)
            state.command = sub
            state.used = set()
            continue
        state.positionals.append(word)
    return state


# -- what to offer ------------------------------------------------------------------------------


def _first_sentence(text: str | None) -> str:
    text = " ".join((text or "").split())
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


def _matching(names: list[tuple[str, str]], incomplete: str) -> list[tuple[str, str]]:
    return [(value, help_text) for value, help_text in names if value.startswith(incomplete)]


def _subcommands(state: _State, incomplete: str) -> Completions:
    if not state.path:  # the root: from the table, importing nothing
        names = [(name, entry.help) for name, entry in COMMANDS.items()]
    else:
        group = state.command
        names = []
        for name in group.list_commands(state.ctx):
            sub = group.get_command(state.ctx, name)
            if sub is not None and not sub.hidden:
                names.append((name, sub.get_short_help_str(limit=200)))
    return Completions(_matching(names, incomplete), NO_FILE_COMP)


def _option_names(state: _State, incomplete: str) -> Completions:
    options = list(_options(state.command, state.ctx))
    if state.command is not state.root:
        options += _global_options(state.root, state.root_ctx)
    names: list[tuple[str, str]] = []
    for option in options:
        repeatable = getattr(option, "multiple", False) or getattr(option, "count", False)
        if option.hidden or (option.name in state.used and not repeatable):
            continue
        for opt in [*option.opts, *option.secondary_opts]:
            if incomplete.startswith("--") and not opt.startswith("--"):
                continue
            names.append((opt, _first_sentence(option.help)))
    longs_first = sorted(names, key=lambda n: (not n[0].startswith("--"), n[0]))
    return Completions(_matching(longs_first, incomplete), NO_FILE_COMP)


def _settings(state: _State) -> Any:
    from kubectl_storage.kube.connection import ConnectionSettings  # noqa: PLC0415 - runtime only

    return ConnectionSettings(
        kubeconfig=state.globals.get("kubeconfig") or None,
        context=state.globals.get("context") or None,
        namespace=state.globals.get("namespace") or None,
    )


def _cluster_names(state: _State, what: str) -> list[Name]:
    from kubectl_storage.kube import names  # noqa: PLC0415 - only a lookup needs the client

    if what == "context":
        return names.context_names(_settings(state))
    return names.list_names(what, _settings(state))


#: Options whose value is the name of a cluster object, by any of their flag names.
OPTION_LOOKUPS = {
    "--storage-class": "storageclass",
    "--snapshot-class": "volumesnapshotclass",
    "--node": "node",
    "--restore-node": "node",
    "--pvc": "pvc",
    "--snapshot": "volumesnapshot",
    "--namespace": "namespace",
    "--context": "context",
}
#: Commands whose first argument names a VolumeSnapshot (cp's is SNAP:PATH).
SNAPSHOT_ARGUMENT: set[tuple[str, ...]] = {
    ("snapshot", "browse"),
    ("snapshot", "check"),
    ("snapshot", "cp"),
}
#: Commands whose arguments are node names.
NODE_ARGUMENTS: set[tuple[str, ...]] = {("iscsi",), ("mount-audit",)}
#: Arguments that are local files, by command and index (cp's LOCAL), and such options.
FILE_ARGUMENTS: dict[tuple[str, ...], int] = {("snapshot", "cp"): 1}
FILE_OPTIONS = {"--kubeconfig"}
#: Commands whose arguments are other commands (`rbac fio snapshot`): all but these.
COMMAND_ARGUMENTS: dict[tuple[str, ...], set[str]] = {("rbac",): {"rbac", "completion"}}


def _lookup_for(state: _State, param: Any, argument_index: int) -> str | None:
    """Which kind of name ``param`` takes, if the cluster has the answer."""
    if param.param_type_name == "option":
        for opt in [*param.opts, *param.secondary_opts]:
            if opt in OPTION_LOOKUPS:
                return OPTION_LOOKUPS[opt]
        return None
    path = tuple(state.path)
    if path in NODE_ARGUMENTS:
        return "node"
    if path in SNAPSHOT_ARGUMENT and argument_index == 0:
        if path == ("snapshot", "browse") and "pvc" in state.used:
            return None  # with --pvc the one argument is a path inside the claim
        return "volumesnapshot"
    return None


def _values(state: _State, param: Any, incomplete: str, argument_index: int = 0) -> Completions:
    """Candidates for the value of an option or argument."""
    path = tuple(state.path)
    if param.param_type_name == "argument" and FILE_ARGUMENTS.get(path) == argument_index:
        return Completions([], DEFAULT)
    if param.param_type_name == "option" and FILE_OPTIONS & set(param.opts):
        return Completions([], DEFAULT)
    if path in COMMAND_ARGUMENTS and param.param_type_name == "argument":
        found = [(n, e.help) for n, e in COMMANDS.items() if n not in COMMAND_ARGUMENTS[path]]
        return Completions(_matching(found, incomplete), NO_FILE_COMP)
    what = _lookup_for(state, param, argument_index)
    if what is not None:
        if path == ("snapshot", "cp") and param.param_type_name == "argument":
            if ":" in incomplete:
                return Completions([], NO_FILE_COMP)  # a path inside the snapshot
            found = [(f"{n.name}:", n.description) for n in _cluster_names(state, what)]
            return Completions(_matching(found, incomplete), NO_SPACE | NO_FILE_COMP)
        found = [(n.name, n.description) for n in _cluster_names(state, what)]
        return Completions(_matching(found, incomplete), NO_FILE_COMP)
    items = param.shell_complete(state.ctx, incomplete)
    kinds = {getattr(item, "type", "plain") for item in items}
    if "file" in kinds:
        return Completions([], DEFAULT)
    if "dir" in kinds:
        return Completions([], FILTER_DIRS)
    if items:
        found = [(str(item.value), str(item.help or "")) for item in items]
        return Completions(_matching(found, incomplete), NO_FILE_COMP)
    label = value_label(param.display_type(state.ctx))
    if label in ("PATH", "FILE"):
        return Completions([], DEFAULT)
    if label == "DIR":
        return Completions([], FILTER_DIRS)
    return Completions([], NO_FILE_COMP)


def _argument(state: _State) -> tuple[Any, int] | None:
    """The argument the next positional word fills, and its index among the arguments."""
    given = len(state.positionals)
    arguments = [p for p in state.command.get_params(state.ctx) if p.param_type_name == "argument"]
    for index, argument in enumerate(arguments):
        if argument.nargs < 0:
            return argument, index
        if given < argument.nargs:
            return argument, index
        given -= argument.nargs
    return None


def complete(words: list[str], incomplete: str, root: Any) -> Completions:
    """Candidates for ``incomplete``, the word under the cursor, after ``words``, in the command
    tree of ``root`` (app.py's command group)."""
    state = _walk(root, words)
    if state.unknown:
        return Completions([], NO_FILE_COMP)
    if state.pending is not None:
        return _values(state, state.pending, incomplete)
    if not state.end_of_options and incomplete.startswith("-"):
        if incomplete.startswith("--") and "=" in incomplete:
            name, _, value = incomplete.partition("=")
            option, _, _ = _find_option(state, name)
            if option is None or not _takes_value(option):
                return Completions([], NO_FILE_COMP)
            inner = _values(state, option, value)
            return Completions([(f"{name}={v}", h) for v, h in inner.candidates], inner.directive)
        return _option_names(state, incomplete)
    if _is_group(state.command) and not state.positionals:
        return _subcommands(state, incomplete)
    argument = _argument(state)
    if argument is None:
        if incomplete == "":
            return _option_names(state, "--")
        return Completions([], NO_FILE_COMP)
    return _values(state, argument[0], incomplete, argument[1])


def complete_main(args: list[str], root: Any, *, descriptions: bool = True) -> int:
    """``kubectl-storage __complete WORD… CURRENT``: cobra's output on stdout, nothing on
    stderr, exit code 0 whatever happens."""
    if os.environ.get(DEBUG_ENV) != "1":
        # kubectl hands us its own stderr (the user's terminal); exec credential plugins and
        # the client's retry warnings would write there.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        logging.disable(logging.CRITICAL)
    words, incomplete = (args[:-1], args[-1]) if args else ([], "")
    try:
        result = complete(words, incomplete, root)
    except Exception:  # completion must never break the prompt
        if os.environ.get(DEBUG_ENV) == "1":
            raise
        result = Completions([], NO_FILE_COMP)
    sys.stdout.write("\n".join(result.lines(descriptions)) + "\n")
    sys.stdout.flush()
    if threading.active_count() > 1:
        os._exit(0)  # a lookup that missed its deadline must not hold the prompt
    return 0
