# Shell helpers for the stream-load tests: source after tests/servers/lib.sh, then
#   stream_srv NAME [streamd.py flags...]   starts tests/servers/streamd.py; sets SRV_PORT_<NAME>
# The server needs Debian's python3-aiohttp, installed for /usr/bin/python3 by
# scripts/install-deps.sh test; without it the test fails (a missing prerequisite is an error).

STREAMD_PY=/usr/bin/python3
"$STREAMD_PY" -c 'import aiohttp' 2>/dev/null ||
    fail "python3-aiohttp is not installed for $STREAMD_PY (scripts/install-deps.sh test)"

stream_srv() { # NAME, flags...
    local name=$1; shift
    srv_spawn "$name" "$STREAMD_PY" "$SRV_DIR/streamd.py" "$@"
}

# stream_profile FILE URL COUNT RATE [extra streams fields]: a profile with COUNT streams on URL
# and 4 producers at RATE commands/s whose body carries {{seq}}; 1 s warm-up, 5 s window.
stream_profile() {
    cat >"$1" <<YAML
duration: 5s
warmup: 1s
timeout: 3s
streams: { url: $2, count: $3, ramp: 1s $5 }
producers:
  count: 4
  rate: $4
  request: { method: POST, path: /cmd, body: '{"seq":{{seq}}}', headers: { Content-Type: application/json } }
  match: seq
YAML
}
