#!/usr/bin/env bash
# `make demo`: installs what is missing, builds sizeup, and sweeps the bundled example app (a
# Flask + SQLite API served by gunicorn, examples/demo/app.py) over four variants that fit a
# 2-core machine, under real cgroup limits. About 90 seconds; prints the results table and where
# the files are. DEMO_PORT and DEMO_OUT override the port (18080) and the output dir (sizing/).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== demo: checking packages (gunicorn, python3-flask, the build tools)"
scripts/install-deps.sh demo
echo "== demo: building sizeup"
make --no-print-directory -j2 build/sizeup >/dev/null

port=${DEMO_PORT:-18080}
out=${DEMO_OUT:-sizing}
configs="1@0.5/256Mi 1@1/256Mi 2@1/512Mi 2@2/512Mi"
echo "== demo: sweeping examples/demo/app.py over: $configs"
echo "   (each variant: gunicorn -w \$WORKERS in a cgroup with the variant's CPU and memory limits,"
echo "    3 s warm-up, 15 s measured at 20 concurrent users with seed 000's request mix)"
echo
set +e
build/sizeup sweep --configs "$configs" --profile examples/profile.yaml --workers-env WORKERS \
    --port "$port" --ready-path /healthz --ready-timeout 30s --out "$out" -- \
    gunicorn -w '$WORKERS' -b "127.0.0.1:$port" --chdir examples/demo app:app
rc=$?
set -e
echo
if [ $rc -eq 0 ]; then
    echo "== demo: done. Open $out/report.html in a browser, or read $out/results.md."
    echo "   values.yaml holds the recommended chart values; auto-sizing.yaml the fitted rule:"
    echo "   build/sizeup rule --rule $out/auto-sizing.yaml --cpu 2 --memory 1Gi"
fi
exit $rc
