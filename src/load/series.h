#ifndef SIZEUP_LOAD_SERIES_H
#define SIZEUP_LOAD_SERIES_H

/* Numbers over time: what a run measured second by second, as interval histograms that merge
 * exactly like the totals do.
 *
 * A recorder (struct series_rec) belongs to one thread: one slot (a count, a failure count and a
 * histogram) per interval of the measured window, found from the thread's own clock, so the hot
 * path is one range check and one hist_record. The interval starts at one second; a window
 * longer than SERIES_MAX_POINTS intervals doubles it, merging neighbouring slots pairwise
 * (exact: histograms add), so a recorder never holds more than SERIES_MAX_POINTS slots and a
 * run of any length keeps at most SERIES_MAX_POINTS points. Recorders of one window (every
 * thread's, the same origin) merge exactly, at the coarser of their intervals.
 *
 * The rendered form (struct load_series) is what reports show: per point its start, its
 * length, requests, failures, rate and p50/p95/p99, and the streams' delivery latency. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "core/err.h"
#include "load/hist.h"

#define SERIES_MAX_POINTS 120
#define SERIES_BASE_NS    1000000000LL /* the first interval: one second */

struct series_slot {
    uint64_t count;  /* requests (or frames) that ended in this interval */
    uint64_t failed; /* of which failed */
    struct hist h;   /* their latency */
};

struct series_rec {
    int64_t origin_ns;         /* the window's start, in the recording thread's clock */
    int64_t interval_ns;       /* SERIES_BASE_NS x 2^k */
    size_t n;                  /* slots in use: every slot below n is initialised */
    struct series_slot *slots; /* owned: SERIES_MAX_POINTS */
    struct series_slot *cur;   /* the slot of [cur_lo, cur_hi): the hot path's only test */
    int64_t cur_lo, cur_hi;
};

/* One point of a rendered series. Times are seconds from the measured window's start. */
struct series_point {
    double t_s;   /* the interval's start */
    double dur_s; /* its length inside the window (the last one may be shorter) */
    uint64_t requests, failed;
    uint64_t p50_us, p95_us, p99_us;
    /* Streams: the delivery latency of the commands due in this interval. */
    uint64_t frames; /* frames with a delivery latency */
    uint64_t d_p50_us, d_p95_us, d_p99_us;
};

struct load_series {
    double interval_s;
    bool delivery; /* the delivery fields were measured (a stream run with producers) */
    size_t n;
    struct series_point *pts; /* owned: n */
};

/* Allocates r's slots for a window starting at origin_ns (nothing is touched until used).
 * Returns 0 or -ENOMEM. Free with series_rec_free. */
int series_rec_init(struct series_rec *r /* OUT */, int64_t origin_ns);

/* Empties r and moves its window to origin_ns (a recorder allocated before its window's start
 * was known). */
void series_rec_reset(struct series_rec *r, int64_t origin_ns);

/* Frees what r owns and zeroes it; no-op on a zeroed recorder. */
void series_rec_free(struct series_rec *r);

/* The slot for time t_ns, growing or coarsening the recorder as needed (the slow path of
 * series_slot). NULL before the origin or on a zeroed recorder. */
struct series_slot *series__slot_slow(struct series_rec *r, int64_t t_ns);

/* The slot for time t_ns (the recording thread's clock); NULL before the origin. Constant time
 * while t_ns stays in the current interval, which is nearly always. */
static inline struct series_slot *series_slot(struct series_rec *r, int64_t t_ns)
{
    if (__builtin_expect(t_ns >= r->cur_lo && t_ns < r->cur_hi, 1))
        return r->cur;
    return series__slot_slow(r, t_ns);
}

/* Adds every slot of src into dst, which must share its origin: the finer of the two is
 * brought to the coarser interval first. Returns 0 (it cannot fail: no allocation). */
int series_rec_merge(struct series_rec *dst, const struct series_rec *src);

/* Renders a window of duration_ns (from the recorders' origin) into *out: the interval is the
 * smallest SERIES_BASE_NS x 2^k that is at least every recorder's and fits the window into
 * SERIES_MAX_POINTS points; there are ceil(duration / interval) points. req and delivery may be
 * NULL (a part not measured). Coarsens req and delivery in place. Returns 0 or -ENOMEM; on
 * success the caller frees out with load_series_free. */
int series_render(struct series_rec *req, struct series_rec *delivery, int64_t duration_ns,
                  struct load_series *out /* OUT */);

/* Copies src's points into *dst (owned: free with load_series_free). Returns 0 or -ENOMEM
 * (dst left empty). */
int load_series_copy(struct load_series *dst /* OUT */, const struct load_series *src);

/* Frees what s owns and zeroes it; NULL and a zeroed series are no-ops. */
void load_series_free(struct load_series *s);

/* Adds "series": [{t, requests, errors, rps, p50_ms, p95_ms, p99_ms (, frames, delivery_p50_ms,
 * delivery_p95_ms, delivery_p99_ms) (, latency_hist)}, ...] and "series_interval_s" to o
 * (docs/report.md). rec (may be NULL) is the recorder s was rendered from: when given and still
 * at s's interval, every point also carries its interval's histogram, base64 like the scopes'
 * latency_hist, so that results of runs side by side merge point by point exactly
 * (load/merge.h). Returns false when out of memory. */
bool series_json_add(cJSON *o, const struct load_series *s, const struct series_rec *rec);

/* Reads back what series_json_add wrote (absent: an empty series). Borrows o, which is outside
 * input: at most SERIES_MAX_POINTS points, times increasing by the interval, counts whole; a
 * latency_hist is on every point or on none (the first point decides), decodes strictly, holds
 * no more samples than the point's requests and gives exactly its p50/p95/p99. When the points
 * carry histograms and rec is not NULL, *rec is set to an owned recorder (origin 0, the
 * series' interval, a slot per point; free with series_rec_free and free), else to NULL.
 * Returns 0, -EINVAL with err naming the field, or -ENOMEM; on failure out is left empty and
 * *rec NULL. */
int series_json_parse(const cJSON *o, struct load_series *out /* OUT */,
                      struct series_rec **rec /* OUT, may be NULL */, char *err);

#endif
