#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(char *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return code;
    va_start(ap, fmt);
    vsnprintf(err, ERR_LEN, fmt, ap);
    va_end(ap);
    return code;
}

int err_wrap(char *err, int code, const char *fmt, ...)
{
    char prefix[ERR_LEN], old[ERR_LEN];
    va_list ap;

    if (!err)
        return code;
    snprintf(old, sizeof(old), "%s", err);
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    snprintf(err, ERR_LEN, "%s: %s", prefix, old);
    return code;
}

const char *err_str(int errnum, char *buf, size_t len)
{
    if (errnum < 0)
        errnum = -errnum;
    /* With _GNU_SOURCE strerror_r is the GNU variant, which may return a static string
     * instead of filling buf. */
    const char *s = strerror_r(errnum, buf, len);
    if (s != buf)
        snprintf(buf, len, "%s", s);
    return buf;
}
