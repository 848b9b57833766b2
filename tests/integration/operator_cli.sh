#!/usr/bin/env bash
# `sizeup operator` flags: bad flags exit 2 with the usage, an unusable kubeconfig or admin
# address exits 1 with a reason that names the problem and no credential.
set -u
: "${SIZEUP:?}"
W=$(mktemp -d /tmp/sizeup-opcli.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect() { # STATUS PATTERN ARGS...
    local want=$1 pat=$2 out rc
    shift 2
    out=$("$SIZEUP" operator "$@" 2>&1)
    rc=$?
    [ $rc -eq "$want" ] || fail "operator $*: exit $rc, want $want: $out"
    grep -q -- "$pat" <<<"$out" || fail "operator $*: output lacks '$pat': $out"
    echo "  operator $* -> $rc ($(head -n1 <<<"$out" | cut -c1-90))"
}

expect 2 "unknown flag '--bogus'" --bogus
expect 2 'max-concurrent' --max-concurrent 0
expect 2 'max-concurrent' --max-concurrent 65
expect 2 'max-concurrent' --max-concurrent 2x
expect 2 'not a namespace name' --namespace 'Bad_NS'
expect 2 'log-level' --log-level loud
expect 2 'unexpected argument' extra
expect 0 'usage: sizeup operator' --help

# A kubeconfig that does not exist, and one with a token: the error never shows the token.
expect 1 'sizeup operator:' --kubeconfig "$W/missing" --admin-addr off
cat >"$W/kc" <<'KC'
apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: sekrit-token-value}}]
KC
out=$(timeout 20 "$SIZEUP" operator --kubeconfig "$W/kc" --admin-addr 127.0.0.1:notaport 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "bad admin address: exit $rc: $out"
grep -q 'bad port' <<<"$out" || fail "bad admin address not named: $out"
grep -q 'sekrit' <<<"$out" && fail "token in the output"
echo "  bad admin address -> 1, no token in output"
echo "operator CLI: ok"
