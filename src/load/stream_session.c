/* A stream session (stream_session.h): the stream threads of streams_run, driven step by step.
 * The producers run as one open-loop load for the whole session on a thread of their own, from
 * one time zero the stream threads share, so a frame's command number always names one due
 * time; each window takes the commands due inside it. */

#include "load/stream_session.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load/load_int.h"
#include "load/plan.h"
#include "profile/profile_streams.h"
#include "load/stream_client.h"
#include "load/streams_int.h"

#define WATCH_NS       (10 * 1000000LL) /* how often a wait looks at the threads */
#define START_SLACK_NS (5 * 1000000LL)  /* time zero is this far ahead of its setting */
#define CLOSE_WAIT_NS  (3000000000LL)   /* closing the streams above a smaller ramp */
#define COLLECT_NS     (5000000000LL)   /* the threads publish a window within this */
/* A window begins at least this far ahead, so that every stream thread (whose tick is 50 ms at
 * most) has read it before its first command is due. */
#define WINDOW_LEAD_NS (100 * 1000000LL)

struct stream_session {
    struct streams__base b;
    struct stream_session_opts o;
    struct profile prof; /* the user's, with the session's schedule (borrows every pointer) */
    int64_t t0_ns;
    unsigned asked;           /* streams asked for by the last resize */
    struct stream_stats prev; /* the counters at the previous window's collection */
    /* The producers' thread. */
    volatile sig_atomic_t prod_stop;
    pthread_t prod_tid;
    bool have_prod;
    struct load_opts prod_o;
    struct load_result prod_res;
    int prod_rc;
    char prod_err[ERR_LEN];
    _Atomic uint64_t prod_requests, prod_failed;
};

static bool stopped(const stream_session_t *s)
{
    return s->o.stop && *s->o.stop;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&ts, NULL);
}

static void on_prod_progress(void *ud, const struct load_progress *p)
{
    stream_session_t *s = ud;
    atomic_store_explicit(&s->prod_requests, p->requests, memory_order_relaxed);
    atomic_store_explicit(&s->prod_failed, p->failed, memory_order_relaxed);
}

static void *prod_main(void *arg)
{
    stream_session_t *s = arg;
    s->prod_rc = load__requests_run(&s->prod_o, &s->prod_res, s->prod_err);
    return NULL;
}

/* The producers for the whole session, from t0 (the stream threads know it already). */
static int start_producers(stream_session_t *s, char *err)
{
    struct timespec t0 = {(time_t)(s->t0_ns / 1000000000LL), (long)(s->t0_ns % 1000000000LL)};
    sigset_t all, old;

    memset(&s->prod_o, 0, sizeof(s->prod_o));
    s->prod_o.url = s->o.url;
    s->prod_o.profile = &s->b.prod;
    s->prod_o.threads = s->o.threads;
    s->prod_o.max_connections = s->b.ps->producers;
    s->prod_o.insecure = s->o.insecure;
    s->prod_o.stop = &s->prod_stop;
    s->prod_o.start = t0;
    s->prod_o.progress = on_prod_progress;
    s->prod_o.progress_ud = s;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int prc = pthread_create(&s->prod_tid, NULL, prod_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc) {
        char eb[64];
        return err_set(err, -prc, "cannot start the producers: %s", err_str(prc, eb, sizeof(eb)));
    }
    s->have_prod = true;
    return 0;
}

int stream_session_start(const struct stream_session_opts *o, stream_session_t **out, char *err)
{
    stream_session_t *s = calloc(1, sizeof(*s));
    int rc;

    *out = s;
    if (!s)
        return err_set(err, -ENOMEM, "out of memory");
    s->o = *o;
    s->prof = *o->profile;
    s->prof.warmup_us = 0;
    s->prof.duration_us = o->length_us;
    stream_stats_init(&s->prev);
    struct load_opts lo = {.url = o->url, .insecure = o->insecure};
    if (o->max_streams == 0)
        return err_set(err, -EINVAL, "a stream session needs at least one stream");
    if ((rc = streams__base_init(&s->b, &lo, &s->prof, o->max_streams, err)))
        return rc;
    s->t0_ns = stream_now_ns() + START_SLACK_NS;
    atomic_store_explicit(&s->b.su.load0_ns, s->t0_ns, memory_order_release);
    if (s->b.ps->producers && (rc = start_producers(s, err)))
        return rc;
    return 0;
}

int stream_session_resize(stream_session_t *s, unsigned n, int64_t ramp_us, char *err)
{
    struct stream_progress before, now;
    int64_t start = stream_now_ns();

    if (n > s->o.max_streams)
        return err_set(err, -EINVAL, "%u streams asked for, at most %u in this session", n,
                       s->o.max_streams);
    streams__progress(&s->b, &before);
    struct stream_ctl *c = &s->b.ctl;
    c->ramp_from = n > s->asked ? s->asked : n;
    c->ramp_to = n;
    c->ramp_start_ns = start;
    c->ramp_ns = ramp_us > 0 ? ramp_us * 1000 : 0;
    c->ramp_id++;
    stream_setup_control(&s->b.su, c);
    /* Every stream below n that is not open is opened (again): the new ones and any the server
     * dropped or refused before. */
    uint64_t want = n > before.open_now ? n - before.open_now : 0;
    int64_t limit = start + c->ramp_ns + (int64_t)s->b.su.timeout_s * 1000000000LL + WATCH_NS;
    if (limit < start + CLOSE_WAIT_NS)
        limit = start + CLOSE_WAIT_NS;
    s->asked = n;
    for (;;) {
        streams__progress(&s->b, &now);
        uint64_t done = now.opened + now.failed - before.opened - before.failed;
        if ((done >= want && now.open_now <= n) || stream_now_ns() > limit || stopped(s))
            break;
        sleep_ns(WATCH_NS);
    }
    return 0;
}

/* The first command due at or after t (ns from the session's time zero). */
static uint64_t first_due_from(const stream_session_t *s, int64_t t)
{
    const struct plan *pl = &s->b.plan;
    double rate = s->b.ps->rate;
    size_t hint = 0;
    double est = (double)t / 1e9 * rate - 0.5;
    uint64_t k = est > 0 ? (uint64_t)est : 0;
    while (k > 0 && plan_due_ns(pl, (double)(k - 1) + 0.5, &hint) >= t)
        k--;
    hint = 0;
    while (k < s->b.su.commands && plan_due_ns(pl, (double)k + 0.5, &hint) < t)
        k++;
    return k;
}

/* The window's figures from every thread, less the counters of the previous window. */
static int collect(stream_session_t *s, struct stream_window *out, char *err)
{
    struct stream_ctl *c = &s->b.ctl;
    struct stream_stats sum;
    int64_t limit = stream_now_ns() + COLLECT_NS;

    c->collect_id++;
    stream_setup_control(&s->b.su, c);
    stream_stats_init(&sum);
    for (unsigned i = 0; i < s->b.nthreads; i++) {
        const struct stream_stats *w;
        double cpu = 0;
        while (!(w = stream_thread_window(s->b.threads[i], c->collect_id, &cpu))) {
            struct stream_progress p;
            stream_thread_progress(s->b.threads[i], &p);
            if (p.done || stream_now_ns() > limit)
                return err_set(err, -EIO, "stream thread %u did not report its window", i + 1);
            sleep_ns(WATCH_NS / 10);
        }
        stream_stats_merge(&sum, w);
        out->r.tool_cpu_s += cpu;
        if (out->window_s > 0 && cpu / out->window_s > out->stream_cores)
            out->stream_cores = cpu / out->window_s;
    }
    out->r.s = sum;
    /* Opens, failures and drops are counted over the session: the window's are the growth. */
    struct stream_stats *w = &out->r.s;
    w->opened -= s->prev.opened;
    w->failed -= s->prev.failed;
    w->dropped -= s->prev.dropped;
    w->deflate -= s->prev.deflate;
    for (size_t i = 0; i < STREAM_CLOSE_COUNT; i++)
        w->by_close[i] -= s->prev.by_close[i];
    for (size_t i = 0; i < STREAM_FAIL_COUNT; i++)
        w->by_fail[i] -= s->prev.by_fail[i];
    s->prev = sum;
    return 0;
}

int stream_session_window(stream_session_t *s, int64_t warmup_us, int64_t window_us,
                          int64_t drain_us, struct stream_window *out, char *err)
{
    struct stream_ctl *c = &s->b.ctl;
    const struct profile_streams *ps = s->b.ps;
    bool matched = ps->producers && s->b.su.match;

    memset(out, 0, sizeof(*out));
    int64_t now = stream_now_ns();
    c->win_id++;
    c->measure_ns = now + (warmup_us * 1000 > WINDOW_LEAD_NS ? warmup_us * 1000 : WINDOW_LEAD_NS);
    c->end_ns = c->measure_ns + window_us * 1000;
    c->win_lo = c->win_hi = 0;
    if (matched) {
        c->win_lo = first_due_from(s, c->measure_ns - s->t0_ns);
        c->win_hi = first_due_from(s, c->end_ns - s->t0_ns);
    }
    stream_setup_control(&s->b.su, c);
    while (stream_now_ns() < c->end_ns + WATCH_NS && !stopped(s))
        sleep_ns(WATCH_NS);
    if (stopped(s))
        return err_set(err, -ECANCELED, "stopped");
    if (matched && ps->fanout_all) {
        atomic_store_explicit(&s->b.su.drain, c->win_id, memory_order_release);
        int64_t until = stream_now_ns() + drain_us * 1000;
        for (;;) {
            struct stream_progress p;
            streams__progress(&s->b, &p);
            if (p.pending == 0 || stream_now_ns() > until || stopped(s))
                break;
            sleep_ns(WATCH_NS);
        }
    }
    out->window_s = (double)window_us / 1e6;
    int rc = collect(s, out, err);
    if (rc)
        return rc;
    out->r.protocol = profile_stream_proto_name(ps->protocol);
    out->r.count = s->asked;
    out->r.threads = s->b.nthreads;
    out->r.fanout_all = ps->fanout_all;
    out->r.matched = matched;
    out->r.commands = c->win_hi - c->win_lo;
    out->r.mem_idle_per_stream = out->r.mem_active_per_stream = -1;
    out->open = stream_session_open(s);
    out->producer_requests = atomic_load_explicit(&s->prod_requests, memory_order_relaxed);
    out->producer_failed = atomic_load_explicit(&s->prod_failed, memory_order_relaxed);
    return 0;
}

uint64_t stream_session_open(stream_session_t *s)
{
    struct stream_progress p;
    streams__progress(&s->b, &p);
    return p.open_now;
}

void stream_session_free(stream_session_t *s)
{
    if (!s)
        return;
    s->prod_stop = 1;
    if (s->have_prod) {
        pthread_join(s->prod_tid, NULL);
        if (s->prod_rc == 0)
            load_result_free(&s->prod_res);
    }
    streams__base_free(&s->b);
    free(s);
}
