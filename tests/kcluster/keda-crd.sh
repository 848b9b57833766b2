#!/usr/bin/env bash
# Prints the path of KEDA's own ScaledObject CustomResourceDefinition, as KEDA ships it in its Go
# module (config/crd/bases), so that keda.yaml is checked by the API server against KEDA's schema
# rather than one written here. The module comes from the Go module proxy, checked against the
# checksum database like any Go dependency; nothing of it is built.
# Usage: tests/kcluster/keda-crd.sh   (exit 2 with the reason when Go or the proxy is missing)
set -euo pipefail
version=v2.21.0 # the newest KEDA whose go.mod the installed Go (1.26) accepts
command -v go >/dev/null || { echo "keda-crd: Go is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && go mod download -json "github.com/kedacore/keda/v2@$version" |
      python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or sys.exit(d.get("Error")))') ||
    { echo "keda-crd: could not download KEDA $version from the Go module proxy" >&2; exit 2; }
crd=$dir/config/crd/bases/keda.sh_scaledobjects.yaml
[ -s "$crd" ] || { echo "keda-crd: KEDA $version's module holds no $crd" >&2; exit 2; }
echo "$crd"
