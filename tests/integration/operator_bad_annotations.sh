#!/usr/bin/env bash
# Bad sizeup.dev/ annotation values: each gives `sizeup.dev/status: failed: <reason>` naming the
# problem and a Warning Event, and changes nothing else (no clone, no patch of the spec).
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

# A profile ConfigMap whose YAML does not parse.
k apply -f - >/dev/null <<'YAML' || fail "cannot create the broken profile"
apiVersion: v1
kind: ConfigMap
metadata:
  name: broken-profile
data:
  profile.yaml: "users: [1, 2"
YAML
gen0=$(k get deployment web -o jsonpath='{.metadata.generation}')
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
check_bad target 'http://127.0.0.1:1/' 'target: 127.0.0.1:1 is unreachable'
check_bad profile 'no-such-profile' 'profile: ConfigMap "no-such-profile" not found'
check_bad profile 'broken-profile' 'profile:'

check_events web BadAnnotation
k get deployment web-sizeup >/dev/null 2>&1 && fail "a clone was created for a bad request"
gen1=$(k get deployment web -o jsonpath='{.metadata.generation}')
[ "$gen0" = "$gen1" ] || fail "the Deployment's spec changed (generation $gen0 -> $gen1)"
echo "  no clone, spec untouched (generation $gen1)"
[ "$(metric 'sizeup_sweeps_total{result="failed"}')" = "$i" ] || fail "sweeps_total{failed} != $i"
op_stop
echo "bad annotations: $i/$i reported, nothing changed"
