#!/usr/bin/env bash
# A scale-out whose first measured point fails: the app's second replica (the one on --port + 1)
# exits at once, so the point at 2 replicas is `failed`, the curve is not fitted from the one
# point left, and the replica count falls back to the linear one with a finding that says so.
# `sizeup sweep` exits 0 with every file written. The app's capacity is known
# (tests/servers/capacity_server.py: a sleep, not CPU), so the shape search is short.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
capacity_prerequisites
tmp=$(mktemp -d)
marker="sizeup-scaleout-fails-$$"
trap 'rm -rf "$tmp"' EXIT
port=$(free_port 2)
cat >"$tmp/profile.yaml" <<'YAML'
users: 8
search: { warmup: 300ms, window: 1s, precision: 10%, repeats: 2, max_steps: 5 }
slo: { p95: 200ms }
target: { rps: 120 }
scale_out: { max: 2 }
YAML
# Replica 0 (the shape search's and the scale-out's first) serves; replica 1 exits 3.
cat >"$tmp/app.sh" <<EOF2
#!/bin/sh
[ "\$PORT" = "$port" ] || { echo "replica on \$PORT refuses to start" >&2; exit 3; }
exec env SLOTS_PER_WORKER=4 HOLD_MS=40 python3 "$ROOT/tests/servers/capacity_server.py" "$marker"
EOF2
chmod +x "$tmp/app.sh"

attempt() {
    rm -rf "$tmp/out"
    run_sweep "$tmp" nice -n 5 "$BIN" sweep --configs "1@0.5/128Mi" --profile "$tmp/profile.yaml" \
        --port "$port" --out "$tmp/out" -- "$tmp/app.sh" ||
        { cat "$tmp/stderr"; exit 1; }
    require_enforced "$tmp/out/results.json"
    [ -s "$tmp/out/values.yaml" ] && return 0
    # A busy shared host can leave the one variant noisy or contended, and then nothing to size:
    # say why, and try again.
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); v = d["variants"][0]
print("no values.yaml:", v["marks"], (v.get("slo_capacity") or {}).get("flags"),
      d["recommendation"].get("why"))' "$tmp/out/results.json"
    return 1
}
attempt || { echo "== the host was busy: one more try"; attempt; }
for f in results.md results.json values.yaml auto-sizing.yaml report.html; do
    [ -s "$tmp/out/$f" ] || { echo "FAIL: $f not written"; exit 1; }
done
python3 - "$tmp/out/results.json" "$tmp/out/values.yaml" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
so = d["scale_out"]
assert so, "no scale_out in results.json"
pts = so["points"]
for p in pts:
    print("  %d replicas: %s req/s, from %s, note %s" % (p["replicas"], p["rps"], p["from"],
                                                        p.get("note")))
assert [p["replicas"] for p in pts] == [1, 2], pts
assert pts[0]["from"] == "shape-search", pts
assert pts[1]["from"] == "failed" and pts[1]["rps"] is None, pts[1]
assert so["usl"] is None, so["usl"]
rec = d["recommendation"]
print("recommendation: replicas %s, linear %s, from %s, skipped: %s" %
      (rec["replicas"], rec["replicas_linear"], rec["replicas_from"], rec.get("scale_out_skipped")))
assert rec["replicas_from"] == "linear", rec
assert rec["replicas"] == rec["replicas_linear"] >= 1, rec
assert rec["target_reachable"] is True, rec
assert "no curve to read" in rec["scale_out_skipped"], rec
values = open(sys.argv[2]).read()
assert "replicaCount: %d\n" % rec["replicas"] in values, values
PY
grep -q "assumes linear scale-out: the scale-out gave no curve to read" "$tmp/out/results.md" ||
    { echo "FAIL: no finding on the linear fallback in results.md"; exit 1; }
[ -z "$(leftover_procs "$marker")" ] || { echo "FAIL: replicas left running"; exit 1; }
echo "scale_out_first_fails: ok"
