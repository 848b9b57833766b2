#ifndef SIZEUP_ADVISE_RULE_H
#define SIZEUP_ADVISE_RULE_H

/* The auto-sizing rule: what a chart's `workers.count: "auto"` resolves to for given limits.
 *
 *     workers = max(1, min(round(cores / cores_per_worker),
 *                          floor(memory_mib / memory_per_worker_mib), max_workers))
 *
 * round() is half away from zero (0.5 cores -> 1). The floor of one worker keeps a pod with a
 * tiny limit serving at all: a rule that says 0 workers is never what a chart wants. The reference
 * load test's rule is cores_per_worker 1, memory_per_worker_mib 192, max_workers 8. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define RULE_MAX_BYTES          (64u * 1024u) /* an auto-sizing.yaml larger than this is refused */
#define RULE_MAX_WORKERS        1024
#define RULE_MAX_MIB_PER_WORKER 1048576 /* memory_per_worker_mib at most: 1 TiB in MiB */
/* The rule with its constants by name, floor included: what rule_format(NULL) gives, for the
 * places that need it at compile time (a command's help). */
#define RULE_EXPRESSION                                                                            \
    "workers = max(1, min(round(cores / cores_per_worker), "                                       \
    "floor(memory_mib / memory_per_worker_mib), max_workers))"
#define RULE_EXPRESSION_LEN 160 /* rule_format's buffer: the longest expression fits */

struct rule {
    double cores_per_worker;      /* > 0 */
    double memory_per_worker_mib; /* > 0 */
    unsigned max_workers;         /* 1 .. RULE_MAX_WORKERS */
};

/* Fills r with the default rule (1 core, 192 MiB, 8 workers). */
void rule_default(struct rule *r /* OUT */);

/* Returns 0 when every constant is in range, else -EINVAL naming the constant. */
SIZEUP_MUST_USE int rule_check(const struct rule *r, char *err);

/* The worker count for cpu_millicores and memory_bytes (both > 0). r must pass rule_check. */
unsigned rule_eval(const struct rule *r, int64_t cpu_millicores, int64_t memory_bytes);

/* The rule's expression, the one text of it wherever it is printed (auto-sizing.yaml, results.md,
 * report.html, sizeup rule --explain), floor included: with r, its constants written in
 * ("workers = max(1, min(round(cores / 1), floor(memory_mib / 192), 8))"); with r NULL, their
 * names (RULE_EXPRESSION). Returns buf. */
const char *rule_format(const struct rule *r, char buf[RULE_EXPRESSION_LEN]);

/* Parses an auto-sizing.yaml (as sizeup writes it: the constants under `constants:`) from buf
 * (len bytes, at most RULE_MAX_BYTES); source names it in errors. Returns 0 or -EINVAL. */
SIZEUP_MUST_USE int rule_load_buffer(const char *buf, size_t len, const char *source,
                                     struct rule *out /* OUT */, char *err);

/* Reads and parses the file at path. Returns 0, -EINVAL, -EFBIG or a read error. */
SIZEUP_MUST_USE int rule_load_file(const char *path, struct rule *out /* OUT */, char *err);

#endif
