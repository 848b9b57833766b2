#include "core/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void text_catf(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strnlen(buf, len);
    va_list ap;

    if (used + 1 >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

bool text_full(const char *buf, size_t len)
{
    return len > 0 && strnlen(buf, len) + 1 >= len;
}
