#ifndef SIZEUP_CLI_LOADTEST_WORKER_H
#define SIZEUP_CLI_LOADTEST_WORKER_H

/* The worker mode of `sizeup loadtest`: one of N generator pods of an Indexed Job, each sending
 * its share of one load to the same target from one shared start, then serving its run result
 * (with its encoded histograms) once on a port of its own pod for the operator to merge.
 *
 *     sizeup loadtest --url URL --profile-env SIZEUP_PROFILE --share $(JOB_COMPLETION_INDEX)/3
 *                     --start-at 1764559200.5 --serve-result :9090
 *
 * Flags (each optional; --share and --serve-result make a worker):
 *   --share K/N          send share K (0-based) of N: users split as evenly as whole users go,
 *                        a rate or each stage divided by N; the request-mix seed differs by K
 *   --start-at T         wall-clock start, Unix seconds (fractions allowed); an open-loop share
 *                        starts K/rate later so the N schedules interleave into the whole one
 *   --serve-result ADDR  after the run, serve GET /result on ADDR ([HOST]:PORT) until fetched
 *                        once, at most LT_WORKER_SERVE_MAX_S; then exit 0
 *   --profile-env NAME   read the profile (YAML or JSON) from environment variable NAME */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/cli.h"
#include "core/err.h"
#include "load/load.h"
#include "profile/profile.h"
#include "load/result.h"

#define LT_WORKER_MAX_SHARES  1000
#define LT_WORKER_SERVE_MAX_S 300 /* a result nobody fetched by then is given up */
#define LT_WORKER_RESULT_PATH "/result"

struct lt_worker {
    bool share_set;
    unsigned k, n; /* share k of n */
    bool start_set;
    double start_at;         /* Unix seconds */
    const char *serve;       /* borrowed from argv; NULL: print the report as usual */
    const char *profile_env; /* borrowed from argv */
    double offset_s;         /* this share's start after start_at (open loop) */
    double started_at;       /* Unix seconds when the load began */
    double late_s;           /* how much later than planned it began */
};

/* The flag handler of the worker rows: dst is the struct lt_worker, f->name says which field.
 * Returns 0 or -EINVAL with err naming the flag and the bad value. Borrows val. */
int lt_worker_set(const struct cli_flag *f, const char *val, void *dst, char *err);

/* The worker's rows of a command's flag table, writing into member (a struct lt_worker). */
#define LT_WORKER_FLAGS(type, member)                                                              \
    {"share",                                                                                      \
     "K/N",                                                                                        \
     NULL,                                                                                         \
     "as one of N generator pods: send share K (0-based) of the load",                             \
     lt_worker_set,                                                                                \
     offsetof(type, member),                                                                       \
     0,                                                                                            \
     0},                                                                                           \
        {"start-at",                                                                               \
         "T",                                                                                      \
         NULL,                                                                                     \
         "start at wall-clock time T (Unix seconds)",                                              \
         lt_worker_set,                                                                            \
         offsetof(type, member),                                                                   \
         0,                                                                                        \
         0},                                                                                       \
        {"serve-result",                                                                           \
         "ADDR",                                                                                   \
         NULL,                                                                                     \
         "serve the result once at http://ADDR/result ([HOST]:PORT), then exit 0",                 \
         lt_worker_set,                                                                            \
         offsetof(type, member),                                                                   \
         0,                                                                                        \
         0},                                                                                       \
    {                                                                                              \
        "profile-env", "NAME", NULL, "read the profile from environment variable NAME",            \
            lt_worker_set, offsetof(type, member), 0, 0                                            \
    }

/* Loads the profile from w->profile_env into *p (replacing nothing: *p must be empty). Returns
 * 0, -ENOENT when the variable is unset, or the profile parser's error. */
int lt_worker_profile(const struct lt_worker *w, struct profile *p /* OUT */, char *err);

/* Shapes p and o for share k of n (users, rate, stages, seed) and sets w->offset_s. Returns 0,
 * or -EINVAL when the share holds no load at all (fewer users than shares). */
int lt_worker_apply(struct lt_worker *w, struct profile *p, struct load_opts *o, char *err);

/* Sleeps until the shared start (plus this share's offset), polling *stop every 50 ms, and
 * records when the load began. Returns 0, -ECANCELED, or -EINVAL for a start more than an hour
 * away. A start already past is not an error: how late it began is reported in the result. */
int lt_worker_wait_start(struct lt_worker *w, volatile sig_atomic_t *stop, char *err);

/* Serves r once on w->serve as the JSON document
 *     {"worker": K, "workers": N, "start_at": T, "started_at": S, "late_s": L, "result": {...}}
 * (result as report_json writes it). Returns 0 once a client received it whole; -ETIMEDOUT
 * after LT_WORKER_SERVE_MAX_S; -ECANCELED; or a socket error (err says which). Borrows r. */
int lt_worker_serve(const struct lt_worker *w, const struct load_result *r,
                    volatile sig_atomic_t *stop, char *err);

#endif
