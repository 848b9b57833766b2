#ifndef SIZEUP_SWEEP_STREAM_CAPACITY_H
#define SIZEUP_SWEEP_STREAM_CAPACITY_H

/* What a stream-capacity search measured for one variant: the most streams it holds while the
 * delivery p95 stays within the SLO and no stream is dropped, the memory each stream costs on
 * the server (a least-squares line through the variant's memory at several stream counts),
 * what ended the search, and every step. Plain data, shared by the runner (which fills it),
 * the advisor and the outputs (results.json `stream_capacity`). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Steps kept per variant: the zero point and the search's steps. */
#define STREAM_CAP_MAX_STEPS 40

enum stream_limit {
    STREAM_LIMIT_NONE = 0,     /* not searched */
    STREAM_LIMIT_DELIVERY_P95, /* the first count above capacity missed the delivery objective */
    STREAM_LIMIT_DROPPED,      /* streams were dropped, or could not be opened */
    STREAM_LIMIT_MISSING,      /* frames went missing beyond the SLO's error share */
    STREAM_LIMIT_MEMORY,       /* the variant was OOM-killed holding the streams */
    STREAM_LIMIT_DIED,         /* the variant stopped running for another reason */
    STREAM_LIMIT_GENERATOR,    /* sizeup's stream threads, not the app, were saturated */
    STREAM_LIMIT_BUDGET,       /* the steps or the time ran out before a bracket */
    STREAM_LIMIT_MAX_STREAMS,  /* streams.count was reached within the SLO */
};

/* Marks on a stream capacity; any of them makes it invalid (shown, never sized from). */
#define STREAM_CAP_FLAG_GENERATOR   (1u << 0)
#define STREAM_CAP_FLAG_BUDGET      (1u << 1)
#define STREAM_CAP_FLAG_NONE_PASSED (1u << 2)

struct stream_cap_step {
    unsigned streams;  /* asked for (0: the zero point, before any stream) */
    uint64_t open;     /* open at the window's end */
    uint64_t opened;   /* opened by this step's ramp */
    uint64_t failed;   /* could not be opened */
    uint64_t dropped;  /* ended by the server or the network during the step */
    uint64_t frames;   /* received in the window and its drain */
    uint64_t missing;  /* fanout all: window commands a whole-window stream never got */
    uint64_t expected; /* fanout all: window commands x whole-window streams */
    uint64_t delivery_samples;
    uint64_t delivery_p50_us, delivery_p95_us, delivery_p99_us;
    double cpu_cores;     /* the variant's mean cores in the window; < 0 unknown */
    int64_t memory_bytes; /* the variant's memory at the window's end; < 0 unknown */
    double stream_cores;  /* the busiest stream thread of sizeup, in cores */
    bool pass;
    enum stream_limit why; /* what a failed step missed */
    bool memory_point;     /* used in the memory line (the open streams at a new high) */
};

struct stream_capacity {
    bool searched;
    unsigned streams;                /* the most streams that passed; 0: none did */
    int64_t memory_per_stream_bytes; /* the line's slope; < 0 unknown (fewer than two points) */
    int64_t base_memory_bytes;       /* the line at zero streams; < 0 unknown */
    unsigned memory_points;          /* points on the line */
    double delivery_p95_ms;          /* at `streams`; < 0 unknown */
    double cpu_cores;                /* the variant's cores at `streams`; < 0 unknown */
    int64_t memory_bytes;            /* the variant's memory at `streams`; < 0 unknown */
    enum stream_limit limited_by;
    bool valid;
    unsigned flags; /* STREAM_CAP_FLAG_* */
    size_t nsteps;
    struct stream_cap_step steps[STREAM_CAP_MAX_STEPS];
};

#endif
