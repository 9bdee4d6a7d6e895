#!/usr/bin/env bash
# Build the storage side of the test cluster from the Go module proxy, cached by version:
#   external-provisioner, external-snapshotter (csi-snapshotter + snapshot-controller),
#   external-resizer, rancher local-path-provisioner, and the harness's own CSI hostpath driver + registrar
#   (tests/cluster/csi/, built inside a copy of the k8s wrapper module so it uses the same
#   grpc / CSI spec / kubelet versions that build-k8s.sh already downloaded).
# Warm runs are skipped per component. Prints nothing on stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KV=${KUBE_VERSION:-v1.34.12}
CACHE=${TESTCLUSTER_CACHE:-/var/cache/kubectl-storage-testcluster}
PROVISIONER_VERSION=${PROVISIONER_VERSION:-v5.3.0}
SNAPSHOTTER_VERSION=${SNAPSHOTTER_VERSION:-v8.4.0}
LOCALPATH_VERSION=${LOCALPATH_VERSION:-v0.0.30}
RESIZER_VERSION=${RESIZER_VERSION:-v2.2.0}
GOFUSE_VERSION=${GOFUSE_VERSION:-v2.12.1} # the LazyFS medium's FUSE library (csi/tk8s-hostpath/lazydaemon.go)
export GOTOOLCHAIN=local CGO_ENABLED=0
mkdir -p "$CACHE/src"

log() { echo "build-storage: $*" >&2; }

# module@version -> writable copy of the exact module zip (its go.mod/go.sum then apply as main module)
modsrc() {
  local dir s
  dir=$(cd "$(mktemp -d)" && GOFLAGS= go mod download -json "$1" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error")))')
  s="$CACHE/src/${1//[\/@]/_}"
  rm -rf "$s"; cp -r "$dir" "$s"; chmod -R u+w "$s"; echo "$s"
}

# 1) external-provisioner
out="$CACHE/csi-provisioner-$PROVISIONER_VERSION"
if [ ! -x "$out/csi-provisioner" ]; then
  log "building csi-provisioner $PROVISIONER_VERSION"
  major=${PROVISIONER_VERSION%%.*}
  s=$(modsrc "github.com/kubernetes-csi/external-provisioner/$major@$PROVISIONER_VERSION")
  mkdir -p "$out"
  ( cd "$s" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X main.version=$PROVISIONER_VERSION" \
      -o "$out/csi-provisioner.tmp" ./cmd/csi-provisioner )
  mv "$out/csi-provisioner.tmp" "$out/csi-provisioner"
fi

# 2) external-snapshotter: client/ is its own module and not in the v8 zip, so repoint the
#    upstream `replace .../client/v8 => ./client` at the same tag on the proxy.
out="$CACHE/external-snapshotter-$SNAPSHOTTER_VERSION"
if [ ! -x "$out/csi-snapshotter" ] || [ ! -x "$out/snapshot-controller" ] || [ ! -d "$out/crd" ]; then
  log "building external-snapshotter $SNAPSHOTTER_VERSION"
  major=${SNAPSHOTTER_VERSION%%.*}
  s=$(modsrc "github.com/kubernetes-csi/external-snapshotter/$major@$SNAPSHOTTER_VERSION")
  c=$(modsrc "github.com/kubernetes-csi/external-snapshotter/client/$major@$SNAPSHOTTER_VERSION")
  mkdir -p "$out"
  ( cd "$s" && go mod edit -replace="github.com/kubernetes-csi/external-snapshotter/client/$major=$c" &&
    for cmd in csi-snapshotter snapshot-controller; do
      GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X main.version=$SNAPSHOTTER_VERSION" \
        -o "$out/$cmd.tmp" "./cmd/$cmd" && mv "$out/$cmd.tmp" "$out/$cmd"
    done )
  rm -rf "$out/crd"; mkdir -p "$out/crd"
  cp "$c"/config/crd/snapshot.storage.k8s.io_volumesnapshot*.yaml "$out/crd/"
fi

# 2b) external-resizer (no replaces: plain go install)
out="$CACHE/csi-resizer-$RESIZER_VERSION"
if [ ! -x "$out/csi-resizer" ]; then
  log "building csi-resizer $RESIZER_VERSION"
  mkdir -p "$out"
  GOFLAGS= GOBIN="$out" go install -trimpath -ldflags "-s -w -X main.version=$RESIZER_VERSION" \
    "github.com/kubernetes-csi/external-resizer/${RESIZER_VERSION%%.*}/cmd/csi-resizer@$RESIZER_VERSION"
fi

# 3) rancher local-path-provisioner (no replaces: plain go install)
out="$CACHE/local-path-provisioner-$LOCALPATH_VERSION"
if [ ! -x "$out/local-path-provisioner" ]; then
  log "building local-path-provisioner $LOCALPATH_VERSION"
  mkdir -p "$out"
  GOFLAGS= GOBIN="$out" go install -trimpath -ldflags "-s -w" \
    "github.com/rancher/local-path-provisioner@$LOCALPATH_VERSION"
fi

# 4) the harness's own CSI hostpath driver and kubelet plugin registrar
key=$( (cat "$HERE"/csi/*/*.go; echo "go-fuse $GOFUSE_VERSION") | sha256sum | cut -c1-12)
out="$CACHE/tk8s-csi-$KV-$key"
if [ ! -x "$out/tk8s-hostpath" ] || [ ! -x "$out/tk8s-registrar" ]; then
  W="$CACHE/k8s-$KV"
  [ -f "$W/go.sum" ] || { log "run build-k8s.sh first ($W/go.mod missing)"; exit 1; }
  log "building tk8s-hostpath + tk8s-registrar ($key)"
  b="$CACHE/src/tk8s-csi"; rm -rf "$b"; mkdir -p "$b"
  cp "$W/go.mod" "$W/go.sum" "$b/"
  cp -r "$HERE/csi/." "$b/"
  mkdir -p "$out"
  ( cd "$b" && GOFLAGS= go mod edit -require="github.com/hanwen/go-fuse/v2@$GOFUSE_VERSION" &&
    for cmd in tk8s-hostpath tk8s-registrar; do
      GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$out/$cmd.tmp" "./$cmd" &&
      mv "$out/$cmd.tmp" "$out/$cmd"
    done )
fi
log "done"
