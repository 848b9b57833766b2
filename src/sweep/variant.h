#ifndef SIZEUP_SWEEP_VARIANT_H
#define SIZEUP_SWEEP_VARIANT_H

/* A variant is one shape of a pod: worker count, CPU limit and memory limit, written
 * `workers@cpu/memory` (the reference load test's notation: "2@1/512Mi", "1@500m/512Mi"). A list is
 * space-separated. The parser is fed from the command line and from Deployment annotations, so
 * every token and the list are size-capped and every error names the bad token. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define VARIANT_MAX         64   /* variants in one list */
#define VARIANT_TOKEN_MAX   48   /* characters in one token */
#define VARIANT_LIST_MAX    4096 /* characters in a whole list */
#define VARIANT_WORKERS_MAX 1024
#define VARIANT_LABEL_LEN   64
#define VARIANT_CPU_MAX_M   1024000LL    /* 1024 cores: beyond any node */
#define VARIANT_MEMORY_MAX  (64LL << 40) /* 64 TiB: likewise */

/* The reference load test's sweep: the list used when the user names none. */
#define VARIANT_DEFAULT_LIST "1@0.5/512Mi 1@1/512Mi 2@1/1Gi 2@2/1Gi 4@2/1Gi 4@4/2Gi"

struct variant {
    unsigned workers;                 /* 1 .. VARIANT_WORKERS_MAX */
    int64_t cpu_millicores;           /* > 0 */
    int64_t memory_bytes;             /* > 0 */
    char spec[VARIANT_TOKEN_MAX + 1]; /* canonical token: "1@0.5/512Mi" */
    char label[VARIANT_LABEL_LEN];    /* for tables: "1w / 0.5c / 512Mi" */
};

/* The variant's CPU limit in cores: the one conversion from millicores, for every layer. */
static inline double variant_cores(const struct variant *v)
{
    return (double)v->cpu_millicores / 1000.0;
}

struct variant_list {
    size_t n;
    struct variant items[VARIANT_MAX];
};

/* Parses one token ("2@1/512Mi") into *out. Returns 0 or -EINVAL/-ERANGE; err names the token
 * and what was expected. */
int variant_parse(const char *token, struct variant *out /* OUT */, char *err);

/* Parses a space-separated list (spaces, tabs or newlines between tokens) into *out. NULL or an
 * empty/blank string is an error: callers pass VARIANT_DEFAULT_LIST for the default. Duplicate
 * tokens are rejected (a sweep measuring one shape twice is a typo, not a plan). Returns 0 or a
 * negative errno; on failure out->n is 0. */
int variant_parse_list(const char *s, struct variant_list *out /* OUT */, char *err);

/* Fills v's spec and label from its numbers (for variants built in code, e.g. tests). */
void variant_fill_names(struct variant *v);

#endif
