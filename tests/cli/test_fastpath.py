"""The start-up fast path (cli/fastpath.py) answers exactly as typer does (issue 28 item 4).

Each answer the fast path gives without typer is compared, byte for byte, with what cli/app.py
prints for the same argv; and the fast path must not import typer for them.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kubectl_storage.cli.commands import COMMANDS
from kubectl_storage.cli.fastpath import quick_answer
from tests.conftest import REPO

#: Runs one entry point with argv; prints the output, then the typer modules it imported.
PROBE = (
    "import importlib, sys\n"
    "entry = sys.argv[1]\n"
    "sys.argv = ['kubectl-storage', *sys.argv[2:]]\n"
    "main = importlib.import_module(entry).main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    "sys.stdout.flush()\n"
    "typer = sorted(m for m in sys.modules if m == 'typer' or m.startswith('typer.'))\n"
    "sys.stderr.write(f'TYPER {typer[:1]}')\n"
    "sys.exit(code)\n"
)


def run_entry(entry: str, args: list[str], env: dict[str, str]) -> tuple[int, bytes, str]:
    """(exit code, stdout bytes, the first typer module imported, as a list) for the ``main``
    of module ``entry`` with ``args``."""
    full_env = {**os.environ, **env, "PYTHONPATH": str(REPO)}
    full_env.pop("KUBECTL_STORAGE_COMPLETE_DEBUG", None)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, entry, *args],
        capture_output=True,
        env=full_env,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr.decode().rpartition("TYPER ")[2]


def compare(args: list[str], env: dict[str, str]) -> None:
    """The fast path and app.py print the same bytes with the same exit code; the fast path
    does it without typer."""
    fast = run_entry("kubectl_storage.cli.fastpath", args, env)
    full = run_entry("kubectl_storage.cli.app", args, env)
    assert fast[:2] == full[:2]
    assert fast[2] == "[]", f"the fast path imported typer for {args}"


@pytest.mark.parametrize("columns", ["40", "50", "51", "52", "60", "64", "71", "79", "80", "200"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_root_help_is_typers_at_every_width(columns: str, flag: str) -> None:
    compare([flag], {"TYPER_USE_RICH": "0", "COLUMNS": columns})


@pytest.mark.parametrize("value", ["0", "false", "No", "OFF"])
def test_plain_help_is_read_from_typer_use_rich_as_typer_reads_it(value: str) -> None:
    compare(["--help"], {"TYPER_USE_RICH": value, "COLUMNS": "80"})


@pytest.mark.parametrize("value", [None, "1", "yes", "maybe"])
def test_rich_help_is_left_to_typer(value: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if value is None:
        monkeypatch.delenv("TYPER_USE_RICH", raising=False)
    else:
        monkeypatch.setenv("TYPER_USE_RICH", value)
    assert quick_answer(["--help"]) is None


def test_version() -> None:
    compare(["--version"], {})


@pytest.mark.parametrize("word", ["", "c", "cl", "snap", "v", "x", "fio"])
@pytest.mark.parametrize("how", ["__complete", "__completeNoDesc"])
def test_completion_of_the_first_word(word: str, how: str) -> None:
    compare([how, word], {})


def test_as_kubectl_complete_storage() -> None:
    """Called by that name, the fast path answers the first word too, like app.py."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = (
        "import sys; sys.argv[0] = '/usr/local/bin/kubectl_complete-storage'\n"
        "from kubectl_storage.cli.fastpath import main; main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "cl"], capture_output=True, text=True, env=env, timeout=60
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert (
        proc.stdout
        == f"classes\t{COMMANDS['classes'].help}\ncleanup\t{COMMANDS['cleanup'].help}\n:4\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help", "-v"],
        ["fio", "--help"],
        ["__complete", "-"],
        ["__complete", "--"],
        ["__complete", "fio", ""],
        ["__complete"],
        ["--versions"],
    ],
)
def test_everything_else_goes_to_typer(args: list[str]) -> None:
    assert quick_answer(args) is None
