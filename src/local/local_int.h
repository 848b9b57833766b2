#ifndef SIZEUP_LOCAL_LOCAL_INT_H
#define SIZEUP_LOCAL_LOCAL_INT_H

/* The local platform's state and the functions its files share; not part of the local layer's
 * interface. local.c: the ops table, facts, prepare/restore and creation; local_process.c: the
 * variant's process group (start, wait until ready, stop, reap); local_usage.c: the usage
 * window; local_util.c: the helpers below that the others share (the calls run one way: the
 * entry local.c and the other files call local_util.c, which calls none of them). */

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "local/cgroup.h"
#include "local/local.h"
#include "local/schedstat.h"

#define POLL_MS      50
#define SAMPLE_MS    100
#define KILL_WAIT_US 2000000
#define MAX_ENV      4096

struct local {
    struct local_config cfg;
    char workers_env[64];
    struct cg_self self;
    struct cg_parent parent;
    bool enforced;
    bool prepared;
    char note[ERR_LEN];
    unsigned seq; /* variants started, for cgroup names */

    /* the running variant */
    const struct variant *v;
    pid_t pid; /* also the process group id; 0 when none */
    bool reaped;
    int status;
    struct cg cg;
    bool have_cg;
    char log_path[1024];
    double started;
    char port_held[160]; /* "" or why the port was still held when the app started */

    /* the usage window */
    uint64_t cpu0_ns;
    bool cpu0_ok;
    uint64_t oom0;
    bool oom0_ok;
    struct cg_throttle thr0;
    bool thr0_ok;
    double t_begin;
    double host_busy0;        /* CPU seconds busy on the whole host at usage_begin; < 0 unknown */
    struct sched_waits wait0; /* the variant's tasks' runnable waits at usage_begin */
    /* The load generator's (this process's) task waits at usage_begin, and the latest seen of
     * each task since (the sampler reads them while the window's load run lives); its CPU at
     * usage_begin (< 0 unknown). */
    struct sched_waits gen0, gen_seen;
    double gen_cpu0;
    pthread_t sampler;
    bool sampling;
    volatile int sampler_stop;
    int64_t sampled_peak; /* written by the sampler thread, read after join */

    /* A scale-out's replica set (local_replicas.c): this instance is replica 0; replicas
     * 1..nrep are copies of it on --port + i, each its own process group and cgroup. in_set
     * names the logs and cgroups <variant>-r<i>. */
    bool in_set;
    bool warned_ephemeral; /* the set's ports in the ephemeral range: said once */
    unsigned replica;
    struct local *rep[PLATFORM_MAX_REPLICAS];
    size_t nrep;
};

/* Whether port lies in the kernel's ephemeral range (net.ipv4.ip_local_port_range), the ports
 * handed to outgoing connections' local ends; the range into *lo..*hi either way (32768-60999,
 * the kernel's default, where it cannot be read). */
bool local__ephemeral_port(unsigned port, unsigned *lo, unsigned *hi);

/* True for an ASCII letter or digit (what an environment variable's name may hold, with _). */
bool local__isalnum_ascii(char c);

/* True when the variant's main process has exited (reaping it); describes how into how (may be
 * NULL). */
bool local__exited(struct local *l, char *how, size_t len);

/* Joins the memory sampler if one runs (a no-op otherwise). */
void local__stop_sampler(struct local *l);

/* The platform ops of local_process.c and local_usage.c (contracts in sweep/platform.h), each
 * for one instance; local_replicas.c's ops apply them to every replica of a set. */
int local__apply(void *self, const struct variant *v, struct platform_failure *fail, char *err);
int local__wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                      struct platform_failure *fail, char *err);
int local__target_url(void *self, char *buf, size_t len, char *err);
int local__stop_variant(void *self, char *err);
int local__usage_begin(void *self, char *err);
int local__usage_end(void *self, struct platform_usage *out, char *err);

/* The ops table's entries for a replica set (local_replicas.c): apply and the scale-out's
 * apply_replicas / target_urls, and wait_ready, usage and stop over every replica. */
int local__set_apply(void *self, const struct variant *v, struct platform_failure *fail, char *err);
int local__set_apply_replicas(void *self, const struct variant *v, unsigned n,
                              struct platform_failure *fail, char *err);
int local__set_wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                          struct platform_failure *fail, char *err);
int local__set_target_urls(void *self, char (*urls)[PLATFORM_URL_LEN], size_t max, size_t *n,
                           char *err);
int local__set_usage_begin(void *self, char *err);
int local__set_usage_end(void *self, struct platform_usage *out, char *err);
int local__set_stop(void *self, char *err);

#endif
