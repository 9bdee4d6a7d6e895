"""krew-manifest.yaml, rendered as krew-release-bot renders it, keeps krew's rules.

The rules are krew's validator's (internal/index/validation/validate.go and
cmd/validate-krew-manifest) and the krew-index review's (shortDescription at most 50
characters, description wrapped at 80 columns without usage examples). krew's own validator
checks the locally rendered manifest in tests/e2e/test_krew_install.py.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from kubectl_storage import __version__

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "krew-manifest.yaml"
FAKE_TAG = "v1.2.3"
SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
KREW_PLATFORMS = {
    (os_name, arch)
    for os_name, arches in {
        "linux": ("386", "amd64", "arm", "arm64"),
        "darwin": ("386", "amd64", "arm64"),
        "windows": ("386", "amd64", "arm64"),
    }.items()
    for arch in arches
}
WANTED = {(o, a) for o in ("linux", "darwin", "windows") for a in ("amd64", "arm64")}


def fake_sha(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


@pytest.fixture(scope="module")
def rendered(package: ModuleType) -> dict[str, Any]:
    text = package.render_template(TEMPLATE.read_text(), FAKE_TAG, lambda u: (u, fake_sha(u)))
    manifest: dict[str, Any] = yaml.safe_load(text)
    return manifest


def selector_matches(selector: dict[str, Any], os_name: str, arch: str) -> bool:
    labels = {"os": os_name, "arch": arch}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        value, values = labels.get(expr["key"]), expr.get("values") or []
        operator = expr["operator"]
        if (operator == "In" and value not in values) or (operator == "NotIn" and value in values):
            return False
    return True


def test_kind_name_and_version(rendered: dict[str, Any], package: ModuleType) -> None:
    assert rendered["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert rendered["kind"] == "Plugin"
    # krew: the name is the manifest's file name (plugins/storage.yaml, dist/storage.yaml).
    assert rendered["metadata"]["name"] == package.PLUGIN == "storage"
    assert re.fullmatch(r"[\w-]+", rendered["metadata"]["name"])
    assert rendered["spec"]["version"] == FAKE_TAG
    assert SEMVER.match(f"v{__version__}"), "__version__ must be semver for the release tag"
    assert rendered["spec"]["homepage"].startswith("https://")


def test_short_description_is_one_short_line(rendered: dict[str, Any]) -> None:
    short = rendered["spec"]["shortDescription"]
    assert short
    assert "\n" not in short
    assert "\r" not in short
    assert len(short) <= 50, f"{len(short)} characters: {short!r}"


def test_description_is_wrapped_prose(rendered: dict[str, Any]) -> None:
    description = rendered["spec"]["description"]
    assert description.strip()
    for line in description.splitlines():
        assert len(line) <= 80, line
        assert not line.lstrip().startswith(("$", "kubectl ")), "no usage examples: " + line


def test_caveats_warn_about_rbac_and_node_pods(rendered: dict[str, Any]) -> None:
    caveats = rendered["spec"]["caveats"]
    assert "kubectl storage rbac" in caveats
    assert "privileged" in caveats
    # krew links only `bin`: the caveats say how to put the completion executable on PATH.
    assert "cp ~/.krew/store/storage/*/kubectl_complete-storage ~/.krew/bin/" in caveats
    assert all(len(line) <= 80 for line in caveats.splitlines())


def test_one_platform_per_os_and_arch(rendered: dict[str, Any]) -> None:
    platforms = rendered["spec"]["platforms"]
    covered = []
    for platform in platforms:
        selector = platform["selector"]
        keys = set(selector.get("matchLabels") or {}) | {
            e["key"] for e in selector.get("matchExpressions") or []
        }
        assert keys <= {"os", "arch"}, f"selector keys must be os/arch only: {keys}"
        matched = [p for p in KREW_PLATFORMS if selector_matches(selector, *p)]
        assert matched, f"selector {selector} matches no platform krew knows"
        covered.extend(matched)
    assert len(covered) == len(set(covered)), "two platforms select the same os/arch"
    assert set(covered) == WANTED


@pytest.mark.parametrize(("os_name", "arch"), sorted(WANTED))
def test_platform_entry(
    rendered: dict[str, Any], package: ModuleType, os_name: str, arch: str
) -> None:
    (platform,) = [
        p for p in rendered["spec"]["platforms"] if selector_matches(p["selector"], os_name, arch)
    ]
    name = f"kubectl-storage_{os_name}_{arch}.tar.gz"
    assert platform["uri"] == (
        f"https://github.com/kubectl-storage/kubectl-storage/releases/download/{FAKE_TAG}/{name}"
    )
    assert platform["sha256"] == fake_sha(platform["uri"])
    assert re.fullmatch(r"[a-f0-9]{64}", platform["sha256"])
    exe = "kubectl-storage.exe" if os_name == "windows" else "kubectl-storage"
    assert platform["bin"] == exe
    files = platform["files"]
    assert files, "files must be unspecified or non-empty"
    assert all(f["from"] and f["to"] == "." for f in files)
    # kubectl's completion executable for the plugin goes along (kubectl 1.26+ runs it).
    completer = package.completer_name(os_name)
    assert completer.startswith("kubectl_complete-storage")
    assert [f["from"] for f in files] == [exe, completer, "_internal", "LICENSE"]


def test_release_bot_indentation(package: ModuleType) -> None:
    """addURIAndSha yields `uri:` then `sha256:` four spaces in, as the bot's function does."""
    text = '    {{addURIAndSha "https://x/{{ .TagName }}/a.tar.gz" .TagName }}\n'
    out = package.render_template(text, "v9.9.9", lambda u: (u, "f" * 64))
    assert out == f"    uri: https://x/v9.9.9/a.tar.gz\n    sha256: {'f' * 64}\n"


def test_unknown_template_action_is_an_error(package: ModuleType) -> None:
    with pytest.raises(ValueError, match="unsupported template action"):
        package.render_template("version: {{ .Release }}\n", FAKE_TAG, lambda u: (u, ""))


def test_local_manifest_keeps_only_built_platforms(package: ModuleType, tmp_path: Path) -> None:
    archive = tmp_path / "kubectl-storage_linux_arm64.tar.gz"
    archive.write_bytes(b"not really an archive")
    manifest = package.local_manifest(
        TEMPLATE.read_text(), "v0.1.0", {archive.name: archive}, uri_base="http://127.0.0.1:8/"
    )
    (platform,) = manifest["spec"]["platforms"]
    assert platform["selector"]["matchLabels"] == {"os": "linux", "arch": "arm64"}
    assert platform["uri"] == f"http://127.0.0.1:8/{archive.name}"
    assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    out = tmp_path / "storage.yaml"
    package.write_manifest(manifest, out)
    assert yaml.safe_load(out.read_text()) == manifest
    assert "description: |" in out.read_text()


def test_local_manifest_without_any_archive_is_an_error(package: ModuleType) -> None:
    with pytest.raises(ValueError, match="no archive found"):
        package.local_manifest(TEMPLATE.read_text(), "v0.1.0", {})


def make_tree(root: Path) -> Path:
    onedir = root / "onedir"
    (onedir / "_internal" / "numpy.libs").mkdir(parents=True)
    (onedir / "kubectl-storage").write_bytes(b"\x7fELF exe")
    (onedir / "kubectl-storage").chmod(0o755)
    (onedir / "_internal" / "numpy.libs" / "libopenblas.so").write_bytes(b"blas")
    (onedir / "_internal" / "data.txt").write_text("data")
    try:
        (onedir / "_internal" / "libopenblas.so").symlink_to("numpy.libs/libopenblas.so")
        (onedir / "_internal" / "alias.txt").symlink_to("data.txt")
    except OSError as exc:  # Windows without the symlink privilege
        pytest.skip(f"cannot create symlinks here: {exc}")
    return onedir


def test_archive_is_reproducible_and_krew_extractable(package: ModuleType, tmp_path: Path) -> None:
    onedir = make_tree(tmp_path)
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    package.write_archive(onedir, first, 315532800)
    (onedir / "_internal" / "data.txt").touch()  # a newer mtime must not matter
    package.write_archive(onedir, second, 315532800)
    assert first.read_bytes() == second.read_bytes()

    raw = first.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert raw[3] & 0x08 == 0, "gzip header must not carry a file name"
    assert raw[4:8] == b"\0\0\0\0", "gzip header must not carry a timestamp"
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(raw))) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert "LICENSE" in names
    # The wheel-library link is left out (its target is there); the other link becomes a file.
    assert "_internal/libopenblas.so" not in names
    assert "_internal/numpy.libs/libopenblas.so" in names
    for member in members:
        assert member.isfile() or member.isdir(), f"krew extracts only files and dirs: {member}"
        assert (member.mtime, member.uid, member.gid, member.uname, member.gname) == (
            315532800,
            0,
            0,
            "",
            "",
        )
    modes = {m.name: m.mode for m in members}
    assert modes["kubectl-storage"] == 0o755
    assert modes["_internal/data.txt"] == 0o644
    assert modes["_internal/alias.txt"] == 0o644
