"""Smoke tests of the built binaries, both forms, run as a user runs them.

Builds nothing: build/build.sh writes dist/ (see conftest.py for where the binaries come from
and KUBECTL_STORAGE_SKIP_BINARY). The one-folder form is the krew archive extracted to a
temporary folder; the one-file form is the single-binary download. Their output must be the
same as ``python -m kubectl_storage``'s, which the rest of the suite tests in depth.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import yaml

from kubectl_storage import __version__
from tests.conftest import FIXTURES, run_cli
from tests.packaging.conftest import BINARY_ENV, REPO, Artifacts, missing

MOUNTINFO = FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo"
MULTIPATH = FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt"
FIO_JSON = FIXTURES / "fio" / "fio-3.33-quick-profile-ext4.json"
# (form, has the charting stack)
FORMS = [("one-folder", True), ("one-file", False)]


@pytest.fixture(params=FORMS, ids=[form for form, _ in FORMS])
def binary(request: pytest.FixtureRequest, artifacts: Artifacts) -> tuple[Path, bool]:
    """(executable, whether it can draw charts) for each form."""
    form, charts = request.param
    given = os.environ.get(BINARY_ENV)
    if given:
        path = Path(given)
        if not path.is_file():
            pytest.fail(f"{BINARY_ENV}={given} does not exist", pytrace=False)
        # One executable of either form was given: a one-folder build has _internal/ next to it.
        given_charts = (path.parent / "_internal").is_dir()
        if given_charts != charts:
            pytest.skip(f"{BINARY_ENV} is the {'one-folder' if given_charts else 'one-file'} form")
        return path, charts
    if form == "one-file":
        if not artifacts.onefile.is_file():
            missing(str(artifacts.onefile.relative_to(REPO)))
        return artifacts.onefile, charts
    # Extracted on first use only, so a one-file-only run does not need the archive.
    return request.getfixturevalue("onedir_exe"), charts


def run(binary: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full_env.update(env or {})
    return subprocess.run(
        [str(binary), *args], capture_output=True, text=True, env=full_env, timeout=120
    )


def test_help(binary: tuple[Path, bool]) -> None:
    result = run(binary[0], "--help")
    assert result.returncode == 0, result.stderr
    assert "kubectl storage" in result.stdout
    for command in ("classes", "cleanup", "fio", "iscsi", "mount-audit", "rbac"):
        assert command in result.stdout


def test_version(binary: tuple[Path, bool]) -> None:
    result = run(binary[0], "--version")
    assert (result.returncode, result.stdout) == (0, f"kubectl-storage {__version__}\n")


@pytest.mark.parametrize(
    "args",
    [
        ("mount-audit", "--from-file", str(MOUNTINFO)),
        ("mount-audit", "--from-file", str(MOUNTINFO), "-o", "json"),
        ("iscsi", "--from-file", str(MULTIPATH)),
        ("fio", "--from-json", str(FIO_JSON), "-o", "yaml"),
        ("rbac", "fio", "-n", "bench"),
    ],
    ids=["mount-audit", "mount-audit-json", "iscsi", "fio-from-json", "rbac"],
)
def test_offline_commands_match_python(binary: tuple[Path, bool], args: tuple[str, ...]) -> None:
    """Offline commands print exactly what the package prints under Python."""
    expected = run_cli(*args)
    result = run(binary[0], *args)
    assert (result.returncode, result.stdout) == (expected.exit_code, expected.stdout), (
        result.stderr
    )


def test_usage_error_exit_code(binary: tuple[Path, bool]) -> None:
    result = run(binary[0], "fio", "--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.startswith("error:")


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_chart(binary: tuple[Path, bool], tmp_path: Path, suffix: str) -> None:
    """The one-folder form draws; the one-file form says where charts are available."""
    path, charts = binary
    chart = tmp_path / f"chart.{suffix}"
    result = run(path, "fio", "--from-json", str(FIO_JSON), "--chart", str(chart))
    if charts:
        assert result.returncode == 0, result.stderr
        head = chart.read_bytes()[:512]
        assert head.startswith(b"\x89PNG") if suffix == "png" else b"<svg" in head
    else:
        assert result.returncode == 2
        assert "single-file build leaves out" in result.stderr
        assert "krew" in result.stderr
        assert "Traceback" not in result.stderr
        assert not chart.exists()


@pytest.mark.cluster
def test_cluster_command(binary: tuple[Path, bool]) -> None:
    """One command against the test cluster (KUBECONFIG, as tests/run exports it)."""
    if not os.environ.get("KUBECONFIG"):
        pytest.fail("KUBECONFIG is not set; tests/run exports the test cluster's", pytrace=False)
    result = run(binary[0], "classes", "-o", "json")
    assert result.returncode == 0, result.stderr
    assert result.stdout == run_cli("classes", "-o", "json").stdout


# -- completion, as kubectl asks for it -------------------------------------------------------


def completion_lines(result: subprocess.CompletedProcess) -> list[str]:
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    return [line.split("\t")[0] for line in result.stdout.splitlines()]


def test_complete(binary: tuple[Path, bool]) -> None:
    result = run(binary[0], "__complete", "snapshot", "c")
    assert completion_lines(result) == ["check", "cp", ":4"]
    result = run(binary[0], "__complete", "fio", "--stor")
    assert completion_lines(result) == ["--storage-class", ":4"]


def test_complete_from_an_unreachable_cluster(binary: tuple[Path, bool], tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
    )
    started = time.monotonic()
    run(binary[0], "__complete", "fio", "--")  # no lookup: start-up and imports only
    baseline = time.monotonic() - started
    started = time.monotonic()
    result = run(binary[0], "__complete", "--kubeconfig", str(config), "fio", "-s", "")
    elapsed = time.monotonic() - started
    assert (result.returncode, result.stdout, result.stderr) == (0, ":4\n", "")
    # The lookup itself (client import, connection refused) is bounded by 2 s.
    assert elapsed - baseline < 2.2, f"{elapsed:.1f}s, {baseline:.1f}s without a lookup"


@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX script; Windows has the .cmd")
def test_archive_completer_asks_the_binary_next_to_it(onedir_exe: Path) -> None:
    """kubectl_complete-storage from the krew archive, on a PATH without kubectl-storage."""
    completer = onedir_exe.parent / "kubectl_complete-storage"
    result = subprocess.run(
        [str(completer), "snapshot", "c"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert completion_lines(result) == ["check", "cp", ":4"]


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_binary_called_kubectl_complete_storage_completes(
    binary: tuple[Path, bool], tmp_path: Path
) -> None:
    """The single binary (and the one-folder executable) is the completion executable when
    linked under that name, as the `completion` command's help says."""
    link = tmp_path / "kubectl_complete-storage"
    link.symlink_to(binary[0])
    result = run(link, "fio", "--stor")
    assert completion_lines(result) == ["--storage-class", ":4"]


# -- the release files ------------------------------------------------------------------------


def test_checksum_files(artifacts: Artifacts) -> None:
    for path in (artifacts.archive, artifacts.onefile):
        if not path.is_file():
            missing(str(path.relative_to(REPO)))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert Path(f"{path}.sha256").read_text() == f"{digest}  {path.name}\n"


def test_archive_contents(artifacts: Artifacts) -> None:
    """krew can extract it (files and directories only), LICENSE and what the manifest moves
    are there, and it is reproducible: fixed mtimes and owners, gzip without name and time."""
    if not artifacts.archive.is_file():
        missing(str(artifacts.archive.relative_to(REPO)))
    raw = artifacts.archive.read_bytes()
    assert raw[3] & 0x08 == 0
    assert raw[4:8] == b"\0\0\0\0"
    with tarfile.open(artifacts.archive) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert {"LICENSE", artifacts.exe_name, "_internal"} <= set(names)
    completer = next(m for m in members if m.name.startswith("kubectl_complete-storage"))
    assert completer.isfile()
    assert completer.mode == 0o755
    assert all(m.isfile() or m.isdir() for m in members)
    assert len({(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members}) == 1
    assert gzip.decompress(raw)  # the whole stream is valid


def test_local_manifest_matches_archive(artifacts: Artifacts) -> None:
    if not artifacts.manifest.is_file():
        missing(str(artifacts.manifest.relative_to(REPO)))
    manifest = yaml.safe_load(artifacts.manifest.read_text())
    (platform,) = manifest["spec"]["platforms"]
    assert platform["uri"].endswith("/" + artifacts.archive.name)
    assert platform["sha256"] == hashlib.sha256(artifacts.archive.read_bytes()).hexdigest()
    assert manifest["spec"]["version"] == f"v{__version__}"
