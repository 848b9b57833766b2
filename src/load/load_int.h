#ifndef SIZEUP_LOAD_LOAD_INT_H
#define SIZEUP_LOAD_LOAD_INT_H

/* Private to src/load: one target's load (load_one.c), which load_run (load.c) and the spread's
 * shares (spread.c) both start, and the request load that it and the stream runs (streams.c,
 * stream_session.c, for their producers) start. The calls run one way: load.c -> spread.c ->
 * load_one.c -> streams.c -> load_requests.c, never back into load_run. */

#include <sys/resource.h>

#include "core/err.h"
#include "load/load.h"
#include "load/result.h"

/* Runs o's load against its one target o->url: streams_run when o->profile has streams, else
 * load__requests_run. Same contract as load_run. */
int load__run_one(const struct load_opts *o, struct load_result *out /* OUT */, char *err);

/* Runs o's requests (any streams in o->profile are ignored: the stream runs call this for
 * their producers): resolves and plans, starts one engine thread per worker, reports progress
 * from the caller's thread, and merges what the threads measured into *out. Same contract as
 * load_run: on success the caller frees *out with load_result_free. */
int load__requests_run(const struct load_opts *o, struct load_result *out /* OUT */, char *err);

/* Raises RLIMIT_NOFILE to at least need descriptors (up to the hard limit, or beyond it when
 * allowed). Returns 0, or -EMFILE when the run cannot have them (err says how to fix it). */
int load__raise_nofile(rlim_t need, char *err);

#endif
