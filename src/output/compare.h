#ifndef SIZEUP_OUTPUT_COMPARE_H
#define SIZEUP_OUTPUT_COMPARE_H

/* `sizeup compare A B`: two sweeps' results.json side by side, per variant (matched by spec)
 * and overall, with the change in percent and whether it is significant, in the spirit of
 * benchstat. Significance is Welch's t-test at STATS_ALPHA on the capacity repeats
 * (slo_capacity.repeat_rps); a figure measured once (throughput, p95, p99, and every figure of a
 * fixed-mode sweep) is shown with its change but never called significant. A results.json is
 * outside input (a file, a ConfigMap key copied by hand): every field is type- and range-checked
 * and the file size is capped. */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "core/err.h"
#include "core/stats.h"
#include "sweep/capacity.h"
#include "sweep/variant.h"

/* The largest results.json read. The operator's copy fits a ConfigMap (1 MiB); a local sweep
 * of VARIANT_MAX variants with many request names stays far below this. */
#define COMPARE_MAX_BYTES (16u << 20)

/* results.json keeps every field's name, type and meaning within a major version (fields are
 * only added), so compare reads the files of its own major version and refuses the others. */
#define COMPARE_TOOL_MAJOR 0

/* Flags of a capacity kept for display; a file may list more, which are not shown. */
#define COMPARE_MAX_FLAGS 8

/* The figures compared, in the order they are shown. */
enum compare_metric {
    COMPARE_CAPACITY = 0, /* slo_capacity.rps, tested on repeat_rps */
    COMPARE_THROUGHPUT,   /* throughput_rps */
    COMPARE_P95,          /* latency_ms.p95 */
    COMPARE_P99,          /* latency_ms.p99 */
    COMPARE_NMETRICS
};

/* Why a cell is `~` without a test result, or COMPARE_WHY_TESTED when Welch's test decided. */
enum compare_why {
    COMPARE_WHY_TESTED = 0,
    COMPARE_WHY_ONE_MEASUREMENT, /* a single figure per side: nothing to test */
    COMPARE_WHY_FEW_REPEATS,     /* fewer than STATS_MIN_REPEATS repeats on a side */
    COMPARE_WHY_INVALID,         /* a side's capacity is marked not valid (its flags say why) */
    COMPARE_WHY_MISSING,         /* a side lacks the figure (FAILED, fixed mode, not recorded) */
    COMPARE_WHY_RESOLUTION,      /* tested, but the change is within the searches' brackets */
    COMPARE_NWHY
};

/* One variant of one results.json. */
struct compare_variant {
    struct variant v; /* canonical spec and label */
    bool measured;    /* state "measured" (else FAILED) */
    bool searched;    /* slo_capacity is an object (a capacity search ran) */
    double capacity_rps;
    double repeat_rps[CAPACITY_MAX_REPEATS];
    size_t nrepeats;
    double bracket_rps; /* the search's lowest failing rate above capacity; < 0 unknown */
    bool valid;         /* slo_capacity.valid */
    char flags[COMPARE_MAX_FLAGS][32]; /* slo_capacity.flags, each cut to 31 bytes */
    size_t nflags;
    double throughput_rps; /* < 0: absent */
    double p95_ms, p99_ms; /* < 0: absent */
};

/* The profile inputs two sweeps must share to be compared (profile.slo, the requests with their
 * headers' and bodies' digests, the thresholds, the timeout, profile.search's window, warm-up
 * and precision, and a fixed load's own load), and the answer's inputs shown when they differ
 * (docs/compare.md). */
#define COMPARE_MAX_DIFFER 16
#define COMPARE_DIFFER_LEN 160

struct compare_file {
    char source[512];    /* the path read, for headings */
    cJSON *judged;       /* owned: the measurement's inputs as found; NULL: no profile */
    cJSON *answer;       /* owned: the answer's inputs (cost, planning, ...); NULL: no profile */
    char tool[64];       /* "sizeup 0.1.0" */
    char started_at[40]; /* as written, "" when absent */
    bool capacity_mode;  /* some variant has a slo_capacity object */
    size_t n;
    struct compare_variant *variants; /* owned, n entries in the file's order */
};

/* One figure compared between A and B. With COMPARE_WHY_RESOLUTION, welch holds the test's
 * result although the change is not called significant. */
struct compare_cell {
    bool have_a, have_b;
    struct stats_summary a, b; /* n = 1 for a single figure */
    double change_pct;         /* (b - a) / a x 100; NAN without both or when a is 0 */
    enum compare_why why;
    struct stats_welch welch; /* when why is COMPARE_WHY_TESTED */
    bool significant;
};

/* One variant spec, present in A, in B or in both. */
struct compare_row {
    char spec[VARIANT_TOKEN_MAX + 1];
    const struct compare_variant *a, *b; /* borrowed from the files; NULL: not in that file */
    struct compare_cell cell[COMPARE_NMETRICS];
    bool regression; /* capacity fell by more than the threshold, significantly */
};

/* The geometric mean of a metric over the rows where both sides have it (above zero). */
struct compare_geomean {
    size_t n;
    double a, b, change_pct;
};

/* The whole comparison. Borrows both files: they must outlive it. */
struct compare_report {
    const struct compare_file *a, *b;
    size_t n;
    struct compare_row *rows; /* owned: A's variants in A's order, then those only in B */
    struct compare_geomean overall[COMPARE_NMETRICS];
    unsigned whys;         /* bit (1 << why) for every reason some cell is `~` untested */
    size_t significant[2]; /* capacity cells significantly [0] lower, [1] higher in B */
    bool fail_set;         /* a regression threshold was given */
    double fail_pct;       /* the threshold in percent */
    size_t nregressions;   /* rows with regression set */
    size_t ntestable;      /* capacity cells that Welch's test could judge */
    /* The inputs A and B differ in ("slo.p95_ms: 100 in A, 80 in B"): when any, nothing is
     * compared (n is 0) and --fail-on-regression fails. */
    char differ[COMPARE_MAX_DIFFER][COMPARE_DIFFER_LEN];
    size_t ndiffer;
    /* The answer's inputs A and B differ in (the target, cost, planning, availability, node
     * types, autoscaling, scale-out, generators): shown, and the figures compared all the
     * same, since they change the recommendation and not one figure measured. */
    char answer_differ[COMPARE_MAX_DIFFER][COMPARE_DIFFER_LEN];
    size_t nanswer_differ;
};

/* Parses a results.json text (len bytes, need not be NUL-terminated) into *out; source names
 * it in errors and headings. Returns 0, -EINVAL with the reason in err (not JSON, not a sizeup
 * results file, another major version, a field of the wrong type or range) or -ENOMEM. On
 * failure *out is left empty. Free with compare_file_free(). */
SIZEUP_MUST_USE int compare_parse(const char *text, size_t len, const char *source,
                                  struct compare_file *out /* OUT */, char *err);

/* Reads path, a results.json or a directory holding one, and parses it. Returns as
 * compare_parse, plus -ENOENT / -EIO / -EFBIG (over COMPARE_MAX_BYTES) with the reason. */
SIZEUP_MUST_USE int compare_load(const char *path, struct compare_file *out /* OUT */, char *err);

/* Frees what f owns and zeroes it; a zeroed file is a no-op. */
void compare_file_free(struct compare_file *f);

/* Compares a with b (both borrowed until compare_report_free). fail_pct < 0: no regression
 * threshold; otherwise a row is a regression when its capacity fell by more than fail_pct
 * percent and the fall is significant. Two files judged by different inputs (a field of
 * `judged` present in both with different values) are not compared: out->differ lists the
 * fields and out->n is 0. Differences in `answer` are listed in out->answer_differ and do not
 * stop the comparison. Returns 0 or -ENOMEM. */
SIZEUP_MUST_USE int compare_run(const struct compare_file *a, const struct compare_file *b,
                                double fail_pct, struct compare_report *out /* OUT */);

/* Frees what r owns and zeroes it. */
void compare_report_free(struct compare_report *r);

/* The report for people: one table per metric, the geometric means, the variants found on
 * one side only, and each reason for a `~` explained once under the tables. Returns 0, -ENOMEM
 * or -EIO (a write error). */
SIZEUP_MUST_USE int compare_write_text(FILE *f, const struct compare_report *r);

/* The --fail-on-regression verdict in one line: the regressions with their change, "no
 * regression", or that none can be judged (no capacity with repeats on both sides). Prints
 * nothing and returns false without a threshold. Part of compare_write_text's report. */
bool compare_write_verdict(FILE *f, const struct compare_report *r);

/* The report for machines (docs/compare.md names every field). Returns an owned object, free
 * with cJSON_Delete(), or NULL when out of memory. */
cJSON *compare_json(const struct compare_report *r);

/* The metric's name in JSON ("capacity_rps") and its heading for people ("capacity @SLO"). */
const char *compare_metric_key(enum compare_metric m);
const char *compare_metric_title(enum compare_metric m);

#endif
