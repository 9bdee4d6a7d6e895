"""kubectl's completion executable for the plugin (build/kubectl_complete-storage), unbuilt.

kubectl (1.26 and later) runs ``kubectl_complete-storage WORD… CURRENT`` from PATH to complete
``kubectl storage …``. The script asks the kubectl-storage next to it (after following links),
else the one on PATH, and stays silent when there is none. The built forms are run in
test_binary.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.packaging.conftest import REPO

SCRIPT = REPO / "build" / "kubectl_complete-storage"
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script")


def fake_plugin(directory: Path, answer: str) -> Path:
    """A kubectl-storage that prints ``answer`` and the arguments it got."""
    directory.mkdir(parents=True, exist_ok=True)
    plugin = directory / "kubectl-storage"
    plugin.write_text(f'#!/bin/sh\necho "{answer} $*"\n')
    plugin.chmod(0o755)
    return plugin


def run(path: Path, *args: str, path_env: str = "/usr/bin:/bin") -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(path), *args], capture_output=True, text=True, env={"PATH": path_env}, timeout=30
    )


def test_asks_the_plugin_next_to_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    fake_plugin(store, "beside")
    fake_plugin(tmp_path / "elsewhere", "on-path")
    completer = store / SCRIPT.name
    completer.write_bytes(SCRIPT.read_bytes())
    completer.chmod(0o755)
    result = run(completer, "fio", "-s", "", path_env=f"{tmp_path / 'elsewhere'}:/usr/bin:/bin")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        "beside __complete fio -s \n",
        "",
    )


def test_through_a_link_it_finds_the_plugin_behind_the_link(tmp_path: Path) -> None:
    """As after `ln -s ~/.krew/store/storage/v…/kubectl_complete-storage ~/.krew/bin/`."""
    store = tmp_path / "store" / "v1"
    fake_plugin(store, "store")
    completer = store / SCRIPT.name
    completer.write_bytes(SCRIPT.read_bytes())
    completer.chmod(0o755)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / SCRIPT.name).symlink_to(os.path.relpath(completer, bin_dir))
    result = run(bin_dir / SCRIPT.name, "snapshot", "")
    assert result.stdout == "store __complete snapshot \n"


def test_else_the_plugin_on_path(tmp_path: Path) -> None:
    """As after `cp …/kubectl_complete-storage ~/bin/` next to nothing."""
    fake_plugin(tmp_path / "plugins", "on-path")
    alone = tmp_path / "alone"
    alone.mkdir()
    completer = alone / SCRIPT.name
    completer.write_bytes(SCRIPT.read_bytes())
    completer.chmod(0o755)
    result = run(completer, "", path_env=f"{tmp_path / 'plugins'}:/usr/bin:/bin")
    assert result.stdout == "on-path __complete \n"


def test_without_any_plugin_only_the_directive(tmp_path: Path) -> None:
    completer = tmp_path / SCRIPT.name
    completer.write_bytes(SCRIPT.read_bytes())
    completer.chmod(0o755)
    result = run(completer, "fio", "")
    assert (result.returncode, result.stdout, result.stderr) == (0, ":4\n", "")


def test_the_real_plugin_answers(tmp_path: Path) -> None:
    """The script in front of this checkout's kubectl-storage: cobra's output."""
    fake = tmp_path / "bin"
    fake.mkdir()
    plugin = fake / "kubectl-storage"
    plugin.write_text(
        f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m kubectl_storage "$@"\n'
    )
    plugin.chmod(0o755)
    result = run(SCRIPT, "snapshot", "c", path_env=f"{fake}:/usr/bin:/bin")
    assert result.returncode == 0
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["check", "cp", ":4"]


def test_add_completer_copies_it_executable(package: ModuleType, tmp_path: Path) -> None:
    for os_name in ("linux", "darwin", "windows"):
        onedir = tmp_path / os_name
        onedir.mkdir()
        added = package.add_completer(onedir, os_name)
        assert added.name == package.completer_name(os_name)
        assert added.read_bytes() == (package.BUILD / added.name).read_bytes()
        assert os.access(added, os.X_OK)
    assert (package.BUILD / "kubectl_complete-storage.cmd").read_bytes().count(b"\r\n") > 3
