#ifndef SIZEUP_LOAD_CPUS_H
#define SIZEUP_LOAD_CPUS_H

/* How many CPUs the load generator may really use, for its default thread count: the CPUs in
 * its affinity mask, capped by the CPU quota of its own cgroup and every cgroup above it (v2
 * cpu.max; v1 cpu.cfs_quota_us / cpu.cfs_period_us), rounded up. A generator in a pod limited
 * to 1 CPU on a 64-core node runs one thread, not 64 that the CFS quota would throttle. */

#include <stdbool.h>
#include <stdint.h>

/* The default thread count for this process: at least 1. Reads /proc/self/cgroup and the
 * cgroup files under /sys/fs/cgroup; whatever cannot be read counts as no limit. */
unsigned load_cpus_default(void);

/* Millicores from the text of a v2 cpu.max ("150000 100000" -> 1500); 0 for "max" (no limit)
 * or text that is not a quota. */
int64_t load_cpus_quota_v2(const char *cpu_max);

/* Millicores from the texts of v1 cpu.cfs_quota_us and cpu.cfs_period_us; 0 for -1 (no limit)
 * or text that is not a quota. */
int64_t load_cpus_quota_v1(const char *quota_us, const char *period_us);

/* The tightest quota in millicores on the path from root/rel up to root (both included) of a
 * cgroup hierarchy mounted at root (v2: cpu.max; v1: the cfs files); 0 when none is set.
 * Directories that do not exist are skipped (a container sees its own cgroup as the root). */
int64_t load_cpus_quota_path(const char *root, const char *rel, bool v2);

/* min(affinity, quota rounded up to whole CPUs), at least 1; quota_m 0 means no quota. */
unsigned load_cpus_from(unsigned affinity, int64_t quota_m);

#endif
