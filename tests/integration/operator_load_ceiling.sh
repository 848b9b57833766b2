#!/usr/bin/env bash
# The load ceiling: a capacity search in in-place mode or against a target URL (where real users
# share the app) is refused without the profile's search.max_rps, with `sizeup.dev/status:
# failed: load ceiling: ...` saying what to set, before anything is changed (no clone, no patch,
# no saved template, the target URL never probed). With max_rps set, the same request runs.
set -u
. "$ROOT/tests/integration/lib/operator_e2e.sh"
e2e_setup

k apply -f - >/dev/null <<'YAML' || fail "cannot create the profiles"
apiVersion: v1
kind: ConfigMap
metadata:
  name: no-ceiling
data:
  profile.yaml: |
    users: 4
    duration: 2s
    warmup: 1s
    search: { mode: capacity }
    requests:
      - { name: work, path: "/work?ms=5" }
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: with-ceiling
data:
  profile.yaml: |
    users: 4
    duration: 2s
    warmup: 1s
    search: { mode: capacity, max_rps: 20, warmup: 500ms, window: 1s, max_steps: 3, repeats: 2 }
    requests:
      - { name: work, path: "/work?ms=5" }
YAML
# The spec's digest, not the generation: a Deployment's generation also counts annotation edits.
gen0=$(k get deployment web -o jsonpath='{.spec}' | sha256sum | cut -c1-12)
op_start op

i=0
check_refused() { # EXPECTED-SUBSTRING ANNOTATION...
    local want=$1 s
    shift
    i=$((i + 1))
    k annotate --overwrite deployment web "$@" "sizeup.dev/sweep=ceiling-$i" >/dev/null ||
        fail "kubectl annotate $*"
    for _ in $(seq 1 60); do
        [ "$(ann web sizeup.dev/last-sweep)" = "ceiling-$i" ] && break
        sleep 0.25
    done
    s=$(ann web sizeup.dev/status)
    [[ "$s" == "failed: load ceiling: "* ]] || fail "$*: status '$s', want failed: load ceiling: ..."
    [[ "$s" == *"$want"* ]] || fail "$*: reason '$s' lacks '$want'"
    [[ "$s" == *"set search: { max_rps: N }"* ]] || fail "$*: reason '$s' does not say what to set"
    echo "  $* -> $s"
}

# In-place with the built-in profile (a capacity search, no ceiling).
check_refused "in in-place mode" sizeup.dev/mode=in-place
k annotate deployment web sizeup.dev/mode- >/dev/null
# A target URL with a profile that searches without a ceiling. The URL is unreachable: the
# refusal comes first, so the reason is the ceiling, not the connection.
check_refused "against a target URL reaches real users" sizeup.dev/profile=no-ceiling \
    sizeup.dev/target=http://127.0.0.1:1/
check_refused "ConfigMap no-ceiling, key profile.yaml" sizeup.dev/target=http://127.0.0.1:1/
k annotate deployment web sizeup.dev/target- >/dev/null
check_refused "in in-place mode" sizeup.dev/mode=in-place sizeup.dev/profile=no-ceiling

k get deployment web-sizeup >/dev/null 2>&1 && fail "a clone was created for a refused request"
[ -z "$(ann web sizeup.dev/original-template)" ] || fail "the pod template was saved (in-place began)"
gen1=$(k get deployment web -o jsonpath='{.spec}' | sha256sum | cut -c1-12)
[ "$gen0" = "$gen1" ] || fail "the Deployment's spec changed (spec digest $gen0 -> $gen1)"
echo "  refused $i/$i: no clone, no saved template, spec untouched (spec digest $gen1)"
check_events web BadAnnotation

# With a ceiling, the in-place capacity search runs to the end and the Deployment is restored.
deploy_fingerprint web template >"$E2E_W/before.json"
k annotate --overwrite deployment web sizeup.dev/mode=in-place sizeup.dev/profile=with-ceiling \
    "sizeup.dev/configs=1@0.5/128Mi" sizeup.dev/sweep=ceiling-ok >/dev/null
wait_status web '^done$' 180
deploy_fingerprint web template >"$E2E_W/after.json"
cmp -s "$E2E_W/before.json" "$E2E_W/after.json" || fail "the pod template was not restored"
echo "  with search.max_rps: the in-place search ran and the template was restored"
op_stop
echo "load ceiling: ok"
