#ifndef SIZEUP_LOAD_PROFILE_H
#define SIZEUP_LOAD_PROFILE_H

/* The load profile: one YAML file shared by every front-end (docs/profile.md).
 * Loading validates everything; an error names the file, the line and the field. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define PROFILE_MAX_BYTES      (1u << 20) /* a profile file larger than this is rejected */
#define PROFILE_MAX_REQUESTS   256
#define PROFILE_MAX_STAGES     256
#define PROFILE_MAX_USERS      1000000
#define PROFILE_MAX_RATE       10000000.0
#define PROFILE_MAX_RUN_US     (7LL * 24 * 3600 * 1000000) /* one week per duration field */
#define PROFILE_MAX_TIMEOUT_US (3600LL * 1000000)          /* the histogram's range */

/* struct profile's `given`: the load fields the YAML set itself (not left to the default). */
#define PROFILE_GIVEN_USERS (1u << 0)
#define PROFILE_GIVEN_RATE  (1u << 1)

struct profile_header {
    char *name;  /* owned */
    char *value; /* owned */
};

struct profile_request {
    char *name;                     /* owned; defaults to "METHOD path" */
    char *method;                   /* owned; default "GET" */
    char *path;                     /* owned; starts with '/', may carry a query string */
    struct profile_header *headers; /* owned array */
    size_t nheaders;
    char *body; /* owned, may be NULL */
    size_t body_len;
    unsigned weight; /* > 0, default 1 */
};

/* A stage targets either users (closed loop) or rate (open loop); the other field is -1. The
 * load ramps linearly from the previous stage's target (0 before the first) to this one. */
struct profile_stage {
    int64_t duration_us;
    double users;
    double rate;
};

struct profile_thresholds {
    int64_t healthy_p95_us;    /* HEALTHY: p95 below this ... */
    double healthy_errors;     /* ... and error rate below this (fraction) */
    int64_t overloaded_p95_us; /* OVERLOADED: p95 above this ... */
    double overloaded_errors;  /* ... or error rate above this; between: STRESSED */
};

struct profile {
    char *source;   /* owned: the file name, or "built-in default" */
    unsigned users; /* closed loop: concurrent virtual users; 0 when rate is set */
    double rate;    /* open loop: requests/s on a fixed schedule; 0 when users is set */
    int64_t duration_us;
    int64_t warmup_us;
    int64_t timeout_us;
    double per_user_rps; /* to estimate active users from throughput */
    double target_users; /* target: { users: N }; 0 when absent */
    double target_rps;   /* target: { rps: N }; 0 when absent */
    struct profile_thresholds thresholds;
    struct profile_stage *stages; /* owned array; when nstages > 0 it replaces users/rate */
    size_t nstages;
    struct profile_request *requests; /* owned array, at least one */
    size_t nrequests;
    unsigned given; /* PROFILE_GIVEN_* bits; 0 for the built-in default */
};

/* Fills p with the built-in default: GET /, 50 users, 20 s, 5 s warm-up, 5 s timeout,
 * per_user_rps 0.5, thresholds p95 100 ms / 1% and 500 ms / 1%. Returns 0 or -ENOMEM. */
int profile_init_default(struct profile *p /* OUT */);

/* Parses YAML from buf (len bytes); source names it in errors ("profile.yaml:12: ...").
 * Fields absent from the YAML keep the defaults above. On failure p is left empty (freed). */
int profile_load_buffer(const char *buf, size_t len, const char *source,
                        struct profile *p /* OUT */, char *err);

/* Reads and parses a file (at most PROFILE_MAX_BYTES). */
int profile_load_file(const char *path, struct profile *p /* OUT */, char *err);

/* Frees everything p owns and zeroes it. profile_free on a zeroed profile is a no-op. */
void profile_free(struct profile *p);

#endif
