#!/usr/bin/env bash
# The POSIX sh snippet in examples/workers-auto.sh (documented in docs/sweep.md) must give the
# same worker count as `sizeup rule` for the same limits: fake cgroup v1 and v2 trees for a
# table of limits, the default rule and a fitted one.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
snippet="$ROOT/examples/workers-auto.sh"

cat >"$tmp/rule.yaml" <<'Y'
constants:
  cores_per_worker: 0.5
  memory_per_worker_mib: 160
  max_workers: 6
Y

# cpu millicores, memory bytes
cases="500 536870912
1000 536870912
1500 4294967296
1499 4294967296
2000 1073741824
4000 2147483648
4000 536870912
16000 8589934592
3000 603979776
3000 604000000
250 134217728
100 1073741824
2000 100000000
8000 1000000000"

fail=0
n=0
while read -r cpu mem; do
    for layout in v1 v2; do
        root="$tmp/$layout-$cpu-$mem"
        quota=$((cpu * 100)) # the kubelet's quota for a 100 ms period
        [ $quota -lt 1000 ] && quota=1000
        if [ $layout = v2 ]; then
            mkdir -p "$root"
            echo "$quota 100000" >"$root/cpu.max"
            echo "$mem" >"$root/memory.max"
        else
            mkdir -p "$root/cpu" "$root/memory"
            echo "$quota" >"$root/cpu/cpu.cfs_quota_us"
            echo 100000 >"$root/cpu/cpu.cfs_period_us"
            echo "$mem" >"$root/memory/memory.limit_in_bytes"
        fi
        for rule in seed fitted; do
            if [ $rule = seed ]; then
                want=$("$SIZEUP" rule --cpu "${cpu}m" --memory "$mem")
                got=$(CGROUP_ROOT="$root" sh -c ". '$snippet'; sizeup_workers")
            else
                want=$("$SIZEUP" rule --rule "$tmp/rule.yaml" --cpu "${cpu}m" --memory "$mem")
                got=$(CGROUP_ROOT="$root" CORES_PER_WORKER=0.5 MEMORY_PER_WORKER_MIB=160 \
                    MAX_WORKERS=6 sh -c ". '$snippet'; sizeup_workers")
            fi
            n=$((n + 1))
            if [ "$got" != "$want" ]; then
                echo "MISMATCH $layout $rule cpu=${cpu}m mem=$mem: snippet $got, sizeup rule $want"
                fail=1
            fi
        done
    done
done <<<"$cases"

# The issue's three examples through the snippet (v2 layout).
for c in "2000 1073741824 2" "500 536870912 1" "16000 8589934592 8"; do
    set -- $c
    root="$tmp/ex-$1"
    mkdir -p "$root"
    echo "$(($1 * 100)) 100000" >"$root/cpu.max"
    echo "$2" >"$root/memory.max"
    got=$(CGROUP_ROOT="$root" sh -c ". '$snippet'; sizeup_workers")
    [ "$got" = "$3" ] || { echo "example cpu=$1m mem=$2: got $got want $3"; fail=1; }
done

# No limits at all (v1 "unlimited" values): falls back to online CPUs and MemTotal, like
# `sizeup rule` given those.
root="$tmp/unlimited"
mkdir -p "$root/cpu" "$root/memory"
echo -1 >"$root/cpu/cpu.cfs_quota_us"
echo 100000 >"$root/cpu/cpu.cfs_period_us"
echo 9223372036854771712 >"$root/memory/memory.limit_in_bytes"
ncpu=$(getconf _NPROCESSORS_ONLN)
memkb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
want=$("$SIZEUP" rule --cpu "$ncpu" --memory "${memkb}Ki")
got=$(CGROUP_ROOT="$root" sh -c ". '$snippet'; sizeup_workers")
[ "$got" = "$want" ] || { echo "unlimited: snippet $got, sizeup rule $want"; fail=1; }

echo "compared $n cases (+ examples and unlimited)"
exit $fail
