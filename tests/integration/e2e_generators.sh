#!/usr/bin/env bash
# slow: make e2e
# Load from several pods, end to end against the fake: a sweep with sizeup.dev/generators: 3 runs
# its load as an Indexed Job of `sizeup loadtest` workers in the operator's namespace (restricted
# securityContext, admitted by the restricted Pod Security level the namespace enforces, no
# token, the generators' ServiceAccount, the operator's image); the merged
# result matches one generator's on the same target within noise and its histogram is exactly
# the sum of the workers' (from the operator's log) and its series is the workers' points added
# interval by interval (they add up to the total, each with its percentiles); a worker killed mid-run makes the variant
# FAILED naming the worker; no Job, pod or ServiceAccount token is left after a sweep, a cancel
# or a kill -9 of the operator (the next operator deletes the leftover Job).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SIZEUP=${SIZEUP:-$ROOT/build/sizeup}
# shellcheck source=tests/integration/lib/operator_e2e.sh
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_require
E2E_W=$(mktemp -d /tmp/sizeup-e2e-gen.XXXXXX)
trap e2e_cleanup EXIT

# The operator's image runs this build of sizeup, as the chart's Job would run the image.
cat >"$E2E_W/images.json" <<JSON
{"example/web:*": {"command": ["python3", "\${FAKEAPI_APPS}/web.py"]},
 "example/sizeup:*": {"entrypoint": ["$SIZEUP"], "cmd": ["operator"]}}
JSON
fake_start "$E2E_W/fake" --images "$E2E_W/images.json" || exit 1
k apply -f "$ROOT/manifests/examples/web.yaml" >/dev/null || fail "kubectl apply failed"
k rollout status deployment/web --timeout=60s >/dev/null || fail "example app did not roll out"
k create namespace sizeup >/dev/null
# As manifests/namespace.yaml labels it: the fake's admission refuses any generator pod that does
# not meet the restricted Pod Security level.
k label namespace sizeup pod-security.kubernetes.io/enforce=restricted >/dev/null
k -n sizeup create serviceaccount sizeup-generator >/dev/null
k -n sizeup patch serviceaccount sizeup-generator -p '{"automountServiceAccountToken": false}' >/dev/null
profile() { # DURATION: an open-loop load the app holds easily, as ConfigMap gen-load
    k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: gen-load}
data:
  profile.yaml: |
    rate: 80
    duration: $1
    warmup: 0s
    timeout: 5s
    search: { mode: fixed }
    requests:
      - { name: hello, method: GET, path: /, weight: 1 }
YAML
}
profile 4s

export POD_NAMESPACE=sizeup SIZEUP_GENERATOR_IMAGE=example/sizeup:1 \
    SIZEUP_GENERATOR_SERVICE_ACCOUNT=sizeup-generator SIZEUP_GENERATOR_CPU=250m \
    SIZEUP_GENERATOR_MEMORY=256Mi SIZEUP_GENERATOR_START_DELAY=2s
op_start op

sweep() { # VALUE GENERATORS: the request's annotations first, the sweep value last
    if [ "$2" = 1 ]; then
        k annotate deployment web sizeup.dev/generators- >/dev/null 2>&1 || true
    else
        k annotate --overwrite deployment web sizeup.dev/generators="$2" >/dev/null
    fi
    k annotate --overwrite deployment web sizeup.dev/configs=1@1/256Mi sizeup.dev/profile=gen-load \
        sizeup.dev/sweep="$1" >/dev/null
}

nothing_left() { # WHAT
    local jobs pods
    for _ in $(seq 1 100); do
        jobs=$(k -n sizeup get jobs -o name | wc -l)
        pods=$(k -n sizeup get pods -o name | wc -l)
        [ "$jobs" = 0 ] && [ "$pods" = 0 ] && break
        sleep 0.1
    done
    [ "$jobs" = 0 ] && [ "$pods" = 0 ] || fail "$1: $jobs Jobs and $pods pods left in sizeup"
    # Tokens: the kubelet projects one per automounted pod; a generator never gets one.
    local vols
    vols=$(fakectl GET /fake/pods | python3 -c 'import json,sys; print(sum(1 for p in json.load(sys.stdin)["pods"] if p["namespace"] == "sizeup" and p["serviceAccountDir"]))')
    [ "$vols" = 0 ] || fail "$1: a generator pod holds a ServiceAccount token"
    echo "ok: $1: no Job, pod or ServiceAccount token left"
}

rps_of() { # the variant's throughput and requests from results.json
    k get configmap web-sizing -o jsonpath='{.data.results\.json}' | python3 -c '
import json, sys
v = json.load(sys.stdin)["variants"][0]
print("%.1f %s %s" % (v["throughput_rps"], v["requests"], v.get("state", v.get("verdict", ""))))'
}

# 1. One generator (the operator's own process) as the reference.
sweep one 1
wait_status web '^done$' 120
read -r rps1 req1 _ <<<"$(rps_of)"
echo "one generator: $rps1 req/s ($req1 requests)"

# 2. Three generator pods: watch the Job while it runs.
sweep three 3
job=
for _ in $(seq 1 100); do
    job=$(k -n sizeup get jobs -o name | head -n1)
    [ -n "$job" ] && break
    sleep 0.1
done
[ -n "$job" ] || fail "no generator Job appeared"
k -n sizeup get "$job" -o json >"$E2E_W/job.json"
python3 - "$E2E_W/job.json" <<'PY' || fail "the generator Job is not as designed"
import json, sys
j = json.load(open(sys.argv[1]))
s, p = j["spec"], j["spec"]["template"]["spec"]
c = p["containers"][0]
assert s["completionMode"] == "Indexed" and s["completions"] == 3 and s["parallelism"] == 3, s
assert s["backoffLimit"] == 0 and s["ttlSecondsAfterFinished"] > 0, s
assert j["metadata"]["labels"]["sizeup.dev/component"] == "load-generator"
assert p["automountServiceAccountToken"] is False and p["serviceAccountName"] == "sizeup-generator"
assert p["restartPolicy"] == "Never" and p["securityContext"]["runAsNonRoot"] is True
sc = c["securityContext"]
assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"]
assert sc["readOnlyRootFilesystem"] is True and sc["seccompProfile"]["type"] == "RuntimeDefault"
assert c["image"] == "example/sizeup:1" and c["resources"]["limits"]["cpu"] == "250m"
assert "$(JOB_COMPLETION_INDEX)/3" in c["args"], c["args"]
print("ok: Job %s: Indexed 3/3, backoffLimit 0, TTL, restricted, no token, the operator's image"
      % j["metadata"]["name"])
PY
k -n sizeup get jobs
wait_status web '^done$' 120
read -r rps3 req3 _ <<<"$(rps_of)"
echo "three generators: $rps3 req/s ($req3 requests)"
python3 - "$rps1" "$rps3" <<'PY' || fail "three generators ($rps3 req/s) differ from one ($rps1 req/s)"
import sys
a, b = float(sys.argv[1]), float(sys.argv[2])
assert abs(a - b) <= 0.1 * a, (a, b)
PY
echo "ok: merged throughput of 3 generators matches one generator's within 10%"
# The merged histogram is the bucket-wise sum of the three parts the operator logged.
k get configmap web-sizing -o jsonpath='{.data.results\.json}' >"$E2E_W/results.json"
python3 - "$OP_LOG" "$E2E_W/results.json" <<'PY' || fail "merged histogram is not the sum of the parts"
import base64, json, re, sys
def varints(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7f) << s; s += 7
        if not x & 0x80:
            return v, i
def decode(text):
    b = base64.b64decode(text)
    assert b[0] == 1
    i, head = 1, []
    for _ in range(5):
        v, i = varints(b, i); head.append(v)
    n, i = varints(b, i)
    buckets, nxt = {}, 0
    for _ in range(n):
        gap, i = varints(b, i); c, i = varints(b, i)
        buckets[nxt + gap] = c  # each gap counts from the bucket after the previous one
        nxt += gap + 1
    return head, buckets
parts = re.findall(r"loadjob.part .*generator=(\d) of=3 requests=(\d+) latency_hist=(\S+)",
                   open(sys.argv[1]).read())
assert len(parts) == 3, parts
merged = json.load(open(sys.argv[2]))["variants"][0]["latency_hist"]
mh, mb = decode(merged)
total = {}
count = 0
for _, req, h in parts:
    ph, pb = decode(h)
    count += ph[0]
    for k, v in pb.items():
        total[k] = total.get(k, 0) + v
assert total == mb, "buckets differ"
assert count == mh[0], (count, mh[0])
print("ok: merged histogram == sum of the 3 workers' (%d samples, %d buckets; parts %s)"
      % (mh[0], len(mb), "+".join(r for _, r, _ in parts)))
PY
# The merged series: the workers' points added interval by interval (each worker serves every
# point's histogram), so they add up to the merged total, and every point with requests has its
# percentiles, rendered from the merged histogram (an unmerged series would be empty).
python3 - "$E2E_W/results.json" <<'PY' || fail "the merged series is missing or does not add up"
import json, sys
v = json.load(open(sys.argv[1]))["variants"][0]
pts = v.get("series") or []
assert len(pts) >= 3, "series has %d points" % len(pts)
n = sum(p["requests"] for p in pts)
assert n == v["requests"], (n, v["requests"])
assert sum(p["errors"] for p in pts) == v["failed"], pts
busy = [p for p in pts if p["requests"]]
assert busy and all(0 < p["p50_ms"] <= p["p95_ms"] <= p["p99_ms"] for p in busy), busy
assert all("latency_hist" not in p for p in pts), "results.json carries the point histograms"
print("ok: merged series: %d points adding up to %d requests, p95 %s ms" % (
    len(pts), n, "/".join("%g" % p["p95_ms"] for p in busy)))
PY
nothing_left "after the sweep"

# 3. A worker killed with SIGKILL mid-run: the variant is FAILED and names the worker.
profile 6s
sweep killed 3
pid=
for _ in $(seq 1 200); do
    pid=$(fakectl GET /fake/pods | python3 -c 'import json,sys; print(next((c["pid"] for p in json.load(sys.stdin)["pods"] if p["namespace"] == "sizeup" and "-1-" in p["name"] for c in p["containers"] if c["pid"]), ""))')
    [ -n "$pid" ] && break
    sleep 0.1
done
[ -n "$pid" ] || fail "worker 1 never ran"
sleep 3 # into the measured window (2 s start delay)
kill -9 "$pid"
wait_status web '^done$' 120
k get configmap web-sizing -o jsonpath='{.data.results\.md}' >"$E2E_W/killed.md"
grep -q "generator 1 of 3 failed" "$E2E_W/killed.md" || { cat "$E2E_W/killed.md"; fail "the killed worker is not named"; }
grep "generator 1 of 3" "$E2E_W/killed.md" | head -n1
echo "ok: a worker killed mid-run fails the variant, naming generator 1 of 3"
nothing_left "after a killed worker"

# 4. Cancel while the workers run.
sweep cancelled 3
for _ in $(seq 1 100); do [ -n "$(k -n sizeup get jobs -o name)" ] && break; sleep 0.1; done
k annotate deployment web sizeup.dev/sweep- >/dev/null
wait_status web '^failed: cancelled' 60
nothing_left "after a cancel"

# 5. kill -9 of the operator while the workers run: the next operator deletes the Job.
sweep crashed 3
for _ in $(seq 1 100); do [ -n "$(k -n sizeup get jobs -o name)" ] && break; sleep 0.1; done
[ -n "$(k -n sizeup get jobs -o name)" ] || fail "no Job before the kill"
kill -9 "$OP_PID"
wait "$OP_PID" 2>/dev/null || true
OP_PID=
[ -n "$(k -n sizeup get jobs -o name)" ] || fail "the Job vanished with the operator (the test proves nothing)"
op_start op2
grep -q "leftovers-deleted" "$E2E_W/op2.log" || fail "the new operator did not delete the leftover Job"
wait_status web '^done$' 120
nothing_left "after kill -9 of the operator and a restart"
echo "PASS"
