#ifndef SIZEUP_CORE_FMT_H
#define SIZEUP_CORE_FMT_H

/* The number formats for people, one set for every front-end: `sizeup loadtest`'s report, the
 * terminal progress and table of `sizeup sweep`, results.md and report.html, the operator's
 * Events and status, and `kubectl sizeup`. The same figure prints the same everywhere
 * (tests/unit/test_fmt.c renders one set of values through each front-end). Machine-read
 * outputs (results.json, state.json, metrics) keep their raw numbers. */

#include <stdint.h>

#define FMT_LEN 32 /* every buffer below: the longest figure with its unit fits */

/* The binary units, named once: every byte count sizeup converts or prints in MiB or GiB uses
 * these (Kubernetes' "Mi" and "Gi" are the same units). */
#define FMT_MIB ((int64_t)1 << 20)
#define FMT_GIB ((int64_t)1 << 30)

/* Latency, three significant figures with the unit chosen by size: "850us", "1.50ms",
 * "12.3ms", "114ms", "1.25s", "12.5s", "2m05s". Returns buf. */
const char *fmt_latency(uint64_t us, char buf[FMT_LEN]);

/* A count with thousands separators: 1234567 -> "1,234,567". Returns buf. */
const char *fmt_count(uint64_t n, char buf[FMT_LEN]);

/* Bytes in B, KiB, MiB ... with three significant figures: "512 B", "1.50 KiB", "12.3 MiB".
 * Returns buf. */
const char *fmt_bytes(uint64_t b, char buf[FMT_LEN]);

/* A fraction (0.0125) as a percentage that never rounds a failure away: "0%", "1.25%",
 * "0.0001%" for 1 in 10^6 (not "0.00%"). Returns buf. */
const char *fmt_pct(double fraction, char buf[FMT_LEN]);

/* A rate (requests or frames per second), without its unit: "27.20", "1234.5". Returns buf. */
const char *fmt_rate(double rps, char buf[FMT_LEN]);

#endif
