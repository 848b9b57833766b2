#ifndef SIZEUP_LOCAL_CGROUP_H
#define SIZEUP_LOCAL_CGROUP_H

/* Linux control groups, limited the way a kubelet limits a container:
 *   v2: cpu.max "<quota> <period>", memory.max, memory.swap.max 0
 *   v1: cpu.cfs_period_us + cpu.cfs_quota_us, memory.limit_in_bytes (+ memory.memsw.limit_in_bytes
 *       when swap accounting exists)
 * with the CPU quota computed as the kubelet does (millicores * period / 1000, period 100 ms,
 * at least 1 ms). Every cgroup sizeup makes is created BELOW the cgroup sizeup runs in (read
 * from /proc/self/cgroup, per controller on v1): systemd's delegation model expects it, it works
 * inside a container, and the parent's own limits keep holding.
 *
 * On v2 the no-internal-processes rule applies: controllers can be enabled for children only in
 * a cgroup without processes of its own. cg_prepare therefore moves sizeup into a leaf of its
 * own ("<self>/sizeup-<pid>-self") before enabling cpu and memory in <self>, and cg_unprepare
 * undoes both. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

#define CG_PATH 512

enum cg_version { CG_NONE = 0, CG_V1, CG_V2 };

/* Where sizeup's own cgroup is, per controller (on v2 all three are the same directory). */
struct cg_self {
    enum cg_version version;
    char cpu[CG_PATH];     /* v1: in the cpu hierarchy; v2: the unified directory */
    char cpuacct[CG_PATH]; /* v1: in the cpuacct hierarchy (== cpu when co-mounted) */
    char memory[CG_PATH];  /* v1: in the memory hierarchy */
    char why[ERR_LEN];     /* when version is CG_NONE: why no cgroup can be used */
};

/* The parent cgroup for one sweep, and what cg_prepare changed to make it. */
struct cg_parent {
    struct cg_self self;
    char cpu[CG_PATH], cpuacct[CG_PATH], memory[CG_PATH]; /* "<self>/<name>" per controller */
    /* v2 only: the leaf sizeup moved into, and controllers it enabled in <self>. */
    char self_leaf[CG_PATH];
    bool enabled_cpu, enabled_memory;
    /* v1 only: the cpu cgroup sizeup (the load generator) moved into for its weight. */
    char gen_cpu[CG_PATH];
    /* Both the variants' parent and sizeup's own cgroup carry CG_WEIGHT_FACTOR x the default
     * CPU weight (false: the kernel refused it; the sweep runs at the default weight). */
    bool weighted;
    bool prepared;
};

/* The measurement's CPU weight, as a multiple of the default (v1 cpu.shares 1024, v2 cpu.weight
 * 100). Other work on the host that sits in another cgroup or session (autogroup) competes by
 * its group's weight, not by its nice value: a `nice -n 19` build in another terminal would
 * otherwise get as large a share as the app under test. The weight only decides who runs when
 * both want a CPU; the variant's CPU limit still caps it. */
#define CG_WEIGHT_FACTOR 100

/* One variant's cgroup. */
struct cg {
    enum cg_version version;
    char cpu[CG_PATH], cpuacct[CG_PATH], memory[CG_PATH];
    bool memsw;      /* v1: swap accounting present (memsw limit set too) */
    bool peak_reset; /* the peak-memory watermark can be reset (v1) */
    bool has_peak;   /* a peak file exists (v1 max_usage, v2 memory.peak) */
    bool created;
};

/* Finds sizeup's own cgroup from the text of /proc/self/mountinfo and /proc/self/cgroup (given
 * as buffers so tests can feed any layout). Prefers v2 when its cgroup offers cpu and memory
 * (controllers_v2: the text of <self>/cgroup.controllers, or NULL when unknown), else v1 when
 * cpu, cpuacct and memory hierarchies are mounted. Never fails: out->version CG_NONE with
 * out->why says what is missing. */
void cg_find_self(const char *mountinfo, const char *proc_cgroup, const char *controllers_v2,
                  struct cg_self *out /* OUT */);

/* Reads /proc/self/{mountinfo,cgroup} and calls cg_find_self. */
void cg_detect(struct cg_self *out /* OUT */);

/* Creates the sweep's parent "<self>/<name>" in every controller (v2: moving sizeup into a leaf
 * and enabling cpu + memory first). Returns 0 or a negative errno with err saying what was not
 * writable; on failure everything it did is undone. */
int cg_prepare(const struct cg_self *self, const char *name, struct cg_parent *out /* OUT */,
               char *err);

/* Removes the parent (which must be empty of variant cgroups) and undoes the v2 moves.
 * Idempotent. */
int cg_unprepare(struct cg_parent *p, char *err);

/* Creates "<parent>/<name>" and sets its limits. Returns 0 or a negative errno; on failure
 * nothing is left behind. */
int cg_create(const struct cg_parent *p, const char *name, int64_t cpu_millicores,
              int64_t memory_bytes, struct cg *out /* OUT */, char *err);

/* Moves pid into g (every hierarchy). Async-signal-safe (open, write, close only), so a forked
 * child can put itself in before exec. Returns 0 or a negative errno. */
int cg_enter(const struct cg *g, pid_t pid);

/* CPU time used by every process in g so far, in nanoseconds. */
int cg_cpu_ns(const struct cg *g, uint64_t *ns /* OUT */, char *err);

/* CFS bandwidth enforcement so far (cpu.stat): periods elapsed, periods in which the cgroup was
 * throttled, and the time its processes waited throttled. */
struct cg_throttle {
    uint64_t periods;
    uint64_t throttled_periods;
    uint64_t throttled_ns;
};

/* Parses the text of a cpu.stat file: v2 "nr_periods, nr_throttled, throttled_usec"; v1
 * "nr_periods, nr_throttled, throttled_time" (nanoseconds). Returns 0, or -ENOENT when a field
 * is missing (no CFS bandwidth control in this kernel). */
int cg_parse_cpu_stat(const char *text, enum cg_version version, struct cg_throttle *out /* OUT */);

/* Reads g's cpu.stat (v1: in the cpu hierarchy). */
int cg_cpu_throttle(const struct cg *g, struct cg_throttle *out /* OUT */, char *err);

/* Memory in use now (v1 usage_in_bytes, v2 memory.current). */
int cg_mem_current(const struct cg *g, int64_t *bytes /* OUT */, char *err);

/* The peak-memory watermark (v1 max_usage_in_bytes, v2 memory.peak); -ENOENT when absent. */
int cg_mem_peak(const struct cg *g, int64_t *bytes /* OUT */, char *err);

/* Resets the watermark to the current usage (v1 only); -ENOTSUP elsewhere. */
int cg_mem_peak_reset(const struct cg *g, char *err);

/* Number of OOM kills inside g so far (v1 memory.oom_control, v2 memory.events). */
int cg_oom_kills(const struct cg *g, uint64_t *n /* OUT */, char *err);

/* Fills pids (up to max) with the processes in g; *n is how many there are in total. */
int cg_pids(const struct cg *g, pid_t *pids /* OUT */, size_t max, size_t *n /* OUT */, char *err);

/* Sends sig to every process in g (v2 SIGKILL uses cgroup.kill when present). */
int cg_signal_all(const struct cg *g, int sig, char *err);

/* Removes g (its processes must be gone; retried briefly while the kernel lets go). Idempotent.*/
int cg_destroy(struct cg *g, char *err);

/* The CPU quota a kubelet writes for millicores with period_us: at least 1000 us. */
int64_t cg_quota_us(int64_t millicores, int64_t period_us);

/* CPU quota of sizeup's own cgroup in millicores (0 when unlimited or unknown). */
int64_t cg_self_cpu_limit_m(const struct cg_self *self);

/* Memory limit of sizeup's own cgroup in bytes (0 when unlimited or unknown). */
int64_t cg_self_memory_limit(const struct cg_self *self);

#endif
