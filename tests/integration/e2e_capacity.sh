#!/usr/bin/env bash
# slow: make e2e
# End to end, a capacity sweep through the operator (clone mode, 2 variants, 1 s windows): the
# status shows the time left while it runs and ends "done"; results.json has slo_capacity for
# both rows; CPU comes from metrics.k8s.io (the fake scrapes every 1.5 s, so a 1 s step can never hold a whole metrics window) only for the steps
# held over a metrics window, the boundary repeats, never for the 1 s search steps.
# METRICS_WINDOW (seconds, default 1.5) is the fake's metrics resolution: e2e_capacity_15s.sh
# runs this test at metrics-server's default of 15 s.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
METRICS_WINDOW=${METRICS_WINDOW:-1.5}
e2e_setup --metrics-window "$METRICS_WINDOW"
cap_profile_apply

t0=$SECONDS
op_start op
k annotate deployment web sizeup.dev/profile=cap-load \
    "sizeup.dev/configs=1@0.2/128Mi 1@0.8/128Mi" sizeup.dev/sweep=cap-1 >/dev/null
wait_status web '^running [01]/2, about [0-9hms]+ left$' 30
# Each variant's first boundary repeat is held over two metrics windows and a bit.
wait_status web '^done$' "$(python3 -c "print(int(120 + 5 * $METRICS_WINDOW))")"
check_capacity web 2 "$METRICS_WINDOW"
check_events web SweepStarted VariantMeasured SweepCompleted
k get events.events.k8s.io -o json | python3 -c '
import json, sys
notes = [e.get("note", "") for e in json.load(sys.stdin)["items"]
         if e["reason"] == "VariantMeasured" and e["note"].startswith("variant 1/2")]
assert notes and all(", about " in n and n.endswith(" left") for n in notes), notes
print("  first VariantMeasured event: %s" % notes[0])' || fail "no time left in the Event"
op_stop
echo "e2e capacity sweep: ok ($((SECONDS - t0)) s)"
