#ifndef SIZEUP_CORE_QUANTITY_H
#define SIZEUP_CORE_QUANTITY_H

/* Parsers and formatters for the units users type: Kubernetes quantities for CPU and memory,
 * Go-style durations and percentages. Every parser takes a NUL-terminated token, rejects
 * anything it does not fully consume, and names the bad token and what was expected in err. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define QTY_LEN 32 /* enough for any formatted quantity or duration */

/* CPU in Kubernetes syntax: "500m", "0.5", "2", "1.25" (at most millicore precision).
 * Fills *millicores (>= 0). Returns 0 or -EINVAL. */
int qty_parse_cpu(const char *s, int64_t *millicores /* OUT */, char *err);

/* Memory in Kubernetes syntax: plain bytes, decimal suffixes k M G T P E, binary suffixes
 * Ki Mi Gi Ti Pi Ei, or an exponent ("129e6"). Fills *bytes (>= 0). "512m" (milli-bytes in
 * Kubernetes) and "1g" are rejected with a hint. Returns 0, -EINVAL or -ERANGE. */
int qty_parse_memory(const char *s, int64_t *bytes /* OUT */, char *err);

/* Duration as a sequence of number+unit: "250ms", "20s", "1m30s", "1.5h", "0". Units: ns, us,
 * µs, ms, s, m, h. Fills *usec (>= 0), rounded to the nearest microsecond. */
int qty_parse_duration(const char *s, int64_t *usec /* OUT */, char *err);

/* Percentage "1%", "0.5%", or a fraction "0.01" in [0, 1]. Fills *fraction in [0, 1]. */
int qty_parse_percent(const char *s, double *fraction /* OUT */, char *err);

/* Formats millicores as Kubernetes writes them: "500m", "2", "1500m". Returns buf. */
const char *qty_format_cpu(int64_t millicores, char buf[QTY_LEN]);

/* Formats millicores as cores for people: "0.5", "2", "1.25". Returns buf. */
const char *qty_format_cores(int64_t millicores, char buf[QTY_LEN]);

/* Formats bytes with the largest binary suffix that divides exactly ("512Mi", "1Gi"), else
 * plain bytes. Returns buf. */
const char *qty_format_memory(int64_t bytes, char buf[QTY_LEN]);

/* Formats a duration compactly for people: "850us", "12.3ms", "1.25s", "2m30s". Returns buf. */
const char *qty_format_duration(int64_t usec, char buf[QTY_LEN]);

#endif
