#!/usr/bin/env bash
# `sizeup compare` on hand-written results.json files: the exit codes CI relies on (0 compared,
# 99 with --fail-on-regression when a capacity fell significantly beyond the threshold, 2 on bad
# flags and bad input), the text a person reads (`~` for identical runs, the drop with its p-value,
# the variants on one side only) and --json.
set -u
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A: two variants with 3 repeats each. B: the first variant's capacity halved (small spread),
# the second unchanged within its noise, and a variant A does not have. Fixed: A without
# slo_capacity, as a fixed-load sweep writes it.
python3 - "$tmp" <<'PY'
import json, os, sys
d = sys.argv[1]
def variant(spec, reps, thr, p95, p99):
    v = {"spec": spec, "state": "measured", "throughput_rps": thr,
         "latency_ms": {"p50": p95 / 2, "p95": p95, "p99": p99}, "capacity": True,
         "slo_capacity": None}
    if reps:
        rps = sum(reps) / len(reps)
        v["slo_capacity"] = {"rps": rps, "interval": [min(reps), max(reps)],
                             "repeats": len(reps), "repeat_rps": reps, "per_core": rps,
                             "limited_by": "slo-p95", "valid": True, "flags": [],
                             "cpu_cores": 0.9, "peak_memory_bytes": 52428800,
                             "throttling": None, "steps": []}
    return v
def results(variants):
    return {"tool": "sizeup 0.1.0", "started_at": "2026-12-01T03:00:00Z", "platform": "local",
            "variants": variants, "recommendation": {"index": None}}
a = results([variant("1@0.5/512Mi", [1010, 990, 1000], 480, 40, 80),
             variant("2@1/1Gi", [2050, 1950, 2010], 950, 35, 70)])
b = results([variant("1@0.5/512Mi", [505, 495, 498], 240, 80, 160),
             variant("2@1/1Gi", [1990, 2060, 1985], 960, 34, 71),
             variant("4@2/1Gi", [3900, 4000, 4100], 1900, 30, 60)])
fixed = results([variant("1@0.5/512Mi", None, 480, 40, 80), variant("2@1/1Gi", None, 950, 35, 70)])
os.makedirs(d + "/runA")
json.dump(a, open(d + "/runA/results.json", "w"))
json.dump(b, open(d + "/b.json", "w"))
json.dump(fixed, open(d + "/fixed.json", "w"))
wrong = dict(a, tool="sizeup 7.0.0")
json.dump(wrong, open(d + "/wrong-version.json", "w"))
json.dump({"requests": 10, "throughput_rps": 5}, open(d + "/loadtest.json", "w"))
PY
echo "this is not json" >"$tmp/text.json"
mkdir "$tmp/empty-dir"

expect() { # want-exit, description, args...
    local want=$1 what=$2; shift 2
    "$SIZEUP" compare "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ $rc -eq "$want" ] || { cat "$tmp/out" "$tmp/err"; fail "$what: exit $rc, want $want"; }
}

# Identical runs (a directory and its file): exit 0, every capacity `~`, nothing significant.
expect 0 "identical" "$tmp/runA" "$tmp/runA/results.json"
cat "$tmp/out"
grep -q "1@0.5/512Mi  *1000 ±2% n=3  *1000 ±2% n=3  *+0.0%  *~ p=1.000 n=3+3" "$tmp/out" \
    || fail "identical runs: capacity row not ~"
grep -q "significantly lower in 0, higher in 0, ~ in 2" "$tmp/out" || fail "identical: overall"
expect 0 "identical with a threshold" --fail-on-regression 5 "$tmp/runA" "$tmp/runA"

# Halved: shown as a significant drop; exit 0 without a threshold.
expect 0 "halved, no threshold" "$tmp/runA" "$tmp/b.json"
cat "$tmp/out"
grep -q "^1@0.5/512Mi .* -50.1%  *p<0.001 n=3+3" "$tmp/out" || fail "halved: no significant drop"
grep -q "^2@1/1Gi .* ~ p=" "$tmp/out" || fail "unchanged variant not ~"
grep -q "^only in B: 4@2/1Gi$" "$tmp/out" || fail "one-sided variant not listed"

# --fail-on-regression: 99 beyond the threshold (naming the variant), 0 below it.
expect 99 "halved beyond 10%" --fail-on-regression 10 "$tmp/runA" "$tmp/b.json"
grep -q "^sizeup compare: REGRESSION: .* in 1@0.5/512Mi (-50.1%)$" "$tmp/err" \
    || fail "regression not named on stderr: $(cat "$tmp/err")"
grep -q "^REGRESSION: .* 1@0.5/512Mi" "$tmp/out" || fail "regression not in the report"
expect 0 "halved within 60%" --fail-on-regression 60% "$tmp/runA" "$tmp/b.json"
expect 0 "a rise is no regression" --fail-on-regression 0 "$tmp/b.json" "$tmp/runA"

# Fixed-load results: one measurement, always `~`, even against a halved capacity run; the
# threshold cannot fire and says so.
expect 0 "fixed vs fixed" --fail-on-regression 1 "$tmp/fixed.json" "$tmp/fixed.json"
grep -q "a fixed-load sweep measures each variant once" "$tmp/out" || fail "fixed: reason not said"
grep -q "no regression can be judged" "$tmp/err" || fail "fixed: threshold warning missing"

# --json: parses, and carries the verdict.
expect 99 "json" --json --fail-on-regression 10 "$tmp/runA" "$tmp/b.json"
python3 - "$tmp/out" <<'PY' || fail "--json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["regressions"] == ["1@0.5/512Mi"], j["regressions"]
v = {x["spec"]: x for x in j["variants"]}
assert v["1@0.5/512Mi"]["capacity_rps"]["significant"] is True
assert v["2@1/1Gi"]["capacity_rps"]["significant"] is False
assert v["4@2/1Gi"]["in"] == "b"
assert v["1@0.5/512Mi"]["throughput_rps"]["not_tested"] == "one_measurement"
assert abs(j["overall"]["capacity_rps"]["change_pct"] - (-29.0)) < 1, j["overall"]
print("json ok:", j["overall"]["capacity_rps"])
PY

# Bad input and bad flags: exit 2 with a reason naming the file.
expect 2 "not JSON" "$tmp/text.json" "$tmp/b.json"
grep -q "text.json: not JSON" "$tmp/err" || fail "not JSON: $(cat "$tmp/err")"
expect 2 "not a results file" "$tmp/runA" "$tmp/loadtest.json"
grep -q "loadtest.json: not a sizeup results file" "$tmp/err" || fail "$(cat "$tmp/err")"
expect 2 "wrong version" "$tmp/runA" "$tmp/wrong-version.json"
grep -q "written by sizeup 7.0.0" "$tmp/err" || fail "wrong version: $(cat "$tmp/err")"
expect 2 "directory without results.json" "$tmp/empty-dir" "$tmp/runA"
grep -q "empty-dir is a directory without results.json" "$tmp/err" || fail "$(cat "$tmp/err")"
expect 2 "missing file" "$tmp/nope.json" "$tmp/runA"
expect 2 "one operand" "$tmp/runA"
expect 2 "bad threshold" --fail-on-regression ten "$tmp/runA" "$tmp/runA"
expect 2 "threshold over 100" --fail-on-regression 101 "$tmp/runA" "$tmp/runA"
expect 2 "unknown flag" --nope "$tmp/runA" "$tmp/runA"
expect 2 "a flag after the operands" "$tmp/runA" "$tmp/runA" --json
expect 0 "help" --help
echo "compare: ok"
