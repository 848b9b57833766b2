#include "core/quantity.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fmt.h"

/* Parses the leading unsigned decimal number of s ("12", "0.5", ".5", "3."): integer part and
 * fraction scaled to 10^9 so no precision is lost to binary floating point. Returns the number
 * of characters consumed, 0 when there is no number, or -ERANGE on overflow. */
static int parse_decimal(const char *s, int64_t *ipart, int64_t *frac_nano)
{
    const char *p = s;
    int64_t ip = 0, fp = 0;
    int digits = 0, fdigits = 0;

    while (*p >= '0' && *p <= '9') {
        if (ip > (INT64_MAX - 9) / 10)
            return -ERANGE;
        ip = ip * 10 + (*p - '0');
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (fdigits < 9) {
                fp = fp * 10 + (*p - '0');
                fdigits++;
            } else if (*p != '0') {
                /* Beyond nano precision: keep a sticky digit so "too precise" is detectable. */
                fp = fp | 1;
            }
            p++;
            digits++;
        }
        for (int i = fdigits; i < 9; i++)
            fp *= 10;
    }
    if (digits == 0)
        return 0;
    *ipart = ip;
    *frac_nano = fp;
    return (int)(p - s);
}

int qty_parse_cpu(const char *s, int64_t *millicores, char *err)
{
    int64_t ip, fp;
    int n;

    if (!s || !*s)
        return err_set(err, -EINVAL, "empty CPU quantity: expected e.g. 500m, 0.5 or 2");
    n = parse_decimal(s, &ip, &fp);
    if (n < 0)
        return err_set(err, -ERANGE, "CPU quantity '%s' is too large", s);
    if (n == 0)
        return err_set(err, -EINVAL, "bad CPU quantity '%s': expected e.g. 500m, 0.5 or 2", s);
    const char *suf = s + n;
    if (strcmp(suf, "m") == 0) {
        if (fp != 0)
            return err_set(err, -EINVAL,
                           "bad CPU quantity '%s': millicores must be whole (e.g. 500m)", s);
        *millicores = ip;
        return 0;
    }
    if (*suf)
        return err_set(err, -EINVAL,
                       "bad CPU quantity '%s': unknown suffix '%s' (expected m or none, e.g. "
                       "500m, 0.5, 2)",
                       s, suf);
    if (ip > INT64_MAX / 1000 - 1)
        return err_set(err, -ERANGE, "CPU quantity '%s' is too large", s);
    if (fp % 1000000 != 0)
        return err_set(err, -EINVAL,
                       "bad CPU quantity '%s': finer than 1m (0.001 cores) is not allowed", s);
    *millicores = ip * 1000 + fp / 1000000;
    return 0;
}

struct mem_suffix {
    const char *name;
    int64_t mult;
};

static const struct mem_suffix mem_suffixes[] = {
    {"Ki", 1LL << 10},
    {"Mi", FMT_MIB}, /* the binary units sizeup converts everywhere (core/fmt.h) */
    {"Gi", FMT_GIB},
    {"Ti", 1LL << 40},
    {"Pi", 1LL << 50},
    {"Ei", 1LL << 60},
    {"k", 1000LL},
    {"M", 1000000LL},
    {"G", 1000000000LL},
    {"T", 1000000000000LL},
    {"P", 1000000000000000LL},
    {"E", 1000000000000000000LL},
    {"", 1},
};

int qty_parse_memory(const char *s, int64_t *bytes, char *err)
{
    int64_t ip, fp, mult = 0;
    int n;

    if (!s || !*s)
        return err_set(err, -EINVAL, "empty memory quantity: expected e.g. 512Mi, 1Gi or 1G");
    n = parse_decimal(s, &ip, &fp);
    if (n < 0)
        return err_set(err, -ERANGE, "memory quantity '%s' is too large", s);
    if (n == 0)
        return err_set(err, -EINVAL, "bad memory quantity '%s': expected e.g. 512Mi, 1Gi or 1G", s);
    const char *suf = s + n;
    if ((suf[0] == 'e' || suf[0] == 'E') && suf[1] >= '0' && suf[1] <= '9') {
        /* Exponent form: "129e6". */
        char *end;
        errno = 0;
        long e = strtol(suf + 1, &end, 10);
        if (*end || errno || e > 18)
            return err_set(err, -EINVAL, "bad memory quantity '%s': bad exponent", s);
        mult = 1;
        for (long i = 0; i < e; i++)
            mult *= 10;
    } else {
        for (size_t i = 0; i < sizeof(mem_suffixes) / sizeof(mem_suffixes[0]); i++) {
            if (strcmp(suf, mem_suffixes[i].name) == 0) {
                mult = mem_suffixes[i].mult;
                break;
            }
        }
    }
    if (mult == 0) {
        if (strcmp(suf, "m") == 0 || strcmp(suf, "g") == 0 || strcmp(suf, "K") == 0 ||
            strcmp(suf, "mi") == 0 || strcmp(suf, "gi") == 0 || strcmp(suf, "Mb") == 0 ||
            strcmp(suf, "MB") == 0 || strcmp(suf, "GB") == 0 || strcmp(suf, "Gb") == 0)
            return err_set(err, -EINVAL,
                           "bad memory quantity '%s': suffix '%s' is not Kubernetes syntax "
                           "(did you mean %.*s%s or %.*s%s?)",
                           s, suf, n, s,
                           (suf[0] == 'g' || suf[0] == 'G') ? "Gi" : (suf[0] == 'K' ? "Ki" : "Mi"),
                           n, s,
                           (suf[0] == 'g' || suf[0] == 'G') ? "G" : (suf[0] == 'K' ? "k" : "M"));
        return err_set(err, -EINVAL,
                       "bad memory quantity '%s': unknown suffix '%s' (expected Ki, Mi, Gi, Ti, "
                       "k, M, G, T or none)",
                       s, suf);
    }
    if (ip > INT64_MAX / mult)
        return err_set(err, -ERANGE, "memory quantity '%s' is too large", s);
    /* fp is in units of 1e-9; fp * mult / 1e9 computed without overflow for mult <= 2^60. */
    long double frac = (long double)fp * (long double)mult / 1e9L;
    long double total = (long double)ip * (long double)mult + frac;
    if (total > (long double)INT64_MAX)
        return err_set(err, -ERANGE, "memory quantity '%s' is too large", s);
    /* Kubernetes rounds fractional bytes up. */
    *bytes = ip * mult + (int64_t)ceill(frac);
    return 0;
}

struct dur_unit {
    const char *name;
    int64_t nanos;
};

/* Longest names first so "ms" is not read as "m" followed by "s". */
static const struct dur_unit dur_units[] = {
    {"ns", 1LL},         {"us", 1000LL},       {"\xc2\xb5s", 1000LL},  {"ms", 1000000LL},
    {"s", 1000000000LL}, {"m", 60000000000LL}, {"h", 3600000000000LL},
};

int qty_parse_duration(const char *s, int64_t *usec, char *err)
{
    const char *p = s;
    long double total_ns = 0;

    if (!s || !*s)
        return err_set(err, -EINVAL, "empty duration: expected e.g. 250ms, 20s or 1m30s");
    if (strcmp(s, "0") == 0) {
        *usec = 0;
        return 0;
    }
    while (*p) {
        int64_t ip, fp;
        int n = parse_decimal(p, &ip, &fp);
        if (n < 0)
            return err_set(err, -ERANGE, "duration '%s' is too large", s);
        if (n == 0)
            return err_set(err, -EINVAL,
                           "bad duration '%s': expected a number at '%s' (e.g. 250ms, 20s, 1m30s)",
                           s, p);
        p += n;
        const struct dur_unit *u = NULL;
        for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++) {
            size_t l = strlen(dur_units[i].name);
            if (strncmp(p, dur_units[i].name, l) == 0 &&
                !(l == 1 && dur_units[i].name[0] == 'm' && p[1] == 's')) {
                u = &dur_units[i];
                p += l;
                break;
            }
        }
        if (!u)
            return err_set(err, -EINVAL,
                           "bad duration '%s': missing or unknown unit (expected ns, us, ms, s, "
                           "m or h, e.g. 20s)",
                           s);
        total_ns += (long double)ip * u->nanos + (long double)fp * u->nanos / 1e9L;
        if (total_ns > 1e18L)
            return err_set(err, -ERANGE, "duration '%s' is too large", s);
    }
    *usec = (int64_t)llroundl(total_ns / 1000.0L);
    return 0;
}

int qty_parse_percent(const char *s, double *fraction, char *err)
{
    int64_t ip, fp;
    int n;

    if (!s || !*s)
        return err_set(err, -EINVAL, "empty percentage: expected e.g. 1%% or 0.5%%");
    n = parse_decimal(s, &ip, &fp);
    if (n <= 0)
        return err_set(err, -EINVAL, "bad percentage '%s': expected e.g. 1%% or 0.5%%", s);
    double v = (double)ip + (double)fp / 1e9;
    if (strcmp(s + n, "%") == 0) {
        v /= 100.0;
    } else if (s[n]) {
        return err_set(err, -EINVAL, "bad percentage '%s': expected e.g. 1%% or 0.5%%", s);
    }
    if (v > 1.0)
        return err_set(err, -ERANGE, "percentage '%s' is above 100%%", s);
    *fraction = v;
    return 0;
}

const char *qty_format_cpu(int64_t millicores, char buf[QTY_LEN])
{
    if (millicores % 1000 == 0)
        snprintf(buf, QTY_LEN, "%" PRId64, millicores / 1000);
    else
        snprintf(buf, QTY_LEN, "%" PRId64 "m", millicores);
    return buf;
}

const char *qty_format_cores(int64_t millicores, char buf[QTY_LEN])
{
    if (millicores % 1000 == 0)
        snprintf(buf, QTY_LEN, "%" PRId64, millicores / 1000);
    else if (millicores % 100 == 0)
        snprintf(buf, QTY_LEN, "%.1f", (double)millicores / 1000.0);
    else if (millicores % 10 == 0)
        snprintf(buf, QTY_LEN, "%.2f", (double)millicores / 1000.0);
    else
        snprintf(buf, QTY_LEN, "%.3f", (double)millicores / 1000.0);
    return buf;
}

const char *qty_format_memory(int64_t bytes, char buf[QTY_LEN])
{
    static const char *const names[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
    static const int shifts[] = {60, 50, 40, 30, 20, 10};

    for (int i = 0; i < 6; i++) {
        int64_t m = 1LL << shifts[i];
        if (bytes != 0 && bytes % m == 0) {
            snprintf(buf, QTY_LEN, "%" PRId64 "%s", bytes / m, names[i]);
            return buf;
        }
    }
    snprintf(buf, QTY_LEN, "%" PRId64, bytes);
    return buf;
}

const char *qty_format_duration(int64_t usec, char buf[QTY_LEN])
{
    /* Thresholds sit where three significant digits would round up to the next unit, so
     * 999.7 ms prints as "1s", never as "1e+03ms". */
    if (usec < 1000)
        snprintf(buf, QTY_LEN, "%" PRId64 "us", usec);
    else if (usec < 999500)
        snprintf(buf, QTY_LEN, "%.3gms", (double)usec / 1e3);
    else if (usec < 59950000)
        snprintf(buf, QTY_LEN, "%.3gs", (double)usec / 1e6);
    else
        snprintf(buf, QTY_LEN, "%" PRId64 "m%" PRId64 "s", (usec + 500000) / 60000000,
                 ((usec + 500000) % 60000000) / 1000000);
    return buf;
}
