"""Shared test helpers: running the CLI as a user would, and golden files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

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
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
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
