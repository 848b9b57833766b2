# shellcheck shell=bash
# What every test script shares (tests/servers/lib.sh, tests/reliability/lib.sh and
# tests/integration/sweep_lib.bash source it; scripts move to it as they are touched). Source it:
#   fail MSG... / skip MSG...   exit 1 / exit 77 (the runner's "skipped"), MSG the last line
#   need CMD...                 skip unless every CMD is on PATH
#   on_exit COMMAND [ARGS...]   pushes COMMAND on the cleanup stack, run last in, first out
#                               when the shell exits (a failing command does not stop the rest)
#   workdir VAR [NAME]          sets VAR to a fresh directory under /tmp, removed at exit (a
#                               variable, not $(...): a subshell could not push the cleanup)
#   free_port [N]               the first of N (1) consecutive TCP ports where nothing listens,
#                               below the kernel's ephemeral range (bound, released)
#   jget FILE EXPR              prints the Python expression EXPR over the JSON in FILE (as j)
#   now_ms                      wall clock in milliseconds
# The stack owns the EXIT trap: a script that sources this file registers its cleanup with
# on_exit instead of its own `trap ... EXIT`.

[ -n "${COMMON_SH_LOADED:-}" ] && return 0
COMMON_SH_LOADED=1
COMMON_CLEANUP=()

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skipped: $*"; exit 77; }

need() {
    local t
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 || skip "$t is not installed"
    done
}

on_exit() {
    local cmd
    printf -v cmd '%q ' "$@"
    COMMON_CLEANUP+=("$cmd")
}

common_cleanup() {
    local i
    for ((i = ${#COMMON_CLEANUP[@]} - 1; i >= 0; i--)); do
        eval "${COMMON_CLEANUP[i]}" || true
    done
    COMMON_CLEANUP=()
}
trap common_cleanup EXIT

workdir() {
    local d
    d=$(mktemp -d "/tmp/sizeup-${2:-test}.XXXXXX") || fail "mktemp failed"
    on_exit rm -rf "$d"
    printf -v "$1" '%s' "$d"
}

# Below the ephemeral range (net.ipv4.ip_local_port_range) because the kernel hands those ports
# to outgoing connections' local ends: one free when picked could be held by the time its server
# binds it (a scale-out's replica i on port + i starts while the others hold connections).
free_port() {
    python3 - "${1:-1}" <<'PY'
import random, socket, sys
n = int(sys.argv[1])
try:
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    lo = 32768
def free(p):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
if lo - n > 10000:
    for _ in range(500):
        base = random.randint(10000, lo - n)
        if all(free(p) for p in range(base, base + n)):
            print(base)
            sys.exit(0)
for _ in range(500):  # no room below the range: the kernel's choice
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    base = s.getsockname()[1]
    s.close()
    if base + n <= 65536 and all(free(p) for p in range(base, base + n)):
        print(base)
        sys.exit(0)
sys.exit("free_port: no %d consecutive free ports" % n)
PY
}

jget() {
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
