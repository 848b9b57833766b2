/* The number formats of every front-end (fmt.h). */

#include "core/fmt.h"

#include <inttypes.h>
#include <stdio.h>

const char *fmt_latency(uint64_t us, char buf[FMT_LEN])
{
    double v = (double)us;
    if (us < 1000)
        snprintf(buf, FMT_LEN, "%" PRIu64 "us", us);
    else if (us < 10000)
        snprintf(buf, FMT_LEN, "%.2fms", v / 1e3);
    else if (us < 100000)
        snprintf(buf, FMT_LEN, "%.1fms", v / 1e3);
    else if (us < 1000000)
        snprintf(buf, FMT_LEN, "%.0fms", v / 1e3);
    else if (us < 10000000)
        snprintf(buf, FMT_LEN, "%.2fs", v / 1e6);
    else if (us < 60000000)
        snprintf(buf, FMT_LEN, "%.1fs", v / 1e6);
    else
        snprintf(buf, FMT_LEN, "%" PRIu64 "m%02" PRIu64 "s", us / 60000000,
                 (us % 60000000) / 1000000);
    return buf;
}

const char *fmt_count(uint64_t n, char buf[FMT_LEN])
{
    char digits[FMT_LEN];
    int len = snprintf(digits, sizeof(digits), "%" PRIu64, n);
    int o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

const char *fmt_bytes(uint64_t b, char buf[FMT_LEN])
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, FMT_LEN, "%" PRIu64 " B", b);
    else
        snprintf(buf, FMT_LEN, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
    return buf;
}

const char *fmt_pct(double fraction, char buf[FMT_LEN])
{
    double pct = fraction * 100;
    if (pct == 0)
        snprintf(buf, FMT_LEN, "0%%");
    else if (pct < 0.01)
        snprintf(buf, FMT_LEN, "%.2g%%", pct);
    else
        snprintf(buf, FMT_LEN, "%.2f%%", pct);
    return buf;
}

const char *fmt_rate(double rps, char buf[FMT_LEN])
{
    snprintf(buf, FMT_LEN, rps < 100 ? "%.2f" : "%.1f", rps);
    return buf;
}
