#ifndef SIZEUP_KUBE_TIMES_H
#define SIZEUP_KUBE_TIMES_H

/* RFC 3339 timestamps as the API writes them (metav1.Time, MicroTime). The monotonic
 * milliseconds of the kube layer's deadlines are kube__now_ms (kube_int.h), defined beside
 * these in times.c. */

#include <stddef.h>
#include <time.h>

#include "core/err.h"

/* Formats t (UTC) as RFC 3339: "2026-11-29T20:15:00Z", or with micro set
 * "2026-11-29T20:15:00.123456Z" (MicroTime). Returns 0 or -ENOSPC. */
SIZEUP_MUST_USE int kube_time_format(const struct timespec *t, int micro, char *buf, size_t len);
/* Parses RFC 3339 (Z or +hh:mm offsets, optional fraction). Returns 0 or -EINVAL. */
SIZEUP_MUST_USE int kube_time_parse(const char *s, struct timespec *out /* OUT */);

#endif
