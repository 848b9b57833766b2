#ifndef SIZEUP_LOAD_MERGE_H
#define SIZEUP_LOAD_MERGE_H

/* Merging the results of load runs that ran side by side (several generator pods sending
 * shares of one load to one target over the same window). Counters add and histograms merge
 * bucket-wise, so the merged result is exactly the result one generator would have computed
 * from the same samples: the same counts, the same histogram, the same percentiles and the
 * same verdict. */

#include "core/err.h"
#include "profile/profile.h"
#include "load/result.h"

/* Adds src into dst. Both come from the same profile: the same request names and stages in the
 * same order (dst is typically load_result_init'ed empty, then every part is merged into it).
 * Counters, bytes and histograms add (overall, per name, per stage, per target: by_url, which
 * every part must have alike, the first part giving it to an empty dst); the window is the
 * longest of the parts (they ran over the same window; a part cut short shortens nothing);
 * rates, users, threads, connections and the tools' CPU add; interrupted is any part's; the
 * verdict is judged again on the merged total against t. The series merges point by point
 * when every part that measured requests kept its interval histograms (series_rec: a run's
 * own, or parsed from a generator's latency_hist per point): point i of each part (the parts
 * share their start) adds into point i, at the coarser interval when the parts' differ, a
 * point only some parts have is the sum of those, and the merged points are rendered again,
 * their p50/p95/p99 from the merged histograms. When a part has no such histograms the merge
 * has no series (an average of percentiles is no percentile). Borrows src and t. Returns 0,
 * -EINVAL when the two do not come from the same profile or targets (err says what differs;
 * dst unchanged), or -ENOMEM. */
int load_result_merge(struct load_result *dst, const struct load_result *src,
                      const struct profile_thresholds *t, char *err);

#endif
