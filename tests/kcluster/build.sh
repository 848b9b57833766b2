#!/usr/bin/env bash
# Builds the test cluster's binaries from Go modules, once per machine: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kubectl of the release pinned in go/go.mod, and
# metrics-server and helm v4 from modules of their own. They go into a cache keyed by the pinned versions and the Go
# toolchain (${XDG_CACHE_HOME:-~/.cache}/sizeup/kcluster/KEY/bin); a later run with the same key
# reuses them. Concurrent runs wait on one lock instead of building twice.
#
# Usage: tests/kcluster/build.sh [--print-bin] [--cached]
#   --print-bin  print the bin directory (after building it if missing) and nothing else on stdout
#   --cached     exit 0 if the binaries are cached, 1 if not; build nothing
# Cold on 2 cores this takes 8 to 30 minutes (bench/RESULTS.md has the figures); cached, under a
# second.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
print_bin=0
cached_only=0
for a in "$@"; do
    case "$a" in
        --print-bin) print_bin=1 ;;
        --cached) cached_only=1 ;;
        *) echo "usage: $0 [--print-bin] [--cached]" >&2; exit 2 ;;
    esac
done

if ! command -v go >/dev/null 2>&1; then
    echo "kcluster: Go is not installed: the real control plane is built from Go modules." \
         "Install Go 1.26 or newer (its go.mod says which) and give it the Go module proxy" \
         "(GOPROXY=https://proxy.golang.org)." >&2
    exit 2
fi

k8s=$(cd "$here/go" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
key=$( { cat "$here/go/go.mod" "$here/go/go.sum" "$here/metrics-server/go.mod" \
               "$here/metrics-server/go.sum" "$here/helm/go.mod" "$here/helm/go.sum" \
               "$here/go/cmd/etcd/main.go" "$0"; go env GOVERSION; } |
       sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sizeup/kcluster/$key
bin=$cache/bin
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl metrics-server helm)

have_all() {
    local b
    for b in "${bins[@]}"; do [ -x "$bin/$b" ] || return 1; done
}
if have_all; then
    [ $print_bin -eq 1 ] && echo "$bin"
    exit 0
fi
[ $cached_only -eq 1 ] && exit 1

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
if ! have_all; then
    say() { echo "kcluster: $*" >&2; }
    # Version stamps, as the release's own build sets them, so /version reports the release.
    info=$(cd "$here/go" && go mod download -json "k8s.io/kubernetes@$k8s")
    date=$(printf '%s' "$info" | python3 -c 'import json,sys; print(json.load(open(json.load(sys.stdin)["Info"]))["Time"])')
    minor=${k8s#v1.}
    minor=${minor%%.*}
    ld="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        ld="$ld -X $p.gitVersion=$k8s -X $p.gitMajor=1 -X $p.gitMinor=$minor"
        ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=$date"
    done
    tmp=$cache/bin.tmp
    rm -rf "$tmp"
    mkdir -p "$tmp"
    t0=$(date +%s)
    say "building Kubernetes $k8s (etcd, kube-apiserver, kube-controller-manager, kube-scheduler," \
        "kubectl, metrics-server, helm) from Go modules into $bin; 8 to 30 minutes on 2 cores the first time"
    (cd "$here/go" && nice -n 10 go build -ldflags "$ld" -o "$tmp/" ./cmd/etcd \
        k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
        k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
    t1=$(date +%s)
    say "control plane built in $((t1 - t0)) s; building metrics-server"
    (cd "$here/metrics-server" && nice -n 10 go build -ldflags "-s -w" -o "$tmp/" \
        sigs.k8s.io/metrics-server/cmd/metrics-server)
    t2=$(date +%s)
    helm=$(cd "$here/helm" && go list -m -f '{{.Version}}' helm.sh/helm/v4)
    say "metrics-server built in $((t2 - t1)) s; building helm $helm"
    (cd "$here/helm" && nice -n 10 go build -o "$tmp/" \
        -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
        helm.sh/helm/v4/cmd/helm)
    t3=$(date +%s)
    echo "$k8s" > "$tmp/VERSION"
    printf 'control-plane %s\nmetrics-server %s\nhelm %s\n' "$((t1 - t0))" "$((t2 - t1))" \
        "$((t3 - t2))" > "$tmp/BUILD_SECONDS"
    rm -rf "$bin"
    mv "$tmp" "$bin"
    say "built in $((t3 - t0)) s ($(du -sm "$bin" | cut -f1) MiB)"
    # The builds of other keys (older pins, another Go) are of no use now: remove those no run holds.
    for old in "$(dirname "$cache")"/*/; do
        old=${old%/}
        [ "$old" = "$cache" ] && continue
        (flock -n 9 && rm -rf "$old") 9>>"$old/lock" 2>/dev/null || true
    done
fi
[ $print_bin -eq 1 ] && echo "$bin"
exit 0
