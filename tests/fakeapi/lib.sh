# Shell helpers for tests that run the fake API server. Source it, then:
#   fake_start DIR [fakeapi.py flags...]   starts it, waits for DIR/ready, exports KUBECONFIG
#   fake_stop                              SIGTERM, waits (pods and cgroups are cleaned up)
#   k ARGS...                              kubectl against the fake (own discovery cache)
#   fakectl METHOD PATH [JSON]             control endpoints (faults, log, tokens, pods)
# Needs ROOT (the repository root).

fake_require() {
    local t
    for t in python3 openssl kubectl curl; do
        if ! command -v "$t" >/dev/null 2>&1; then
            echo "skip: $t is not installed"
            exit 77
        fi
    done
}

fake_start() {
    FAKE_DIR=$1
    shift
    mkdir -p "$FAKE_DIR"
    python3 "$ROOT/tests/fakeapi/fakeapi.py" --dir "$FAKE_DIR" "$@" >"$FAKE_DIR/server.log" 2>&1 &
    FAKE_PID=$!
    local i
    for i in $(seq 1 150); do
        [ -s "$FAKE_DIR/ready" ] && break
        if ! kill -0 "$FAKE_PID" 2>/dev/null; then
            cat "$FAKE_DIR/server.log" >&2
            echo "fake API server exited at start" >&2
            return 1
        fi
        sleep 0.1
    done
    [ -s "$FAKE_DIR/ready" ] || { echo "fake API server not ready after 15 s" >&2; return 1; }
    FAKE_PORT=$(cat "$FAKE_DIR/ready")
    export KUBECONFIG="$FAKE_DIR/kubeconfig"
}

fake_stop() {
    if [ -n "${FAKE_PID:-}" ] && kill -0 "$FAKE_PID" 2>/dev/null; then
        kill -TERM "$FAKE_PID"
        wait "$FAKE_PID" 2>/dev/null
    fi
    FAKE_PID=
}

k() {
    kubectl --cache-dir "$FAKE_DIR/kcache" "$@"
}

fakectl() {
    python3 "$ROOT/tests/fakeapi/fakectl.py" --dir "$FAKE_DIR" "$@"
}
