#!/usr/bin/env bash
# The profile overrides mean the same in every command that takes them (loadtest and sweep):
# each conflict between a flag and the profile is refused before anything runs, with exit 2 and
# the same message from both commands.
set -u
: "${SIZEUP:?}"
W=$(mktemp -d /tmp/sizeup-cliov.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'users: 4\nrequests: [{path: /}]\n' >"$W/users.yaml"
printf 'rate: 9\nrequests: [{path: /}]\n' >"$W/rate.yaml"
printf 'stages: [{duration: 2s, users: 5}]\nrequests: [{path: /}]\n' >"$W/ustages.yaml"
printf 'stages: [{duration: 2s, rate: 5}]\nrequests: [{path: /}]\n' >"$W/rstages.yaml"

# The first line of the command's stderr, and its exit status.
run() { # COMMAND FLAGS...
    local cmd=$1
    shift
    if [ "$cmd" = loadtest ]; then
        # A port nothing listens on: a conflict must be refused before any connection.
        out=$("$SIZEUP" loadtest --url http://127.0.0.1:9 "$@" 2>&1 >/dev/null)
    else
        out=$("$SIZEUP" sweep --out "$W/out" "$@" -- /bin/false 2>&1 >/dev/null)
    fi
    rc=$?
    out=$(head -n 1 <<<"$out")
}

n=0
conflict() { # EXPECTED-WORDS PROFILE FLAGS...
    local want=$1 prof=$2 first=
    shift 2
    local pflag=()
    [ -n "$prof" ] && pflag=(--profile "$W/$prof")
    for cmd in loadtest sweep; do
        run "$cmd" "${pflag[@]}" "$@"
        [ "$rc" -eq 2 ] || fail "$cmd ${pflag[*]} $*: exit $rc, want 2 ($out)"
        grep -qF -- "$want" <<<"$out" || fail "$cmd ${pflag[*]} $*: '$out' lacks '$want'"
        # The same words from both commands, the command's name aside.
        local msg=${out#sizeup "$cmd": }
        if [ -z "$first" ]; then first=$msg; elif [ "$msg" != "$first" ]; then
            fail "loadtest and sweep differ on ${pflag[*]} $*: '$first' vs '$msg'"
        fi
        n=$((n + 1))
    done
    echo "  ${prof:-default} $* -> 2: $first"
}

conflict "--users or --rate, not both" "" --users 3 --rate 5
conflict "--rate conflicts with 'users'" users.yaml --rate 5
conflict "--users conflicts with 'rate'" rate.yaml --users 3
conflict "--duration conflicts with the stages" ustages.yaml --duration 5s
conflict "--duration conflicts with the stages" rstages.yaml --duration 5s
conflict "--users conflicts with the stages" ustages.yaml --users 3
conflict "--users conflicts with the stages" rstages.yaml --users 3
conflict "--rate conflicts with the stages" ustages.yaml --rate 5
conflict "--rate conflicts with the stages" rstages.yaml --rate 5

# Bad values are refused alike by both commands' shared rows.
conflict "--users: '0' is not from 1" "" --users 0
conflict "--rate: 'fast' is not a number" "" --rate fast
conflict "--duration: '0' must be longer than 0" "" --duration 0
conflict "--warmup:" "" --warmup 5parsecs
conflict "--threads: '0' is not from 1" "" --threads 0

# In capacity mode (sweep's default) --rate, --duration and --warmup would change only the probe:
# refused with exit 2, naming what to use (sweep_cpu.sh and others run them with --load fixed).
for flag in "--rate 5" "--duration 5s" "--warmup 1s"; do
    # shellcheck disable=SC2086
    run sweep $flag
    [ "$rc" -eq 2 ] || fail "sweep $flag in capacity mode: exit $rc, want 2 ($out)"
    grep -qF -- "--load fixed" <<<"$out" || fail "sweep $flag: '$out' does not name --load fixed"
    case $flag in
        --rate*) want=--max-rps ;;
        --duration*) want=search.window ;;
        *) want=search.warmup ;;
    esac
    grep -qF -- "$want" <<<"$out" || fail "sweep $flag: '$out' does not name $want"
    n=$((n + 1))
    echo "  capacity mode $flag -> 2: $out"
done

# No sweep ran: nothing was written.
[ ! -e "$W/out/results.json" ] || fail "a refused sweep wrote results"
echo "overrides: $n refusals, the same in loadtest and sweep"
