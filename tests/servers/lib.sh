# Shell helpers for tests that use tests/servers/httpd.py. Source it, then:
#   srv_start NAME [httpd.py flags...]   starts a server; sets SRV_PORT_<NAME>; killed on exit
#   srv_spawn NAME COMMAND...             the same for any server that takes --port-file
#   srv_stats PORT                       prints the server's counters (JSON)
#   jget FILE EXPR                       evaluates a Python expression on JSON FILE bound to j
#   fail MSG / skip MSG                  exit 1 / exit 77 with MSG as the last line
# Needs python3 and curl. Every process started here is killed by the EXIT trap.

SRV_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRV_TMP=$(mktemp -d /tmp/sizeup-test.XXXXXX)
SRV_PIDS=()

srv_cleanup() {
    for p in "${SRV_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${SRV_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    rm -rf "$SRV_TMP"
}
trap srv_cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skipped: $*"; exit 77; }

command -v python3 >/dev/null || skip "python3 is not installed"
command -v curl >/dev/null || skip "curl is not installed"

srv_start() { # NAME, flags...
    local name=$1; shift
    srv_spawn "$name" python3 "$SRV_DIR/httpd.py" "$@"
}

# srv_spawn NAME COMMAND...: starts a server that takes --port-file (appended to COMMAND) and
# waits for its port; sets SRV_PORT_<NAME>; killed on exit. srv_start and other servers use it.
srv_spawn() {
    local name=$1; shift
    local pf="$SRV_TMP/$name.port"
    "$@" --port-file "$pf" >"$SRV_TMP/$name.log" 2>&1 &
    SRV_PIDS+=($!)
    for _ in $(seq 100); do
        [ -s "$pf" ] && break
        sleep 0.1
    done
    [ -s "$pf" ] || fail "test server $name did not start: $(cat "$SRV_TMP/$name.log")"
    printf -v "SRV_PORT_$name" '%s' "$(cat "$pf")"
}

srv_stats() { # PORT [scheme]
    curl -sS --max-time 5 -k "${2:-http}://127.0.0.1:$1/__stats"
}

jget() { # FILE, python expression over j
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# A port on 127.0.0.1 where nothing listens (bound then released; nothing else takes it here).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
