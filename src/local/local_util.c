/* What the local platform's files share (local_internal.h): the clock, the sleep, and the
 * expansion of $WORKERS and $PORT in the command's arguments (local.h). Nothing here calls
 * back into local.c, local_process.c or local_usage.c. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "local/local.h"
#include "local/local_internal.h"

double local__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void local__sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

bool local__isalnum_ascii(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int local_expand_arg(const char *arg, const char *workers_env, unsigned workers, unsigned port,
                     char *out, size_t len)
{
    size_t o = 0, wl = strlen(workers_env);

    for (const char *p = arg; *p;) {
        char val[24];
        size_t skip = 0;
        if (p[0] == '$') {
            if (strncmp(p + 1, workers_env, wl) == 0 &&
                !(local__isalnum_ascii(p[1 + wl]) || p[1 + wl] == '_')) {
                skip = 1 + wl;
                snprintf(val, sizeof(val), "%u", workers);
            } else if (p[1] == '{' && strncmp(p + 2, workers_env, wl) == 0 && p[2 + wl] == '}') {
                skip = 3 + wl;
                snprintf(val, sizeof(val), "%u", workers);
            } else if (strncmp(p + 1, "PORT", 4) == 0 &&
                       !(local__isalnum_ascii(p[5]) || p[5] == '_')) {
                skip = 5;
                snprintf(val, sizeof(val), "%u", port);
            } else if (strncmp(p + 1, "{PORT}", 6) == 0) {
                skip = 7;
                snprintf(val, sizeof(val), "%u", port);
            }
        }
        if (skip) {
            size_t vl = strlen(val);
            if (o + vl >= len)
                return -E2BIG;
            memcpy(out + o, val, vl);
            o += vl;
            p += skip;
            continue;
        }
        if (o + 1 >= len)
            return -E2BIG;
        out[o++] = *p++;
    }
    out[o] = '\0';
    return 0;
}
