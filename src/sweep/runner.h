#ifndef SIZEUP_SWEEP_RUNNER_H
#define SIZEUP_SWEEP_RUNNER_H

/* The sweep runner: rolls one platform through a list of variants and loads each one.
 *
 *     for each variant: apply -> wait_ready (timeout) -> load phases (warm-up, measure) with
 *                       usage_begin/usage_end around the measured one -> stop_variant -> next
 *
 * It knows nothing about which platform it drives (src/sweep/platform.h). A variant that
 * cannot be measured becomes a FAILED row with the reason and the sweep goes on. The stop flag
 * (SIGINT / SIGTERM) ends the sweep cleanly: the current load run ends early, the variant is
 * stopped, the platform restored, and the rows measured so far are kept. After every variant
 * the row_done callback runs (the CLI rewrites its output files there; the operator updates its
 * ConfigMap), so nothing measured is lost to a later failure.
 *
 * Two modes (profile search.mode). Fixed load: each variant runs a warm-up phase then one
 * measured phase at the profile's users / rate / stages. Capacity (runner_capacity.c): a short
 * closed-loop probe, then open-loop steps chosen by the search (src/sweep/search.h), each with
 * its own warm-up and measured window, then repeats at the found capacity for its interval; the
 * sweep has a deadline (search.budget) that each variant gets an equal share of. */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/err.h"
#include "profile/profile.h"
#include "load/result.h"
#include "sweep/capacity.h" /* SWEEP_GEN_SATURATED_SHARE, struct capacity_result */
#include "sweep/load_source.h"
#include "sweep/platform.h"
#include "sweep/stream_capacity.h"
#include "sweep/variant.h"

/* Marks on a row that keep it from being presented as the app's capacity: the runner sets them,
 * the advisor reads them (advisor_row.flags). */
#define SWEEP_FLAG_CPU_EXCEEDS_HOST (1u << 0) /* asked for more CPU than the host has */
#define SWEEP_FLAG_UNENFORCED       (1u << 1) /* limits not enforced (no writable cgroup) */
#define SWEEP_FLAG_CONTENDED        (1u << 2) /* app CPU limit + generator / other CPU > host */
#define SWEEP_FLAG_GEN_SATURATED    (1u << 3) /* the load generator was the bottleneck */
#define SWEEP_FLAG_INTERRUPTED      (1u << 4) /* measurement cut short (cancelled) */
/* Flags that keep a row from being presented as capacity: no estimated users, no
 * recommendation, no vote in the findings or in the rule's CPU and worker constants. Its figures
 * stay in the table, and its peak memory still counts toward memory_per_worker_mib: a peak is a
 * lower bound on what a worker needs whatever limited the throughput (contention, the generator,
 * a cut-short window), as an OOM kill is, and leaving it out could only size memory too small. */
#define SWEEP_FLAG_NOT_CAPACITY                                                                    \
    (SWEEP_FLAG_CPU_EXCEEDS_HOST | SWEEP_FLAG_UNENFORCED | SWEEP_FLAG_CONTENDED |                  \
     SWEEP_FLAG_GEN_SATURATED | SWEEP_FLAG_INTERRUPTED)

enum sweep_phase {
    SWEEP_PHASE_START = 0, /* apply */
    SWEEP_PHASE_READY,     /* wait_ready */
    SWEEP_PHASE_WARMUP,
    SWEEP_PHASE_MEASURE,
    SWEEP_PHASE_STOP,
    SWEEP_PHASE_DONE,
};

enum sweep_row_state {
    SWEEP_ROW_PENDING = 0, /* not reached (yet, or cancelled before) */
    SWEEP_ROW_MEASURED,
    SWEEP_ROW_FAILED,
};

struct sweep_row {
    struct variant variant;
    enum sweep_row_state state;
    struct platform_failure failure; /* when FAILED */
    unsigned flags;                  /* SWEEP_FLAG_* */
    bool have_load;
    struct load_result load; /* the measured phase; owned, freed by sweep_free */
    bool have_usage;
    struct platform_usage usage;
    double gen_cores;        /* load generator mean cores in the measured phase; < 0 unknown */
    double host_other_cores; /* everything but the variant on the host, cores; < 0 unknown */
    double ready_s;          /* apply -> ready */
    double wall_s;           /* apply -> stopped */
    double stop_s;           /* stop_variant: the app's shutdown and the clean-up */
    double overhead_s;       /* wall_s minus the load phases' planned length */
    char applied_by[16];     /* the platform's applied_by ("rollout", "resize"), or "" */
    /* Capacity mode: what the search found (cap.searched false in fixed mode). load and usage
     * above then hold the representative step: the last repeat at capacity, or the measured
     * step closest to it, so every fixed-mode figure keeps its meaning. */
    struct capacity_result cap;
    /* Capacity mode with streams in the profile: the stream search (scap.searched), instead of
     * the request search. */
    struct stream_capacity scap;
    /* Capacity mode: each measured step's series, in the order of cap.steps (report.html draws
     * them one after another); owned, freed by sweep_free. */
    struct load_series step_series[CAPACITY_MAX_STEPS];
};

/* A scale-out point: the variant's capacity at `replicas` replicas. */
enum sweep_point_from {
    SWEEP_POINT_MEASURED = 0,   /* searched at this count */
    SWEEP_POINT_SHAPE_SEARCH,   /* 1 replica: the variant's own row, not measured again */
    SWEEP_POINT_SKIPPED_BUDGET, /* not started: the time budget ran out */
    SWEEP_POINT_FAILED,         /* the replicas could not start, or the search could not run */
};

struct sweep_scale_point {
    unsigned replicas;
    enum sweep_point_from from;
    unsigned flags;             /* SWEEP_FLAG_*: CONTENDED when N x CPU limit + generator > host */
    struct capacity_result cap; /* all replicas together; cap.cpu_cores summed over them */
    char note[ERR_LEN];         /* why it failed or was skipped */
};

struct sweep_scale_out {
    bool run;       /* measured (some points may be skipped or failed) */
    size_t variant; /* index into rows, when run */
    size_t npoints; /* points[0] is the 1-replica point */
    struct sweep_scale_point points[PLATFORM_MAX_REPLICAS];
    char note[ERR_LEN]; /* why it did not run (off, no target, the host too small, ...) */
};

struct sweep {
    struct platform_facts facts;
    char platform[16];
    time_t started, finished;
    bool cancelled;
    char abort_reason[ERR_LEN]; /* set when the sweep stopped before its end for an error */
    size_t n;
    struct sweep_row *rows;            /* owned array of n, in sweep order */
    struct sweep_scale_out *scale_out; /* owned; NULL before the shape search ends */
};

/* A snapshot for a progress display. */
struct sweep_progress {
    size_t index, n; /* variant index (0-based) of n */
    const struct variant *variant;
    enum sweep_phase phase;
    double elapsed_s;       /* since this variant started */
    double phase_elapsed_s; /* in a load phase: since it began */
    double phase_s;         /* in a load phase: its planned length */
    double rps;             /* live, in load phases */
    uint64_t p95_us;        /* live, in load phases */
    uint64_t requests;      /* live: completed in the current load phase so far */
    uint64_t failed;        /* ... of which failed */
    uint64_t streams_open;  /* live: streams open now (a profile with streams) */
    /* Capacity mode (0 / NULL in fixed mode): the step of this variant (1 is the probe), what
     * it is ("probe", "search", "repeat") and the open-loop rate it offers (0 for the probe). */
    unsigned step;
    const char *step_what;
    double offered_rps;
    /* A stream-capacity search: the step is one (stream_step) holding step_streams streams
     * (0: the zero point, before any stream). */
    bool stream_step;
    unsigned step_streams;
    double eta_s; /* estimated time left in the whole sweep (never past its deadline) */
};

/* Called on the runner's thread, a few times a second in load phases and at each phase
 * change. Borrows p. */
typedef void (*sweep_progress_fn)(void *ud, const struct sweep_progress *p);

/* Called after each variant ends (measured or FAILED), with the whole sweep so far. Borrows s.
 * A non-zero return is logged and the sweep goes on: failing to write a file must not throw
 * away the next measurement. */
typedef int (*sweep_row_done_fn)(void *ud, const struct sweep *s, size_t index, char *err);

struct sweep_opts {
    struct platform *platform;           /* borrowed */
    const struct profile *profile;       /* borrowed */
    const struct variant_list *variants; /* borrowed */
    int64_t ready_timeout_us;            /* per variant; 0: 60 s */
    unsigned load_threads;               /* 0: the load engine's default */
    volatile sig_atomic_t *stop;         /* may be NULL */
    /* The one observer of a running sweep: the terminal line, the operator's status and the live
     * progress feed (sweep/progress_feed.h) are all fed from it by the caller. May be NULL. */
    sweep_progress_fn progress;
    void *progress_ud;
    sweep_row_done_fn row_done; /* may be NULL */
    void *row_done_ud;
    /* Real users share the target (a URL through a Service or ingress, or in-place mode): a
     * capacity search is refused unless the profile sets search.max_rps. */
    bool shared_target;
    const struct load_source *load_source; /* borrowed; NULL: load_run in this process */
    /* Borrowed, may be NULL: the source a capacity search switches to for the rest of a variant
     * once a step is generator-limited (several generator pods instead of one). */
    const struct load_source *load_source_more;
    /* The scale-out's variant when the profile names none: the recommendation, judged by the
     * caller (the advisor is above the sweep); returns its row index, or -1 for none, and its
     * linear replica count for the target in *linear (0 without a target), which bounds the
     * default scale-out. May be NULL: no scale-out without a named variant. */
    int (*scale_out_choice)(void *ud, const struct sweep *s, unsigned *linear /* OUT */);
    /* Where the search at n replicas starts, from the points so far (the curve fitted to
     * them); <= 0 or NULL: n x the 1-replica capacity. */
    double (*scale_out_predict)(void *ud, const struct sweep_scale_out *so, unsigned n);
    void *scale_out_ud;
    /* Called after each scale-out point ends (measured, failed or skipped) with the sweep so far
     * (s->scale_out holds the points); ud is row_done_ud. A non-zero return is logged, as for
     * row_done. May be NULL. */
    int (*scale_out_done)(void *ud, const struct sweep *s, char *err);
    /* The points an earlier run of the same sweep finished (borrowed, may be NULL; a restarted
     * operator reads them from its state): a count measured there is copied, not measured
     * again. */
    const struct sweep_scale_out *scale_out_prior;
};

/* Resumes only the scale-out of variant v (borrowed), whose shape search an earlier run did:
 * o->scale_out_prior (required) holds its points, points[0] v's capacity at 1 replica. Fills *s
 * with one row, v, MEASURED with that capacity (not measured again), and s->scale_out with the
 * prior points and the rest measured now. Returns as sweep_run does. Free *s with sweep_free. */
int sweep_run_scale_out(const struct sweep_opts *o, const struct variant *v,
                        struct sweep *s /* OUT */, char *err);

/* Runs the sweep and fills *s (always, even on failure: the rows measured so far). Returns 0
 * when every variant was attempted (some may be FAILED), -ECANCELED when the stop flag ended it
 * early, or another negative errno when the platform could not be prepared; err says which.
 * The platform is restored in every case. Free *s with sweep_free. */
int sweep_run(const struct sweep_opts *o, struct sweep *s /* OUT */, char *err);

/* Frees what s owns and zeroes it. NULL-safe, idempotent. */
void sweep_free(struct sweep *s);

/* "start", "ready", "warm-up", "measure", "stop", "done". */
const char *sweep_phase_name(enum sweep_phase p);

#endif
