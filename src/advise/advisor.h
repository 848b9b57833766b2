#ifndef SIZEUP_ADVISE_ADVISOR_H
#define SIZEUP_ADVISE_ADVISOR_H

/* The advisor: from one figure set per variant to the sizing document: verdicts, estimated
 * active users, the recommended variant (`*`), values for the chart, the fitted auto-sizing rule
 * with each constant's derivation, and findings as plain sentences. Pure computation on scalars,
 * so the same code serves the local sweep, the operator and the reference-sweep fixture test. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "profile/profile.h"
#include "load/result.h"
#include "sweep/capacity.h"
#include "sweep/platform.h"
#include "sweep/runner.h" /* SWEEP_FLAG_* */
#include "advise/rule.h"
#include "advise/availability.h"
#include "advise/sizing.h"
#include "sweep/stream_capacity.h"
#include "sweep/variant.h"

#define ADVISOR_MAX_FINDINGS 32
/* A recovery from an overload at least this long (s before the app served within the SLO
 * again, capacity.h) is a finding: two settle cycles or more. */
#define RECOVERY_NOTABLE_S (2 * (CAPACITY_SETTLE_WINDOW_S + CAPACITY_SETTLE_REST_S))
/* One finding or derivation. Six CPU levels with an odd row fit; a longer finding is cut and
 * ends in "..." (a sweep of dozens of CPU levels lists each of them). */
#define ADVISOR_TEXT_LEN 1536

/* Every number a finding or a derivation compares against is one of these constants, and every
 * sentence that names such a number formats it from the constant: change one here and the words
 * change with it. */

/* Where the defaults come from (the rule used when the data cannot decide a constant, the verdict
 * thresholds, the default variants): a published load test of a small web app, six variants from
 * 0.5 to 4 cores at 50 users. */
#define ADVISOR_DEFAULTS_SOURCE "a published load test of a small web app"

/* Relative throughput difference this advisor treats as noise when a sweep ran each variant
 * once: closed-loop runs of 20 s on a shared host repeat within a few percent. Workers beyond the
 * cores "made no measurable difference", memory "made no measurable difference" and more CPU
 * "made no measurable difference" within it; "worse" and "better" are beyond it. */
#define ADVISOR_NOISE 0.05
/* Headroom on measured usage (requests, memory per worker). */
#define ADVISOR_HEADROOM 0.25
/* Requests when usage was not measured: these fractions of the limits. */
#define ADVISOR_REQ_CPU_FRACTION 0.20
#define ADVISOR_REQ_MEM_FRACTION 0.50
/* CPU requests are multiples of this many millicores (and never below it). */
#define ADVISOR_REQ_CPU_STEP_M 10
/* The fitted memory per worker is rounded up to a multiple of this many MiB. */
#define ADVISOR_MEM_STEP_MIB 16
/* A step of matched worker+core pairs "pays" when it adds at least this share of linear
 * scaling's gain (doubling pairs must add at least 25% throughput); below it, "does not pay". */
#define ADVISOR_PAYS_FRACTION 0.25
/* Scaling bands, on throughput per core at the larger CPU over that at the smallest ("share of
 * linear"): linear within [LOW, HIGH], sub-linear below, super-linear above. A throughput that
 * grew by no more than ADVISOR_NOISE did not scale at all. */
#define ADVISOR_LINEAR_LOW  0.85
#define ADVISOR_LINEAR_HIGH 1.15
/* "CPU dominates memory" needs a CPU-only step that multiplied throughput by at least 1 + this
 * (twice the noise, so the effect is clearly more than noise) while memory made no difference. */
#define ADVISOR_CPU_MATTERS (2 * ADVISOR_NOISE)
/* Without pairs that differ in memory, a peak below this share of every limit counts as memory
 * to spare ("made no difference"). */
#define ADVISOR_MEM_SPARE_SHARE 0.80

/* One variant's figures, as measured. */
struct advisor_row {
    struct variant variant;
    bool measured;           /* false: the variant FAILED (or was never run) */
    enum platform_fail fail; /* what kind of failure, when !measured; NONE when not known */
    char note[ERR_LEN];      /* why it FAILED, when !measured: for people, never parsed */
    double throughput_rps;
    uint64_t p50_us, p95_us, p99_us;
    double error_rate; /* 0..1 */
    uint64_t requests;
    double cpu_cores_used;      /* mean cores during the measured window; < 0 unknown */
    int64_t peak_memory_bytes;  /* < 0 unknown */
    double gen_cores;           /* load generator's mean cores; < 0 unknown */
    double host_other_cores;    /* everything else on the host (generator included); < 0 unknown */
    unsigned flags;             /* SWEEP_FLAG_* */
    struct capacity_result cap; /* capacity mode: what the search found (cap.searched false else) */
    struct stream_capacity scap; /* stream-capacity mode (scap.searched), instead of cap */
    char applied_by[16];         /* how the platform applied it ("rollout", "resize"), or "" */
    double ready_s;              /* apply -> ready, seconds; <= 0 unknown */
};

struct advisor_opts {
    struct profile_thresholds thresholds;
    double per_user_rps;     /* > 0 */
    double target_rps;       /* 0: no target; else the load the recommendation must hold */
    double target_users;     /* the target as given in users (target_rps = users x per-user rate) */
    double target_streams;   /* a stream-capacity sweep's target in open streams; 0: none */
    int64_t delivery_slo_us; /* streams: the delivery p95 objective */
    struct profile_slo slo;  /* capacity mode: what each step was judged against */
    struct profile_cost cost;         /* capacity mode: the price of a core and of a GiB */
    struct profile_planning planning; /* capacity mode: buffer and growth on each pod's capacity */
    /* Capacity mode: the node types the shapes are packed onto (sizing_opts.nodes); nnodes 0
     * prices a pod by cost:. Borrowed. */
    const struct profile_node_type *nodes;
    size_t nnodes;
    double host_cores;       /* for caveats; 0 unknown */
    const char *limits_note; /* why limits are not enforced, or NULL */
    /* Capacity mode: the scale-out measured after the shape search (sizing.h); run false
     * without one. advise_compose fills it from the sweep. */
    struct sizing_scale_out scale_out;
    /* Zones and drain (sizing_opts.availability): planned once, at step (5); NULL: none. */
    const struct profile_availability *availability;
    const struct profile_autoscaling *autoscaling; /* sizing_opts.autoscaling; NULL: defaults */
    unsigned repeats; /* the profile's search.repeats: what a capacity cut short fell short of */
};

struct advisor_row_out {
    enum verdict verdict; /* meaningful when the row was measured */
    double est_users;     /* throughput / per_user_rps */
    bool capacity;        /* measured, no SWEEP_FLAG_NOT_CAPACITY flag, a searched capacity valid */
};

struct rule_derivation {
    bool fallback;     /* the data could not decide: the default rule's constant */
    unsigned variants; /* how many variants the value was derived from */
    char text[ADVISOR_TEXT_LEN];
};

struct advice {
    size_t n;
    struct advisor_row_out rows[VARIANT_MAX];

    int recommended; /* index into the rows, or -1 when no row qualifies */
    bool by_target;  /* chosen as the cheapest that holds the profile's target */
    double target_rps;
    unsigned replicas; /* pods of the recommended size the target needs (1 without target) */
    char why[ADVISOR_TEXT_LEN];

    /* values.yaml */
    unsigned workers;
    int64_t limit_cpu_m, limit_memory;
    int64_t request_cpu_m, request_memory;
    bool cpu_request_measured, memory_request_measured;
    char requests_note[ADVISOR_TEXT_LEN];

    /* The sizing answer: in capacity mode what sizing_run decided (the recommendation above is
     * its); in fixed mode the target's replicas and no HPA. values.yaml's replica count and
     * autoscaling block and hpa.yaml come from here. */
    struct sizing sizing;

    /* Zones and disruption (availability.h): applied when the profile's availability: and a
     * target gave replicas beyond the target's; pdb.yaml is written from it. */
    struct availability_plan availability;

    /* auto-sizing.yaml */
    struct rule rule;
    struct rule_derivation cores_per_worker, memory_per_worker, max_workers;

    size_t nfindings;
    char findings[ADVISOR_MAX_FINDINGS][ADVISOR_TEXT_LEN];
    unsigned findings_cut; /* findings too long for ADVISOR_TEXT_LEN: the answer's error */
};

/* The verdict on scalars: HEALTHY when p95 < healthy and errors < healthy;
 * OVERLOADED when p95 > overloaded, errors > overloaded, or nothing completed; else STRESSED.
 * Matches verdict_classify in the load layer. */
enum verdict advisor_classify(const struct advisor_row *r, const struct profile_thresholds *t);

/* Runs the advisor over rows[0..n) (n <= VARIANT_MAX), in sweep order. Borrows rows and o;
 * fills *out entirely. Returns 0 or -EINVAL (bad options, too many rows). */
SIZEUP_MUST_USE int advisor_run(const struct advisor_row *rows, size_t n,
                                const struct advisor_opts *o, struct advice *out /* OUT */,
                                char *err);

#endif
