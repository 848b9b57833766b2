#ifndef SIZEUP_SWEEP_PLATFORM_H
#define SIZEUP_SWEEP_PLATFORM_H

/* The platform seam: the one thing that differs between `sizeup sweep` (local processes in
 * cgroups, src/local) and `sizeup operator` (a Deployment through the API, src/kube). The sweep
 * runner drives a platform only through these operations and never learns which one it has.
 *
 * Life cycle, as the runner calls it:
 *
 *     facts -> prepare -> { apply(v) -> wait_ready -> target_url -> usage_begin ... load ...
 *                           usage_end -> stop_variant } for each variant -> restore -> free
 *
 * Rules every implementation keeps:
 * - Every operation returns 0 or a negative errno and describes a failure in err (ERR_LEN).
 * - A variant that cannot run (dies, never becomes ready, is OOM-killed, cannot be scheduled)
 *   makes apply or wait_ready return a negative errno AND fill a struct platform_failure with
 *   the kind and a one-line reason, which the runner records as a FAILED row before going on. A
 * negative return without a failure kind (kind PLATFORM_FAIL_NONE) means the platform itself broke
 * (API unreachable, no permission): the runner records the variant FAILED with err as the reason,
 * calls stop_variant, and goes on as well; only prepare failing stops the sweep before it starts.
 * - stop_variant and restore are idempotent and safe to call in any state (after a failed apply,
 *   twice, after cancellation). restore is called exactly once per prepare by the runner, on
 *   success, failure and cancellation alike, and must leave nothing behind: no process, no
 *   cgroup (local); no clone, the original pod template back (kube).
 * - Operations that wait (wait_ready) poll the stop flag at least every 100 ms and return
 *   -ECANCELED promptly when it becomes non-zero.
 * - self is opaque to the runner; the constructor (local_platform_new, kube_platform_new) takes
 *   the platform-specific configuration (command, port, cgroup root / namespace, deployment).
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "sweep/variant.h"

#define PLATFORM_URL_LEN      512
#define PLATFORM_MAX_REPLICAS 16 /* a scale-out runs at most this many replicas of a variant */
#define PLATFORM_MACHINE_LEN  160

/* Why a variant could not be measured. */
enum platform_fail {
    PLATFORM_FAIL_NONE = 0,
    PLATFORM_FAIL_APPLY,         /* could not be started / patched (exec failed, patch refused) */
    PLATFORM_FAIL_DIED,          /* exited or crash-looped before or while being measured */
    PLATFORM_FAIL_NEVER_READY,   /* running, but not ready within the timeout */
    PLATFORM_FAIL_OOM,           /* killed by the kernel's OOM killer at the memory limit */
    PLATFORM_FAIL_UNSCHEDULABLE, /* no node / host can give it what it asks for */
    PLATFORM_FAIL_CANCELLED,     /* the sweep was cancelled while waiting */
};

struct platform_failure {
    enum platform_fail kind;
    char reason[ERR_LEN]; /* one line for people: "exited with status 3 after 0.4 s" */
};

/* What the platform knows about where variants run. Filled once, before prepare. */
struct platform_facts {
    /* CPU a variant can really get, in millicores: on the local platform the online CPUs
     * sizeup may use (affinity, and its own cgroup's quota if any); on kube the largest
     * node's allocatable CPU. 0 when unknown. A variant asking for more is marked. */
    int64_t host_millicores;
    int64_t host_memory_bytes; /* likewise for memory; 0 when unknown */
    /* False when the platform cannot enforce the variant's limits (no writable cgroup): every
     * result is then marked "limits not enforced". limits_note says why, for the outputs. */
    bool limits_enforced;
    char limits_note[ERR_LEN];
    /* True when the load generator runs on the same host as the variant (local platform), so
     * its CPU use competes with the app's and is checked per variant for contention. */
    bool load_shares_host;
    char machine[PLATFORM_MACHINE_LEN]; /* for results.md: "Linux 6.1.0 x86_64, 2 CPUs, ..." */
    /* The shortest measured window over which usage_end can give the variant's CPU; 0 when any
     * window can (local: the cgroup's counters). In a cluster CPU comes from metrics.k8s.io,
     * which averages over windows of its own: a shorter window reports CPU unknown, and the
     * capacity search holds a boundary repeat this long so CPU at capacity is known. */
    int64_t usage_window_us;
};

/* Resource use of the running variant over the window between usage_begin and usage_end. */
struct platform_usage {
    double window_s;           /* wall-clock length of the window */
    double cpu_s;              /* CPU seconds (user + system) of the whole variant; < 0 unknown */
    int64_t peak_memory_bytes; /* peak memory during the window (or the variant's life, when the
                                  platform can only give that; see peak_is_lifetime); < 0 unknown */
    bool peak_is_lifetime;
    /* Memory in use at the window's end (what the streams a window held cost, where the peak
     * would also keep what a ramp needed for a moment); < 0 unknown. */
    int64_t memory_bytes;
    /* CPU cores used on the same host by everything but the variant (the load generator and
     * any other process) during the window; < 0 unknown (kube: the node's other pods). With
     * the variant's limit it shows whether the host could give the variant its limit. */
    double host_other_cores;
    /* CFS throttling of the variant over the window (cgroup cpu.stat). throttle_known false:
     * the platform cannot read it (kube: the API does not expose it), reported as unknown. */
    bool throttle_known;
    uint64_t cpu_periods;           /* CFS enforcement periods elapsed */
    uint64_t cpu_throttled_periods; /* periods in which the variant was throttled */
    double cpu_throttled_s;         /* time its processes waited throttled */
    /* Time the variant's tasks waited runnable for a CPU over the window, summed over its tasks
     * (local: schedstat run delay; it holds the time throttled by its own quota as well, and the
     * time queued behind other work: sweep_contention_judge tells them apart). wait_known false:
     * not read (kube, a kernel without schedstat). */
    bool wait_known;
    double cpu_wait_s;
    /* The same for the load generator where it shares the host (local: sizeup's own threads,
     * sampled every 100 ms, so a thread's last moments may be missed), with its CPU over the
     * window. gen_wait_known false: not read. */
    bool gen_wait_known;
    double gen_wait_s;
    double gen_cpu_s;
    unsigned restarts; /* processes / containers restarted during the window */
    bool oom_killed;   /* the OOM killer fired in the variant during the window */
    bool died;         /* the variant stopped running during the window */
    /* The shortest window over which usage_end can give CPU, as this sample showed it (kube:
     * from the metrics.k8s.io window it read; facts.usage_window_us is only a first guess, made
     * before the variant's pod had metrics); 0 when the sample did not say. */
    int64_t usage_window_us;
    char note[ERR_LEN]; /* what could not be read, if anything; "" when all was read */
};

struct platform_ops {
    const char *name; /* "local", "kube" */

    /* Fills *out. Cheap; may be called again at any time. */
    int (*facts)(void *self, struct platform_facts *out /* OUT */, char *err);

    /* Once before the first variant: check permissions, create the parent cgroup / the clone,
     * save what restore puts back. A failure here aborts the sweep (restore is still called). */
    int (*prepare)(void *self, char *err);

    /* Starts (local) or rolls out (kube) the variant. Borrows v until stop_variant returns. On
     * failure fills *fail (kind PLATFORM_FAIL_APPLY or more specific). */
    int (*apply)(void *self, const struct variant *v, struct platform_failure *fail /* OUT */,
                 char *err);

    /* Waits until the applied variant serves (port answers and the ready path returns < 500,
     * or the rollout is complete and the pod Ready), at most timeout_us, polling *stop (may be
     * NULL). Returns 0 when ready; otherwise a negative errno with *fail filled (died, never
     * ready, OOM-killed, unschedulable, cancelled). */
    int (*wait_ready)(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                      struct platform_failure *fail /* OUT */, char *err);

    /* Writes the base URL the load generator targets ("http://127.0.0.1:8080",
     * "http://10.1.2.3:8080") into buf (len bytes). Valid while the variant runs. */
    int (*target_url)(void *self, char *buf /* OUT */, size_t len, char *err);

    /* Marks the start of the measured window: snapshots CPU time, resets the peak-memory
     * watermark where the platform can (else samples), notes restart and OOM counters. */
    int (*usage_begin)(void *self, char *err);

    /* Ends the window and fills *out. Values the platform cannot read are < 0, said in
     * out->note; that is not an error. */
    int (*usage_end)(void *self, struct platform_usage *out /* OUT */, char *err);

    /* Stops the current variant entirely (whole process group, SIGTERM then SIGKILL; or scale
     * the clone down) and releases what apply created for it (the variant's cgroup).
     * Idempotent. */
    int (*stop_variant)(void *self, char *err);

    /* Undoes prepare: stops any variant still running and removes everything the platform
     * created (parent cgroup, clone) or puts back what it changed (in-place template).
     * Idempotent; called on success, failure and cancellation. */
    int (*restore)(void *self, char *err);

    /* Frees self. Does not restore: the runner has called restore already. NULL-safe. */
    void (*free)(void *self);

    /* How the current variant was applied, for results.json ("rollout", "resize"): a static
     * string, "" when there is nothing to say. May be NULL (the local platform starts a
     * process; there is only one way). Valid after apply, until the next apply. */
    const char *(*applied_by)(void *self);

    /* The scale-out (may be NULL: the platform cannot run replicas; the runner then says so).
     * apply_replicas starts n (2 .. PLATFORM_MAX_REPLICAS) replicas of v, each with v's limits
     * (local: replica i its own process group and cgroup on --port + i, each port free before
     * its replica starts); wait_ready, usage_begin / usage_end (the replicas' CPU summed,
     * memory the largest replica's) and stop_variant then cover every replica, and apply
     * returns to one. Fails as apply does. Borrows v until stop_variant returns. */
    int (*apply_replicas)(void *self, const struct variant *v, unsigned n,
                          struct platform_failure *fail /* OUT */, char *err);

    /* The running replicas' base URLs into urls[0..*n) (one after apply). Valid while they
     * run. May be NULL with apply_replicas. */
    int (*target_urls)(void *self, char (*urls)[PLATFORM_URL_LEN], size_t max, size_t *n /* OUT */,
                       char *err);
};

/* A platform is its operations and its opaque state. Owned by whoever created it (the CLI or
 * the operator), which calls ops->free(self) last. */
struct platform {
    const struct platform_ops *ops;
    void *self;
};

/* "died", "never ready", "OOM-killed", "unschedulable", ... for outputs. */
const char *platform_fail_name(enum platform_fail kind);

#endif
