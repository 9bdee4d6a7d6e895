#!/usr/bin/env bash
# Build the Kubernetes control plane, kubelet, kubectl and etcd from the Go module proxy.
#
# k8s.io/kubernetes requires its staging modules at v0.0.0 and points them at ./staging with
# `replace`, which only works inside its own repo. We build through a small wrapper module whose
# replace list is read from the pinned version's own go.mod, so it follows the version we pin.
# The result is cached outside the repo, keyed by version: a warm machine skips the build.
set -euo pipefail
KV=${KUBE_VERSION:-v1.34.12}
SV=v0.${KV#v1.}
CACHE=${TESTCLUSTER_CACHE:-/var/cache/kubectl-storage-testcluster}
W="$CACHE/k8s-$KV"
BIN="$W/bin"
want="kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd"

have_all() { for b in $want; do [ -x "$BIN/$b" ] || return 1; done; }
if have_all; then echo "k8s $KV: cached in $BIN" >&2; exit 0; fi

mkdir -p "$BIN"
cd "$W"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod

# 1) the pinned version's go.mod, fetched outside any module so v0.0.0 requirements are not resolved
kmod=$(cd "$(mktemp -d)" && GOFLAGS= go mod download -json "k8s.io/kubernetes@$KV" |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')

# 2) the wrapper module
cat > go.mod <<MOD
module local/k8sbuild

go 1.24.0

godebug default=go1.24

require k8s.io/kubernetes $KV
MOD
rm -f go.sum

# 3) one replace per "./staging/..." replace in the pinned go.mod
go mod edit -json "$kmod" | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    if r["New"]["Path"].startswith("./staging/"):
        print(r["Old"]["Path"])' |
while read -r p; do go mod edit -replace="$p=$p@$SV"; done

# 4) keep the main packages in the module graph
for t in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  go mod edit -tool="k8s.io/kubernetes/cmd/$t"
done
go mod edit -tool=go.etcd.io/etcd/server/v3
go mod tidy

# 5) build with the version stamps upstream's hack/lib/version.sh sets
minor=$(cut -d. -f2 <<<"$KV")
ld="-s -w"
for kv in "gitVersion=$KV" gitMajor=1 "gitMinor=$minor" gitTreeState=clean \
          "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; do
  ld+=" -X k8s.io/component-base/version.$kv -X k8s.io/client-go/pkg/version.$kv"
done
# Two cores: build binaries one by one so the linker's peak memory stays bounded.
for t in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
  [ -x "$BIN/$t" ] && continue
  echo "building $t $KV" >&2
  go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ld" -o "$BIN/$t.tmp" "k8s.io/kubernetes/cmd/$t"
  mv "$BIN/$t.tmp" "$BIN/$t"
done
if [ ! -x "$BIN/etcd" ]; then
  echo "building etcd" >&2
  go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$BIN/etcd.tmp" "$BIN/etcd"
fi
echo "k8s $KV: built in $BIN" >&2
