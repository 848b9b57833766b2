#!/usr/bin/env bash
# A local sweep that no variant survives (a P95 threshold no variant can meet): it exits 0, says
# so on stdout, writes every row into results.md, results.json and report.html with the sentence
# naming the closest variant, and writes no values.yaml; a values.yaml left in --out by an earlier
# sweep is removed so it cannot be applied by mistake.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/profile.yaml" <<'EOF'
users: 4
duration: 2s
warmup: 500ms
search: { mode: fixed }
thresholds:
  healthy:    { p95: 1ms, errors: 1% }
  overloaded: { p95: 2ms, errors: 1% }
EOF
mkdir -p "$tmp/out"
echo "workers: { count: \"9\" }  # from an earlier sweep" >"$tmp/out/values.yaml"

port=$(free_port)
set +e
"$SIZEUP" sweep --configs "1@0.5/128Mi 1@1/128Mi" --profile "$tmp/profile.yaml" --port "$port" \
    --out "$tmp/out" -- env WORK=200000 python3 "$ROOT/tests/integration/cpu_server.py" \
    >"$tmp/stdout" 2>"$tmp/stderr" &
pid=$!
wait $pid
rc=$?
pid=
set -e
[ $rc -eq 0 ] || { echo "exit $rc, want 0"; tail -20 "$tmp/stderr"; exit 1; }
if ! grep -q "no recommendation: " "$tmp/stdout"; then
    echo "stdout lacks 'no recommendation'"; cat "$tmp/stdout"; exit 1
fi
if grep -q "files:.*values.yaml" "$tmp/stdout" || ! grep -q "No values.yaml was written" "$tmp/stdout"; then
    echo "stdout lists a values.yaml"; cat "$tmp/stdout"; exit 1
fi
[ ! -e "$tmp/out/values.yaml" ] || { echo "values.yaml still in --out"; exit 1; }
# The closing line lists exactly the files written.
grep -q "files: $tmp/out/results.md  results.json  auto-sizing.yaml  report.html$" "$tmp/stdout" ||
    { echo "the files line does not list what was written"; grep "files:" "$tmp/stdout"; exit 1; }
for f in results.md results.json auto-sizing.yaml report.html; do
    [ -s "$tmp/out/$f" ] || { echo "$f missing"; exit 1; }
done
python3 - "$tmp/out" <<'PY'
import json, os, sys
d = sys.argv[1]
res = json.load(open(os.path.join(d, "results.json")))
md = open(os.path.join(d, "results.md")).read()
html = open(os.path.join(d, "report.html")).read()
vs = res["variants"]
assert [v["spec"] for v in vs] == ["1@0.5/128Mi", "1@1/128Mi"], [v["spec"] for v in vs]
assert res["recommendation"]["index"] is None, res["recommendation"]
assert "values" not in res
for v in vs:
    assert v["state"] == "measured" and v["verdict"] == "OVERLOADED", (v["spec"], v["verdict"])
    assert v["label"] in md and v["label"] in html, v["label"]
closest = min(vs, key=lambda v: v["latency_ms"]["p95"])["spec"]
want = "; the closest was %s: OVERLOADED" % closest
assert "No variant holds the load (" in md and want in md, md
assert "No `values.yaml` is written." in md
print("no recommendation: every row kept, closest %s, no values.yaml, exit 0" % closest)
PY
