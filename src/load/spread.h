#ifndef SIZEUP_LOAD_SPREAD_H
#define SIZEUP_LOAD_SPREAD_H

/* One load spread over several targets (the replicas of a scale-out, or `sizeup loadtest`
 * with --url repeated): target i of N gets share i of the load, as N generator pods would
 * send it (load_share_apply): an open loop's rate / N each, on schedules offset by 1 / rate so
 * that together they are the one schedule of the whole rate; a closed loop's users split as
 * evenly as whole users go. The shares run side by side in this process and merge exactly
 * (load/merge.h); the result keeps each target's own total in by_url. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "load/load.h"
#include "load/result.h"
#include "profile/profile.h"

#define LOAD_MAX_URLS 16 /* targets of one spread: a scale-out measures at most 16 replicas */

/* Shapes p for share k of n: users (as even as whole users go, the first ones one more), the
 * rate or each stage's target divided by n; *seed becomes this share's own request-mix seed
 * and *offset_s how long after the first share this one starts (open loop at a flat rate:
 * k / rate; else 0). Modifies p->stages in place (the caller gives a copy it owns). Returns
 * 0, or -EINVAL when the share holds no load (fewer users than shares). */
int load_share_apply(struct profile *p, unsigned k, unsigned n, uint64_t *seed,
                     double *offset_s /* OUT */, char *err);

/* Runs o's load spread over urls[0..nurls) (1 <= nurls <= LOAD_MAX_URLS; o->url is ignored)
 * and fills *out with the merged result plus out->urls / out->by_url (each target's total).
 * o->threads and o->max_connections are the whole run's, divided between the targets; progress
 * is the sum of the shares', reported from the calling thread. A profile with streams is
 * refused (-EINVAL): streams are spread by their own URL. Returns as load_run does; on success
 * the caller frees *out with load_result_free. Borrows o and urls. */
int load_run_spread(const struct load_opts *o, const char *const *urls, size_t nurls,
                    struct load_result *out /* OUT */, char *err);

#endif
