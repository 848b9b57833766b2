#!/usr/bin/env bash
# Bad targets and bad input: a refused port, a server that never answers, garbage and
# truncated responses are counted by error class in a report, the run ends on time, and the
# exit status is 99 (verdict not HEALTHY). Bad flags exit 2 and name the bad token.
set -u
. "$ROOT/tests/servers/lib.sh"

srv_start s
P=$SRV_PORT_s

run() { # NAME, args... : runs loadtest with --json into $SRV_TMP/NAME.json, sets rc and secs
    local name=$1; shift
    local t0=$(date +%s%N)
    timeout 30 "$SIZEUP" loadtest --json --out "$SRV_TMP/$name.json" "$@"
    rc=$?
    secs=$(( ($(date +%s%N) - t0) / 1000000 ))
    echo "$name: exit $rc after ${secs} ms"
}

check_class() { # NAME, class, min count
    local n
    n=$(jget "$SRV_TMP/$1.json" "j['errors']['$2']")
    echo "$1: $2 = $n"
    [ "$n" -ge "$3" ] || fail "$1: want at least $3 '$2' errors, got $n"
    [ "$rc" -eq 99 ] || fail "$1: exit $rc, want 99"
}

dead=$(free_port)
run refused --url "http://127.0.0.1:$dead" --users 5 --duration 2s --warmup 0
check_class refused connect_refused 5
[ $secs -lt 5000 ] || fail "refused run took ${secs} ms for a 2 s window"

run refused_open --url "http://127.0.0.1:$dead" --rate 50 --duration 2s --warmup 0
check_class refused_open connect_refused 90

run never --url "http://127.0.0.1:$P/never" --users 3 --duration 2s --warmup 0 --timeout 500ms
check_class never timeout 6
[ $secs -lt 5000 ] || fail "never-answering run took ${secs} ms for a 2 s window"
p50=$(jget "$SRV_TMP/never.json" "j['latency_ms']['p50']")
python3 -c "import sys; sys.exit(0 if 450 <= $p50 <= 700 else 1)" ||
    fail "timed-out requests should record ~500 ms of latency, got p50 $p50"

run never_open --url "http://127.0.0.1:$P/never" --rate 20 --duration 2s --warmup 0 \
    --timeout 500ms --max-connections 100
check_class never_open timeout 20

run garbage --url "http://127.0.0.1:$P/garbage" --users 2 --duration 1s --warmup 0
check_class garbage bad_response 10

run midbody --url "http://127.0.0.1:$P/close-mid-body" --users 2 --duration 1s --warmup 0
check_class midbody reset 10

run e500 --url "http://127.0.0.1:$P/status/500" --users 2 --duration 1s --warmup 0
[ "$rc" -eq 99 ] || fail "500s: exit $rc, want 99"
[ "$(jget "$SRV_TMP/e500.json" "j['failed'] == j['requests'] > 0")" = True ] ||
    fail "every 500 must count as failed"

# An early stop (SIGINT) still reports what ran.
timeout 30 "$SIZEUP" loadtest --url "http://127.0.0.1:$P" --users 2 --duration 30s --warmup 0 \
    --json --out "$SRV_TMP/int.json" &
lt=$!
# SIGINT once the run is under way: the target has answered a request of this run (a sanitizer
# build on a busy machine can take more than a second to start, and a SIGINT before its handler
# is installed ends it like any program, with no report).
count() { srv_stats "$P" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])'; }
n0=$(count)
for _ in $(seq 1 100); do
    [ "$(count)" -gt "$n0" ] && break
    sleep 0.1
done
sleep 1
# To sizeup itself, not to timeout(1): timeout forwards a signal to its child and to its process
# group, so the child would get two SIGINTs, and a second SIGINT force-quits by design.
kill -INT "$(pgrep -P "$lt" | head -n 1)"
wait $lt
rc=$?
[ "$(jget "$SRV_TMP/int.json" "j['interrupted'] and j['requests'] > 0 and j['duration_s'] < 5")" = True ] ||
    fail "interrupted run: $(head -c 300 "$SRV_TMP/int.json")"
echo "interrupted: exit $rc, $(jget "$SRV_TMP/int.json" "j['requests']") requests reported"

# Usage errors: exit 2 and the message names the bad token.
usage() { # expected-substring, args...
    local want=$1; shift
    local out
    out=$("$SIZEUP" loadtest "$@" 2>&1)
    local rc=$?
    [ $rc -eq 2 ] || fail "'$*': exit $rc, want 2"
    grep -qF -- "$want" <<<"$out" || fail "'$*': message lacks '$want': $(head -n 2 <<<"$out")"
}
usage "'abc'" --url "http://127.0.0.1:$P" --users abc
usage "'-3'" --url "http://127.0.0.1:$P" --users -3
usage "'10q'" --url "http://127.0.0.1:$P" --duration 10q
usage "'fast'" --url "http://127.0.0.1:$P" --rate fast
usage "--bogus" --url "http://127.0.0.1:$P" --bogus
usage "--url is required" --users 3
usage "not both" --url "http://127.0.0.1:$P" --users 3 --rate 5
usage "ftp://x" --url ftp://x --users 1
usage "nosuch.yaml" --url "http://127.0.0.1:$P" --profile "$SRV_TMP/nosuch.yaml"
out=$("$SIZEUP" loadtest --url http://no-such-host.invalid --users 1 --duration 1s 2>&1)
rc=$?
[ $rc -eq 1 ] || fail "unresolvable host: exit $rc, want 1 ($out)"
echo ok
