#ifndef SIZEUP_OUTPUT_OUTPUT_SET_H
#define SIZEUP_OUTPUT_OUTPUT_SET_H

/* The one output path of both front-ends. A table in output_set.c lists the outputs (name, whether
 * it needs a recommendation, whether the whole output may be left out for size, its renderer);
 * output_set_render turns a document into a list of (name, bytes) that fits a ConfigMap, and two
 * sinks deliver that list: files in a directory (`sizeup sweep`) and the keys of a ConfigMap
 * (`sizeup operator`). Neither front-end names a file: the same document gives the same bytes
 * through either sink.
 *
 * Size: the API server refuses a ConfigMap whose data passes OUTPUT_DATA_MAX bytes. The outputs
 * are kept within OUTPUT_BUDGET (the rest is left for the caller's extra keys, such as the
 * operator's state.json); when they would pass it, optional parts are left out one at a time,
 * the one whose removal saves the most bytes first, and results.md says which and why. The rows
 * are never left out. The directory sink obeys the same budget, so both sinks give identical
 * bytes. */

#include <stddef.h>

#include "core/err.h"
#include "advise/advisor.h"
#include "output/output.h"
#include "sweep/platform.h"

#define OUTPUT_DATA_MAX (1024 * 1024) /* a ConfigMap's data (every value) at most */
#define OUTPUT_RESERVE  (64 * 1024)   /* kept free for the caller's extra keys (state.json) */
#define OUTPUT_BUDGET   (OUTPUT_DATA_MAX - OUTPUT_RESERVE) /* the outputs' own share */
#define OUTPUT_SET_MAX  12                                 /* outputs + extras in one set */
#define OUTPUT_NAME_MAX 64

/* One rendered output: its file name, which is also its ConfigMap key, and its bytes. */
struct output_item {
    char name[OUTPUT_NAME_MAX];
    char *data; /* owned, NUL-terminated */
    size_t len; /* bytes, without the NUL */
};

struct output_set {
    struct output_item items[OUTPUT_SET_MAX]; /* the table's order, then the extras */
    size_t n;
    unsigned omitted; /* OUTPUT_OMIT_* left out to fit */
    size_t bytes;     /* sum of every item's len */
};

/* A key the caller adds whole (never trimmed), counted toward OUTPUT_DATA_MAX. */
struct output_extra {
    const char *name;
    const char *data;
};

/* Renders every output of the table that applies to d (values.yaml only with a recommendation)
 * plus extra[0..nextra), leaving out optional parts until the outputs fit OUTPUT_BUDGET and the
 * whole set OUTPUT_DATA_MAX. d is borrowed (its `omit` is ignored); extras are copied. On success
 * *out owns the bytes (output_set_free). -EFBIG when even the rows alone do not fit, -ENOMEM. */
SIZEUP_MUST_USE int output_set_render(const struct output_doc *d, const struct output_extra *extra,
                                      size_t nextra, struct output_set *out /* OUT */, char *err);

/* Frees what s owns and zeroes it. NULL-safe. */
void output_set_free(struct output_set *s);

/* The directory sink: creates dir if missing, writes every item atomically (temporary file +
 * rename) and removes the table's files that s does not hold (values.yaml of an earlier sweep
 * with a recommendation, a report.html left out for size), so no stale file passes for this
 * sweep's. Returns 0 or the first error (the other files are still attempted). */
SIZEUP_MUST_USE int output_set_write_dir(const char *dir, const struct output_set *s, char *err);

/* The ConfigMap sink: keys[i] / values[i] for every item, borrowed from s (valid until
 * output_set_free). A ConfigMap is written whole, so a key of an earlier sweep that s does not
 * hold is gone with the write. Returns the count (at most max). */
size_t output_set_keys(const struct output_set *s, const char **keys /* OUT */,
                       const char **values /* OUT */, size_t max);

/* The name of the i-th output of the table ("results.md", ...), or NULL past its end: for a
 * front-end that lists what it wrote. */
const char *output_name(size_t i);

/* The sentence said when no variant qualifies: that no variant holds the load (the advisor's
 * reason) and which measured row came closest, by the advisor's verdict, then P95, then errors.
 * Writes "" when d has a recommendation. Returns buf. */
const char *output_no_rec_sentence(const struct output_doc *d, char *buf, size_t len);

#endif
