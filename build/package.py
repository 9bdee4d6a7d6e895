"""Build kubectl-storage for this machine's os/arch and write the release files to dist/.

    build/build.sh [--skip-build] [--tag vX.Y.Z] [--uri-base URL]   (the usual way)
    python build/package.py ...                                     (in a venv with PyInstaller)

Writes, for <os>_<arch> of this machine (PyInstaller does not cross-compile):

    dist/kubectl-storage_<os>_<arch>.tar.gz(.sha256)  the one-folder build, kubectl's completion
                                                      executable and LICENSE (krew archive)
    dist/kubectl-storage_<os>_<arch>[.exe](.sha256)   the one-file build (single-binary download;
                                                      run as kubectl_complete-storage, through a
                                                      link or a copy, it completes for kubectl)
    dist/storage.yaml                                 krew-manifest.yaml rendered for that archive

The archive is reproducible from the same build output: entries sorted, mtimes fixed
(SOURCE_DATE_EPOCH, default 1980-01-01), owner 0:0 without names, modes 0755/0644, gzip without
file name or timestamp. Standard library plus PyYAML (a runtime dependency of the package).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "build" / "kubectl-storage.spec"
WORK = ROOT / "build" / "work"
DIST = ROOT / "dist"
TEMPLATE = ROOT / "krew-manifest.yaml"
LICENSE = ROOT / "LICENSE"
BUILD = ROOT / "build"
NAME = "kubectl-storage"
PLUGIN = "storage"
DEFAULT_EPOCH = 315532800  # 1980-01-01T00:00:00Z, the earliest time zip can also store

_OS = {"linux": "linux", "darwin": "darwin", "win32": "windows", "cygwin": "windows"}
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


# -- naming -----------------------------------------------------------------------------------


def host_platform() -> tuple[str, str]:
    """(os, arch) in krew's spelling for the machine we run on."""
    os_name = next((v for k, v in _OS.items() if sys.platform.startswith(k)), None)
    arch = _ARCH.get(platform.machine().lower())
    if os_name is None or arch is None:
        raise SystemExit(f"error: unsupported platform {sys.platform}/{platform.machine()}")
    return os_name, arch


def exe_name(os_name: str) -> str:
    """The executable's file name on ``os_name``."""
    return f"{NAME}.exe" if os_name == "windows" else NAME


def archive_name(os_name: str, arch: str) -> str:
    """The krew archive's file name."""
    return f"{NAME}_{os_name}_{arch}.tar.gz"


def completer_name(os_name: str) -> str:
    """kubectl's completion executable for the plugin (kubectl 1.26+ runs it from PATH)."""
    return "kubectl_complete-storage.cmd" if os_name == "windows" else "kubectl_complete-storage"


def onefile_name(os_name: str, arch: str) -> str:
    """The single-binary download's file name."""
    return f"{NAME}_{os_name}_{arch}" + (".exe" if os_name == "windows" else "")


def package_version() -> str:
    """``__version__`` of the checkout, read without importing the package."""
    text = (ROOT / "kubectl_storage" / "__init__.py").read_text()
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not match:
        raise SystemExit("error: no __version__ in kubectl_storage/__init__.py")
    return match.group(1)


# -- checksums and the archive ----------------------------------------------------------------


def add_completer(onedir: Path, os_name: str) -> Path:
    """Copy kubectl's completion executable (build/kubectl_complete-storage, a shell script;
    a .cmd on Windows) next to the one-folder executable, executable for everyone."""
    name = completer_name(os_name)
    target = onedir / name
    shutil.copyfile(BUILD / name, target)
    target.chmod(0o755)
    return target


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_sha256(path: Path) -> str:
    """Write ``<path>.sha256`` in sha256sum's format (``sha256sum -c`` reads it); return it."""
    digest = sha256_of(path)
    Path(f"{path}.sha256").write_text(f"{digest}  {path.name}\n", newline="\n")
    return digest


def _is_wheel_library_link(path: Path, top: Path) -> bool:
    """A link PyInstaller adds next to a wheel's bundled library (numpy.libs/…, pillow.libs/…,
    …/.dylibs/…). The libraries that need it find the real file through their own RPATH."""
    if not path.is_symlink():
        return False
    target = path.resolve()
    return target.is_relative_to(top.resolve()) and any(
        part.endswith(".libs") or part == ".dylibs"
        for part in target.relative_to(top.resolve()).parts[:-1]
    )


def archive_members(onedir: Path) -> list[tuple[str, Path]]:
    """(name in the archive, file) for the one-folder build, sorted, plus LICENSE.

    krew extracts only regular files and directories. Links to a wheel's bundled libraries
    are left out (their targets are in the archive); any other link is stored as what it
    points to.
    """
    members: list[tuple[str, Path]] = [("LICENSE", LICENSE)]

    def walk(directory: Path, prefix: str) -> None:
        for entry in directory.iterdir():
            if _is_wheel_library_link(entry, onedir):
                continue
            name = f"{prefix}{entry.name}"
            members.append((name, entry))
            if entry.is_dir():  # follows a linked directory: its contents are stored under it
                walk(entry, f"{name}/")

    walk(onedir, "")
    members.sort(key=lambda m: m[0])
    return members


def _is_executable(path: Path) -> bool:
    if path.suffix.lower() in (".exe", ".dll", ".pyd"):
        return True
    # Windows has no execute bit (os.access says yes to every file there).
    return os.name != "nt" and os.access(path, os.X_OK)


def write_archive(onedir: Path, out: Path, epoch: int) -> list[str]:
    """Write the reproducible krew archive: ``onedir``'s contents and LICENSE at the top level.

    Returns the member names in archive order.
    """
    names = []
    tmp = out.with_name(out.name + ".tmp")
    with (
        tmp.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        for name, path in archive_members(onedir):
            info = tarfile.TarInfo(name)
            info.mtime = epoch
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            else:
                resolved = path.resolve()
                info.type = tarfile.REGTYPE
                info.mode = 0o755 if _is_executable(resolved) else 0o644
                info.size = resolved.stat().st_size
                with resolved.open("rb") as f:
                    tar.addfile(info, f)
            names.append(name)
    tmp.replace(out)
    return names


# -- the krew manifest ------------------------------------------------------------------------

_ADD_URI_AND_SHA = re.compile(
    r'\{\{-?\s*addURIAndSha\s+"((?:[^"\\]|\\.)*)"\s+\.TagName\s*-?\}\}', re.MULTILINE
)
_FIELD = re.compile(r"\{\{-?\s*\.(TagName|Version)\s*-?\}\}")


def _fill(text: str, tag: str) -> str:
    values = {"TagName": tag, "Version": tag.removeprefix("v")}
    return _FIELD.sub(lambda m: values[m.group(1)], text)


def render_template(text: str, tag: str, uri_and_sha: Callable[[str], tuple[str, str]]) -> str:
    """Render a krew-release-bot template the way the bot does.

    ``{{ .TagName }}`` becomes ``tag``; ``{{addURIAndSha "URL" .TagName }}`` becomes
    ``uri: …`` and, on the next line indented by four spaces, ``sha256: …``, where
    ``uri_and_sha(url)`` gives both for the URL with its own ``{{ .TagName }}`` filled in.
    Only what our template uses is supported; anything else left in ``{{ }}`` is an error.
    """

    def add_uri_and_sha(match: re.Match[str]) -> str:
        uri, sha = uri_and_sha(_fill(match.group(1), tag))
        return f"uri: {uri}\n    sha256: {sha}"

    rendered = _fill(_ADD_URI_AND_SHA.sub(add_uri_and_sha, text), tag)
    leftover = re.search(r"\{\{.*?\}\}", rendered)
    if leftover:
        raise ValueError(f"unsupported template action {leftover.group(0)!r}")
    return rendered


def local_manifest(
    template: str, tag: str, archives: dict[str, Path], uri_base: str | None = None
) -> dict[str, Any]:
    """The manifest for locally built archives: only the platforms whose archive exists.

    ``archives`` maps archive file names to files. The URI stays the release URL unless
    ``uri_base`` replaces everything before the file name (e.g. a local HTTP server).
    """
    import yaml  # noqa: PLC0415 - a dependency of the package, so in the build venv

    missing = "archive-not-built"

    def uri_and_sha(url: str) -> tuple[str, str]:
        file_name = url.rsplit("/", 1)[-1]
        path = archives.get(file_name)
        if path is None:
            return url, missing
        uri = f"{uri_base.rstrip('/')}/{file_name}" if uri_base else url
        return uri, sha256_of(path)

    manifest: dict[str, Any] = yaml.safe_load(render_template(template, tag, uri_and_sha))
    spec = manifest["spec"]
    spec["platforms"] = [p for p in spec["platforms"] if p["sha256"] != missing]
    if not spec["platforms"]:
        raise ValueError(f"no archive found for any platform of the template ({sorted(archives)})")
    return manifest


def write_manifest(manifest: dict[str, Any], out: Path) -> None:
    """Write the manifest as YAML in the template's key order, multi-line text as ``|`` blocks."""
    import yaml  # noqa: PLC0415

    class Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    out.write_text(yaml.dump(manifest, Dumper=Dumper, sort_keys=False, width=100), newline="\n")


# -- building ---------------------------------------------------------------------------------


def run_pyinstaller(clean: bool) -> None:
    """Run the spec: WORK/dist/onedir/ (one folder) and WORK/dist/kubectl-storage (one file)."""
    shutil.rmtree(WORK / "dist", ignore_errors=True)
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level=WARN",
        "--distpath",
        str(WORK / "dist"),
        "--workpath",
        str(WORK / "pyinstaller"),
    ]
    if clean:
        command.append("--clean")
    command.append(str(SPEC))
    # A fixed hash seed keeps the collected bytecode the same from run to run.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    sys.stderr.write(f"build: {' '.join(command)}\n")
    subprocess.run(command, check=True, env=env, cwd=ROOT)


def _size(path: Path) -> str:
    if path.is_dir():
        total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    else:
        total = path.stat().st_size
    return f"{total / 1e6:.1f} MB"


def main(argv: list[str] | None = None) -> int:
    """Build (unless --skip-build), then write the archives, checksums and manifest."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--skip-build", action="store_true", help="package the existing build output only"
    )
    parser.add_argument("--clean", action="store_true", help="empty PyInstaller's cache first")
    parser.add_argument("--tag", help="release tag for the manifest (default: v<__version__>)")
    parser.add_argument("--uri-base", help="URL prefix for the archive in dist/storage.yaml")
    args = parser.parse_args(argv)

    os_name, arch = host_platform()
    tag = args.tag or f"v{package_version()}"
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_EPOCH))
    started = time.monotonic()
    if not args.skip_build:
        run_pyinstaller(args.clean)
    built = time.monotonic()
    onedir = WORK / "dist" / "onedir"
    onefile = WORK / "dist" / exe_name(os_name)
    for path in (onedir / exe_name(os_name), onefile):
        if not path.is_file():
            raise SystemExit(f"error: {path} is missing; run without --skip-build")

    add_completer(onedir, os_name)
    DIST.mkdir(exist_ok=True)
    archive = DIST / archive_name(os_name, arch)
    write_archive(onedir, archive, epoch)
    archive_sha = write_sha256(archive)
    binary = DIST / onefile_name(os_name, arch)
    shutil.copyfile(onefile, binary)
    binary.chmod(0o755)
    binary_sha = write_sha256(binary)
    manifest = local_manifest(
        TEMPLATE.read_text(), tag, {archive.name: archive}, uri_base=args.uri_base
    )
    write_manifest(manifest, DIST / f"{PLUGIN}.yaml")

    sys.stderr.write(
        f"build: PyInstaller {built - started:.0f}s, packaging {time.monotonic() - built:.0f}s\n"
        f"  {archive.relative_to(ROOT)}  {_size(archive)}  sha256 {archive_sha}\n"
        f"    (one folder unpacked: {_size(onedir)})\n"
        f"  {binary.relative_to(ROOT)}  {_size(binary)}  sha256 {binary_sha}\n"
        f"  dist/{PLUGIN}.yaml  ({tag}, {os_name}/{arch})\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
