#!/usr/bin/env bash
# slow: make e2e
# End to end, sizing that stays current: with sizeup.dev/resweep: on-image-change and a 30 s
# sizeup.dev/resweep-min-interval, an image change that rolls out starts exactly one sweep,
# whose ConfigMap keeps the previous results (previous-results.json) and says what changed (a
# results.md line, a ResultsCompared Event). A second change inside the interval starts nothing
# then, survives an operator restart, and is swept once the interval has passed, with the
# newest image.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup
INTERVAL=30

# How many sweeps the operator started, over every log it wrote.
starts() { cat "$E2E_W"/op*.log | grep -c 'event=sweep.start '; }
images() { ann web sizeup.dev/resweep-images; }

op_start op
# The baseline: a sweep a person asks for, with re-sweeps on.
k annotate deployment web sizeup.dev/profile=web-load "sizeup.dev/configs=1@0.5/128Mi" \
    sizeup.dev/resweep=on-image-change sizeup.dev/resweep-min-interval=${INTERVAL}s \
    sizeup.dev/sweep=manual-1 >/dev/null
wait_status web '^done$' 60
for _ in $(seq 1 20); do [ "$(images)" = "web=example/web:1" ] && break; sleep 0.5; done
[ "$(images)" = "web=example/web:1" ] || fail "images not recorded: '$(images)'"
[ "$(starts)" = 1 ] || fail "$(starts) sweeps after the first"
echo "  baseline: sweep manual-1 done, images recorded"

# First change: exactly one sweep, with the newest image, comparing with the baseline.
k set image deployment/web web=example/web:2 >/dev/null
k rollout status deployment/web --timeout=60s >/dev/null || fail "rollout of :2"
for _ in $(seq 1 40); do [[ "$(ann web sizeup.dev/last-sweep)" == resweep-* ]] && break; sleep 0.5; done
first=$(ann web sizeup.dev/last-sweep)
[[ "$first" == resweep-* ]] || fail "no automatic sweep after the image change (last-sweep '$first')"
t_first=$SECONDS
wait_status web '^done$' 60
[ "$(starts)" = 2 ] || fail "$(starts) sweeps after one image change, not 2"
[ "$(images)" = "web=example/web:2" ] || fail "images after the re-sweep: '$(images)'"
k get configmap web-sizing -o json >"$E2E_W/cm.json"
python3 - "$E2E_W/cm.json" <<'PY' || fail "previous results or comparison missing"
import json, sys
d = json.load(open(sys.argv[1]))["data"]
prev = json.loads(d["previous-results.json"])
cur = json.loads(d["results.json"])
assert prev.get("images") == "web=example/web:1", prev.get("images")
assert cur.get("images") == "web=example/web:2", cur.get("images")
assert [v["spec"] for v in prev["variants"]] == ["1@0.5/128Mi"]
line = [l for l in d["results.md"].splitlines() if "**Since the previous sweep**" in l]
assert line and "since image web=example/web:1, 1 variant compared" in line[0], line
assert ("significant" in line[0]) or ("within noise" in line[0]), line
print("  " + line[0][:160] + "...")
PY
check_events web ResweepStarted ResultsCompared
echo "  image :2 -> one sweep ($first), previous-results.json kept, compared"

# Second change inside the interval: deferred, not dropped, not started now.
k set image deployment/web web=example/web:3 >/dev/null
k rollout status deployment/web --timeout=60s >/dev/null || fail "rollout of :3"
sleep 4
[ "$(starts)" = 2 ] || fail "a change inside the interval started a sweep"
[ "$(ann web sizeup.dev/last-sweep)" = "$first" ] || fail "last-sweep moved inside the interval"
grep -q 'event=resweep.deferred namespace=default deployment=web' "$E2E_W"/op*.log ||
    fail "the change was not deferred"
echo "  image :3 inside the interval: deferred, no sweep ($((SECONDS - t_first)) s after the first)"

# The interval's clock is on the Deployment: a restarted operator keeps it.
op_stop
op_start op2
[ "$(starts)" = 2 ] || fail "the restarted operator started a sweep inside the interval"
for _ in $(seq 1 $((INTERVAL * 2 + 30))); do
    [[ "$(ann web sizeup.dev/last-sweep)" == resweep-* ]] &&
        [ "$(ann web sizeup.dev/last-sweep)" != "$first" ] && break
    sleep 1
done
second=$(ann web sizeup.dev/last-sweep)
[ "$second" != "$first" ] || fail "the deferred change never ran"
waited=$((SECONDS - t_first))
[ $waited -ge $((INTERVAL - 3)) ] || fail "the deferred sweep ran after $waited s, inside the interval"
wait_status web '^done$' 60
[ "$(starts)" = 3 ] || fail "$(starts) sweeps, not 3"
[ "$(images)" = "web=example/web:3" ] || fail "the deferred sweep did not take the newest image"
python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; assert json.loads(d["previous-results.json"])["images"] == "web=example/web:2"' \
    < <(k get configmap web-sizing -o json) || fail "the second re-sweep compares with the wrong one"
echo "  deferred sweep $second ran ${waited} s after the first (interval ${INTERVAL} s), image :3"

# Nothing more: the images are current.
sleep 3
[ "$(starts)" = 3 ] || fail "a sweep without an image change"
op_stop
echo "e2e resweep: ok"
