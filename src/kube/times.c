/* Time in the kube layer (times.h): RFC 3339 timestamps as the API writes them, and the
 * monotonic milliseconds its deadlines count in. At the bottom of src/kube: the client, the
 * kubeconfig, the exec plugin, the objects and the platform all call it, and it calls none of
 * them. */

#include "kube/times.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "kube/kube_int.h"

long long kube__now_ms(void)
{
    return clock_mono_ms();
}

int kube_time_format(const struct timespec *t, int micro, char *buf, size_t len)
{
    struct tm tm;
    char base[32];
    int n;
    if (!gmtime_r(&t->tv_sec, &tm))
        return -EINVAL;
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    if (micro)
        n = snprintf(buf, len, "%s.%06ldZ", base, t->tv_nsec / 1000);
    else
        n = snprintf(buf, len, "%sZ", base);
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EINVAL;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int kube_time_parse(const char *s, struct timespec *out)
{
    struct tm tm = {0};
    int y, mo, d, h, mi, sec;
    long nsec = 0;
    const char *p;

    memset(out, 0, sizeof(*out));
    if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
        s[13] != ':' || s[16] != ':')
        return -EINVAL;
    if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
        digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
        return -EINVAL;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -EINVAL;
    p = s + 19;
    if (*p == '.') {
        long scale = 100000000;
        p++;
        if (*p < '0' || *p > '9')
            return -EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
            nsec += (*p - '0') * scale;
            scale /= 10;
        }
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (strlen(p) != 6 || p[3] != ':' || digits(p + 1, 2, &oh) || digits(p + 4, 2, &om) ||
            oh > 23 || om > 59)
            return -EINVAL;
        long off = oh * 3600L + om * 60L;
        t = *p == '+' ? t - off : t + off;
        p += 6;
    } else {
        return -EINVAL;
    }
    if (*p)
        return -EINVAL;
    out->tv_sec = t;
    out->tv_nsec = nsec;
    return 0;
}
