"""The krew path, for real: krew's validator accepts the manifest, krew installs the plugin from
the local archive, and kubectl runs it against the test cluster.

krew and validate-krew-manifest are built from the Go module proxy (sigs.k8s.io/krew) and
cached outside the repository under /var/cache/kubectl-storage-testcluster/tools/krew-<version>
(KREW_VERSION overrides the version; v0.4.3 is the newest the proxy serves). The archive and
dist/storage.yaml come from build/build.sh; like tests/packaging, this fails when they are
missing unless KUBECTL_STORAGE_SKIP_BINARY=1.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubectl_storage import __version__
from tests.e2e.conftest import HOSTPATH_CLASS
from tests.packaging.conftest import load_package_module, missing

KREW_VERSION = os.environ.get("KREW_VERSION", "v0.4.3")
TOOLS = (
    Path(os.environ.get("TESTCLUSTER_CACHE", "/var/cache/kubectl-storage-testcluster")) / "tools"
)
KREW_BIN = TOOLS / f"krew-{KREW_VERSION}" / "bin"
GO_BUILD_TIMEOUT_S = 20 * 60


def krew_tools() -> Path:
    """The directory holding krew and validate-krew-manifest, built on first use."""
    wanted = [KREW_BIN / "krew", KREW_BIN / "validate-krew-manifest"]
    if all(p.is_file() for p in wanted):
        return KREW_BIN
    go = shutil.which("go")
    if go is None:
        pytest.fail("go is not installed; it builds krew from the Go module proxy", pytrace=False)
    KREW_BIN.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            go,
            "install",
            f"sigs.k8s.io/krew/cmd/krew@{KREW_VERSION}",
            f"sigs.k8s.io/krew/cmd/validate-krew-manifest@{KREW_VERSION}",
        ],
        env={**os.environ, "GOBIN": str(KREW_BIN), "CGO_ENABLED": "0"},
        capture_output=True,
        text=True,
        timeout=GO_BUILD_TIMEOUT_S,
    )
    if result.returncode != 0:
        pytest.fail(f"building krew {KREW_VERSION} failed:\n{result.stderr[-3000:]}", pytrace=False)
    return KREW_BIN


@pytest.fixture(scope="module")
def built() -> tuple[Path, Path]:
    """(archive, dist/storage.yaml) for this machine."""
    package = load_package_module()
    os_name, arch = package.host_platform()
    archive = package.DIST / package.archive_name(os_name, arch)
    manifest = package.DIST / f"{package.PLUGIN}.yaml"
    for path in (archive, manifest):
        if not path.is_file():
            missing(f"dist/{path.name}")
    return archive, manifest


@pytest.fixture(scope="module")
def kubectl_path(cluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH with the cluster's kubectl and krew as the `kubectl krew` plugin, first."""
    tools = krew_tools()
    shim = tmp_path_factory.mktemp("path")
    (shim / "kubectl").symlink_to(cluster.kubectl)
    (shim / "kubectl-krew").symlink_to(tools / "krew")
    return f"{shim}{os.pathsep}{os.environ['PATH']}"


def run(
    args: list[str], env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout
    )


def test_validator_accepts_rendered_manifest(built: tuple[Path, Path]) -> None:
    """krew's own validator, offline: schema, semver, sha256, selectors, no overlap."""
    validator = krew_tools() / "validate-krew-manifest"
    result = run([str(validator), "-manifest", str(built[1]), "-skip-install"], dict(os.environ))
    assert result.returncode == 0, result.stderr
    for line in (
        "structural validation OK",
        "all spec.platform[] items are used",
        "no overlapping spec.platform[].selector",
    ):
        assert line in result.stderr


@pytest.fixture
def served_dist(built: tuple[Path, Path]) -> Iterator[str]:
    """dist/ over HTTP on 127.0.0.1, for the validator's download-and-install step."""
    handler = functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=str(built[0].parent)
    )
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_validator_installs_from_archive(
    built: tuple[Path, Path], served_dist: str, kubectl_path: str, tmp_path: Path
) -> None:
    """The validator's full run: it installs the archive with krew (in its own temporary
    KREW_ROOT) from the URI and checks that a LICENSE file was extracted."""
    package = load_package_module()
    archive = built[0]
    manifest = package.local_manifest(
        package.TEMPLATE.read_text(),
        f"v{__version__}",
        {archive.name: archive},
        uri_base=served_dist,
    )
    local = tmp_path / "storage.yaml"
    package.write_manifest(manifest, local)
    validator = krew_tools() / "validate-krew-manifest"
    result = run([str(validator), "-manifest", str(local)], {**os.environ, "PATH": kubectl_path})
    assert result.returncode == 0, result.stderr
    assert "installed  spec.platforms[0]" in result.stderr
    assert "spec.platforms installed fine" in result.stderr


def test_install_and_run_through_krew(
    cluster,
    built: tuple[Path, Path],
    kubectl_path: str,
    tmp_path: Path,
) -> None:
    """kubectl krew install --manifest --archive, then kubectl storage as a user runs it."""
    archive, manifest = built
    krew_root = tmp_path / "krew"
    env = {
        **os.environ,
        "KREW_ROOT": str(krew_root),
        "KREW_NO_UPGRADE_CHECK": "1",
        "PATH": f"{krew_root / 'bin'}{os.pathsep}{kubectl_path}",
        "KUBECONFIG": cluster.kubeconfig,
    }
    env.pop("PYTHONPATH", None)
    result = run(
        ["kubectl", "krew", "install", f"--manifest={manifest}", f"--archive={archive}"], env
    )
    assert result.returncode == 0, result.stderr
    assert "Installed plugin: storage" in result.stderr + result.stdout

    store = krew_root / "store" / "storage" / f"v{__version__}"
    link = krew_root / "bin" / "kubectl-storage"
    assert link.is_symlink()
    assert link.resolve() == (store / "kubectl-storage").resolve()
    assert (store / "LICENSE").is_file()
    assert (store / "_internal").is_dir()

    listed = run(["kubectl", "plugin", "list", "--name-only"], env)
    assert "kubectl-storage" in listed.stdout

    version = run(["kubectl", "storage", "--version"], env)
    assert (version.returncode, version.stdout) == (0, f"kubectl-storage {__version__}\n")

    classes = run(["kubectl", "storage", "classes", "-o", "json"], env)
    assert classes.returncode == 0, classes.stderr
    report = json.loads(classes.stdout)
    assert report["kind"] == "ClassList"
    assert HOSTPATH_CLASS in {sc["name"] for sc in report["storageClasses"]}

    # (`kubectl krew uninstall` needs krew's plugin index, a git clone from GitHub; the
    # temporary KREW_ROOT goes away with tmp_path instead.)
