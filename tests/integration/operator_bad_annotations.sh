#!/usr/bin/env bash
# Bad sizeup.dev/ annotation values: each gives `sizeup.dev/status: failed: <reason>` naming the
# problem and a Warning Event, and changes nothing else (no clone, no patch of the spec).
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

# A profile ConfigMap whose YAML does not parse, and one with a fixed load.
k apply -f - >/dev/null <<'YAML' || fail "cannot create the broken profile"
apiVersion: v1
kind: ConfigMap
metadata:
  name: broken-profile
data:
  profile.yaml: "users: [1, 2"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: fixed-load
data:
  profile.yaml: |
    users: 2
    search: { mode: fixed }
YAML
# The spec's digest, not the generation: a Deployment's generation also counts annotation edits.
gen0=$(k get deployment web -o jsonpath='{.spec}' | sha256sum | cut -c1-12)
op_start op

i=0
check_bad() { # KEY VALUE EXPECTED-SUBSTRING
    local key=$1 value=$2 want=$3 s
    i=$((i + 1))
    k annotate --overwrite deployment web "sizeup.dev/$key=$value" "sizeup.dev/sweep=bad-$i" \
        >/dev/null || fail "kubectl annotate $key"
    for _ in $(seq 1 60); do
        [ "$(ann web sizeup.dev/last-sweep)" = "bad-$i" ] && break
        sleep 0.25
    done
    s=$(ann web sizeup.dev/status)
    [[ "$s" == failed:* ]] || fail "$key='$value': status '$s', want failed: ..."
    [[ "$s" == *"$want"* ]] || fail "$key='$value': reason '$s' lacks '$want'"
    echo "  $key='$value' -> $s"
    k annotate deployment web "sizeup.dev/$key-" >/dev/null
}

check_bad configs '2@x/512Zi' 'configs: bad variant'
check_bad configs '' 'configs: empty variant list'
check_bad workers-env '' 'workers-env: empty'
check_bad mode 'sideways' 'mode: "sideways" is unknown'
check_bad port '70000' 'port: 70000 is out of range'
check_bad port 'http' 'port: "http" is not a port number'
check_bad target 'ftp://example' "target: \"ftp://example\" is neither 'pod'"
check_bad values-paths 'cpu=x' 'values-paths'
check_bad container 'nope' 'container: "nope" is not in the pod template'
# A fixed load: a capacity search against a URL is refused without max_rps before the URL is
# probed (operator_load_ceiling.sh); the probe is what this case tests.
k annotate --overwrite deployment web sizeup.dev/profile=fixed-load >/dev/null
check_bad target 'http://127.0.0.1:1/' 'target: 127.0.0.1:1 is unreachable'
k annotate deployment web sizeup.dev/profile- >/dev/null
check_bad profile 'no-such-profile' 'profile: ConfigMap "no-such-profile" not found'
check_bad profile 'broken-profile' 'profile:'

# A ConfigMap web-sizing that sizeup did not create is never overwritten.
k apply -f - >/dev/null <<'YAML' || fail "cannot create the user's web-sizing"
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-sizing
data:
  mine: "keep me"
YAML
check_bad mode clone 'ConfigMap web-sizing exists and is not managed by sizeup'
[ "$(k get configmap web-sizing -o jsonpath='{.data.mine}')" = "keep me" ] ||
    fail "the user's ConfigMap web-sizing was changed"
k delete configmap web-sizing >/dev/null

check_events web BadAnnotation
k get deployment web-sizeup >/dev/null 2>&1 && fail "a clone was created for a bad request"
gen1=$(k get deployment web -o jsonpath='{.spec}' | sha256sum | cut -c1-12)
[ "$gen0" = "$gen1" ] || fail "the Deployment's spec changed (spec digest $gen0 -> $gen1)"
echo "  no clone, spec untouched (spec digest $gen1)"
[ "$(metric 'sizeup_sweeps_total{result="failed"}')" = "$i" ] || fail "sweeps_total{failed} != $i"
op_stop
echo "bad annotations: $i/$i reported, nothing changed"
