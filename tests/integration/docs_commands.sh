#!/usr/bin/env bash
# Runs the shell commands of README.md and docs/getting-started.md that can run on this machine,
# as a user would type them from the repository root (in a scratch copy, so outputs such as
# sizing/ land there): the helm and kubectl kustomize commands, `build/sizeup help` / `rule` /
# `sweep`, and the entrypoint snippet (cross-checked against `sizeup rule`).
#
# Blocks marked <!-- needs a cluster --> run against the fake API server (tests/fakeapi) when it
# is in the tree: `kubectl apply -k manifests/`, annotate, get, events, and, when this build has
# `sizeup operator` (run as a local process with the fake's kubeconfig), the ConfigMap reads after
# a real sweep of an example app. What cannot run against the fake says why (NOT_ON_FAKE).
# A few commands are never run here, each for a stated reason (NOT_HERE below).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_kubectl
need_pyyaml

SIZEUP=${SIZEUP:-$ROOT/build/sizeup}
[ -x "$SIZEUP" ] || skip "no sizeup binary at $SIZEUP (run make first)"
SIZEUP=$(realpath "$SIZEUP")

tmp=$(mktemp -d)
fake_pid="" op_pid=""
cleanup() {
    if [ -n "$op_pid" ]; then kill "$op_pid" 2>/dev/null || true; wait "$op_pid" 2>/dev/null || true; fi
    if [ -n "$fake_pid" ]; then
        kill "$fake_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$fake_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$fake_pid" 2>/dev/null || true
        wait "$fake_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

# Commands never run by this test, by the start of the line, with the reason.
NOT_HERE=(
    "make test|this is the test suite itself"
    "make demo|covered by its own test (installs packages, sweeps for minutes)"
)

# A scratch copy of the repository root as a user sees it after `make`: the tracked folders
# linked, build/sizeup the binary under test, outputs written into the scratch folder only.
work="$tmp/repo"
mkdir -p "$work/build"
for d in charts manifests examples scripts docs Makefile Dockerfile README.md; do
    [ -e "$ROOT/$d" ] && ln -s "$ROOT/$d" "$work/$d"
done
ln -s "$SIZEUP" "$work/build/sizeup"
PATH="$(dirname "$HELM"):$PATH"
export PATH

# The entrypoint snippet reads cgroup limits below CGROUP_ROOT: give it a cgroup v2 container
# with 2.5 CPUs and 1 GiB, so its answer can be checked against `sizeup rule` (3 workers by
# the default rule: round(2.5) = 3 beats floor(1024 / 192) = 5 only through the min).
cg="$tmp/cgroup"
mkdir -p "$cg"
echo "250000 100000" >"$cg/cpu.max"
echo 1073741824 >"$cg/memory.max"

nblocks=$("$PY" "$ROOT/tests/policy/doc_blocks.py" "$tmp/blocks" "$ROOT/README.md" \
    "$ROOT/docs/getting-started.md")
echo "$nblocks shell blocks in README.md and docs/getting-started.md"

ran=() skipped=() cluster=() failed=()
NOT_ON_FAKE=(
    "docker |no container engine on this machine"
    "helm install|run with the operator as a pod by tests/integration/e2e_journey.sh"
    "helm uninstall|run after its helm install by tests/integration/e2e_journey.sh"
    "kubectl create configmap|kubectl's generators send protobuf, which the fake does not speak (the test creates app-profile from YAML)"
    "kubectl get deploy -w|watches until interrupted"
    "kubectl -n sizeup rollout status deployment/sizeup|run after helm install by tests/integration/e2e_journey.sh (this test runs the operator as a local process)"
)
while IFS=$'\t' read -r id kind where first; do
    block="$tmp/blocks/$id.sh"
    if ! bash -n "$block" 2>"$tmp/syntax"; then
        failed+=("$where: shell syntax error: $(cat "$tmp/syntax")")
        echo "FAIL $where: not valid shell"
        continue
    fi
    if [ "$kind" = cluster ]; then
        cluster+=("$where: $first")
        continue
    fi
    # Drop the commands that never run here, saying so.
    : >"$tmp/run.sh"
    while IFS= read -r line; do
        keep=1
        for entry in "${NOT_HERE[@]}"; do
            if [[ $line == "${entry%%|*}"* ]]; then
                skipped+=("$where: '${entry%%|*}': ${entry#*|}")
                keep=0
            fi
        done
        [ $keep -eq 1 ] && printf '%s\n' "$line" >>"$tmp/run.sh"
    done <"$block"
    grep -qvE '^[[:space:]]*(#|$)' "$tmp/run.sh" || continue
    # The app a documented sweep starts is installed by scripts/install-deps.sh test.
    if grep -q 'gunicorn' "$tmp/run.sh" && ! command -v gunicorn >/dev/null; then
        failed+=("$where: $first (gunicorn is missing: scripts/install-deps.sh test)")
        continue
    fi
    echo "---- $where"
    sed 's/^/   $ /' "$tmp/run.sh"
    if (cd "$work" && CGROUP_ROOT="$cg" timeout 240 sh -e "$tmp/run.sh") >"$tmp/out" 2>&1; then
        ran+=("$where: $first")
        sed -n '1,15s/^/   | /p' "$tmp/out" # no pipe into head: with pipefail, its SIGPIPE would end the script
        # The entrypoint snippet's output is cross-checked below.
        if grep -qF 'sizeup_workers' "$tmp/run.sh"; then cp "$tmp/out" "$tmp/snippet.out"; fi
        # A documented sweep must have measured something, not just exited 0 with FAILED rows.
        if grep -q 'sizeup sweep' "$tmp/run.sh"; then
            if "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
bad = [(v.get("spec"), v.get("state"), (v.get("failure") or {}).get("reason")) for v in d["variants"]
       if v.get("state") != "measured"]
if bad or not d["variants"]:
    sys.exit("variants not measured: %r" % bad)' "$work/sizing/results.json" 2>"$tmp/why"; then
                ran+=("$where: every variant of the guide's sweep was measured (sizing/results.json)")
            else
                failed+=("$where: the guide's sweep did not measure its variants: $(cat "$tmp/why")")
            fi
        fi
    else
        rc=$?
        failed+=("$where: $first (exit $rc)")
        echo "FAIL (exit $rc):"
        sed 's/^/   | /' "$tmp/out" | tail -n 30
    fi
done <"$tmp/blocks/index.tsv"

# --- The cluster blocks, against the fake API server.
if [ ${#cluster[@]} -gt 0 ]; then
    fake="$tmp/fake"
    mkdir -p "$fake"
    python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$fake" >"$tmp/fake.log" 2>&1 &
    fake_pid=$!
    for _ in $(seq 200); do [ -s "$fake/ready" ] && break; sleep 0.1; done
    [ -s "$fake/ready" ] || { cat "$tmp/fake.log"; echo "the fake API server did not start"; exit 1; }
    export KUBECONFIG="$fake/kubeconfig"
    # The app the guide sizes, and the short profile its optional step names.
    kubectl apply -f - >/dev/null <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{containerPort: 8080}]
          env: [{name: WORKERS, value: "1"}]
          resources: {limits: {cpu: "1", memory: 256Mi}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app-profile, namespace: default}
data:
  profile.yaml: |
    users: 5
    duration: 2s
    warmup: 1s
    search: { mode: fixed }
YAML
    kubectl rollout status deployment/app --timeout=60s >/dev/null
    "$SIZEUP" operator --kubeconfig "$KUBECONFIG" --admin-addr 127.0.0.1:0 \
        >"$tmp/operator.log" 2>&1 &
    op_pid=$!
    cluster=()
    waited=no
    while IFS=$'\t' read -r id kind where first; do
        [ "$kind" = cluster ] || continue
        # One command per line, continuation lines joined.
        sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$tmp/blocks/$id.sh" |
            grep -vE '^[[:space:]]*(#|$)' >"$tmp/cmds" || true
        while IFS= read -r cmd; do
            why=""
            for entry in "${NOT_ON_FAKE[@]}"; do
                if [[ $cmd == "${entry%%|*}"* ]]; then why=${entry#*|}; fi
            done
            if [ -n "$why" ]; then
                cluster+=("$where: $cmd -- not run: $why")
                continue
            fi
            if [[ $cmd == *app-sizing* ]]; then
                if [ $waited = no ]; then
                    waited=yes
                    st=""
                    for _ in $(seq 360); do
                        st=$(kubectl get deploy app \
                            -o jsonpath='{.metadata.annotations.sizeup\.dev/status}' 2>/dev/null || true)
                        case $st in "done" | failed*) break ;; esac
                        sleep 0.5
                    done
                    if [ "$st" != "done" ]; then
                        failed+=("the operator did not finish the guide's sweep: status '$st'")
                        tail -n 20 "$tmp/operator.log"
                    fi
                fi
            fi
            # helm upgrade needs a release of the user's own chart: run what comes before it.
            run=$cmd
            if [[ $cmd == *"&& helm upgrade"* ]]; then
                run=${cmd%%&& helm upgrade*}
                cluster+=("$where: helm upgrade -- not run: needs the user's chart (run with one by tests/integration/e2e_journey.sh)")
            fi
            echo "---- $where (fake API server)"
            echo "   \$ $run"
            if (cd "$work" && timeout 60 sh -e -c "$run") >"$tmp/out" 2>&1; then
                ran+=("$where: $run (fake API server)")
                sed -n '1,10s/^/   | /p' "$tmp/out"
            else
                rc=$?
                failed+=("$where: $run (fake API server, exit $rc)")
                echo "FAIL (exit $rc):"
                sed 's/^/   | /' "$tmp/out" | tail -n 20
            fi
        done <"$tmp/cmds"
    done <"$tmp/blocks/index.tsv"
    if [ -s "$work/sizing.yaml" ]; then
        if "$PY" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert isinstance(d, dict) and d' \
            "$work/sizing.yaml"; then
            ran+=("sizing.yaml from the ConfigMap parses as YAML values")
        else
            failed+=("sizing.yaml read from the ConfigMap does not parse")
        fi
    fi
fi

# The entrypoint snippet must agree with `sizeup rule` for the same limits.
if [ -s "$tmp/snippet.out" ]; then
    line=$(grep -m1 '^WORKERS=' "$tmp/snippet.out" || true)
    sw=${line#WORKERS=}
    got=$("$SIZEUP" rule --cpu 2500m --memory 1Gi 2>&1 || true)
    if [[ $got =~ ^[[:space:]]*([0-9]+)[[:space:]]*$ ]] && [ "${BASH_REMATCH[1]}" = "$sw" ]; then
        ran+=("entrypoint snippet in a 2.5 CPU / 1Gi cgroup says $line, as sizeup rule --cpu 2500m --memory 1Gi does")
    else
        failed+=("entrypoint snippet in a 2.5 CPU / 1Gi cgroup says '$line' but sizeup rule --cpu 2500m --memory 1Gi says '$got'")
    fi
else
    failed+=("the entrypoint snippet of getting-started.md did not run")
fi

echo
echo "ran (${#ran[@]}):"
for r in "${ran[@]}"; do echo "  $r"; done
echo "not run here (${#skipped[@]}):"
for s in "${skipped[@]}"; do echo "  $s"; done
echo "need a cluster (${#cluster[@]}):"
for c in "${cluster[@]}"; do echo "  $c"; done
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed (${#failed[@]}):"
    for f in "${failed[@]}"; do echo "  $f"; done
    exit 1
fi
[ ${#ran[@]} -gt 0 ] || skip "no documented command could run on this machine"
echo "all ${#ran[@]} runnable documented commands passed"
