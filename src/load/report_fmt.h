#ifndef SIZEUP_LOAD_REPORT_FMT_H
#define SIZEUP_LOAD_REPORT_FMT_H

/* The text report's number formats, shared by the parts of the report rendered in other files
 * (the streams' block) and by the sweep's sentences on streams, so every figure reads the same
 * way. */

#include <stdint.h>

#define REPORT_FMT_LEN 32

/* Latency for people: three significant figures, unit chosen by size. Returns buf. */
const char *report_fmt_lat(uint64_t us, char buf[REPORT_FMT_LEN]);

/* A count with thousands separators: 1234567 -> "1,234,567". Returns buf. */
const char *report_fmt_count(uint64_t n, char buf[REPORT_FMT_LEN]);

/* Bytes in B, KiB, MiB ... Returns buf. */
const char *report_fmt_bytes(uint64_t b, char buf[REPORT_FMT_LEN]);

#endif
