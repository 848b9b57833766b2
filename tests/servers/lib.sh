# Shell helpers for tests that use tests/servers/httpd.py. Source it, then:
#   srv_start NAME [httpd.py flags...]   starts a server; sets SRV_PORT_<NAME>; killed on exit
#   srv_spawn NAME COMMAND...             the same for any server that takes --port-file
#   srv_stats PORT                       prints the server's counters (JSON)
#   jget FILE EXPR                       evaluates a Python expression on JSON FILE bound to j
#   fail MSG / skip MSG                  exit 1 / exit 77 with MSG as the last line
#   (free_port, jget, fail, skip, on_exit and workdir come from tests/lib/common.sh)
# Needs python3 and curl. Every process started here is killed by the EXIT trap.

SRV_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$SRV_DIR/../lib/common.sh"
workdir SRV_TMP test
SRV_PIDS=()

srv_cleanup() {
    for p in "${SRV_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${SRV_PIDS[@]}"; do wait "$p" 2>/dev/null; done
}
on_exit srv_cleanup

need python3 curl

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

