/* streams_run: a stream load from start to end. The streams open over the ramp (stream threads,
 * stream_client.c); the producers' commands, and any request load beside them, then run through
 * load__requests_run with one shared time zero, so each stream thread knows from the producers'
 * plan alone when command k was due (plan_due_ns(k + 0.5), the engine's own schedule) without a
 * message between threads; after the window, the streams get a short drain for the frames still on
 * their way, then close with a close handshake. */

#include "load/streams.h"

#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <libwebsockets.h>

#include "load/engine.h"
#include "load/load_int.h"
#include "load/plan.h"
#include "profile/profile_streams.h"
#include "load/stream_client.h"
#include "load/streams_int.h"
#include "profile/url.h"

#define STREAMS_PER_THREAD 10000            /* one thread holds this many streams */
#define WATCH_NS           (10 * 1000000LL) /* how often the run looks at its threads */
#define START_SLACK_NS     (5 * 1000000LL)  /* time zero is this far ahead of its setting */
#define DRAIN_MAX_NS       (10000000000LL)  /* the drain waits at most the timeout, <= 10 s */
#define FD_SLACK           64

struct run {
    struct streams__base b; /* first: the shared helpers take it */
    const struct load_opts *o;
    const struct profile *p;
    const struct profile_streams *ps;
    int64_t mem_idle, mem_active; /* bytes per stream, -1: not measured */
    int64_t rss0;
};

/* Resident memory of the process in bytes (what an idle stream costs is its growth). */
static int64_t rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    return n == 2 ? (int64_t)resident * sysconf(_SC_PAGESIZE) : -1;
}

static bool stopped(const struct load_opts *o)
{
    return o->stop && *o->stop;
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    nanosleep(&ts, NULL);
}

static bool has_scheme(const char *s, const char *scheme)
{
    return strncasecmp(s, scheme, strlen(scheme)) == 0;
}

/* The stream's address, port, request path and Host from its URL (absolute, or a path against
 * the target), resolved once like the target's. */
static int setup_target(struct streams__base *b, const struct load_opts *o, char *err)
{
    struct stream_setup *su = &b->su;
    const char *u = b->ps->url;
    struct url tu, su_url;
    struct url_addr addr;
    char tmp[PROFILE_STREAM_URL_MAX + 8], joined[STREAM_PATH_MAX];
    const char *query = "";
    int rc;

    if ((rc = url_parse(o->url, &tu, err)))
        return rc;
    if (u[0] == '/') {
        su_url = tu;
        if (url_join_path(&tu, u, joined, sizeof(joined)) < 0)
            return err_set(err, -EINVAL, "streams.url: the path is too long");
    } else {
        bool ws = has_scheme(u, "ws://") || has_scheme(u, "wss://");
        snprintf(tmp, sizeof(tmp), "%s%s", ws ? "http" : "", ws ? u + 2 : u);
        char *q = strchr(tmp, '?');
        if (q) {
            query = u + (q - tmp) + (ws ? 2 : 0);
            *q = '\0';
        }
        if ((rc = url_parse(tmp, &su_url, err)))
            return err_wrap(err, rc, "streams.url");
        snprintf(joined, sizeof(joined), "%s%s", su_url.base_path[0] ? su_url.base_path : "/",
                 query);
    }
    snprintf(su->path, sizeof(su->path), "%s", joined);
    snprintf(su->host, sizeof(su->host), "%s", su_url.authority);
    snprintf(su->sni, sizeof(su->sni), "%s", su_url.host);
    su->tls = su_url.tls;
    su->port = su_url.port;
    su->insecure = o->insecure;
    if ((rc = url_resolve(&su_url, &addr, err)))
        return err_wrap(err, rc, "streams.url");
    rc = getnameinfo((const struct sockaddr *)&addr.ss, addr.len, su->address, sizeof(su->address),
                     NULL, 0, NI_NUMERICHOST);
    if (rc)
        return err_set(err, -EHOSTUNREACH, "streams.url: %s", gai_strerror(rc));
    return 0;
}

/* The producers as a request load of their own: one request (the command), open loop at the
 * producers' rate, the profile's warm-up, duration and timeout, no stages, no streams. */
static int setup_producers(struct streams__base *b, const struct profile *p, char *err)
{
    const struct profile_streams *ps = b->ps;
    struct stream_setup *su = &b->su;

    b->prod = *p;
    b->prod.streams = NULL;
    b->prod.stages = NULL;
    b->prod.nstages = 0;
    b->prod.users = 0;
    b->prod.rate = ps->rate;
    b->prod.requests = (struct profile_request *)&ps->request;
    b->prod.nrequests = 1;
    int rc = plan_build(&b->prod, &b->plan, err);
    if (rc)
        return err_wrap(err, rc, "producers");
    b->have_plan = true;
    su->plan = &b->plan;
    su->match = ps->match;
    su->match_len = ps->match ? strlen(ps->match) : 0;
    /* Command k is due when k + 0.5 commands are due (the engine's rule), so floor(x + 0.5)
     * commands are due by the time x are. */
    su->commands = (uint64_t)floor(b->plan.total_due + 0.5);
    double before = 0;
    for (size_t i = 0; i < b->plan.nsegs; i++)
        if (b->plan.segs[i].measured) {
            before = b->plan.segs[i].cum0;
            break;
        }
    b->win_lo = (uint64_t)floor(before + 0.5);
    b->win_hi = su->commands;
    return 0;
}

void streams__progress(struct streams__base *b, struct stream_progress *sum)
{
    memset(sum, 0, sizeof(*sum));
    sum->ready = sum->done = true;
    for (unsigned i = 0; i < b->nthreads; i++) {
        struct stream_progress p;
        stream_thread_progress(b->threads[i], &p);
        sum->opened += p.opened;
        sum->failed += p.failed;
        sum->dropped += p.dropped;
        sum->open_now += p.open_now;
        sum->frames += p.frames;
        sum->pending += p.pending;
        sum->ready = sum->ready && (p.ready || p.error);
        sum->done = sum->done && p.done;
        sum->error = sum->error || p.error;
    }
}

static int start_threads(struct streams__base *b, unsigned count, char *err)
{
    sigset_t all, old;
    int rc = 0;

    b->nthreads = (count + STREAMS_PER_THREAD - 1) / STREAMS_PER_THREAD;
    if (b->nthreads == 0)
        b->nthreads = 1;
    b->threads = calloc(b->nthreads, sizeof(*b->threads));
    if (!b->threads)
        return err_set(err, -ENOMEM, "out of memory");
    /* Stream threads take no signals (SIGINT reaches the caller; SIGPIPE stays blocked). */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (unsigned i = 0; i < b->nthreads && !rc; i++) {
        unsigned n = count / b->nthreads + (i < count % b->nthreads ? 1u : 0u);
        rc = stream_thread_start(&b->su, i, b->nthreads, n, &b->threads[i], err);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc)
        return rc;
    for (;;) {
        struct stream_progress sum;
        streams__progress(b, &sum);
        if (sum.error) {
            for (unsigned i = 0; i < b->nthreads; i++)
                if (*stream_thread_error(b->threads[i]))
                    return err_set(err, -EIO, "%s", stream_thread_error(b->threads[i]));
        }
        if (sum.ready)
            return 0;
        sleep_ns(WATCH_NS / 10);
    }
}

/* Opens the streams over the ramp; returns when every stream has opened or failed, when the
 * ramp and a handshake timeout have passed, or on a stop. */
static void ramp(struct run *r)
{
    int64_t start = stream_now_ns();
    int64_t ramp_ns = r->ps->ramp_us * 1000;
    int64_t limit = start + ramp_ns + (int64_t)r->b.su.timeout_s * 1000000000LL + WATCH_NS;
    r->rss0 = rss_bytes();
    r->b.ctl.ramp_start_ns = start;
    r->b.ctl.ramp_ns = ramp_ns;
    r->b.ctl.ramp_from = 0;
    r->b.ctl.ramp_to = r->ps->count;
    r->b.ctl.ramp_id = 1;
    stream_setup_control(&r->b.su, &r->b.ctl);
    for (;;) {
        struct stream_progress sum;
        streams__progress(&r->b, &sum);
        if (sum.opened + sum.failed >= r->ps->count || stream_now_ns() > limit || stopped(r->o))
            break;
        sleep_ns(WATCH_NS);
    }
}

static int64_t per_stream(int64_t rss0, int64_t rss, uint64_t open)
{
    if (rss0 < 0 || rss < 0 || open == 0)
        return -1;
    return rss > rss0 ? (rss - rss0) / (int64_t)open : 0;
}

/* A result with no request in it: the streams alone, or a run stopped during the ramp. */
static int empty_result(struct run *r, struct load_result *out, char *err)
{
    struct profile none = *r->p;
    none.streams = NULL;
    none.nrequests = 0;
    none.nstages = 0;
    int rc = load_result_init(out, &none);
    return rc ? err_set(err, rc, "out of memory") : 0;
}

/* The caller's progress callback, seen through the streams: each snapshot also says how many
 * streams are open. */
struct progress_wrap {
    struct run *r;
    load_progress_fn fn;
    void *ud;
};

static void on_progress(void *ud, const struct load_progress *p)
{
    struct progress_wrap *w = ud;
    struct load_progress q = *p;
    struct stream_progress sum;
    streams__progress(&w->r->b, &sum);
    q.streams_open = sum.open_now;
    w->fn(w->ud, &q);
}

struct side_run {
    struct load_opts o;
    struct load_result res;
    int rc;
    char err[ERR_LEN];
};

static void *side_main(void *arg)
{
    struct side_run *s = arg;
    s->rc = load__requests_run(&s->o, &s->res, s->err);
    return NULL;
}

/* The request loads on one schedule from t0: the producers here, any request load beside the
 * streams on a second thread; without either, the window simply passes. Fills *out. */
static int run_load(struct run *r, struct timespec t0, struct load_result *out, char *err)
{
    const struct load_opts *o = r->o;
    struct side_run side;
    struct profile beside;
    struct progress_wrap wrap = {r, o->progress, o->progress_ud};
    pthread_t tid;
    bool have_side = false;
    int rc = 0;

    if (r->ps->load_given) {
        beside = *r->p;
        beside.streams = NULL;
        memset(&side, 0, sizeof(side));
        side.o = *o;
        side.o.profile = &beside;
        side.o.start = t0;
        if (r->ps->producers)
            side.o.progress = NULL; /* one progress line: the producers' */
        else if (o->progress) {
            side.o.progress = on_progress;
            side.o.progress_ud = &wrap;
        }
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        int prc = pthread_create(&tid, NULL, side_main, &side);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (prc) {
            char eb[64];
            return err_set(err, -prc, "cannot start the request load: %s",
                           err_str(prc, eb, sizeof(eb)));
        }
        have_side = true;
    }
    if (r->ps->producers) {
        struct load_opts po = *o;
        po.profile = &r->b.prod;
        po.max_connections = r->ps->producers;
        po.start = t0;
        if (o->progress) {
            po.progress = on_progress;
            po.progress_ud = &wrap;
        }
        rc = load__requests_run(&po, out, err);
    } else if (!have_side) {
        /* Streams only: hold them through the warm-up and the window. */
        if ((rc = empty_result(r, out, err)))
            return rc;
        int64_t t0_ns = (int64_t)t0.tv_sec * 1000000000LL + t0.tv_nsec;
        int64_t end = t0_ns + (r->p->warmup_us + r->p->duration_us) * 1000;
        while (stream_now_ns() < end && !stopped(o))
            sleep_ns(WATCH_NS);
        int64_t now = stream_now_ns(), ms = t0_ns + r->p->warmup_us * 1000;
        out->interrupted = now < end;
        out->duration_s = now > ms ? (double)((now < end ? now : end) - ms) / 1e9 : 0;
    }
    if (have_side) {
        pthread_join(tid, NULL);
        if (!side.rc && !r->ps->producers) {
            *out = side.res;
        } else if (!side.rc && !rc) {
            rc = load_result_append(out, &side.res);
            if (rc)
                err_set(err, rc, "out of memory");
        } else if (!side.rc) {
            load_result_free(&side.res);
        } else if (!rc) {
            if (r->ps->producers)
                load_result_free(out);
            rc = err_set(err, side.rc, "%s", side.err);
        }
    }
    return rc;
}

/* After the window: waits for the frames still due (fanout all: until every whole-window
 * stream has every window command's frame, or the timeout passes), then closes the streams. */
static void drain_and_close(struct run *r)
{
    atomic_store_explicit(&r->b.su.drain, r->b.ctl.win_id, memory_order_release);
    if (r->ps->producers && r->ps->fanout_all && r->b.su.match) {
        int64_t limit = r->p->timeout_us > 0 ? r->p->timeout_us * 1000 : DRAIN_MAX_NS;
        int64_t until = stream_now_ns() + (limit < DRAIN_MAX_NS ? limit : DRAIN_MAX_NS);
        for (;;) {
            struct stream_progress sum;
            streams__progress(&r->b, &sum);
            if (sum.pending == 0 || stream_now_ns() > until || stopped(r->o))
                break;
            sleep_ns(WATCH_NS);
        }
    }
    atomic_store_explicit(&r->b.su.quit, 1, memory_order_release);
    for (;;) {
        struct stream_progress sum;
        streams__progress(&r->b, &sum);
        if (sum.done)
            break;
        sleep_ns(WATCH_NS);
    }
}

static int finish(struct run *r, struct load_result *out, char *err)
{
    struct stream_result *sr = calloc(1, sizeof(*sr));
    if (!sr)
        return err_set(err, -ENOMEM, "out of memory");
    stream_stats_init(&sr->s);
    struct series_rec deliv;
    if (series_rec_init(&deliv, 0) != 0) {
        free(sr);
        return err_set(err, -ENOMEM, "out of memory");
    }
    for (unsigned i = 0; i < r->b.nthreads; i++) {
        double cpu = 0;
        const struct series_rec *ts = stream_thread_series(r->b.threads[i]);
        stream_stats_merge(&sr->s, stream_thread_stats(r->b.threads[i], &cpu));
        if (i == 0)
            series_rec_reset(&deliv, ts->origin_ns);
        series_rec_merge(&deliv, ts);
        sr->tool_cpu_s += cpu;
    }
    int rc = load_result_render_series(out, r->b.su.match ? &deliv : NULL);
    series_rec_free(&deliv);
    if (rc) {
        free(sr);
        return err_set(err, rc, "out of memory");
    }
    sr->protocol = profile_stream_proto_name(r->ps->protocol);
    sr->count = r->ps->count;
    sr->threads = r->b.nthreads;
    sr->fanout_all = r->ps->fanout_all;
    sr->matched = r->b.su.match != NULL;
    sr->commands = r->b.win_hi - r->b.win_lo;
    sr->mem_idle_per_stream = r->mem_idle;
    sr->mem_active_per_stream = r->mem_active;
    out->streams = sr;
    out->tool_cpu_s += sr->tool_cpu_s;
    enum verdict sv = stream_verdict(sr, &r->p->thresholds);
    if (!r->ps->producers && !r->ps->load_given)
        out->verdict = sv;
    else if (sv > out->verdict)
        out->verdict = sv;
    return 0;
}

int streams__base_init(struct streams__base *b, const struct load_opts *o, const struct profile *p,
                       unsigned count, char *err)
{
    const struct profile_streams *ps = p->streams;
    int rc;

    memset(b, 0, sizeof(*b));
    b->ps = ps;
    b->su.proto = ps->protocol;
    b->su.fanout_all = ps->fanout_all;
    b->su.subscribe = ps->subscribe;
    b->su.subscribe_len = ps->subscribe_len;
    b->su.timeout_s = p->timeout_us > 0 ? (unsigned)((p->timeout_us + 999999) / 1000000) : 30;
    if ((rc = stream_setup_init(&b->su, err)))
        return rc;
    b->have_su = true;
    if ((rc = setup_target(b, o, err)))
        return rc;
    if (ps->producers && (rc = setup_producers(b, p, err)))
        return rc;
    rlim_t need = (rlim_t)count + ps->producers + FD_SLACK;
    if (ps->load_given)
        need += o->max_connections ? o->max_connections : 10000;
    if ((rc = load__raise_nofile(need, err)))
        return rc;
    lws_set_log_level(0, NULL); /* failures are counted and classed, not logged per stream */
    return start_threads(b, count, err);
}

void streams__base_free(struct streams__base *b)
{
    if (b->threads) {
        atomic_store_explicit(&b->su.quit, 1, memory_order_release);
        for (unsigned i = 0; i < b->nthreads; i++)
            stream_thread_free(b->threads[i]);
        free(b->threads);
        b->threads = NULL;
    }
    if (b->have_plan)
        plan_free(&b->plan);
    b->have_plan = false;
    if (b->have_su)
        stream_setup_destroy(&b->su);
    b->have_su = false;
}

int streams_run(const struct load_opts *o, struct load_result *out, char *err)
{
    struct run r;
    int rc;
    bool have_out = false;

    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    r.o = o;
    r.p = o->profile;
    r.ps = o->profile->streams;
    r.mem_idle = r.mem_active = -1;
    if ((rc = streams__base_init(&r.b, o, r.p, r.ps->count, err)))
        goto out;
    ramp(&r);
    struct stream_progress sum;
    streams__progress(&r.b, &sum);
    r.mem_idle = per_stream(r.rss0, rss_bytes(), sum.open_now);

    int64_t t0_ns = stream_now_ns() + START_SLACK_NS;
    struct timespec t0 = {(time_t)(t0_ns / 1000000000LL), (long)(t0_ns % 1000000000LL)};
    atomic_store_explicit(&r.b.su.load0_ns, t0_ns, memory_order_release);
    /* The one window: the producers' measured segment, or the profile's without them. */
    const struct plan *pl = r.b.have_plan ? &r.b.plan : NULL;
    r.b.ctl.win_id = 1;
    r.b.ctl.measure_ns = t0_ns + (pl ? pl->measure_start_ns : r.p->warmup_us * 1000);
    r.b.ctl.end_ns = t0_ns + (pl ? pl->end_ns : (r.p->warmup_us + r.p->duration_us) * 1000);
    r.b.ctl.win_lo = r.b.win_lo;
    r.b.ctl.win_hi = r.b.win_hi;
    stream_setup_control(&r.b.su, &r.b.ctl);
    if (stopped(o) || sum.opened == 0) {
        /* Stopped, or no stream opened: commands would go nowhere; the failures say why. */
        if ((rc = empty_result(&r, out, err)))
            goto out;
        out->interrupted = stopped(o);
    } else if ((rc = run_load(&r, t0, out, err))) {
        goto out;
    }
    have_out = true;
    streams__progress(&r.b, &sum);
    r.mem_active = per_stream(r.rss0, rss_bytes(), sum.open_now);
    drain_and_close(&r);
    rc = finish(&r, out, err);
out:
    streams__base_free(&r.b);
    if (rc && have_out)
        load_result_free(out);
    return rc;
}
