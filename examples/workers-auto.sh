#!/bin/sh
# sizeup_workers: the worker count for this container's own cgroup limits, by the auto-sizing
# rule (what a chart's `workers.count: "auto"` means):
#
#   workers = max(1, min(round(cores / CORES_PER_WORKER),
#                        floor(memory_mib / MEMORY_PER_WORKER_MIB), MAX_WORKERS))
#
# POSIX sh + awk, cgroup v2 (cpu.max, memory.max) and v1 (cpu.cfs_quota_us / cpu.cfs_period_us,
# memory.limit_in_bytes). Without a CPU limit it uses the online CPUs, without a memory limit
# MemTotal. The constants default to sizeup's default rule (1, 192, 8); set them from the
# `constants:` of your auto-sizing.yaml. CGROUP_ROOT (default /sys/fs/cgroup) is for tests.
#
# In an entrypoint:
#   . /app/workers-auto.sh
#   [ "${WORKERS:-auto}" = auto ] && WORKERS=$(sizeup_workers)
#   exec gunicorn -w "$WORKERS" -b "0.0.0.0:${PORT:-8080}" app:app

sizeup_workers() {
    _root=${CGROUP_ROOT:-/sys/fs/cgroup}
    _quota=
    _period=
    _mem=
    if [ -f "$_root/cpu.max" ] || [ -f "$_root/memory.max" ]; then
        # cgroup v2: "max 100000" or "50000 100000"
        if [ -f "$_root/cpu.max" ]; then
            read -r _quota _period <"$_root/cpu.max"
            [ "$_quota" = max ] && _quota=
        fi
        [ -f "$_root/memory.max" ] && read -r _mem <"$_root/memory.max"
        [ "$_mem" = max ] && _mem=
    else
        # cgroup v1: the cpu controller may be mounted alone or with cpuacct
        for _d in "$_root/cpu" "$_root/cpu,cpuacct" "$_root/cpuacct,cpu"; do
            if [ -f "$_d/cpu.cfs_quota_us" ]; then
                read -r _quota <"$_d/cpu.cfs_quota_us"
                read -r _period <"$_d/cpu.cfs_period_us"
                break
            fi
        done
        [ "$_quota" = -1 ] && _quota=
        [ -f "$_root/memory/memory.limit_in_bytes" ] &&
            read -r _mem <"$_root/memory/memory.limit_in_bytes"
    fi
    _ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
    _memkb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo 2>/dev/null)
    awk -v q="$_quota" -v p="$_period" -v m="$_mem" -v n="$_ncpu" -v mk="${_memkb:-0}" \
        -v cpw="${CORES_PER_WORKER:-1}" -v mpw="${MEMORY_PER_WORKER_MIB:-192}" \
        -v maxw="${MAX_WORKERS:-8}" 'BEGIN {
        if (q != "" && p + 0 > 0) cores = q / p; else cores = n
        # v1 reports "no limit" as a number near 2^63
        if (m != "" && m + 0 > 0 && m + 0 < 4611686018427387904) mib = m / 1048576
        else mib = mk / 1024
        w = int(cores / cpw + 0.5)
        wm = int(mib / mpw)
        if (wm < w) w = wm
        if (w > maxw + 0) w = maxw + 0
        if (w < 1) w = 1
        printf "%d\n", w
    }'
}

# Run directly (not sourced): print the count.
case "${0##*/}" in
workers-auto.sh) sizeup_workers ;;
esac
