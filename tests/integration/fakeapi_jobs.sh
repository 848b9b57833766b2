#!/usr/bin/env bash
# batch/v1 Jobs in the fake, checked with kubectl: an Indexed Job's pods run as processes with
# JOB_COMPLETION_INDEX, the index annotation and label and the pod's CPU limit as a cgroup
# limit; `kubectl wait --for=condition=complete` and `kubectl get jobs`; a failing pod replaced
# until backoffLimit, then Failed; a worker killed with SIGKILL fails its Job; a refused
# restartPolicy; ttlSecondsAfterFinished; deletion by the API's default (orphan) and by kubectl
# (background, the pods with it).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/fakeapi/lib.sh"
fake_require
WORK=$(mktemp -d /tmp/fakeapi-jobs.XXXXXX)
cleanup() { fake_stop; rm -rf "$WORK"; }
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    echo "--- server log" >&2
    tail -n 30 "$WORK/fake/server.log" >&2
    exit 1
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
no_pods_of() { # JOB: waits up to 10 s until no pod of JOB is left, else fails
    local n
    for _ in $(seq 1 100); do
        n=$(k get pods -l "job-name=$1" -o name | wc -l)
        [ "$n" = 0 ] && return 0
        sleep 0.1
    done
    fail "$n pods of Job $1 left"
}

# An image whose entrypoint is a shell: the container's args are the script.
cat >"$WORK/images.json" <<'JSON'
{"example/sh:*": {"entrypoint": ["sh", "-c"], "cmd": ["true"]}}
JSON
mkdir -p "$WORK/out"
fake_start "$WORK/fake" --images "$WORK/images.json" --restart-backoff 0.2
echo "fake API server on port $FAKE_PORT"

job() { # name completions parallelism backoffLimit script [extra spec lines]
    cat <<YAML
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
spec:
  completionMode: Indexed
  completions: $2
  parallelism: $3
  backoffLimit: $4
$6
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: w
        image: example/sh:1
        args: ['$5']
        resources:
          limits: {cpu: 250m, memory: 64Mi}
YAML
}

# 1. Three indexes, all at once: each pod sees its own index.
job idx 3 3 0 "echo \$(JOB_COMPLETION_INDEX) \$POD_NAME > $WORK/out/\$(JOB_COMPLETION_INDEX); sleep 1" "" |
    k apply -f - >/dev/null
k wait --for=condition=complete job/idx --timeout=60s >/dev/null || fail "idx did not complete"
for i in 0 1 2; do
    [ -s "$WORK/out/$i" ] || fail "index $i did not run"
    pod=$(cut -d' ' -f2 "$WORK/out/$i")
    case "$pod" in idx-$i-*) ;; *) fail "index $i ran in pod $pod" ;; esac
    ann=$(k get pod "$pod" -o json | json "d['metadata']['annotations']['batch.kubernetes.io/job-completion-index'] + ' ' + d['metadata']['labels']['batch.kubernetes.io/job-completion-index'] + ' ' + d['metadata']['ownerReferences'][0]['kind']")
    [ "$ann" = "$i $i Job" ] || fail "pod $pod: index annotation/label/owner '$ann'"
done
st=$(k get job idx -o json | json "'%s %s %s' % (d['status']['succeeded'], d['status']['completedIndexes'], [c['type'] for c in d['status']['conditions']])")
[ "$st" = "3 0-2 ['SuccessCriteriaMet', 'Complete']" ] || fail "idx status: $st"
k get jobs | grep -E '^idx +Complete +3/3 ' >/dev/null || { k get jobs; fail "kubectl get jobs"; }
# The pods ran under their CPU limit, as a Deployment's do.
cpu=$(fakectl GET /fake/pods | json "sorted({c['cgroup'].get('cpuMillis') for p in d['pods'] if p['name'].startswith('idx-') for c in p['containers']})")
[ "$cpu" = "[250]" ] || fail "idx pods' cgroup CPU limits: $cpu"
echo "ok: Indexed Job of 3 completed, each pod with its index and a 250m cgroup"

# 2. A pod that fails is replaced until backoffLimit is passed, then the Job fails.
job bad 1 1 1 'exit 3' "" | k apply -f - >/dev/null
k wait --for=condition=failed job/bad --timeout=60s >/dev/null || fail "bad did not fail"
st=$(k get job bad -o json | json "'%s %s' % (d['status']['failed'], [c['reason'] for c in d['status']['conditions'] if c['type']=='Failed'])")
[ "$st" = "2 ['BackoffLimitExceeded']" ] || fail "bad status: $st"
k get jobs | grep -E '^bad +Failed +0/1 ' >/dev/null || { k get jobs; fail "kubectl get jobs (Failed)"; }
echo "ok: a failing pod is retried once (backoffLimit 1), then the Job is Failed"

# 3. A worker killed with SIGKILL mid-run fails its Job (backoffLimit 0); the others are stopped.
job kill 2 2 0 'sleep 30' "" | k apply -f - >/dev/null
pid=
for _ in $(seq 1 100); do
    pid=$(fakectl GET /fake/pods | json "next((c['pid'] for p in d['pods'] if p['name'].startswith('kill-1-') for c in p['containers'] if c['pid']), '')")
    [ -n "$pid" ] && break
    sleep 0.1
done
[ -n "$pid" ] || fail "kill-1 never ran"
kill -9 "$pid"
k wait --for=condition=failed job/kill --timeout=30s >/dev/null || fail "kill did not fail"
code=$(k get pods -l batch.kubernetes.io/job-completion-index=1,job-name=kill -o json | json "d['items'][0]['status']['containerStatuses'][0]['state']['terminated']['exitCode']")
[ "$code" = 137 ] || fail "killed worker's exit code: $code"
for _ in $(seq 1 100); do
    left=$(k get pods -l job-name=kill -o json | json "len([p for p in d['items'] if p['status'].get('phase') not in ('Failed', 'Succeeded')])")
    [ "$left" = 0 ] && break
    sleep 0.1
done
[ "$left" = 0 ] || fail "the other worker of a failed Job still runs"
echo "ok: a worker killed with SIGKILL (exit 137) fails the Job; its other pod is stopped"

# 4. Validation: a Job's pods cannot restart Always.
if job always 1 1 0 'true' "" | sed 's/restartPolicy: Never/restartPolicy: Always/' |
    k apply -f - >"$WORK/always.out" 2>&1; then
    fail "a Job with restartPolicy Always was accepted"
fi
grep -q 'Unsupported value: "Always"' "$WORK/always.out" || fail "refusal: $(cat "$WORK/always.out")"
echo "ok: restartPolicy Always is refused (422)"

# 5. ttlSecondsAfterFinished: the Job and its pods go once it has finished.
job ttl 1 1 0 'true' "  ttlSecondsAfterFinished: 1" | k apply -f - >/dev/null
k wait --for=condition=complete job/ttl --timeout=30s >/dev/null || fail "ttl did not complete"
for _ in $(seq 1 100); do
    k get job ttl >/dev/null 2>&1 || break
    sleep 0.1
done
k get job ttl >/dev/null 2>&1 && fail "ttl Job still there"
no_pods_of ttl
echo "ok: a finished Job with ttlSecondsAfterFinished 1 is deleted with its pods"

# 6. Deleting: the API's default for batch/v1 orphans the pods; kubectl deletes them too.
api="https://127.0.0.1:$FAKE_PORT/apis/batch/v1/namespaces/default/jobs"
curl -sf --cacert "$WORK/fake/ca.crt" -H "Authorization: Bearer $(cat "$WORK/fake/token")" \
    -X DELETE "$api/bad" >/dev/null || fail "DELETE bad"
sleep 1
n=$(k get pods -l job-name=bad -o json | json "len([p for p in d['items'] if not p['metadata'].get('ownerReferences')])")
[ "$n" = 2 ] || fail "a Job deleted without a policy: $n orphaned pods, want 2"
k delete job idx >/dev/null
no_pods_of idx
echo "ok: DELETE without a policy orphans a Job's pods; kubectl delete removes them"
echo "PASS"
