#ifndef SIZEUP_SWEEP_STREAM_SEARCH_H
#define SIZEUP_SWEEP_STREAM_SEARCH_H

/* The stream-capacity search's decisions, without any load or clock: whether a measured step
 * held its streams within the SLO, what a failure missed, the memory line through the steps,
 * and what ended the search. The bracketing itself is the request search's (search.h), on the
 * stream count instead of a rate; runner_streams.c measures. Tested with synthetic steps in
 * tests/unit/test_stream_search.c. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "sweep/search.h"
#include "sweep/stream_capacity.h"

/* A step passes when every asked stream opened and stayed open, the delivery p95 is below
 * slo->delivery_p95_us, and (fanout all) the missing frames are below slo->errors of those
 * expected. Generator-limited when sizeup's busiest stream thread used at least
 * SWEEP_GEN_SATURATED_SHARE of a core. *why (may be NULL) gets what a failure missed. */
enum search_outcome stream_search_judge(const struct stream_cap_step *st,
                                        const struct profile_slo *slo,
                                        enum stream_limit *why /* OUT */);

/* The request search's name for what a stream step missed (it keeps one per bracket side). */
enum capacity_limit stream_search_as_capacity(enum stream_limit l);

/* The least-squares line memory = base + slope x open through the steps marked memory_point
 * with a known memory. Needs two points with different stream counts; returns false
 * otherwise (*slope and *base untouched). */
bool stream_memory_fit(const struct stream_cap_step *steps, size_t n, double *slope /* OUT */,
                       double *base /* OUT */, unsigned *points /* OUT */);

/* Fills cap's answer from its steps and the finished search s: streams (s->low), the figures
 * of its last passing step, limited_by (the failed step at s->high, or what ended s), the
 * memory line, flags and valid. */
void stream_capacity_finish(struct stream_capacity *cap, const struct search *s);

/* "delivery-p95", "dropped", "missing", "memory", "died", "generator", "budget",
 * "max-streams", "none". */
const char *stream_limit_name(enum stream_limit l);

#endif
