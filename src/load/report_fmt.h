#ifndef SIZEUP_LOAD_REPORT_FMT_H
#define SIZEUP_LOAD_REPORT_FMT_H

/* The text report's number formats are core's (core/fmt.h). These names remain only for
 * src/output/output.c, which is being split on another branch; once it includes core/fmt.h
 * this header goes. */

#include "core/fmt.h"

#define REPORT_FMT_LEN FMT_LEN

static inline const char *report_fmt_count(uint64_t n, char buf[FMT_LEN])
{
    return fmt_count(n, buf);
}

static inline const char *report_fmt_bytes(uint64_t b, char buf[FMT_LEN])
{
    return fmt_bytes(b, buf);
}

#endif
