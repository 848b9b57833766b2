/* load__requests_run (load_int.h): the request load from set-up to result. It serializes the
 * requests once, sets up TLS, resolves the address, builds the plan and raises the descriptor
 * limit; starts one engine thread per worker; reports progress from the caller's thread; and
 * merges what the threads measured into the result. The per-thread state machine and loop are
 * in engine.c. */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "load/cpus.h"
#include "load/engine.h"
#include "load/load_int.h"

#define DEFAULT_MAX_CONNS 10000
#define NOFILE_SLACK      64 /* descriptors beyond the connections: epoll, stdio, files */
#define WATCH_NS          (20 * 1000000LL) /* how often load_run looks at the threads */

int load__raise_nofile(rlim_t need, char *err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_cur == RLIM_INFINITY)
        return 0;
    struct rlimit want = rl;
    want.rlim_cur = need;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need)
        want.rlim_max = need;
    if (setrlimit(RLIMIT_NOFILE, &want) == 0)
        return 0;
    /* Not allowed to raise the hard limit: take what it allows and say it is too little. */
    return err_set(err, -EMFILE,
                   "too many open files: the run needs %llu file descriptors but RLIMIT_NOFILE "
                   "allows %llu (raise it with 'ulimit -n %llu', or lower --users / "
                   "--max-connections)",
                   (unsigned long long)need, (unsigned long long)rl.rlim_max,
                   (unsigned long long)need);
}

static void engine_free(struct engine *e)
{
    if (e->w) {
        for (unsigned i = 0; i < e->nthreads; i++)
            engine_worker_free(e->w[i]);
        free(e->w);
    }
    free(e->tids);
    for (size_t i = 0; e->reqs && i < e->nreqs; i++)
        http_request_free(&e->reqs[i]);
    free(e->reqs);
    free(e->cumw);
    plan_free(&e->plan);
    sock_tls_free(&e->tls);
}

static int engine_init(struct engine *e, const struct load_opts *o, char *err)
{
    const struct profile *p = o->profile;
    int rc = 0;

    e->o = o;
    e->p = p;
    if (!p || p->nrequests == 0)
        return err_set(err, -EINVAL, "the profile has no requests");
    rc = url_parse(o->url, &e->url, err);
    if (rc)
        return rc;
    rc = plan_build(p, &e->plan, err);
    if (rc)
        return err_wrap(err, rc, "profile %s", p->source ? p->source : "");
    e->nreqs = p->nrequests;
    e->reqs = calloc(e->nreqs, sizeof(*e->reqs));
    e->cumw = calloc(e->nreqs, sizeof(*e->cumw));
    if (!e->reqs || !e->cumw)
        return err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < e->nreqs; i++) {
        rc = http_request_build(&e->url, &p->requests[i], &e->reqs[i], err);
        if (rc)
            return rc;
        e->totalw += p->requests[i].weight ? p->requests[i].weight : 1;
        e->cumw[i] = e->totalw;
    }
    if (e->url.tls) {
        rc = sock_tls_init(&e->tls, &e->url, o->insecure, err);
        if (rc)
            return rc;
        e->tlsp = &e->tls;
    }
    rc = url_resolve(&e->url, &e->addr, err);
    if (rc)
        return rc;
    e->timeout_ns = p->timeout_us > 0 ? p->timeout_us * 1000 : 0;
    e->max_conns = o->max_connections ? o->max_connections : DEFAULT_MAX_CONNS;

    unsigned t = o->threads ? o->threads : load_cpus_default();
    if (!e->plan.open_loop) {
        e->peak_users = (unsigned)llround(e->plan.peak);
        if (e->peak_users == 0)
            return err_set(err, -EINVAL, "the run never has a user");
        if (t > e->peak_users)
            t = e->peak_users;
    } else if (t > e->max_conns) {
        t = e->max_conns;
    }
    e->nthreads = t ? t : 1;
    rlim_t need =
        (rlim_t)(e->plan.open_loop ? e->max_conns : e->peak_users) + NOFILE_SLACK + e->nthreads;
    return load__raise_nofile(need, err);
}

static void snapshot(struct engine *e, int64_t now, uint64_t *last_req, int64_t *last_ns,
                     struct load_progress *pr)
{
    uint64_t req = 0, failed = 0, count = 0;
    double p95w = 0;
    int measuring = now >= e->plan.measure_start_ns;

    for (unsigned i = 0; i < e->nthreads; i++) {
        struct engine_progress wp;
        engine_worker_progress(e->w[i], &wp);
        if (wp.phase != (measuring ? LOAD_PHASE_MEASURE : LOAD_PHASE_WARMUP))
            continue;
        req += wp.requests;
        failed += wp.failed;
        /* Per-thread p95s weighted by their sample counts: exact with one thread, a close
         * estimate otherwise; the final report merges the histograms exactly. */
        p95w += (double)wp.p95_us * (double)wp.count;
        count += wp.count;
    }
    memset(pr, 0, sizeof(*pr));
    pr->phase = now >= e->plan.end_ns ? LOAD_PHASE_DONE
                                      : (measuring ? LOAD_PHASE_MEASURE : LOAD_PHASE_WARMUP);
    int64_t ps = measuring ? e->plan.measure_start_ns : 0;
    int64_t pe = measuring ? e->plan.end_ns : e->plan.measure_start_ns;
    pr->elapsed_s = (double)(now - ps) / 1e9;
    pr->phase_s = (double)(pe - ps) / 1e9;
    pr->requests = req;
    pr->failed = failed;
    int64_t since = *last_ns;
    if (measuring && since < e->plan.measure_start_ns) {
        /* The phase changed since the last snapshot: its counters restarted at its start. */
        *last_req = 0;
        since = e->plan.measure_start_ns;
    }
    if (req < *last_req)
        *last_req = 0;
    pr->rps = now > since ? (double)(req - *last_req) * 1e9 / (double)(now - since) : 0;
    pr->p95_us = count ? (uint64_t)(p95w / (double)count) : 0;
    *last_req = req;
    *last_ns = now;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    /* Interrupted by a signal: return early so the caller looks at the stop flag at once. */
    nanosleep(&ts, NULL);
}

/* Creates the workers, each with its share of the connections (open loop) or the users. */
static int new_workers(struct engine *e, char *err)
{
    e->w = calloc(e->nthreads, sizeof(*e->w));
    e->tids = calloc(e->nthreads, sizeof(*e->tids));
    if (!e->w || !e->tids)
        return err_set(err, -ENOMEM, "out of memory");
    unsigned total = e->plan.open_loop ? e->max_conns : e->peak_users;
    for (unsigned i = 0; i < e->nthreads; i++) {
        unsigned cap = total / e->nthreads + (i < total % e->nthreads ? 1u : 0u);
        int rc = engine_worker_new(e, i, cap, &e->w[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Sets the run's time zero and starts the worker threads (e->started counts those that run).
 * On a failed start the ones running are told to quit and the error is returned; the caller
 * still watches and joins them. */
static int start_threads(struct engine *e, char *err)
{
    const struct load_opts *o = e->o;
    sigset_t all, old;
    int rc = 0;

    /* Load threads take no signals: SIGINT and SIGTERM reach the caller's thread, whose
     * handler sets o->stop; SIGPIPE stays blocked where sockets are written. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (o->start.tv_sec || o->start.tv_nsec)
        e->t0 = o->start; /* a schedule shared with other runs (streams' producers) */
    else
        clock_gettime(CLOCK_MONOTONIC, &e->t0);
    for (unsigned i = 0; i < e->nthreads; i++) {
        int prc = pthread_create(&e->tids[i], NULL, engine_worker_main, e->w[i]);
        if (prc) {
            char eb[64];
            atomic_store(&e->quit, 1);
            rc = err_set(err, -prc, "cannot start load thread: %s", err_str(prc, eb, sizeof(eb)));
            break;
        }
        e->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Until every started thread is done: passes a stop request on to the threads (the time it
 * came goes to *quit_ns, else -1) and publishes progress. Then joins the threads. */
static void watch_threads(struct engine *e, int64_t *quit_ns /* OUT */)
{
    const struct load_opts *o = e->o;
    uint64_t last_req = 0;
    int64_t last_ns = 0, last_progress = 0;

    *quit_ns = -1;
    for (;;) {
        unsigned running = 0;
        for (unsigned i = 0; i < e->started; i++)
            if (!engine_worker_done(e->w[i]))
                running++;
        if (!running)
            break;
        int64_t now = engine_now_ns(e);
        if (*quit_ns < 0 && o->stop && *o->stop) {
            *quit_ns = now;
            atomic_store(&e->stop_ns, now);
            atomic_store(&e->quit, 1);
        }
        if (o->progress && now - last_progress >= ENGINE_PUBLISH_NS) {
            struct load_progress pr;
            snapshot(e, now, &last_req, &last_ns, &pr);
            o->progress(o->progress_ud, &pr);
            last_progress = now;
        }
        sleep_ns(WATCH_NS);
    }
    for (unsigned i = 0; i < e->started; i++)
        pthread_join(e->tids[i], NULL);
}

/* Merges the threads' totals into out (initialized) and finishes it: the window ends at
 * quit_ns when the run was stopped, else at the plan's end. */
static int merge_threads(struct engine *e, int64_t quit_ns, struct load_result *out, char *err)
{
    uint64_t sent = 0;

    out->threads = e->nthreads;
    out->users = e->plan.open_loop ? 0 : e->peak_users;
    out->series_rec = malloc(sizeof(*out->series_rec));
    if (!out->series_rec || series_rec_init(out->series_rec, e->plan.measure_start_ns) != 0)
        return err_set(err, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < e->nthreads; i++) {
        struct engine_totals t;
        engine_worker_totals(e->w[i], &t);
        load_result_add_thread(out, t.by_name, t.by_stage);
        series_rec_merge(out->series_rec, t.series);
        out->tool_cpu_s += t.cpu_s;
        out->peak_concurrency += t.peak_busy;
        sent += t.sent_measured;
    }
    load_result_finish(out, &e->plan, e->p, quit_ns >= 0 ? quit_ns : e->plan.end_ns, sent);
    if (load_result_render_series(out, NULL) != 0)
        return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

int load__requests_run(const struct load_opts *o, struct load_result *out, char *err)
{
    struct engine e;
    int rc = 0, result_init = 0;
    int64_t quit_ns = -1;

    memset(&e, 0, sizeof(e));
    memset(out, 0, sizeof(*out));
    atomic_init(&e.quit, 0);
    atomic_init(&e.stop_ns, INT64_MAX);
    rc = engine_init(&e, o, err);
    if (rc)
        goto out;
    rc = load_result_init(out, o->profile);
    if (rc) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    result_init = 1;
    rc = new_workers(&e, err);
    if (rc)
        goto out;
    rc = start_threads(&e, err);
    watch_threads(&e, &quit_ns); /* also after a failed start: the started threads must end */
    if (rc)
        goto out;
    rc = merge_threads(&e, quit_ns, out, err);
out:
    engine_free(&e);
    if (rc && result_init)
        load_result_free(out);
    return rc;
}
