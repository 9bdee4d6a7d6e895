"""Shared by the packaging tests: build/package.py as a module, and the built artifacts.

The tests never build anything: build/build.sh does (tests/run runs it first). Artifacts are
looked up in dist/ for this machine's os/arch, or taken from KUBECTL_STORAGE_BINARY (one
executable of either form). When they are missing the tests fail, unless
KUBECTL_STORAGE_SKIP_BINARY=1 says to skip them.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SKIP_ENV = "KUBECTL_STORAGE_SKIP_BINARY"
BINARY_ENV = "KUBECTL_STORAGE_BINARY"


def load_package_module() -> ModuleType:
    """build/package.py, imported under the name ``kubectl_storage_package``."""
    name = "kubectl_storage_package"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "build" / "package.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def package() -> ModuleType:
    return load_package_module()


def missing(what: str) -> None:
    """Fail (or skip with KUBECTL_STORAGE_SKIP_BINARY=1) because an artifact is not built."""
    reason = f"{what} not built; run build/build.sh first"
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{reason} ({SKIP_ENV}=1)")
    pytest.fail(f"{reason}, or set {SKIP_ENV}=1 to skip the binary tests", pytrace=False)


@dataclass(frozen=True)
class Artifacts:
    """Paths of what build/package.py wrote for this machine."""

    archive: Path
    onefile: Path
    manifest: Path
    exe_name: str


@pytest.fixture(scope="session")
def artifacts(package: ModuleType) -> Artifacts:
    os_name, arch = package.host_platform()
    return Artifacts(
        archive=package.DIST / package.archive_name(os_name, arch),
        onefile=package.DIST / package.onefile_name(os_name, arch),
        manifest=package.DIST / f"{package.PLUGIN}.yaml",
        exe_name=package.exe_name(os_name),
    )


@pytest.fixture(scope="session")
def onedir_exe(artifacts: Artifacts, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The krew archive extracted to a temporary folder, as krew installs it: its executable."""
    if not artifacts.archive.is_file():
        missing(str(artifacts.archive.relative_to(REPO)))
    target = tmp_path_factory.mktemp("onedir")
    with tarfile.open(artifacts.archive) as tar:
        tar.extractall(target, filter="data")
    return target / artifacts.exe_name
