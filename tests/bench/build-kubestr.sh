#!/usr/bin/env bash
# Build kastenhq/kubestr from the Go module proxy, for the side-by-side fio benchmark
# (tests/bench/bench_fio.py). Output: $CACHE/tools/kubestr-<version>/kubestr, skipped if present.
#
#   tests/bench/build-kubestr.sh              # KUBESTR_VERSION=v0.4.49 by default
#   KUBESTR_VERSION=v0.4.50 tests/bench/build-kubestr.sh
#
# `go install github.com/kastenhq/kubestr@v…` refuses the module because its go.mod has
# `replace github.com/graymeta/stow => github.com/kastenhq/stow v0.1.2-kasten`, so this copies the
# module zip from the module cache into a writable directory and builds it there as the main
# module ("modcopy", shared/reference/testcluster.md §4.2 and §6). Known Go ≥1.25 breakages of its
# pinned dependencies are fixed only if the plain build fails (§4.2 "Dependency notes").
# Prints the binary's path on stdout; progress on stderr. Exit 1 if the proxy does not serve it.
set -euo pipefail
VERSION=${KUBESTR_VERSION:-v0.4.49}
CACHE=${TESTCLUSTER_CACHE:-/var/cache/kubectl-storage-testcluster}
OUT="$CACHE/tools/kubestr-$VERSION"
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} CGO_ENABLED=0
export PATH=$PATH:/usr/local/go/bin

log() { echo "build-kubestr: $*" >&2; }

if [ -x "$OUT/kubestr" ]; then
  echo "$OUT/kubestr"
  exit 0
fi

# module@version -> writable copy of the exact module zip (its go.mod/go.sum apply as main module)
modsrc() {
  local tmp dir s
  tmp=$(mktemp -d)
  dir=$(cd "$tmp" && GOFLAGS= go mod download -json "$1" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error")))') ||
    { rmdir "$tmp"; return 1; }
  rmdir "$tmp"
  s="$CACHE/src/${1//[\/@]/_}"
  rm -rf "$s"; mkdir -p "$CACHE/src"; cp -r "$dir" "$s" && chmod -R u+w "$s" && echo "$s"
}

log "building kubestr $VERSION (newest tags: GOFLAGS= go list -m -versions github.com/kastenhq/kubestr)"
if ! s=$(modsrc "github.com/kastenhq/kubestr@$VERSION"); then
  log "the Go module proxy does not serve github.com/kastenhq/kubestr@$VERSION (error above)"
  exit 1
fi

build() {
  ( cd "$s" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$OUT/kubestr.tmp" . )
}
mkdir -p "$OUT"
if ! build; then
  # x/tools < ~0.26 does not compile on Go ≥1.25 ("tokeninternal: invalid array length");
  # reflect2 v1.0.2's map iteration broke with Go 1.24's swiss maps.
  log "plain build failed; retrying with golang.org/x/tools@v0.34.0 and reflect2 as k8s pins it"
  ( cd "$s" && GOFLAGS=-mod=mod go get golang.org/x/tools@v0.34.0 \
      github.com/modern-go/reflect2@v1.0.3-0.20250322232337-35a7c28c31ee )
  build
fi
mv "$OUT/kubestr.tmp" "$OUT/kubestr"
log "built $("$OUT/kubestr" version 2>/dev/null | head -1 || true)"
echo "$OUT/kubestr"
