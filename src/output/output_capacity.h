#ifndef SIZEUP_OUTPUT_OUTPUT_CAPACITY_H
#define SIZEUP_OUTPUT_OUTPUT_CAPACITY_H

/* results.json's per-variant `slo_capacity` and `stream_capacity`: what the capacity search or
 * the stream-capacity search found (docs/report.md). */

#include <cJSON.h>

#include "core/jb.h"
#include "sweep/capacity.h"
#include "sweep/stream_capacity.h"

/* Adds "slo_capacity" to the variant object v: an object when cap->searched, else null (fixed
 * mode, or a variant that never ran). Borrows both; on out of memory the key may be missing. */
void output_capacity_add(struct jb *b, cJSON *v, const struct capacity_result *cap);

/* Adds "stream_capacity" to v: an object when scap->searched (a profile with streams), else
 * null. Borrows both; on out of memory the key may be missing. */
void output_stream_capacity_add(struct jb *b, cJSON *v, const struct stream_capacity *scap);

/* "generator-limited", "noisy", "contended", "too few repeats", "budget", "none passed",
 * "unmeetable", "repeats cut short" for the flag bit f (one of CAPACITY_FLAG_*); NULL for an
 * unknown bit. */
const char *output_capacity_flag_name(unsigned f);

/* Adds "known" and "interval" to o as people are shown them (capacity_show): known false and
 * interval null when the repeats disagreed; else [low, high], the 95% interval never below 0
 * (both ends the figure itself with fewer than two repeats). Borrows both. */
void output_capacity_interval(struct jb *b, cJSON *o, const struct capacity_result *cap);

#endif
