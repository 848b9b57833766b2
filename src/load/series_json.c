/* The series in a report's JSON, and back (the sweep's resume path reads its results). */

#include "load/series.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_COUNT 9007199254740992.0 /* 2^53 */
#define MAX_INTERVAL_S 1e7                /* far beyond any run: 2^k seconds, checked below */

static double round3(double v)
{
    return isfinite(v) ? round(v * 1000) / 1000 : 0;
}

static bool add(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static double ms(uint64_t us)
{
    return (double)us / 1e3;
}

bool series_json_add(cJSON *o, const struct load_series *s)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "series");
    /* A result that never ran (n == 0) still states a valid interval: the first one. */
    double iv = s->interval_s > 0 ? s->interval_s : (double)SERIES_BASE_NS / 1e9;
    if (!arr || !add(o, "series_interval_s", iv))
        return false;
    for (size_t i = 0; i < s->n; i++) {
        const struct series_point *p = &s->pts[i];
        cJSON *pt = cJSON_CreateObject();
        if (!pt || !cJSON_AddItemToArray(arr, pt)) {
            cJSON_Delete(pt);
            return false;
        }
        bool ok = add(pt, "t", round3(p->t_s)) && add(pt, "requests", (double)p->requests) &&
                  add(pt, "errors", (double)p->failed) &&
                  add(pt, "rps", round3(p->dur_s > 0 ? (double)p->requests / p->dur_s : 0)) &&
                  add(pt, "p50_ms", ms(p->p50_us)) && add(pt, "p95_ms", ms(p->p95_us)) &&
                  add(pt, "p99_ms", ms(p->p99_us));
        if (ok && s->delivery)
            ok = add(pt, "frames", (double)p->frames) &&
                 add(pt, "delivery_p50_ms", ms(p->d_p50_us)) &&
                 add(pt, "delivery_p95_ms", ms(p->d_p95_us)) &&
                 add(pt, "delivery_p99_ms", ms(p->d_p99_us));
        if (!ok)
            return false;
    }
    return true;
}

static int num(const cJSON *o, const char *k, size_t i, double max, double *out, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > max)
        return err_set(err, -EINVAL, "series[%zu].%s: expected a number between 0 and %g", i, k,
                       max);
    *out = v->valuedouble;
    return 0;
}

static int count(const cJSON *o, const char *k, size_t i, uint64_t *out, char *err)
{
    double d;
    int rc = num(o, k, i, JSON_MAX_COUNT, &d, err);
    if (rc)
        return rc;
    if (d != floor(d))
        return err_set(err, -EINVAL, "series[%zu].%s: expected a whole number", i, k);
    *out = (uint64_t)d;
    return 0;
}

static int latency(const cJSON *o, const char *k, size_t i, uint64_t *out, char *err)
{
    double d;
    int rc = num(o, k, i, (double)HIST_MAX_US / 1e3, &d, err);
    if (!rc)
        *out = (uint64_t)llround(d * 1e3);
    return rc;
}

static int point_parse(const cJSON *pt, size_t i, bool delivery, struct series_point *p, char *err)
{
    int rc;
    if (!cJSON_IsObject(pt))
        return err_set(err, -EINVAL, "series[%zu]: expected an object", i);
    if ((rc = num(pt, "t", i, MAX_INTERVAL_S * SERIES_MAX_POINTS, &p->t_s, err)) ||
        (rc = count(pt, "requests", i, &p->requests, err)) ||
        (rc = count(pt, "errors", i, &p->failed, err)) ||
        (rc = latency(pt, "p50_ms", i, &p->p50_us, err)) ||
        (rc = latency(pt, "p95_ms", i, &p->p95_us, err)) ||
        (rc = latency(pt, "p99_ms", i, &p->p99_us, err)))
        return rc;
    if (p->failed > p->requests)
        return err_set(err, -EINVAL, "series[%zu]: more errors than requests", i);
    if (delivery && ((rc = count(pt, "frames", i, &p->frames, err)) ||
                     (rc = latency(pt, "delivery_p50_ms", i, &p->d_p50_us, err)) ||
                     (rc = latency(pt, "delivery_p95_ms", i, &p->d_p95_us, err)) ||
                     (rc = latency(pt, "delivery_p99_ms", i, &p->d_p99_us, err))))
        return rc;
    return 0;
}

int series_json_parse(const cJSON *o, struct load_series *out, char *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "series");
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(o, "series_interval_s");
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return err_set(err, -EINVAL, "series: expected an array");
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (n > SERIES_MAX_POINTS)
        return err_set(err, -EINVAL, "series: more than %d points", SERIES_MAX_POINTS);
    if (!cJSON_IsNumber(iv) || !(iv->valuedouble >= 1) || iv->valuedouble > MAX_INTERVAL_S ||
        iv->valuedouble != ldexp(1, ilogb(iv->valuedouble)))
        return err_set(err, -EINVAL, "series_interval_s: expected 2^k seconds");
    if (n == 0) {
        out->interval_s = iv->valuedouble;
        return 0;
    }
    out->pts = calloc(n, sizeof(*out->pts));
    if (!out->pts)
        return err_set(err, -ENOMEM, "out of memory");
    out->n = n;
    out->interval_s = iv->valuedouble;
    /* Delivery figures are all there or all absent: the first point decides. */
    out->delivery = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(arr, 0), "frames") != NULL;
    size_t i = 0;
    const cJSON *pt;
    cJSON_ArrayForEach(pt, arr)
    {
        struct series_point *p = &out->pts[i];
        if ((rc = point_parse(pt, i, out->delivery, p, err)))
            goto out;
        if (fabs(p->t_s - (double)i * out->interval_s) > 1e-3) {
            rc =
                err_set(err, -EINVAL, "series[%zu].t: expected %g", i, (double)i * out->interval_s);
            goto out;
        }
        /* The last point may be shorter than the interval: its rate says by how much. */
        double rps = 0;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(pt, "rps");
        if (cJSON_IsNumber(r) && isfinite(r->valuedouble))
            rps = r->valuedouble;
        p->dur_s = out->interval_s;
        if (rps > 0 && p->requests > 0 && (double)p->requests / rps < out->interval_s)
            p->dur_s = (double)p->requests / rps;
        i++;
    }
out:
    if (rc)
        load_series_free(out);
    return rc;
}
