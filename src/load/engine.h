#ifndef SIZEUP_LOAD_ENGINE_H
#define SIZEUP_LOAD_ENGINE_H

/* Private to src/load: the seam between the request load (load_requests.c: set-up, threads,
 * progress, merge) and the engine (engine.c: the per-thread state machine and event loop).
 * Nothing above the load layer includes it. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "core/err.h"
#include "load/http.h"
#include "load/load.h"
#include "load/plan.h"
#include "load/series.h"
#include "load/sock.h"
#include "profile/url.h"

#define ENGINE_PUBLISH_NS (250 * 1000000LL) /* progress publication period */

/* One load thread's state: its connections, timers and statistics. Opaque outside engine.c. */
struct worker;

/* The run, shared read-only by every load thread once they start (quit and stop_ns are the
 * only fields written afterwards, by load__requests_run's thread, atomically). */
struct engine {
    const struct load_opts *o;
    const struct profile *p;
    struct url url;
    struct url_addr addr;
    struct sock_tls tls;
    const struct sock_tls *tlsp; /* NULL for plain http */
    struct http_request *reqs;
    size_t nreqs;
    uint64_t *cumw; /* cumulative weights */
    uint64_t totalw;
    struct plan plan;
    struct timespec t0;
    int64_t timeout_ns; /* 0: none */
    unsigned nthreads;
    unsigned max_conns;
    unsigned peak_users;
    atomic_int quit;
    _Atomic int64_t stop_ns; /* when a stop was asked (INT64_MAX: never): the window's end */
    struct worker **w;       /* owned: nthreads workers */
    pthread_t *tids;         /* owned: nthreads */
    unsigned started;        /* threads started: w[0 .. started-1] */
};

/* What a worker published for the progress display: relaxed reads of counters only its thread
 * writes, covering its current phase (a load_phase) so far. */
struct engine_progress {
    int phase;
    uint64_t requests, failed;
    uint64_t p95_us; /* over the phase so far */
    uint64_t count;  /* latency samples behind p95_us */
};

/* What a worker measured; valid once its thread has ended. The arrays are borrowed from the
 * worker (by_name: the profile's nrequests, by_stage: its nstages). */
struct engine_totals {
    const struct load_stats *by_name;
    const struct load_stats *by_stage;
    double cpu_s;                    /* the thread's CPU time over the measured window */
    unsigned peak_busy;              /* most requests in flight at once while measuring */
    uint64_t sent_measured;          /* open loop: requests due inside the measured window */
    const struct series_rec *series; /* the measured window per interval */
};

/* Nanoseconds since the run's start (e->t0, CLOCK_MONOTONIC). */
int64_t engine_now_ns(const struct engine *e);

/* Allocates worker idx of e with cap connection slots into *out (free with
 * engine_worker_free). Borrows e, which must outlive it. Returns 0, -ENOMEM or -errno. */
int engine_worker_new(struct engine *e, unsigned idx, unsigned cap, struct worker **out /* OUT */,
                      char *err);

/* Closes and frees what w owns; NULL is a no-op. Not while its thread runs. */
void engine_worker_free(struct worker *w);

/* The thread entry: runs worker arg's loop until the plan ends or e->quit, then closes its
 * connections and marks it done. Returns NULL. */
void *engine_worker_main(void *arg);

/* True once w's thread has finished its loop (acquire: its totals are then visible). */
bool engine_worker_done(struct worker *w);

/* Reads what w published for the progress display; callable while its thread runs. */
void engine_worker_progress(struct worker *w, struct engine_progress *out /* OUT */);

/* What w measured; only after engine_worker_done(w). */
void engine_worker_totals(const struct worker *w, struct engine_totals *out /* OUT */);

#endif
