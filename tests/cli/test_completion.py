"""The lazy command table, kubectl-style help labels and shell completion, without a cluster.

Completion answers are checked in-process through ``complete()`` (fast, and cluster lookups can
be replaced there), and end to end through ``kubectl-storage __complete`` and the shell scripts
of ``completion bash|zsh|fish``. With a real cluster: tests/e2e/test_completion.py.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from kubectl_storage.cli.app import app
from kubectl_storage.cli.commands import COMMANDS, GLOBAL_FLAGS
from kubectl_storage.cli.completion import (
    DEFAULT,
    NO_FILE_COMP,
    NO_SPACE,
    SCRIPTS,
    Completions,
    Shell,
)
from kubectl_storage.cli.completion import complete as complete_in
from kubectl_storage.kube import names as names_module
from kubectl_storage.kube.names import Name
from tests.conftest import REPO, run_cli

NO_CLUSTER = {"KUBECONFIG": "/nonexistent/kubeconfig", "KUBERNETES_SERVICE_HOST": ""}


def root_and_context() -> tuple[Any, Any]:
    root = typer.main.get_command(app)
    return root, typer.Context(root, info_name="kubectl storage", **root.context_settings)


def all_commands() -> list[tuple[list[str], Any]]:
    """(path, click command) for every command and subcommand, each imported."""
    root, ctx = root_and_context()
    found: list[tuple[list[str], Any]] = [([], root)]
    for name in root.list_commands(ctx):
        command = root.get_command(ctx, name)
        found.append(([name], command))
        for sub in getattr(command, "commands", {}):
            found.append(([name, sub], command.commands[sub]))
    return found


def complete(words: list[str], incomplete: str) -> Completions:
    """complete() in the tool's own command tree, as `kubectl-storage __complete` runs it."""
    return complete_in(words, incomplete, typer.main.get_command(app))


def values(result: Completions) -> list[str]:
    return [value for value, _ in result.candidates]


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in NO_CLUSTER.items():
        monkeypatch.setenv(key, value)


# -- the command table ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(COMMANDS))
def test_table_help_is_the_commands_own_first_paragraph(name: str) -> None:
    """The one-line help in commands.COMMANDS is the command's docstring's first paragraph."""
    root, ctx = root_and_context()
    command = root.get_command(ctx, name)
    assert command is not None, f"{COMMANDS[name].module}.{COMMANDS[name].attr} is missing"
    first = " ".join((command.help or "").strip().split("\n\n")[0].split())
    assert COMMANDS[name].help == first


@pytest.mark.parametrize("rich", ["0", "1"])
def test_root_help_lists_every_command_without_importing_them(rich: str) -> None:
    code = (
        "import sys\n"
        "from kubectl_storage.cli.app import run\n"
        "code = run(['--help'])\n"
        "print('MODULES', *sorted(m for m in sys.modules if m.startswith('kubectl_storage.')))\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "TYPER_USE_RICH": rich, "COLUMNS": "200"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    help_text, _, modules_line = proc.stdout.rpartition("MODULES")
    imported = set(modules_line.split())
    for name, entry in COMMANDS.items():
        assert entry.module not in imported, f"--help imported {entry.module}"
        assert name in help_text
        assert " ".join(entry.help.split()[:4]) in " ".join(help_text.split())


def test_no_subcommand_is_the_default_command() -> None:
    result = run_cli("-o", "json", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no cluster is configured")


def test_unknown_command_suggests_from_the_table() -> None:
    result = run_cli("fi")
    assert result.exit_code == 2
    assert "Did you mean 'fio'?" in result.stderr


# -- help labels ------------------------------------------------------------------------------


def test_flags_show_no_type_and_lists_show_their_element() -> None:
    _, ctx = root_and_context()
    for path, command in all_commands():
        for param in command.get_params(ctx):
            shown = param.display_type_rich(ctx)
            where = f"{' '.join(path) or 'root'} {param.opts}"
            if getattr(param, "is_flag", False) or getattr(param, "count", False):
                assert shown is None, f"{where} shows {shown!r}"
            assert "list[" not in (shown or ""), f"{where} shows {shown!r}"
            assert shown != "<bool>", where


def help_paths() -> list[list[str]]:
    return [path for path, _ in all_commands()]


@pytest.mark.parametrize("rich", ["0", "1"])
def test_no_help_shows_bool_or_list_types(rich: str) -> None:
    for path in help_paths():
        result = run_cli(*path, "--help", env={"TYPER_USE_RICH": rich})
        assert result.exit_code == 0, (path, result.stderr)
        assert "<bool>" not in result.stdout, (path, result.stdout)
        assert "list[" not in result.stdout, (path, result.stdout)


def test_fio_help_reads_like_kubectl() -> None:
    out = run_cli("fio", "--help", env={"TYPER_USE_RICH": "0"}).stdout
    assert "--keep <" not in out
    assert "--storage-class <" not in out
    assert "-s, --storage-class TEXT" in out


# -- completion: words ------------------------------------------------------------------------


def test_subcommands_from_the_table() -> None:
    result = complete([], "")
    assert values(result) == list(COMMANDS)
    assert result.candidates[0][1] == COMMANDS["classes"].help
    assert result.directive == NO_FILE_COMP
    assert values(complete([], "f")) == ["fio"]
    assert values(complete([], "zzz")) == []


def test_subcommands_of_a_group() -> None:
    assert set(values(complete(["snapshot"], ""))) == {"list", "check", "browse", "cp"}
    assert values(complete(["snapshot"], "b")) == ["browse"]
    assert values(complete(["-n", "x", "snapshot"], "c")) == ["check", "cp"]


def test_flags_of_the_command_and_the_global_ones() -> None:
    result = complete(["fio"], "-")
    offered = values(result)
    assert {"-s", "--storage-class", "--keep", "--dry-run", "-h", "--help"} <= set(offered)
    assert {"-n", "--namespace", "--kubeconfig", "--context", "-o"} <= set(offered)
    assert "--version" not in offered  # only the root takes it
    assert result.directive == NO_FILE_COMP
    assert values(complete(["fio"], "--st")) == ["--storage-class"]
    assert all(v.startswith("--") for v in values(complete(["fio"], "--")))
    assert dict(complete(["fio"], "--keep").candidates)["--keep"]  # with its description


def test_root_flags_are_the_globals() -> None:
    offered = set(values(complete([], "--")))
    assert {f for f in GLOBAL_FLAGS if f.startswith("--")} <= offered
    assert "--version" in offered


def test_a_flag_given_once_is_not_offered_again() -> None:
    assert values(complete(["fio", "--keep"], "--ke")) == []
    assert values(complete(["fio", "-s", "a"], "--storage-c")) == ["--storage-class"]  # repeatable


def test_after_a_command_without_arguments_flags_are_offered() -> None:
    assert "--storage-class" in values(complete(["fio"], ""))


def test_choices() -> None:
    assert values(complete(["-o"], "")) == ["table", "wide", "json", "yaml"]
    assert values(complete(["fio", "-o"], "j")) == ["json"]  # a global flag after the command
    assert values(complete(["fio"], "--output=y")) == ["--output=yaml"]
    assert values(complete(["completion"], "")) == ["bash", "zsh", "fish"]


def test_files_are_left_to_the_shell() -> None:
    assert complete(["fio", "--file"], "").directive == DEFAULT
    assert complete(["--kubeconfig"], "/tm").directive == DEFAULT
    assert complete(["mount-audit", "--from-file"], "").directive == DEFAULT
    assert complete(["snapshot", "cp", "snap:/a"], "").directive == DEFAULT


def test_nothing_to_offer() -> None:
    for words, incomplete in [
        (["frobnicate"], ""),
        (["fio", "--size"], ""),
        (["fio", "--"], "-"),
        (["classes"], "x"),
    ]:
        result = complete(words, incomplete)
        assert result == Completions([], NO_FILE_COMP), (words, incomplete)


def test_rbac_arguments_are_commands() -> None:
    offered = values(complete(["rbac", "fio"], ""))
    assert "snapshot" in offered
    assert "rbac" not in offered
    assert "completion" not in offered


# -- completion: names from the cluster -------------------------------------------------------


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Replace the cluster lookups: record (kind, settings), answer two names."""
    calls: list[tuple[str, Any]] = []

    def fake(what: str, settings: Any, **_: Any) -> list[Name]:
        calls.append((what, settings))
        return [Name(f"{what}-a", "first"), Name(f"{what}-b")]

    monkeypatch.setattr(names_module, "list_names", fake)
    return calls


@pytest.mark.parametrize(
    ("words", "incomplete", "kind"),
    [
        (["fio", "-s"], "", "storageclass"),
        (["fio", "-s", "x", "--storage-class"], "", "storageclass"),
        (["validate-persistence", "-s"], "", "storageclass"),
        (["snapshot", "check", "--snapshot-class"], "", "volumesnapshotclass"),
        (["fio", "--node"], "", "node"),
        (["iscsi"], "", "node"),
        (["mount-audit", "worker-1"], "", "node"),
        (["fio", "--pvc"], "", "pvc"),
        (["snapshot", "browse", "--pvc"], "", "pvc"),
        (["snapshot", "browse"], "", "volumesnapshot"),
        (["-n"], "", "namespace"),
        (["fio", "--namespace"], "", "namespace"),
    ],
)
def test_which_names_are_looked_up(
    lookups: list[tuple[str, Any]], words: list[str], incomplete: str, kind: str
) -> None:
    result = complete(words, incomplete)
    assert [what for what, _ in lookups] == [kind]
    assert result.candidates == [(f"{kind}-a", "first"), (f"{kind}-b", "")]
    assert result.directive == NO_FILE_COMP


def test_names_are_filtered_by_the_word(lookups: list[tuple[str, Any]]) -> None:
    assert values(complete(["fio", "-s"], "storageclass-b")) == ["storageclass-b"]
    assert values(complete(["fio"], "--storage-class=storageclass-a")) == [
        "--storage-class=storageclass-a"
    ]


def test_snapshot_cp_source_is_name_and_colon(lookups: list[tuple[str, Any]]) -> None:
    result = complete(["snapshot", "cp"], "")
    assert values(result) == ["volumesnapshot-a:", "volumesnapshot-b:"]
    assert result.directive == NO_SPACE | NO_FILE_COMP
    assert complete(["snapshot", "cp"], "volumesnapshot-a:/et") == Completions([], NO_FILE_COMP)


def test_browse_with_pvc_takes_a_path(lookups: list[tuple[str, Any]]) -> None:
    assert complete(["snapshot", "browse", "--pvc", "data"], "").candidates == []
    assert lookups == []


@pytest.mark.parametrize(
    "words",
    [
        ["--kubeconfig", "/k", "--context", "c", "-n", "ns", "fio", "--pvc"],
        ["fio", "--kubeconfig", "/k", "--context", "c", "-n", "ns", "--pvc"],
        ["fio", "--kubeconfig=/k", "--context=c", "--namespace=ns", "--pvc"],
        ["-nns", "fio", "--kubeconfig", "/k", "--context", "c", "--pvc"],
    ],
)
def test_lookups_use_the_flags_on_the_line(
    lookups: list[tuple[str, Any]], words: list[str]
) -> None:
    complete(words, "")
    ((_, settings),) = lookups
    assert (settings.kubeconfig, settings.context, settings.namespace) == ("/k", "c", "ns")


def test_context_names_from_the_kubeconfig(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "clusters: [{name: c1, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: prod, context: {cluster: c1, user: u}},"
        " {name: dev, context: {cluster: c1, user: u}}]\n"
    )
    result = complete(["--kubeconfig", str(config), "fio", "--context"], "")
    assert result.candidates == [("dev", "c1"), ("prod", "c1")]
    assert values(complete(["--kubeconfig", str(config), "--context"], "p")) == ["prod"]


# -- `kubectl-storage __complete`, the way kubectl runs it ------------------------------------


def closed_port_kubeconfig(tmp_path: Path, server: str = "https://127.0.0.1:1") -> Path:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: a, context: {cluster: c, user: u, namespace: team-a}}]\n"
    )
    return config


#: Seconds after which a completion counts as hung (its cluster lookup gives up after 2 s).
HANG_S = 30


def test_complete_protocol_on_stdout_only() -> None:
    result = run_cli("__complete", "")
    assert result.exit_code == 0
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[-1] == f":{NO_FILE_COMP}"
    assert lines[:-1] == [f"{name}\t{entry.help}" for name, entry in COMMANDS.items()]
    plain = run_cli("__completeNoDesc", "snapshot", "").stdout.splitlines()
    assert plain == ["list", "check", "browse", "cp", ":4"]


@pytest.mark.parametrize(
    "words",
    [
        ["fio", "-s", ""],
        ["iscsi", ""],
        ["snapshot", "browse", ""],
        ["fio", "--pvc", ""],
        ["-n", ""],
    ],
)
def test_unreachable_cluster_prints_only_the_directive(tmp_path: Path, words: list[str]) -> None:
    config = closed_port_kubeconfig(tmp_path)
    # A completion that hung would fail here; how fast it gives up is tests/bench's to measure
    # (a timed assertion failed under the load of a parallel CI run).
    result = run_cli("__complete", "--kubeconfig", str(config), *words, timeout=HANG_S)
    assert (result.exit_code, result.stdout, result.stderr) == (0, ":4\n", "")


def test_no_kubeconfig_prints_only_the_directive() -> None:
    result = run_cli("__complete", "fio", "-s", "", env=NO_CLUSTER)
    assert (result.exit_code, result.stdout, result.stderr) == (0, ":4\n", "")


def test_a_server_that_never_answers_is_given_two_seconds(tmp_path: Path) -> None:
    """The TCP handshake succeeds (the kernel accepts), then nothing is ever sent back."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        port = server.getsockname()[1]
        config = closed_port_kubeconfig(tmp_path, f"https://127.0.0.1:{port}")
        started = time.monotonic()
        result = run_cli("__complete", "--kubeconfig", str(config), "fio", "-s", "", timeout=HANG_S)
        elapsed = time.monotonic() - started
    assert (result.exit_code, result.stdout, result.stderr) == (0, ":4\n", "")
    # It waited for the server (load only makes this longer), then gave up instead of hanging.
    assert elapsed > 1.5, f"{elapsed:.1f}s"


def test_run_as_kubectl_complete_storage() -> None:
    """Called by that name (a link to or copy of the executable), it completes for kubectl."""
    code = (
        "import sys; sys.argv[0] = '/usr/local/bin/kubectl_complete-storage'\n"
        "from kubectl_storage.cli.app import main; main()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code, "fio", "--stor"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout.splitlines()[0].startswith("--storage-class\t")
    assert proc.stdout.splitlines()[-1] == ":4"


# -- `kubectl storage completion bash|zsh|fish` -----------------------------------------------


@pytest.fixture
def shim_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has a `kubectl-storage` running this checkout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "kubectl-storage"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kubectl_storage "$@"\n')
    shim.chmod(0o755)
    return {
        **os.environ,
        **NO_CLUSTER,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
    }


@pytest.mark.parametrize("shell", list(Shell))
def test_completion_command_prints_the_script(shell: Shell) -> None:
    result = run_cli("completion", shell.value)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == SCRIPTS[shell]
    assert "__complete" in result.stdout


def test_completion_needs_a_known_shell() -> None:
    result = run_cli("completion", "tcsh")
    assert result.exit_code == 2
    assert "tcsh" in result.stderr


def test_bash_script_is_valid(tmp_path: Path) -> None:
    script = tmp_path / "kubectl-storage.bash"
    script.write_text(SCRIPTS[Shell.BASH])
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def bash_complete(env: dict[str, str], script: Path, line: str) -> list[str]:
    """COMPREPLY for the command line ``line`` with the cursor at its end, as bash computes it."""
    program = (
        f"source {script}\n"
        f"COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n"
        "__kubectl_storage_complete 2>/dev/null\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    result = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line]


def test_bash_script_completes(tmp_path: Path, shim_path: dict[str, str]) -> None:
    script = tmp_path / "kubectl-storage.bash"
    script.write_text(SCRIPTS[Shell.BASH])
    assert bash_complete(shim_path, script, "kubectl-storage fi") == ["fio"]
    assert bash_complete(shim_path, script, "kubectl-storage snapshot b") == ["browse"]
    assert bash_complete(shim_path, script, "kubectl-storage fio --stor") == ["--storage-class"]
    # bash replaces only what follows the "=" (a COMP_WORDBREAKS character)
    assert bash_complete(shim_path, script, "kubectl-storage --output=ya") == ["yaml"]
    assert bash_complete(shim_path, script, "kubectl-storage fio -s ") == []


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_is_valid(tmp_path: Path) -> None:
    script = tmp_path / "_kubectl-storage"
    script.write_text(SCRIPTS[Shell.ZSH])
    result = subprocess.run(["zsh", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_completes(tmp_path: Path, shim_path: dict[str, str]) -> None:
    """The script's own logic, with zsh's completion functions replaced by ones that print."""
    script = tmp_path / "_kubectl-storage"
    script.write_text(SCRIPTS[Shell.ZSH])
    program = (
        "compdef() { : }\n"
        '_describe() { print -rl -- "${(@P)4}" }\n'
        "_files() { print FILES }\n"
        f"source {script}\n"
        "words=(kubectl-storage snapshot c); CURRENT=3; _kubectl_storage\n"
        "words=(kubectl-storage --output=j); CURRENT=2; _kubectl_storage\n"
        "words=(kubectl-storage fio --file ''); CURRENT=4; _kubectl_storage\n"
    )
    result = subprocess.run(
        ["zsh", "-f", "-c", program], capture_output=True, text=True, env=shim_path, timeout=60
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["check", "cp"]
    assert lines[2:] == ["--output=json", "FILES"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_script_completes(tmp_path: Path, shim_path: dict[str, str]) -> None:
    script = tmp_path / "kubectl-storage.fish"
    script.write_text(SCRIPTS[Shell.FISH])
    check = subprocess.run(["fish", "-n", str(script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    result = subprocess.run(
        ["fish", "--no-config", "-c", f"source {script}; complete -C 'kubectl-storage snapshot c'"],
        capture_output=True,
        text=True,
        env={**shim_path, "HOME": str(tmp_path)},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    offered = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert offered == ["check", "cp"]
