#!/usr/bin/env bash
# Where the minutes of an operator sweep go: a 3-variant capacity sweep (clone mode) of the
# example app through `sizeup operator` against the fake API server (tests/fakeapi, which rolls
# pods out and serves metrics.k8s.io scraped every METRICS_WINDOW s), the cap-load profile of
# the e2e tests (1 s windows, 500 ms warm-ups, 3 repeats, at most 5 search steps). Per variant,
# from the runner's sweep.capacity_time and sweep.measured log lines: the rollout (apply until
# ready), the load runs' warm-ups and windows as the profile asks for them (steps x 1.5 s), the
# windows held beyond that for a metrics window (a repeat held until metrics.k8s.io can report
# its CPU), what the load runs took beyond them (generator start), the usage calls, the settles
# after failed steps, and the rest (stop and restore); then the sums over the sweep.
# Usage: SIZEUP=build/sizeup bench/operator_sweep_time.sh   (METRICS_WINDOW, CONFIGS to change)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZEUP=${SIZEUP:-$ROOT/build/sizeup}
export ROOT SIZEUP
configs=${CONFIGS:-"1@0.2/128Mi 1@0.5/128Mi 1@0.8/128Mi"}
# shellcheck source=tests/integration/lib/operator_e2e.sh
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup --metrics-window "${METRICS_WINDOW:-1.5}"
cap_profile_apply
t0=$(date +%s.%N)
op_start op
k annotate deployment web sizeup.dev/profile=cap-load "sizeup.dev/configs=$configs" \
    sizeup.dev/sweep=bench-1 >/dev/null
wait_status web '^done$' 400
t1=$(date +%s.%N)
python3 - "$OP_LOG" "$t0" "$t1" <<'PY'
import re, sys
log, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
# The cap-load profile's warm-up and window: what each step runs at least.
STEP_S = 0.5 + 1.0
rows, walls = [], {}
for line in open(log):
    f = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
    if "event=sweep.capacity_time" in line:
        rows.append(f)
    elif "event=sweep.measured" in line:
        walls[f["variant"]] = float(f["wall_s"])
keys = ["ready_s", "profile_s", "held_s", "start_s", "hold_s", "settle_s"]
names = ["rollout", "profile windows", "held for metrics", "generator start", "usage calls", "settle"]
tot = dict.fromkeys(keys + ["other", "wall"], 0.0)
print(f"{'variant':14} {'steps':>5} " + " ".join(f"{n:>15}" for n in names) + f" {'other':>7} {'wall':>7}")
for f in rows:
    v = f["variant"]
    f["profile_s"] = int(f["steps"]) * STEP_S
    f["held_s"] = float(f["window_s"]) - f["profile_s"]
    vals = [float(f[k]) for k in keys]
    wall = walls.get(v, 0.0)
    other = wall - sum(vals)
    for k, x in zip(keys, vals):
        tot[k] += x
    tot["other"] += other
    tot["wall"] += wall
    print(f"{v:14} {f['steps']:>5} " + " ".join(f"{x:15.1f}" for x in vals) + f" {other:7.1f} {wall:7.1f}")
print(f"{'sum':14} {'':>5} " + " ".join(f"{tot[k]:15.1f}" for k in keys) + f" {tot['other']:7.1f} {tot['wall']:7.1f}")
print(f"annotation to done: {t1 - t0:.1f} s (the variants' walls {tot['wall']:.1f} s; the rest is the "
      f"operator's start, the baseline and the final restore)")
PY
