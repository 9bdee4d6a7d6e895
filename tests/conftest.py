"""Shared test helpers: running the CLI as a user would, and golden files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# A background job of a non-interactive shell starts with SIGINT ignored, and children inherit
# that: the interrupt tests would then send Ctrl-C to commands that cannot hear it. Tests run
# with Ctrl-C working, as a user's terminal has it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
GOLDEN = REPO / "tests" / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/* from the current output (review the diff!)",
    )


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> CliResult:
    """Run `python -m kubectl_storage ARGS` in a subprocess, as a user's shell would."""
    full_env = _cli_env()
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "kubectl_storage", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def start_cli(*args: str) -> subprocess.Popen:
    """Start `python -m kubectl_storage ARGS` in the background (for interrupting it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "kubectl_storage", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_cli_env(),
    )


def wait_for_stderr(proc: subprocess.Popen, needle: str, timeout: float = 180) -> str:
    """Read the process's stderr line by line until ``needle`` shows; what was read.

    Kills the process and fails if it ends or the timeout passes first."""
    seen = ""
    deadline = time.monotonic() + timeout
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
        if needle in line:
            return seen
    proc.kill()
    raise AssertionError(f"{needle!r} not seen in stderr:\n{seen}")


def finish_cli(proc: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """Wait for a started CLI to end; its (stdout, stderr).

    If it has not ended in ``timeout`` seconds, kill it and fail with the stderr it printed, so a
    hang shows where the run was instead of a bare TimeoutExpired."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(
            f"the CLI had not ended {timeout:.0f}s later; its stderr:\n{err}"
        ) from None


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """Compare text with tests/golden/NAME, or rewrite it with --update-golden."""

    def check(name: str, actual: str) -> None:
        path = GOLDEN / name
        if request.config.getoption("--update-golden") or not path.exists():
            if not request.config.getoption("--update-golden"):
                pytest.fail(f"golden file {path} is missing; run pytest --update-golden and review")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual)
            return
        assert actual == path.read_text(), f"output differs from {path}"

    return check
