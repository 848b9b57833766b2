#ifndef SIZEUP_PROFILE_PROFILE_H
#define SIZEUP_PROFILE_PROFILE_H

/* The load profile: one YAML file shared by every front-end (docs/profile.md).
 * Loading validates everything; an error names the file, the line and the field. */

#include <stdbool.h>
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
#define PROFILE_MAX_GENERATORS 100 /* generators: load-generator pods of one operator sweep */

/* struct profile's `given`: the load fields the YAML set itself (not left to the default). */
#define PROFILE_GIVEN_USERS (1u << 0)
#define PROFILE_GIVEN_RATE  (1u << 1)
/* search: at most this many repeats at the capacity and search steps per variant (the sweep keeps
 * every step of a variant: the probe, the steps and twice the repeats, see sweep/capacity.h). */
#define PROFILE_MAX_REPEATS      10
#define PROFILE_MAX_SEARCH_STEPS 16

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

/* How a sweep loads each variant: a capacity search (the default) or one fixed load. */
enum profile_search_mode { PROFILE_SEARCH_CAPACITY = 0, PROFILE_SEARCH_FIXED };

/* search: { mode, warmup, window, precision, repeats, max_steps, max_rps, budget, settle } */
struct profile_search {
    enum profile_search_mode mode;
    int64_t warmup_us;  /* per step, load applied and not measured; default 2 s */
    int64_t window_us;  /* per step, the measured window; default 5 s */
    double precision;   /* stop bisecting when (high - low) / low is below this; default 0.05 */
    unsigned repeats;   /* measurements at the found capacity for its interval; default 3 */
    unsigned max_steps; /* search steps per variant (not counting probe and repeats); default 8 */
    double max_rps;     /* never offer more than this; 0: no ceiling */
    int64_t budget_us;  /* the whole sweep's deadline; default 20 min */
    /* After a step that failed, the most the app is given to serve load again (the runner's
     * settle) before the next step; default PROFILE_SETTLE_DEFAULT_US. */
    int64_t settle_us;
};
#define PROFILE_SETTLE_DEFAULT_US (10LL * 1000000)

/* slo: { p95, p99, errors, delivery_p95 }: what "sustained" means in the capacity search.
 * Defaults to the HEALTHY thresholds (p95 and errors; delivery_p95 the HEALTHY p95); p99_us 0
 * means no p99 objective. */
struct profile_slo {
    int64_t p95_us;
    int64_t p99_us;
    double errors;           /* fraction */
    int64_t delivery_p95_us; /* streams: the delivery p95 objective (default the HEALTHY p95) */
};

/* cost: { cpu, memory_gib }: relative price of one core and one GiB, for the cheapest shape x
 * replicas. Defaults 1 and 0.13 (common on-demand cloud prices per vCPU-hour and GiB-hour). */
struct profile_cost {
    double cpu;
    double memory_gib;
};

/* planning: { buffer, growth }: planned load per pod = capacity interval's lower bound x
 * (1 - buffer) / (1 + growth). Defaults 0.10 and 0.30. */
struct profile_planning {
    double buffer;
    double growth;
    /* planning.ramp: the expected load growth per minute (0.2 = 20%/min), read against the
     * autoscaler's scale-up lag; meaningful when ramp_given. */
    double ramp;
    bool ramp_given;
};

/* scale_out: how many replicas of one variant a sweep measures after the shape search
 * (docs/profile.md). `max: N` or `replicas: [1, 2, 4]` (one, not both) and `variant: SPEC`. */
#define PROFILE_MAX_SCALE_OUT          16 /* the most replicas a scale-out measures */
#define PROFILE_SCALE_OUT_MAX_MEASURED 6  /* max: N measures every count up to this, ... */
#define PROFILE_SCALE_OUT_DENSE        4  /* ... and beyond it 1..this, then doubling, and N */
#define PROFILE_SCALE_OUT_SPEC_LEN     64 /* a variant spec "2@1.5/768Mi" is far shorter */
struct profile_scale_out {
    bool given; /* set by the profile (or a flag): off stays off, not the sweep's default */
    /* The replica counts to measure, sorted and unique, 1 .. PROFILE_MAX_SCALE_OUT; counts[0]
     * is 1 (the shape search's own point) whenever ncounts > 0. ncounts <= 1: off. */
    unsigned counts[PROFILE_MAX_SCALE_OUT];
    size_t ncounts;
    char variant[PROFILE_SCALE_OUT_SPEC_LEN]; /* the variant to scale; "": the recommendation */
};

/* Fills so's counts from `max: N` (N <= PROFILE_MAX_SCALE_OUT; 0 and 1 mean off): every count
 * 1..N up to PROFILE_SCALE_OUT_MAX_MEASURED, beyond it 1..PROFILE_SCALE_OUT_DENSE then doubling,
 * and N itself (10: 1 2 3 4 8 10). Sets given. Returns 0, or -EINVAL when N is too large. */
int profile_scale_out_set_max(struct profile_scale_out *so, unsigned max, char *err);

/* availability: { zones, drain }: the pods a zone outage or a node drain takes away, planned
 * for on top of the target's replicas (docs/profile.md). Absent (given false): no change. */
#define PROFILE_MAX_ZONES 64 /* far more zones than any region has */
#define PROFILE_MAX_DRAIN 1000
struct profile_availability {
    bool given;
    unsigned zones; /* 1..PROFILE_MAX_ZONES; default 1 (no zone spread) */
    unsigned drain; /* pods a drain may take down at once, 0..PROFILE_MAX_DRAIN; default 1 */
};

/* autoscaling: { metric, keda: { server_address, query } }: how the request-rate autoscaler
 * the sizing writes for an app whose CPU does not track load names its metric (hpa.yaml's Pods
 * metric) and where KEDA reads it (keda.yaml's prometheus trigger). Unrelated to the
 * `autoscaling=` values path (docs/profile.md). Absent: given false and the defaults below. */
#define PROFILE_AUTOSCALING_METRIC_DEFAULT "http_requests_per_second"
#define PROFILE_AUTOSCALING_SERVER_DEFAULT "http://prometheus-server.monitoring.svc:9090"
/* The query's default, with the Deployment's name at %s (output_keda.c fills it). */
#define PROFILE_AUTOSCALING_QUERY_DEFAULT "sum(rate(http_requests_total{deployment=\"%s\"}[1m]))"
#define PROFILE_METRIC_NAME_MAX           253 /* a Kubernetes metric name fits a DNS subdomain */
#define PROFILE_KEDA_TEXT_MAX             1024
struct profile_autoscaling {
    bool given;
    char metric[PROFILE_METRIC_NAME_MAX + 1];       /* default PROFILE_AUTOSCALING_METRIC_DEFAULT */
    char server_address[PROFILE_KEDA_TEXT_MAX + 1]; /* "": PROFILE_AUTOSCALING_SERVER_DEFAULT */
    char query[PROFILE_KEDA_TEXT_MAX + 1];          /* "": PROFILE_AUTOSCALING_QUERY_DEFAULT */
};

/* nodes: [{ name, cpu, memory, price, reserved: { cpu, memory } }]: the node types the app's
 * pods may run on, for the cost by packing (docs/profile.md). With nodes, cost: is not used. */
#define PROFILE_MAX_NODE_TYPES 16
#define PROFILE_NODE_NAME_LEN  64
#define PROFILE_MAX_NODE_CPU_M (1024LL * 1000) /* 1024 cores */
#define PROFILE_MAX_NODE_MEM   (64LL << 40)    /* 64 TiB */
#define PROFILE_MAX_NODE_PRICE 1e6
struct profile_node_type {
    char name[PROFILE_NODE_NAME_LEN];        /* an instance type such as m5.xlarge */
    int64_t cpu_m, memory;                   /* capacity, > 0 */
    double price;                            /* per node-hour, any currency, >= 0 */
    int64_t reserved_cpu_m, reserved_memory; /* system reserve and DaemonSets; below capacity */
    /* In a cluster (kube/nodes.h): read from the cluster's nodes (the entry of the same name
     * only priced it), or a profile entry naming no type the cluster has. Both false locally. */
    bool from_cluster, not_in_cluster;
};

struct profile_streams; /* profile/profile_streams.h */

struct profile {
    char *source;   /* owned: the file name, or "built-in default" */
    unsigned users; /* closed loop: concurrent virtual users; 0 when rate is set */
    double rate;    /* open loop: requests/s on a fixed schedule; 0 when users is set */
    int64_t duration_us;
    int64_t warmup_us;
    int64_t timeout_us;
    double per_user_rps;   /* to estimate active users from throughput */
    double target_users;   /* target: { users: N }; 0 when absent */
    double target_rps;     /* target: { rps: N }; 0 when absent */
    double target_streams; /* target: { streams: N }; 0 when absent */
    struct profile_thresholds thresholds;
    struct profile_search search;
    struct profile_slo slo;
    struct profile_cost cost;
    struct profile_planning planning;
    struct profile_stage *stages; /* owned array; when nstages > 0 it replaces users/rate */
    size_t nstages;
    struct profile_request *requests; /* owned array, at least one */
    size_t nrequests;
    unsigned given;      /* PROFILE_GIVEN_* bits; 0 for the built-in default */
    unsigned generators; /* generators: N (1-PROFILE_MAX_GENERATORS) for the operator; 0 absent */
    struct profile_streams *streams; /* owned: streams: and producers:, NULL when absent */
    struct profile_scale_out scale_out;
    struct profile_availability availability;
    struct profile_autoscaling autoscaling;
    struct profile_node_type nodes[PROFILE_MAX_NODE_TYPES];
    size_t nnodes; /* 0: nodes: absent, the cost: weights price a pod */
};

/* Fills p with the built-in default: GET /, 50 users, 20 s, 5 s warm-up, 5 s timeout,
 * per_user_rps 0.5, thresholds p95 100 ms / 1% and 500 ms / 1%. Returns 0 or -ENOMEM. */
SIZEUP_MUST_USE int profile_init_default(struct profile *p /* OUT */);

/* Parses YAML from buf (len bytes); source names it in errors ("profile.yaml:12: ...").
 * Fields absent from the YAML keep the defaults above. On failure p is left empty (freed). */
SIZEUP_MUST_USE int profile_load_buffer(const char *buf, size_t len, const char *source,
                                        struct profile *p /* OUT */, char *err);

/* Reads and parses a file (at most PROFILE_MAX_BYTES). */
SIZEUP_MUST_USE int profile_load_file(const char *path, struct profile *p /* OUT */, char *err);

/* The note a run in this process gives for a profile field it ignores (generators: N is the
 * operator's: an Indexed Job of N pods), formatted into buf; NULL when there is none. front is
 * "sweep" or "loadtest". Returns buf or NULL. */
const char *profile_local_note(const struct profile *p, const char *front, char *buf, size_t len);

/* Frees everything p owns and zeroes it. profile_free on a zeroed profile is a no-op. */
void profile_free(struct profile *p);

#endif
