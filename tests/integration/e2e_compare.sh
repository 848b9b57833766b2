#!/usr/bin/env bash
# slow: make e2e
# End to end: capacity sweeps of a test app whose capacity is known (tests/servers/
# capacity_server.py: SLOTS requests at once, each holding its slot HOLD_MS, so SLOTS x 1000 /
# HOLD_MS req/s), then `sizeup compare`. Two runs of the same app compare as `~` and pass
# --fail-on-regression; the same app made twice as slow (HOLD_MS doubled: half the capacity)
# shows a significant drop and exits 99. The sweeps run the optimised build (make ->
# build/sizeup): a sanitizer build's own CPU must not decide a capacity. One variant, short
# windows, every sweep bounded by `timeout`.
set -u
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
app="$ROOT/tests/servers/capacity_server.py"
[ -f "$app" ] || { echo "FAIL: $app missing"; exit 1; }
tmp=$(mktemp -d)
marker="sizeup-e2e-compare-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

nice -n 10 make -C "$ROOT" --no-print-directory -j2 build/sizeup >"$tmp/make.log" 2>&1 ||
    fail "make build/sizeup: $(tail -n 5 "$tmp/make.log")"
REL="$ROOT/build/sizeup"

# 4 slots x 1000 / 20 ms = 200 req/s; the slow app 100 req/s. p95 below capacity is the hold
# time (20 or 40 ms), far under the 100 ms SLO; past the knee requests queue and p95 climbs.
cat >"$tmp/profile.yaml" <<'YAML'
search: { mode: capacity, warmup: 500ms, window: 1s, precision: 0.1, repeats: 3, max_steps: 6,
          budget: 1m }
slo: { p95: 100ms, errors: 1% }
requests:
  - { name: slot, path: / }
YAML

# One sweep into $tmp/NAME; returns 1 when its capacity is not valid (a busy shared host can
# mark it contended), so the caller may run it once more.
sweep() { # NAME HOLD_MS
    local port t0=$SECONDS
    port=$(free_port)
    rm -rf "${tmp:?}/$1"
    SLOTS_PER_WORKER=4 HOLD_MS=$2 timeout 90 "$REL" sweep --configs "1@1/128Mi" \
        --profile "$tmp/profile.yaml" --port "$port" --out "$tmp/$1" -- \
        python3 "$app" "$marker" >"$tmp/$1.log" 2>&1 || fail "sweep $1 exited $?: $(tail -n 5 "$tmp/$1.log")"
    python3 - "$tmp/$1/results.json" "$2" "$((SECONDS - t0))" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["variants"][0]
c = v["slo_capacity"]
known = 4 * 1000 / float(sys.argv[2])
print("  %s: capacity %.1f req/s (known %.0f), repeats %s, valid %s, flags %s, limited by %s, %s s"
      % (v["spec"], c["rps"], known, c["repeat_rps"], c["valid"], c["flags"], c["limited_by"],
         sys.argv[3]))
sys.exit(0 if c["valid"] and len(c["repeat_rps"]) == 3 else 1)
PY
}

sweep_valid() { # NAME HOLD_MS: one more try when the first is not valid
    sweep "$1" "$2" || sweep "$1" "$2" || fail "sweep $1: no valid capacity in two tries"
}

start=$SECONDS
sweep_valid a1 20
sweep_valid a2 20
sweep_valid slow 40
echo "  three sweeps in $((SECONDS - start)) s"

set +e
"$REL" compare --fail-on-regression 10 "$tmp/a1" "$tmp/a2" >"$tmp/same.txt" 2>&1
rc_same=$?
"$REL" compare --fail-on-regression 10 "$tmp/a1" "$tmp/slow" >"$tmp/slow.txt" 2>&1
rc_slow=$?
"$REL" compare --json "$tmp/a1" "$tmp/slow" >"$tmp/slow.json"

cat "$tmp/same.txt" "$tmp/slow.txt"
[ $rc_same -eq 0 ] || fail "two runs of the same app: exit $rc_same, want 0"
grep -Eq '^1@1/128Mi .*  ~ ' "$tmp/same.txt" || fail "two runs of the same app are not ~"
grep -q "significantly lower in 0, higher in 0, ~ in 1" "$tmp/same.txt" || fail "same: overall"
[ $rc_slow -eq 99 ] || fail "twice as slow: exit $rc_slow, want 99"
grep -q "^sizeup compare: REGRESSION: .* in 1@1/128Mi (" "$tmp/slow.txt" || fail "regression not named"
python3 - "$tmp/slow.json" <<'PY' || fail "twice as slow: JSON"
import json, sys
c = json.load(open(sys.argv[1]))["variants"][0]["capacity_rps"]
assert c["significant"] and c["p"] < 0.05, c
assert -60 < c["change_pct"] < -40, "change %.1f%%, want about -50%%" % c["change_pct"]
print("  twice as slow: %.1f%% (p=%.2g)" % (c["change_pct"], c["p"]))
PY
left=$(leftover_procs "$marker")
[ -z "$left" ] || fail "processes left behind: $left"
echo "e2e compare: ok"
