#!/usr/bin/env bash
# Build the kubectl-storage binaries and release archives for this machine's os/arch:
#
#   build/build.sh [package.py options]     e.g. build/build.sh --skip-build (re-package only)
#   build/build.sh --if-stale               build only when an input is newer than dist/ (tests/run)
#
# One command, idempotent. It keeps a build virtualenv under /var/cache/kubectl-storage-build
# (override with KUBECTL_STORAGE_BUILD_CACHE), keyed by a hash of pyproject.toml, the PyInstaller
# pin below and the Python version, holding the package's runtime dependencies and PyInstaller;
# then runs build/package.py with it. The package itself is taken from this checkout (the spec
# puts the repository first on the search path), so code changes never need a new virtualenv.
# Outputs land in dist/ (see build/README.md). stdout: nothing; progress on stderr.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${KUBECTL_STORAGE_BUILD_CACHE:-/var/cache/kubectl-storage-build}
py=${PYTHON:-python3.11}
command -v "$py" >/dev/null || py=python3
command -v "$py" >/dev/null || py=python  # Windows runners

if [ "${1:-}" = "--if-stale" ]; then
  shift
  stamp="$repo/dist/storage.yaml"  # written last by package.py
  if [ -f "$stamp" ] && [ -z "$(find "$repo/kubectl_storage" "$repo/build" "$repo/pyproject.toml" \
      "$repo/krew-manifest.yaml" "$repo/LICENSE" \( -path "$repo/build/work" -o -name __pycache__ \
      -o -name '.*_cache' \) -prune -o -type f -newer "$stamp" -print -quit)" ]; then
    echo "build: dist/ is up to date" >&2
    exit 0
  fi
fi

# Bump deliberately: a new PyInstaller changes the bootloader and the start-up time.
pyinstaller_pin="pyinstaller==6.22.3"

# (hashed with Python: macOS has no sha256sum)
key=$("$py" -c 'import hashlib, sys
h = hashlib.sha256(open(sys.argv[1], "rb").read() + sys.argv[2].encode() + sys.version.encode())
print(h.hexdigest()[:16])' "$repo/pyproject.toml" "$pyinstaller_pin")
venv="$cache/venv-$key"
venv_python() {
  if [ -d "$venv/Scripts" ]; then echo "$venv/Scripts/python.exe"; else echo "$venv/bin/python"; fi
}
if [ ! -f "$venv/.complete" ]; then
  echo "build: creating $venv" >&2
  rm -rf "$venv"
  mkdir -p "$cache"
  "$py" -m venv "$venv"
  vpy=$(venv_python)
  "$vpy" -m pip install -q --disable-pip-version-check -U pip >&2
  # Runtime dependencies only, read from pyproject.toml; the package comes from the checkout.
  "$vpy" -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
    "$repo/pyproject.toml" > "$venv/requirements.txt"
  "$vpy" -m pip install -q --disable-pip-version-check \
    -r "$venv/requirements.txt" "$pyinstaller_pin" >&2
  touch "$venv/.complete"
fi

exec "$(venv_python)" "$repo/build/package.py" "$@"
