#!/usr/bin/env bash
# Runs the shell commands of README.md and docs/getting-started.md that can run on this machine,
# as a user would type them from the repository root (in a scratch copy, so outputs such as
# sizing/ land there): the helm and kubectl kustomize commands, `build/sizeup help` / `rule` /
# `sweep`, and the entrypoint snippet (cross-checked against `sizeup rule`).
#
# Blocks marked <!-- needs a cluster --> are syntax-checked here and listed as not run.
# A few commands are never run here, each for a stated reason (NOT_HERE below), and a block
# whose `sizeup` subcommand is not implemented in this build is skipped, naming the subcommand.
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=tests/policy/env.sh
. "$ROOT/tests/policy/env.sh"
need_helm
need_kubectl
need_pyyaml

SIZEUP=${SIZEUP:-$ROOT/build/sizeup}
[ -x "$SIZEUP" ] || skip "no sizeup binary at $SIZEUP (run make first)"
SIZEUP=$(realpath "$SIZEUP")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Commands never run by this test, by the start of the line, with the reason.
NOT_HERE=(
    "make test|this is the test suite itself"
    "make demo|covered by its own test (installs packages, sweeps for minutes)"
)

# A scratch copy of the repository root as a user sees it after `make`: the tracked folders
# linked, build/sizeup the binary under test, outputs written into the scratch folder only.
work="$tmp/repo"
mkdir -p "$work/build"
for d in charts manifests examples scripts docs Makefile Dockerfile README.md; do
    [ -e "$ROOT/$d" ] && ln -s "$ROOT/$d" "$work/$d"
done
ln -s "$SIZEUP" "$work/build/sizeup"
PATH="$(dirname "$HELM"):$PATH"
export PATH

nblocks=$("$PY" "$ROOT/tests/policy/doc_blocks.py" "$tmp/blocks" "$ROOT/README.md" \
    "$ROOT/docs/getting-started.md")
echo "$nblocks shell blocks in README.md and docs/getting-started.md"

# "yes" when `sizeup SUB` is a placeholder in this build. Never probes `operator` (it would run).
unimplemented() {
    [ "$1" = operator ] && return 1
    local out
    out=$(timeout 10 "$SIZEUP" "$1" 2>&1 || true)
    [[ $out == *"not available in this build yet"* ]]
}

ran=() skipped=() cluster=() failed=()
while IFS=$'\t' read -r id kind where first; do
    block="$tmp/blocks/$id.sh"
    if ! bash -n "$block" 2>"$tmp/syntax"; then
        failed+=("$where: shell syntax error: $(cat "$tmp/syntax")")
        echo "FAIL $where: not valid shell"
        continue
    fi
    if [ "$kind" = cluster ]; then
        cluster+=("$where: $first")
        continue
    fi
    # Drop the commands that never run here, saying so.
    : >"$tmp/run.sh"
    while IFS= read -r line; do
        keep=1
        for entry in "${NOT_HERE[@]}"; do
            if [[ $line == "${entry%%|*}"* ]]; then
                skipped+=("$where: '${entry%%|*}': ${entry#*|}")
                keep=0
            fi
        done
        [ $keep -eq 1 ] && printf '%s\n' "$line" >>"$tmp/run.sh"
    done <"$block"
    grep -qvE '^[[:space:]]*(#|$)' "$tmp/run.sh" || continue
    # A block that uses a sizeup subcommand this build does not have yet is skipped as a whole.
    missing=""
    while read -r sub; do
        if unimplemented "$sub"; then missing+="$sub "; fi
    done < <(grep -oE '(build/)?sizeup [a-z]+' "$tmp/run.sh" | awk '{print $2}' | sort -u)
    if [ -n "$missing" ]; then
        skipped+=("$where: $first (sizeup ${missing% } not implemented in this build)")
        continue
    fi
    echo "---- $where"
    sed 's/^/   $ /' "$tmp/run.sh"
    if (cd "$work" && timeout 120 sh -e "$tmp/run.sh") >"$tmp/out" 2>&1; then
        ran+=("$where: $first")
        sed 's/^/   | /' "$tmp/out" | head -n 15
        # The entrypoint snippet's output is cross-checked below.
        # shellcheck disable=SC2016
        if grep -qF 'echo "WORKERS=$w' "$tmp/run.sh"; then cp "$tmp/out" "$tmp/snippet.out"; fi
    else
        rc=$?
        failed+=("$where: $first (exit $rc)")
        echo "FAIL (exit $rc):"
        sed 's/^/   | /' "$tmp/out" | tail -n 30
    fi
done <"$tmp/blocks/index.tsv"

# The entrypoint snippet must agree with `sizeup rule` for the same limits.
if [ -s "$tmp/snippet.out" ]; then
    line=$(grep -m1 '^WORKERS=' "$tmp/snippet.out")
    w=$(sed -n 's/^WORKERS=\([0-9]*\) (cpu \([0-9]*\)m, memory \([0-9]*\)Mi)$/\1 \2 \3/p' <<<"$line")
    read -r sw cpu mem <<<"$w"
    if unimplemented rule; then
        skipped+=("entrypoint snippet vs sizeup rule: sizeup rule not implemented in this build")
    else
        got=$("$SIZEUP" rule --cpu "${cpu}m" --memory "${mem}Mi" 2>&1 || true)
        if [[ $got =~ ^[[:space:]]*([0-9]+)[[:space:]]*$ ]] && [ "${BASH_REMATCH[1]}" = "$sw" ]; then
            ran+=("entrypoint snippet ($line) == sizeup rule --cpu ${cpu}m --memory ${mem}Mi ($got)")
        else
            failed+=("entrypoint snippet says '$line' but sizeup rule --cpu ${cpu}m --memory ${mem}Mi says '$got'")
        fi
    fi
fi

echo
echo "ran (${#ran[@]}):"
for r in "${ran[@]}"; do echo "  $r"; done
echo "not run here (${#skipped[@]}):"
for s in "${skipped[@]}"; do echo "  $s"; done
echo "need a cluster, syntax-checked only (${#cluster[@]}):"
for c in "${cluster[@]}"; do echo "  $c"; done
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed (${#failed[@]}):"
    for f in "${failed[@]}"; do echo "  $f"; done
    exit 1
fi
[ ${#ran[@]} -gt 0 ] || skip "no documented command could run on this machine"
echo "all ${#ran[@]} runnable documented commands passed"
