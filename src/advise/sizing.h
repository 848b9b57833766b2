#ifndef SIZEUP_ADVISE_SIZING_H
#define SIZEUP_ADVISE_SIZING_H

/* The sizing answer from a capacity sweep: how much load to plan on per pod, how many replicas
 * of each usable shape a target load takes and what they cost, which shape is the cheapest
 * total, the requests a pod of that shape wants, and an autoscaling/v2 HPA when CPU tracks
 * load. Pure computation on scalars and struct capacity_result, so it is tested without a sweep
 * and serves every front-end alike. Every sentence it writes is formatted from the numbers and
 * the constants below. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "advise/availability.h"
#include "advise/usl.h"
#include "core/err.h"
#include "profile/profile.h"
#include "sweep/capacity.h"
#include "sweep/stream_capacity.h"
#include "sweep/variant.h"

#define SIZING_TEXT_LEN 1536

/* "CPU grows with load": CPU at capacity is at least SIZING_CPU_GROWTH times the CPU at
 * 1/CAPACITY_CPU_GROWTH_LOAD of capacity. CPU spent per request makes it nearly proportional to
 * the load (4x here); an app whose CPU is mostly a fixed cost (a runtime's background work,
 * polling) uses about the same at any load, and a CPU HPA on it would not follow the load. 1.5x
 * leaves room for a modest idle cost. */
#define SIZING_CPU_GROWTH 1.5 /* at CAPACITY_CPU_GROWTH_LOAD (sweep/capacity.h) */
/* The rule needs CPU measured at no more than this share of capacity: closer to it, CPU growth
 * cannot be told from noise. When the lowest such measurement is above 1/CAPACITY_CPU_GROWTH_LOAD
 * of capacity, the required growth shrinks as a power law of the load ratio (1.5x for 4x the
 * load is load^0.29), so a search that never went that low is judged by the same yardstick. */
#define SIZING_CPU_GROWTH_MIN_SPAN 2.0

/* HPA target utilization is kept within these bounds (percent of requests.cpu). */
#define SIZING_HPA_MIN_UTIL 10
#define SIZING_HPA_MAX_UTIL 100

/* ---- the replica count from a measured scale-out (docs/sweep.md, "Scale-out") ---------- */

/* A count above this many times the largest one measured is never taken from the curve. */
#define SIZING_CURVE_MAX_FACTOR 2

/* One scale-out point as the sizing reads it: its capacity, that capacity's standard error and
 * its interval's lower bound. */
struct sizing_curve_point {
    unsigned replicas;
    double low;  /* >= 0: 0 when the interval reaches below 0 */
    bool usable; /* measured (or the shape search's), valid or noisy by its interval's width
                    (advise.c), not contended */
    double rps;  /* the capacity; 0: low is all that is known */
    double se;   /* its standard error: from its whole interval, never less than the
                    repeats' own (advise_scale_out); 0 when unknown */
    /* > 0: a measured figure of the app that did not hold its repeats (noisy with a narrow
     * interval: advise_scale_out_point_bound), left out of the fit; the capacity at this
     * count is at most this. 0: none. */
    double bound;
};

struct sizing_curve {
    /* The law fitted to the usable points' capacities (sizing_curve_fit): the one curve the
     * findings, results.json and the report describe. */
    struct usl_fit fit;
    /* The law fitted to the usable points' lower bounds: X_low between and beyond the counts
     * measured. Only the replica count reads it; what the words say of the curve (s, k, N*)
     * is fit's. */
    struct usl_fit low_fit;
    unsigned nmax; /* the largest count measured */
    unsigned cap;  /* min(floor(N*), SIZING_CURVE_MAX_FACTOR x nmax): where the curve ends */
    /* The smallest N <= cap with X_low(N) x planned >= target (X_low: the measured lower
     * bound where N was measured, else low_fit's curve); 0 when there is none. */
    unsigned replicas;
    bool reachable;       /* some N <= cap holds the target */
    bool beyond_measured; /* unreachable within cap, but only for want of measured counts: the
                             curve still rises at cap (no peak before it) */
    double most_rps;      /* the largest X_low(N), N <= cap ... */
    unsigned most_at;     /* ... and where */
    /* The lowest count whose bound lies below the fit there (a measurement the fit did not
     * take refutes it): the curve is then read no further than measured, and never above a
     * bound. 0: none. refuted_x is the bound, refuted_fit the fit's capacity there. */
    unsigned refuted_at;
    double refuted_x, refuted_fit;
    char why[SIZING_TEXT_LEN]; /* one sentence with the numbers */
};

/* The scale-out as the sizing reads it (sizing_opts.scale_out): step (3) of the answer's
 * order, measured by the runner before the sizing runs. */
struct sizing_scale_out {
    bool run;       /* a scale-out was measured */
    size_t variant; /* the row it measured (an index into the sizing's rows) */
    size_t n;       /* pts[0..n), one at 1 replica among them */
    struct sizing_curve_point pts[USL_MAX_POINTS];
    char skipped[SIZING_TEXT_LEN]; /* run false: why none was measured ("" when unknown) */
};

struct sizing_opts {
    double target_rps;   /* 0: none */
    double target_users; /* 0: none; converted with per_user_rps. At most one target is set. */
    /* Stream mode: each pod is planned from its stream capacity (open streams within the
     * delivery SLO) instead of its request capacity, and target_streams (0: none) is the one
     * target; the memory request then comes from the measured memory per stream. */
    bool streams;
    double target_streams;
    double per_user_rps; /* > 0 */
    struct profile_cost cost;
    struct profile_planning planning;
    /* Step (3): the scale-out measured; run false when there was none (the count stays the
     * linear one, and skipped says why). Copied. */
    struct sizing_scale_out scale_out;
    /* Step (5): zones and drain (availability.h); NULL or not given: none. The plan's extra
     * pods for the count after step (4) are added to it, and a count that then passes where
     * the curve ends makes the target unreachable. Borrowed. */
    const struct profile_availability *availability;
    /* The profile's autoscaling: (metric name, KEDA's server and query); NULL: the defaults.
     * Borrowed. */
    const struct profile_autoscaling *autoscaling;
    /* Step (2) by node packing (docs/sweep.md, "Packing"): with node types (nnodes > 0, the
     * profile's nodes: or the cluster's), each shape's requests are packed onto each type and
     * the cheapest (shape, node type) pair wins; cost is then unused. Borrowed. Capacity mode
     * only: a stream sweep keeps the cost weights. */
    const struct profile_node_type *nodes;
    size_t nnodes;
};

/* One variant as the sizing sees it. Borrowed. */
struct sizing_row {
    const struct variant *variant;
    const struct capacity_result *cap;
    const struct stream_capacity *scap; /* stream mode; may be NULL otherwise */
    bool usable;    /* the caller's row-level judgement: measured and not marked (contended ...) */
    double ready_s; /* the variant's time from apply to ready; < 0 (or 0) unknown */
};

struct sizing_variant {
    bool candidate; /* searched, valid, usable and planned_rps > 0: may be recommended */
    /* The capacity interval's lower bound (the mean without repeats); in stream mode the
     * stream capacity, and planned_rps (and rps_per_cost) count streams instead of req/s. */
    double capacity_low;
    double planned_rps;  /* capacity_low x (1 - buffer) / (1 + growth) */
    double pod_cost;     /* cores x cost.cpu + GiB x cost.memory_gib */
    unsigned replicas;   /* for the target; 0 without one */
    double total_cost;   /* replicas x pod_cost; 0 without a target */
    double rps_per_cost; /* planned_rps / pod_cost */
    /* By packing (sizing.by_packing): the requests the shape would get (requests' rule), its
     * cheapest node type (an index into sizing_opts.nodes; -1 when it fits none), pods per node
     * there and the nodes its replicas take (1 without a target); pod_cost is then the node's
     * price / pods per node and total_cost the nodes' price. */
    int64_t req_cpu_m, req_memory;
    int node;
    unsigned pods_per_node, nodes;
    bool fits_no_node;
};

/* The scale-up lag (autoscale.c): the HPA's sync period (the controller's 15 s default), and
 * the time its metric takes to show a load change: metrics-server's resolution for CPU (15 s by
 * default), the rate window of the request-rate query (1 minute in the default query). */
#define SIZING_HPA_SYNC_S        15.0
#define SIZING_HPA_CPU_WINDOW_S  15.0
#define SIZING_HPA_RATE_WINDOW_S 60.0

/* What the HPA scales on: CPU utilization when CPU tracks load, else the request rate per pod
 * (a Pods metric in hpa.yaml, or KEDA's prometheus trigger in keda.yaml). */
enum sizing_hpa_metric {
    SIZING_HPA_CPU = 0,
    SIZING_HPA_PODS,
};

struct sizing_hpa {
    /* An HPA is recommended: a target that some count holds, and room to scale above the
     * count (maxReplicas >= minReplicas + 1); on CPU or, when CPU does not track load, on the
     * request rate. */
    bool enabled;
    enum sizing_hpa_metric metric;                 /* with enabled */
    char metric_name[PROFILE_METRIC_NAME_MAX + 1]; /* SIZING_HPA_PODS: the Pods metric's name */
    double target_average_value; /* SIZING_HPA_PODS: planned req/s per pod, to 0.001 below */
    /* SIZING_HPA_PODS, keda.yaml's prometheus trigger: the server and the query; "" for the
     * query is PROFILE_AUTOSCALING_QUERY_DEFAULT with the Deployment's name. */
    char keda_server[PROFILE_KEDA_TEXT_MAX + 1];
    char keda_query[PROFILE_KEDA_TEXT_MAX + 1];
    /* The lag a new pod adds: the metric's window + SIZING_HPA_SYNC_S + the measured time to
     * ready; < 0 when the time to ready was not measured. */
    double lag_s;
    char lag_note[SIZING_TEXT_LEN];  /* the lag against planning.ramp; "" without an HPA */
    bool cpu_bound;                  /* CPU grows with load (SIZING_CPU_GROWTH rule) */
    unsigned min_replicas;           /* replicas for the target */
    unsigned max_replicas;           /* ceil(target x (1 + growth) / planned per pod) */
    unsigned target_cpu_utilization; /* percent of requests.cpu at the planned load */
    double cpu_at_planned;           /* cores at the planned load per pod; < 0 unknown */
    char note[SIZING_TEXT_LEN];      /* why there is or is not an HPA, from the numbers */
};

struct sizing {
    size_t n;
    struct sizing_variant rows[VARIANT_MAX];

    int recommended;            /* index into the rows, -1 when no row is a candidate */
    bool by_packing;            /* ranked by node packing (sizing_opts.nodes), not cost: */
    bool streams;               /* stream mode (sizing_opts.streams) */
    bool by_target;             /* a target was given: the cheapest total for it */
    double target_rps;          /* the target in req/s (users converted); 0 without one */
    double target_users;        /* as given; 0 when the target was in req/s */
    double target_streams;      /* stream mode: the target in open streams; 0 without one */
    double planned_fraction;    /* (1 - buffer) / (1 + growth) */
    double planned_rps_per_pod; /* of the recommended variant; 0 without one */
    /* For the target; 1 without one. From the scale-out's curve when one was measured for the
     * recommended variant (from_curve), else replicas_linear; 0 when the target is unreachable
     * (then nothing is written at the replicas or autoscaling paths, and no HPA). */
    unsigned replicas;
    unsigned replicas_linear; /* ceil(target / planned per pod) of the recommended; 1 without */
    bool from_curve;          /* replicas was read from the curve (replicas_from: "curve") */
    bool unreachable;         /* with by_target: no count of the shape holds the target */
    bool curve_read;          /* curve below is filled (from_curve, or it said unreachable) */
    /* The row the ranking would have recommended were its capacity not cut short
     * (CAPACITY_FLAG_REPEATS_CUT: fewer repeats than the profile asked, the budget ran out),
     * when it is not the recommendation: never recommended, and the findings say so. -1: none. */
    int cut_short;
    struct sizing_curve curve;
    /* One sentence on the replica count: the curve's (with its numbers), or why it is linear;
     * "" without a target. */
    char replicas_note[SIZING_TEXT_LEN];
    /* Why the count is linear (replicas_from "linear"): no scale-out, another variant measured,
     * the curve could not be fitted; "" when from_curve. */
    char curve_skipped[SIZING_TEXT_LEN];
    /* The curve makes the winner dearer than the runner-up's linear plan: the figures; or "". */
    char dearer[SIZING_TEXT_LEN];
    char why[SIZING_TEXT_LEN];
    char assumption[SIZING_TEXT_LEN]; /* what replicas assume: pods scale independently */

    /* The recommended variant's resources: requests from what it used at capacity. */
    int64_t limit_cpu_m, limit_memory;
    int64_t request_cpu_m, request_memory;
    bool cpu_request_measured, memory_request_measured;
    char requests_note[SIZING_TEXT_LEN];
    /* Stream mode: the streams each pod holds (its share of the target, or its planned count
     * without one), and the memory sentence: "4 pods x 5,000 streams x 41 KiB + 180 MiB base +
     * 25% = 480 MiB each". Empty when the memory per stream was not measured. */
    unsigned streams_per_pod;
    char memory_note[SIZING_TEXT_LEN];

    struct sizing_hpa hpa;
    /* Steps (5) and (6) with availability: the plan, the autoscaler's margin (figures;
     * availability_findings phrases them). */
    struct availability_step availability;
};

/* A pod's requests from what it used, within its limits. */
struct sizing_requests {
    int64_t cpu_m, memory;
    bool cpu_measured, memory_measured;
};

/* Requests for a pod whose limits are limit_cpu_m / limit_memory: cpu = cores x cpu_factor,
 * rounded up to ADVISOR_REQ_CPU_STEP_M within [step, limit]; memory = peak x (1 +
 * ADVISOR_HEADROOM), rounded up to a MiB, at most the limit. An unmeasured figure (< 0) gives
 * ADVISOR_REQ_*_FRACTION of its limit. */
void sizing_requests(double cores, double cpu_factor, int64_t peak_bytes, int64_t limit_cpu_m,
                     int64_t limit_memory, struct sizing_requests *out /* OUT */);

/* The stream capacity a pod is planned from: the most streams that passed, 0 when none did. */
double sizing_stream_capacity_low(const struct stream_capacity *scap);

/* Memory a pod holding `streams` streams needs: base + streams x per_stream, plus
 * ADVISOR_HEADROOM, rounded up to a MiB, at most limit (the limit it was measured under).
 * Returns < 0 when the line was not measured (per_stream or base < 0). */
int64_t sizing_stream_memory(unsigned streams, int64_t per_stream, int64_t base, int64_t limit);

/* Sizes rows[0..n) (n <= VARIANT_MAX), in sweep order. Borrows rows and o; fills *out entirely
 * (out->recommended is -1 when no row is a candidate, with the reason in out->why). Returns 0,
 * or -EINVAL for bad options (both targets, negative weights, buffer outside [0, 1), ...). */
SIZEUP_MUST_USE int sizing_run(const struct sizing_row *rows, size_t n, const struct sizing_opts *o,
                               struct sizing *out /* OUT */, char *err);

/* CPU cores the variant used at `rps`, interpolated linearly between the capacity search's
 * passing steps (offered rate against cpu_cores) and the capacity point; below the lowest step
 * proportional to the load, above the highest the highest. Returns < 0 when no CPU was measured.
 * *extrapolated (may be NULL) says whether rps was outside the measured steps. */
double sizing_cpu_at(const struct capacity_result *cap, double rps, bool *extrapolated /* OUT */);

/* The Universal Scalability Law fitted to pts[0..n)'s usable capacities, each weighted by its
 * standard error: the scale-out's one curve. Returns 0 or usl_fit's -EINVAL (too few usable
 * points) with the reason in err. */
int sizing_curve_fit(const struct sizing_curve_point *pts, size_t n, struct usl_fit *f /* OUT */,
                     char *err);

/* The replica count for target (> 0, in req/s) at planned_fraction (0 < f <= 1) from the
 * points pts[0..n) (one at 1 replica among them). Borrows pts; fills *out. Returns 0, or the
 * fit's -EINVAL (err says why: no usable point at 1 replica, or none above it). */
int sizing_curve_replicas(const struct sizing_curve_point *pts, size_t n, double target,
                          double planned_fraction, struct sizing_curve *out /* OUT */, char *err);

#endif
