#!/usr/bin/env bash
# A port that nothing answers on but another socket holds (an outgoing connection's local end,
# here a socket bound and not listening): the variant's start waits for it, and starts once it
# is let go (the row measured, the wait in the log); held for good, the app starts anyway and
# the row's FAILED reason says the port was held, and, for a port in the kernel's ephemeral
# range, which --port avoids it. A port that answers before the app starts fails the variant
# at once (something else would be measured). About 10 s.
set -eu
. "$ROOT/tests/integration/sweep_lib.bash"
need python3
workdir tmp
printf 'users: 2\nduration: 1s\nwarmup: 200ms\nsearch: { mode: fixed }\n' >"$tmp/profile.yaml"

quiet_kill() { kill "$1" 2>/dev/null || true; }

# holder PORT SECONDS [listen]: holds 127.0.0.1:PORT (0: a port of the kernel's ephemeral
# range) for SECONDS (listening with a third argument); writes the port into $tmp/port once it
# holds it.
holder() {
    rm -f "$tmp/port"
    python3 - "$@" "$tmp/port" <<'PY' &
import os, socket, sys, time
port, secs, held = int(sys.argv[1]), float(sys.argv[2]), sys.argv[-1]
s = socket.socket()
s.bind(("127.0.0.1", port))
if len(sys.argv) > 4:
    s.listen(8)
open(held + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(held + ".tmp", held)
time.sleep(secs)
PY
    on_exit quiet_kill $! # a holder left at exit
    for _ in $(seq 50); do [ -s "$tmp/port" ] && return 0; sleep 0.1; done
    fail "the holder did not start"
}

# sweep NAME PORT: one fixed-mode variant of cpu_server.py on PORT into $tmp/NAME.
sweep() {
    "$SIZEUP" sweep --configs "1@0.5/128Mi" --profile "$tmp/profile.yaml" --port "$2" \
        --out "$tmp/$1" -- env WORK=2000 python3 "$ROOT/tests/integration/cpu_server.py" \
        >"$tmp/$1.stdout" 2>"$tmp/$1.stderr" && return 0
    local rc=$?
    cat "$tmp/$1.stderr"
    fail "$1: sweep exited $rc"
}
state() { jget "$tmp/$1/results.json" 'j["variants"][0]["state"]'; }

# Held for 1 s, released: the start waits, then measures.
port=$(free_port)
holder "$port" 1
sweep released "$port"
grep -q "event=local.port port=$port held by another socket, nothing listening; waiting up to 2 s" \
    "$tmp/released.stderr" || { cat "$tmp/released.stderr"; fail "no wait for the held port"; }
! grep -q "still held" "$tmp/released.stderr" || fail "the released port was still held"
st=$(state released)
[ "$st" != failed ] || fail "released: the variant FAILED: $(grep -m1 FAILED "$tmp/released.stdout")"
echo "released after 1 s: waited, then measured ($st)"

# Held for good, on a port of the ephemeral range.
holder 0 30
port=$(cat "$tmp/port")
sweep held "$port"
reason=$(jget "$tmp/held/results.json" 'j["variants"][0]["failure"]["reason"]')
[ "$(state held)" = failed ] || fail "held: not FAILED"
case "$reason" in
"port $port was held by another socket (it is in the ephemeral range "*"a --port below "*"avoids it); exited with status "*) ;;
*) fail "held: reason '$reason'" ;;
esac
grep -q "still held after 2 s; starting the app anyway" "$tmp/held.stderr" || fail "no warning"
echo "held for good: $reason"

# Answering: refused at once, the app never started.
port=$(free_port)
holder "$port" 30 listen
sweep answering "$port"
reason=$(jget "$tmp/answering/results.json" 'j["variants"][0]["failure"]["reason"]')
[ "$reason" = "port $port already answers before the app started (another process?)" ] ||
    fail "answering: reason '$reason'"
! grep -q "event=local.start" "$tmp/answering.stderr" || fail "answering: the app was started"
echo "answering: $reason"
echo "sweep_port_held: ok"
