/* The advisor's one helper every finding goes through (advisor_internal.h): below the advisor's
 * files that call it (advisor.c, advisor_findings.c, advisor_streams.c, packing.c, advise.c,
 * availability.c), so that none of them calls back into another's entry file. */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor_internal.h"
#include "core/log.h"

/* Appends a formatted finding. ADVISOR_MAX_FINDINGS leaves room for every kind at once; should
 * the list still be full, the finding is logged (never dropped unsaid) and the first ones, the
 * important ones, stay. A finding too long for its buffer ends in "..." so that a reader sees it
 * was cut. */
__attribute__((format(printf, 2, 3))) void advisor__finding(struct advice *a, const char *fmt, ...)
{
    va_list ap;
    char *f;
    int len;

    if (a->nfindings >= ADVISOR_MAX_FINDINGS) {
        char dropped[ADVISOR_TEXT_LEN];
        va_start(ap, fmt);
        vsnprintf(dropped, sizeof(dropped), fmt, ap);
        va_end(ap);
        log_warn("advisor.finding_dropped", "max=%d text=\"%.200s\"", ADVISOR_MAX_FINDINGS,
                 dropped);
        return;
    }
    f = a->findings[a->nfindings];
    va_start(ap, fmt);
    len = vsnprintf(f, ADVISOR_TEXT_LEN, fmt, ap);
    va_end(ap);
    if (len >= ADVISOR_TEXT_LEN)
        memcpy(f + ADVISOR_TEXT_LEN - 4, "...", 4);
    a->nfindings++;
}
