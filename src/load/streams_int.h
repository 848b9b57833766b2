#ifndef SIZEUP_LOAD_STREAMS_INT_H
#define SIZEUP_LOAD_STREAMS_INT_H

/* Private to src/load: what a stream run (streams.c, one ramp and one window) and a stream
 * session (stream_session.c, ramps and windows on request) share: the streams' target and
 * producers, the stream threads, and their summed progress. */

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "load/load.h"
#include "load/plan.h"
#include "profile/profile_streams.h"
#include "load/stream_client.h"

struct streams__base {
    const struct profile_streams *ps; /* borrowed */
    struct stream_setup su;
    struct profile prod; /* the producers as a request load (borrows from the profile) */
    struct plan plan;    /* the producers' schedule, when have_plan */
    bool have_plan;
    bool have_su;
    uint64_t win_lo, win_hi; /* the commands of the plan's measured segment */
    struct stream_ctl ctl;   /* what the threads were last asked */
    unsigned nthreads;
    struct stream_thread **threads;
};

/* Resolves the streams' URL against o->url, builds the producers' plan from p (p->streams
 * set; its warm-up, duration and timeout), raises the descriptor limit for count streams, and
 * starts the stream threads for count streams (none open yet). On failure *b may be half
 * built: free it with streams__base_free either way. Borrows o and p while b lives. */
int streams__base_init(struct streams__base *b /* OUT */, const struct load_opts *o,
                       const struct profile *p, unsigned count, char *err);

/* Closes every stream, joins and frees the threads, frees the plan. Idempotent. */
void streams__base_free(struct streams__base *b);

/* The threads' progress, summed. */
void streams__progress(struct streams__base *b, struct stream_progress *sum /* OUT */);

#endif
