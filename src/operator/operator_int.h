#ifndef SIZEUP_OPERATOR_OPERATOR_INT_H
#define SIZEUP_OPERATOR_OPERATOR_INT_H

/* The operator's shared state and the functions its two files share; not part of the operator
 * layer's interface. operator.c: the main loop, leader election, the admin server and shutdown;
 * operator_queue.c: the Deployment informers, the work queue, re-sweep scheduling and the
 * worker threads that run the jobs. */

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "operator/admin.h"
#include "operator/cache.h"
#include "operator/job.h"
#include "operator/metrics.h"
#include "operator/operator.h"
#include "operator/progress.h"
#include "operator/progress_auth.h"

struct op;

/* A Deployment with re-sweeps on, to be read and decided again at due_ms (monotonic). */
struct resweep_item {
    struct resweep_item *next;
    int64_t due_ms;
    char ns[64];
    char name[254];
};

struct informer {
    struct op *op;
    const char *ns; /* borrowed from the options; NULL: every namespace */
    kube_client_t *client;
    pthread_t thread;
    int started;
    int synced;       /* the first list completed (guarded by op->mu) */
    atomic_int alive; /* cleared when the thread returns */
};

struct op {
    const struct operator_opts *o;
    kube_config_t *cfg;
    struct metrics m;
    admin_t *admin;
    progress_feed_t *feed; /* every running sweep's live numbers */
    progress_srv_t *progress;
    progress_auth_t *auth; /* with progress_public */
    char identity[254];
    char lease_ns[64];
    const char *lease_name;

    /* Everything below mu is shared between informers, workers and the main thread. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cache_t *cache;
    struct job *qhead, *qtail;
    struct job *delayed;  /* requeued after a transient failure, waiting for due_ms (busy) */
    struct job **running; /* max_concurrent slots */
    struct resweep_item *resweeps; /* one per Deployment with re-sweeps on, at most */
    int leader;
    int stopping;
    size_t nsynced;

    /* Flags polled by the clients' stop callbacks (no lock: set once, read often). */
    atomic_int informers_stop;
    volatile sig_atomic_t hard_stop;

    struct informer *inf;
    size_t ninf;
    pthread_t *workers;
    int nworkers;
};

/* A client for the operator's API calls, counted in its metrics; stop is polled with op as its
 * context. Returns 0 and an owned client in *out (free with kube_client_free). */
int operator__new_client(struct op *op, kube_stop_fn stop, long request_timeout_ms, int attempts,
                         kube_client_t **out /* OUT */, char *err);

/* The queue; callers hold op->mu. scan_cb enqueues what cache_scan finds (ctx: the op). */
void operator__scan_cb(void *ctx, enum cache_action a, const char *ns, const char *name,
                       const char *uid);
/* Moves the delayed jobs that are due (or all of ns/name when name is set) to the queue. */
void operator__promote_delayed_locked(struct op *op, const char *ns, const char *name);
/* Asks every running job (or only the one on ns/name) to stop for why. */
void operator__stop_jobs_locked(struct op *op, const char *ns, const char *name, enum job_stop why);
/* Drops every queued and delayed job, releasing their busy marks. */
void operator__drain_queue_locked(struct op *op);

/* Decides again the Deployments whose re-sweep is due, with c (borrowed). Takes op->mu. */
void operator__resweep_run_due(struct op *op, kube_client_t *c);

/* Starts one informer per watched namespace and op->nworkers workers; on failure what started
 * is left in op for the shutdown path to join. */
int operator__start_informers(struct op *op, char *err);
int operator__start_workers(struct op *op, char *err);
/* Stops the sweeps, waits for them until deadline_ms (monotonic), then aborts their API calls. */
void operator__stop_workers(struct op *op, int64_t deadline_ms);

#endif
