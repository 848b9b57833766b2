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
 * Counters, bytes and histograms add (overall, per name, per stage); the window is the longest
 * of the parts (they ran over the same window; a part cut short shortens nothing); rates, users,
 * threads, connections and the tools' CPU add; interrupted is any part's; the verdict is judged
 * again on the merged total against t. Borrows src and t. Returns 0, or -EINVAL when the two do
 * not come from the same profile (err says what differs; dst unchanged). */
int load_result_merge(struct load_result *dst, const struct load_result *src,
                      const struct profile_thresholds *t, char *err);

#endif
