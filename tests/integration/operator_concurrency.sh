#!/usr/bin/env bash
# --max-concurrent: three Deployments ask for a sweep at once; with --max-concurrent 2 at most
# two sweeps run at any moment (sizeup_sweeps_in_progress), none is lost, all end done.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

for ns in c1 c2 c3; do
    printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n' "$ns" | k apply -f - >/dev/null
    k apply -n "$ns" -f "$ROOT/manifests/examples/" >/dev/null || fail "apply in $ns"
done
for ns in c1 c2 c3; do
    k rollout status -n "$ns" deployment/web --timeout=60s >/dev/null || fail "rollout in $ns"
done
op_start op --max-concurrent 2
for ns in c1 c2 c3; do
    k annotate -n "$ns" deployment web sizeup.dev/profile=web-load \
        sizeup.dev/configs=1@0.5/128Mi sizeup.dev/sweep=conc-1 >/dev/null
done
max=0
for _ in $(seq 1 300); do
    n=$(metric sizeup_sweeps_in_progress)
    [ -n "$n" ] && [ "$n" -gt "$max" ] && max=$n
    done_n=0
    for ns in c1 c2 c3; do
        s=$(k get deployment web -n "$ns" -o jsonpath='{.metadata.annotations.sizeup\.dev/status}')
        [ "$s" = done ] && done_n=$((done_n + 1))
        [[ "$s" == failed:* ]] && fail "$ns: $s"
    done
    [ $done_n = 3 ] && break
    sleep 0.2
done
[ $done_n = 3 ] || fail "only $done_n of 3 sweeps done"
[ "$max" -le 2 ] || fail "$max sweeps ran at once with --max-concurrent 2"
[ "$max" -eq 2 ] || fail "never two at once (max $max): the bound was not exercised"
[ "$(metric 'sizeup_sweeps_total{result="done"}')" = 3 ] || fail "sweeps_total{done} != 3"
echo "  3 sweeps done, at most $max at once"
op_stop
echo "concurrency: ok"
