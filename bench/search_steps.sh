#!/usr/bin/env bash
# Capacity search steps per variant, and how far the capacity found is from the known one, on the
# known-capacity test apps under real cgroup limits:
#   slots: tests/servers/capacity_server.py (SLOTS_PER_WORKER=2, HOLD_MS=20): WORKERS x 100
#          req/s, known in advance; variants 1@1 2@1 4@1 (100, 200, 400 req/s)
#   cpu:   tests/integration/cpu_server.py (WORK=20000): capacity follows the CPU limit, not
#          known in advance; variants 1@0.25 1@0.5 1@1 (the figures are compared between builds)
# Prints one line per variant: probe steps, search steps, all steps (probe, search, repeats),
# the capacity, the known one and the error. Run each binary given (label=path) in turn, e.g.
#   bench/search_steps.sh before=/tmp/old/build/sizeup after=build/sizeup
# Run as root (cgroups), under the shared lock on a shared host. ~2 minutes per binary and app.
# APPS="slots cpu" to choose.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- "after=$root/build/sizeup"
apps=${APPS:-"slots cpu"}
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }
tmp=$(mktemp -d /tmp/sizeup-bench-search.XXXXXX)
marker="sizeup-bench-search-$$"
trap 'pkill -KILL -f -- "$marker" 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat >"$tmp/slots.yaml" <<'YAML'
users: 16
search: { warmup: 500ms, window: 2s, precision: 5% }
slo: { p95: 200ms }
YAML
cat >"$tmp/cpu.yaml" <<'YAML'
users: 8
search: { warmup: 500ms, window: 2s, precision: 5%, repeats: 2 }
slo: { p95: 300ms }
YAML

for arg in "$@"; do
    label=${arg%%=*} bin=${arg#*=}
    [ -x "$bin" ] || { echo "$label: $bin is not an executable" >&2; exit 1; }
    for app in $apps; do
        case $app in
        slots) configs="1@1/128Mi 2@1/128Mi 4@1/128Mi"
               cmd=(env SLOTS_PER_WORKER=2 HOLD_MS=20 python3 "$root/tests/servers/capacity_server.py" "$marker") ;;
        cpu)   configs="1@0.25/128Mi 1@0.5/128Mi 1@1/128Mi"
               cmd=(env WORK=20000 python3 "$root/tests/integration/cpu_server.py" "$marker") ;;
        *) echo "unknown app $app" >&2; exit 1 ;;
        esac
        out="$tmp/$label-$app"
        start=$(date +%s)
        "$bin" sweep --configs "$configs" --profile "$tmp/$app.yaml" --port "$port" --out "$out" \
            -- "${cmd[@]}" >"$out.stdout" 2>"$out.stderr" ||
            { echo "$label $app: sweep failed"; tail -5 "$out.stderr"; continue; }
        wall=$(($(date +%s) - start))
        grep -o 'event=sweep.predict .*' "$out.stderr" | sed "s/^/$label $app   /"
        python3 - "$label" "$app" "$wall" "$out/results.json" <<'PY'
import json, sys
label, app, wall, path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
d = json.load(open(path))
if not d.get("limits_enforced"):
    print(f"{label} {app}: limits not enforced (not root?)")
for x in d["variants"]:
    c = x.get("slo_capacity") or {}
    steps = c.get("steps") or []
    kinds = [s["kind"] for s in steps]
    known = x["workers"] * 2 * 1000 / 20 if app == "slots" else None
    rps = c.get("rps") or 0
    err = f"{100 * (rps - known) / known:+.1f}%" if known else "-"
    print(f"{label:7} {app:5} {x['spec']:13} probe {kinds.count('probe')} search "
          f"{kinds.count('search'):2} all {len(steps):2}  capacity {rps:7.1f} known "
          f"{known if known else '-':>6} error {err:>7}  {x['timing']['wall_s']:5.1f} s")
    probe = [s["offered_rps"] for s in steps if s["kind"] == "probe"]
    seq = " ".join(f'{s["offered_rps"]:.0f}{"+" if s["pass"] else "-"}' for s in steps
                   if s["kind"] == "search")
    print(f"{'':13} probe {probe[0] if probe else 0:.0f}, search {seq}")
print(f"{label:7} {app:5} sweep wall time {wall} s")
PY
    done
done
