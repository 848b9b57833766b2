#!/usr/bin/env bash
# The Dockerfile, checked without a container engine (none runs here or in CI): two stages on
# bookworm / bookworm-slim, the build stage's packages equal install-deps.sh's build group, only
# runtime libraries in the final stage, a numeric non-root USER matching the chart, the binary as
# ENTRYPOINT, and every shared library the built binary loads shipped by a runtime package.
# Then the checker is shown to fail on broken copies of the Dockerfile.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_pyyaml

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checker="$ROOT/tests/policy/check_dockerfile.py"

# shellcheck disable=SC2016
build_pkgs=$(bash -c "$(sed -n '/^build_pkgs=(/,/)/p' "$ROOT/scripts/install-deps.sh")"'; echo "${build_pkgs[*]}"')
[ -n "$build_pkgs" ] || { echo "could not read build_pkgs from scripts/install-deps.sh"; exit 1; }
runtime_pkgs="libcurl4 libcjson1 libyaml-0-2 libwebsockets17 libssl3 ca-certificates"
uidgid=$("$PY" -c 'import sys, yaml; v = yaml.safe_load(open(sys.argv[1]))["securityContext"]; print("%d:%d" % (v["runAsUser"], v["runAsGroup"]))' "$ROOT/charts/sizeup/values.yaml")
binary=${SIZEUP:-}
[ -n "$binary" ] && [ -x "$binary" ] || binary=""
command -v readelf >/dev/null && command -v dpkg >/dev/null || binary=""

echo "build group: $build_pkgs"
echo "== the Dockerfile"
"$PY" "$checker" "$ROOT/Dockerfile" "$build_pkgs" "$runtime_pkgs" "$uidgid" "$binary"

echo "== .dockerignore keeps the host build/ and .git out of the context"
grep -qx '\*' "$ROOT/.dockerignore" || { echo "FAIL .dockerignore does not start from '*'"; exit 1; }
grep -qx '!src/' "$ROOT/.dockerignore" && grep -qx '!Makefile' "$ROOT/.dockerignore" ||
    { echo "FAIL .dockerignore does not let in Makefile and src/"; exit 1; }
echo "ok   .dockerignore"

echo "== broken copies must fail"
broken() { # DESCRIPTION SED-EXPRESSION
    sed "$2" "$ROOT/Dockerfile" >"$tmp/Dockerfile"
    if cmp -s "$ROOT/Dockerfile" "$tmp/Dockerfile"; then
        echo "FAIL mutation '$1' changed nothing"; exit 1
    fi
    if "$PY" "$checker" "$tmp/Dockerfile" "$build_pkgs" "$runtime_pkgs" "$uidgid" >"$tmp/out" 2>&1; then
        echo "FAIL the checker passed a Dockerfile with $1"; exit 1
    fi
    echo "ok   caught: $1 ($(grep -m1 '^FAIL' "$tmp/out"))"
}
broken "root user" 's/^USER .*/USER 0:0/'
broken "a user name" 's/^USER .*/USER nobody/'
broken "no USER" '/^USER /d'
broken "gcc in the final stage" 's/libcurl4 libcjson1/libcurl4 gcc libcjson1/'
broken "a -dev package in the final stage" 's/libcurl4 libcjson1/libcurl4 libcjson-dev/'
broken "a missing runtime library" 's/ libwebsockets17 / /'
broken "a build package missing" 's/ libyaml-dev / /'
broken "a full base image at run time" 's/^FROM debian:bookworm-slim/FROM debian:bookworm/'
broken "another distribution" 's/^FROM debian:bookworm AS build/FROM ubuntu:24.04 AS build/'
broken "a shell-form entrypoint" 's|^ENTRYPOINT .*|ENTRYPOINT /usr/local/bin/sizeup|'
broken "another command" 's|^CMD .*|CMD ["sweep"]|'
broken "one stage" '/^FROM debian:bookworm-slim/,/^COPY --from/{/^FROM/d;/^COPY --from/d}'

# A binary that loads a library no runtime package brings (cmocka, a test-only library) must fail.
if [ -n "$binary" ] && command -v cc >/dev/null &&
    echo 'int main(void) { return 0; }' | cc -x c - -Wl,--no-as-needed -lcmocka -o "$tmp/needs-cmocka" 2>/dev/null; then
    if "$PY" "$checker" "$ROOT/Dockerfile" "$build_pkgs" "$runtime_pkgs" "$uidgid" "$tmp/needs-cmocka" >"$tmp/out" 2>&1; then
        echo "FAIL the checker passed a binary that needs libcmocka"; exit 1
    fi
    echo "ok   caught: a binary loading a library the image lacks ($(grep -m1 '^FAIL' "$tmp/out"))"
fi
echo "all checks passed"
