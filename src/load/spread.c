/* load_run_spread (spread.h): one load thread per target, each running its share with
 * load__run_one (load_one.c, below this file and load.c), the calling thread summing their
 * progress; then the shares merge into one result. */

#include "load/spread.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "load/cpus.h"
#include "load/load_int.h"
#include "load/merge.h"
#include "profile/url.h"

#define SPREAD_WATCH_NS (250 * 1000000LL) /* how often the caller sums the shares' progress */
/* How often it looks whether the shares are done: a run ends this close to its own end, not up
 * to SPREAD_WATCH_NS later (a sweep's scale-out runs a dozen loads per point). */
#define SPREAD_POLL_NS (5 * 1000000LL)

int load_share_apply(struct profile *p, unsigned k, unsigned n, uint64_t *seed, double *offset_s,
                     char *err)
{
    *offset_s = 0;
    if (n > 1) {
        if (p->nstages > 0) {
            /* A stage's users or rate is the target of a linear ramp: dividing it divides the
             * whole ramp, and the N ramps add up to the profile's. */
            for (size_t i = 0; i < p->nstages; i++) {
                if (p->stages[i].users > 0)
                    p->stages[i].users /= n;
                if (p->stages[i].rate > 0)
                    p->stages[i].rate /= n;
            }
        } else if (p->rate > 0) {
            p->rate /= n;
        } else {
            unsigned u = p->users / n + (k < p->users % n ? 1 : 0);
            if (u == 0)
                return err_set(err, -EINVAL, "share %u/%u of %u users holds no user", k, n,
                               p->users);
            p->users = u;
        }
    }
    /* N open-loop schedules of rate R/N, each started k/R later than the first, interleave into
     * the one schedule of rate R a single generator would send (no bursts of N at once). */
    double whole = p->nstages == 0 && p->rate > 0 ? p->rate * n : 0;
    if (whole > 0)
        *offset_s = (double)k / whole;
    /* The same request mix in every share would send the same request at the same moment N
     * times: each share draws its own. */
    *seed = (*seed ? *seed : 1) + (uint64_t)k * 0x9E3779B97F4A7C15ULL;
    return 0;
}

struct share {
    struct load_opts o;
    struct profile p; /* a shallow copy of the caller's but for stages (owned) */
    struct load_result res;
    int rc;
    char err[ERR_LEN];
    pthread_t tid;
    bool started;
    /* The latest progress of this share, written by its thread under the spread's lock. */
    pthread_mutex_t *lock;
    struct load_progress last;
    bool have_last;
    volatile int done;
};

static void on_share_progress(void *ud, const struct load_progress *pr)
{
    struct share *s = ud;
    pthread_mutex_lock(s->lock);
    s->last = *pr;
    s->have_last = true;
    pthread_mutex_unlock(s->lock);
}

static void *share_main(void *arg)
{
    struct share *s = arg;
    s->rc = load__run_one(&s->o, &s->res, s->err);
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static struct timespec add_seconds(struct timespec t, double s)
{
    long long ns = (long long)t.tv_nsec + (long long)(s * 1e9);
    t.tv_sec += (time_t)(ns / 1000000000LL);
    t.tv_nsec = (long)(ns % 1000000000LL);
    return t;
}

/* The shares' progress summed: requests, failures and rates add; the phase and its clock are
 * the first share's; p95 is the highest share's (the exact merge comes with the result). */
static void report_progress(const struct load_opts *o, struct share *sh, size_t n,
                            pthread_mutex_t *lock)
{
    struct load_progress sum;
    bool any = false;

    memset(&sum, 0, sizeof(sum));
    pthread_mutex_lock(lock);
    for (size_t i = 0; i < n; i++) {
        if (!sh[i].have_last)
            continue;
        if (!any) {
            sum.phase = sh[i].last.phase;
            sum.elapsed_s = sh[i].last.elapsed_s;
            sum.phase_s = sh[i].last.phase_s;
        }
        any = true;
        sum.requests += sh[i].last.requests;
        sum.failed += sh[i].last.failed;
        sum.rps += sh[i].last.rps;
        sum.streams_open += sh[i].last.streams_open;
        if (sh[i].last.p95_us > sum.p95_us)
            sum.p95_us = sh[i].last.p95_us;
    }
    pthread_mutex_unlock(lock);
    if (any)
        o->progress(o->progress_ud, &sum);
}

static int prepare(const struct load_opts *o, const char *const *urls, size_t n, struct share *sh,
                   pthread_mutex_t *lock, char *err)
{
    unsigned threads = o->threads ? o->threads : load_cpus_default();
    struct timespec t0;
    int rc;

    /* Every URL checked before any load starts: a bad one among good ones would otherwise
     * be found after the others had run their whole load. */
    for (size_t i = 0; i < n; i++) {
        struct url u;
        rc = url_parse(urls[i], &u, err);
        if (rc)
            return err_wrap(err, rc, "%s", urls[i]);
    }
    t0 = clock_mono_ts();
    for (size_t i = 0; i < n; i++) {
        struct share *s = &sh[i];
        double offset = 0;

        s->lock = lock;
        s->p = *o->profile;
        s->p.stages = NULL;
        if (o->profile->nstages) {
            s->p.stages = malloc(o->profile->nstages * sizeof(*s->p.stages));
            if (!s->p.stages)
                return err_set(err, -ENOMEM, "out of memory");
            memcpy(s->p.stages, o->profile->stages, o->profile->nstages * sizeof(*s->p.stages));
        }
        s->o = *o;
        s->o.url = urls[i];
        s->o.urls = NULL;
        s->o.nurls = 0;
        s->o.profile = &s->p;
        s->o.threads = threads / n ? threads / (unsigned)n : 1;
        if (o->max_connections)
            s->o.max_connections = o->max_connections / n ? o->max_connections / (unsigned)n : 1;
        s->o.progress = o->progress ? on_share_progress : NULL;
        s->o.progress_ud = s;
        rc = load_share_apply(&s->p, (unsigned)i, (unsigned)n, &s->o.seed, &offset, err);
        if (rc)
            return err_wrap(err, rc, "%s", urls[i]);
        /* One time zero for every share (offset for an interleaved open loop), so their
         * windows are one window. */
        s->o.start = add_seconds(o->start.tv_sec || o->start.tv_nsec ? o->start : t0, offset);
    }
    return 0;
}

/* Each target's total into out->by_url, then the shares merged into out (share 0 moved in). */
static int merge_shares(const struct load_opts *o, const char *const *urls, size_t n,
                        struct share *sh, struct load_result *out, char *err)
{
    struct load_stats *by_url = calloc(n, sizeof(*by_url));
    char **names = calloc(n, sizeof(*names));
    int rc = 0;

    for (size_t i = 0; by_url && names && i < n; i++) {
        by_url[i] = sh[i].res.total;
        if (!(names[i] = strdup(urls[i])))
            rc = -ENOMEM;
    }
    if (!by_url || !names || rc) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto fail;
    }
    *out = sh[0].res;
    memset(&sh[0].res, 0, sizeof(sh[0].res));
    for (size_t i = 1; i < n; i++) {
        /* The series too, point by point (load_result_merge renders the merged points). */
        rc = load_result_merge(out, &sh[i].res, &o->profile->thresholds, err);
        if (rc)
            goto fail;
    }
    out->nurls = n;
    out->urls = names;
    out->by_url = by_url;
    return 0;
fail:
    if (names)
        for (size_t i = 0; i < n; i++)
            free(names[i]);
    free(names);
    free(by_url);
    load_result_free(out);
    return rc;
}

int load_run_spread(const struct load_opts *o, const char *const *urls, size_t nurls,
                    struct load_result *out, char *err)
{
    struct share *sh = NULL;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    sigset_t all, old;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (nurls < 1 || nurls > LOAD_MAX_URLS)
        return err_set(err, -EINVAL, "a load is spread over 1 to %d URLs, not %zu", LOAD_MAX_URLS,
                       nurls);
    if (o->profile->streams && nurls > 1)
        return err_set(err, -EINVAL,
                       "a profile with streams: runs against one URL (its streams name their "
                       "own); give --url once");
    sh = calloc(nurls, sizeof(*sh));
    if (!sh)
        return err_set(err, -ENOMEM, "out of memory");
    rc = prepare(o, urls, nurls, sh, &lock, err);
    if (rc)
        goto out;
    /* The share threads take no signals: they reach the caller, whose handler sets o->stop,
     * which every share reads. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (size_t i = 0; i < nurls && !rc; i++) {
        int prc = pthread_create(&sh[i].tid, NULL, share_main, &sh[i]);
        if (prc)
            rc = err_set(err, -prc, "cannot start a load thread");
        sh[i].started = prc == 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    for (int64_t reported = clock_mono_ns();;) {
        bool running = false;
        for (size_t i = 0; i < nurls; i++)
            running = running || (sh[i].started && !__atomic_load_n(&sh[i].done, __ATOMIC_ACQUIRE));
        if (!running)
            break;
        if (o->progress && clock_mono_ns() - reported >= SPREAD_WATCH_NS) {
            report_progress(o, sh, nurls, &lock);
            reported = clock_mono_ns();
        }
        struct timespec ts = {0, SPREAD_POLL_NS};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < nurls; i++)
        if (sh[i].started)
            pthread_join(sh[i].tid, NULL);
    /* A share that could not run (a bad URL among good ones) fails the whole spread: the
     * merged figures would silently miss a target. */
    for (size_t i = 0; !rc && i < nurls; i++)
        if (sh[i].rc) {
            rc = sh[i].rc;
            err_set(err, rc, "%s: %s", urls[i], sh[i].err);
        }
    if (!rc)
        rc = merge_shares(o, urls, nurls, sh, out, err);
out:
    for (size_t i = 0; sh && i < nurls; i++) {
        load_result_free(&sh[i].res);
        free(sh[i].p.stages);
    }
    free(sh);
    return rc;
}
