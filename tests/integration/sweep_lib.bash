# Helpers shared by the sweep integration tests (sourced; named .bash so the runner, which runs
# every tests/integration/*.sh, does not run it as a test).
# shellcheck shell=bash

# free_port, jget, fail, skip, on_exit and workdir.
. "$ROOT/tests/lib/common.sh"

# Every cgroup directory a sizeup process with this pid made (sizeup-<pid>...), in any
# hierarchy, v1 or v2.
leftover_cgroups() {
    find /sys/fs/cgroup -maxdepth 8 -type d -name "sizeup-$1*" 2>/dev/null
}

# Processes whose command line contains the marker.
leftover_procs() {
    pgrep -f -- "$1" || true
}

# Skips (exit 77) unless cgroups can be written here: the sweep says so in results.json.
require_enforced() { # results.json
    python3 - "$1" <<'PY' || { echo "cgroups not writable here: limits not enforced"; exit 77; }
import json, sys
sys.exit(0 if json.load(open(sys.argv[1])).get("limits_enforced") else 1)
PY
}

# The optimised build ($ROOT/build/sizeup), built when missing or older than the sources: tests
# that measure a capacity use it, so that a sanitizer build's own CPU never decides a figure.
optimised_sizeup() {
    nice -n 10 make -C "$ROOT" --no-print-directory -s -j2 build/sizeup >&2 ||
        { echo "cannot build $ROOT/build/sizeup" >&2; return 1; }
    echo "$ROOT/build/sizeup"
}

# Exits 77 (skip) unless python3 is here and cgroups are writable (root); sets BIN to the
# optimised build. The capacity tests start with it.
capacity_prerequisites() {
    command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
    [ "$(id -u)" -eq 0 ] || { echo "not root: cgroups not writable"; exit 77; }
    BIN=$(optimised_sizeup) || exit 1
}

# Runs a sweep (the command given) in the background, its output in DIR/stdout and DIR/stderr,
# waits for it and prints its wall time; SWEEP_PID is its pid. Returns its exit status, with the
# end of its stderr when it failed.
run_sweep() { # DIR, command...
    local dir=$1 start rc
    shift
    start=$(date +%s)
    set +e
    "$@" >"$dir/stdout" 2>"$dir/stderr" &
    SWEEP_PID=$!
    wait $SWEEP_PID
    rc=$?
    set -e
    echo "sweep wall time: $(($(date +%s) - start)) s"
    [ $rc -eq 0 ] || { echo "sweep exited $rc"; tail -20 "$dir/stderr"; }
    return $rc
}
