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

/* Adds point i's histogram from rec (an empty one past rec's last slot). */
static bool add_hist(cJSON *pt, const struct series_rec *rec, size_t i)
{
    static const struct hist empty = {.min_us = UINT64_MAX};
    char *enc = hist_b64_encode(i < rec->n ? &rec->slots[i].h : &empty);
    bool ok = enc && cJSON_AddStringToObject(pt, "latency_hist", enc);
    free(enc);
    return ok;
}

bool series_json_add(cJSON *o, const struct load_series *s, const struct series_rec *rec)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "series");
    /* A result that never ran (n == 0) still states a valid interval: the first one. */
    double iv = s->interval_s > 0 ? s->interval_s : (double)SERIES_BASE_NS / 1e9;
    if (!arr || !add(o, "series_interval_s", iv))
        return false;
    /* The histograms are the recorder's slots, one per point, only while the recorder is at
     * the rendered interval (series_render leaves it there). */
    if (rec && (!rec->slots || (double)rec->interval_ns != iv * 1e9 || rec->n > s->n))
        rec = NULL;
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
        if (ok && rec)
            ok = add_hist(pt, rec, i);
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

/* Point i's latency_hist into slot s: the point's own figures must be the histogram's (its
 * percentiles exactly, no more samples than requests), or the two would disagree. */
static int hist_parse(const cJSON *pt, size_t i, const struct series_point *p,
                      struct series_slot *s, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(pt, "latency_hist");
    int rc;

    if (!cJSON_IsString(v) || !v->valuestring)
        return err_set(err, -EINVAL, "series[%zu].latency_hist: expected a base64 string", i);
    if ((rc = hist_b64_decode(v->valuestring, &s->h, err)))
        return err_wrap(err, rc, "series[%zu].latency_hist", i);
    if (s->h.count > p->requests)
        return err_set(err, -EINVAL, "series[%zu].latency_hist: more samples than requests", i);
    if (hist_percentile(&s->h, 50) != p->p50_us || hist_percentile(&s->h, 95) != p->p95_us ||
        hist_percentile(&s->h, 99) != p->p99_us)
        return err_set(err, -EINVAL, "series[%zu]: p50/p95/p99 disagree with latency_hist", i);
    s->count = p->requests;
    s->failed = p->failed;
    return 0;
}

/* A recorder for n parsed points at interval_s, origin 0 (the window's start). */
static struct series_rec *rec_new(size_t n, double interval_s)
{
    struct series_rec *r = malloc(sizeof(*r));
    if (!r || series_rec_init(r, 0) != 0) {
        free(r);
        return NULL;
    }
    r->interval_ns = (int64_t)(interval_s * 1e9);
    r->n = n;
    for (size_t i = 0; i < n; i++)
        hist_init(&r->slots[i].h);
    return r;
}

static void rec_drop(struct series_rec **rec)
{
    if (rec && *rec) {
        series_rec_free(*rec);
        free(*rec);
        *rec = NULL;
    }
}

int series_json_parse(const cJSON *o, struct load_series *out, struct series_rec **rec, char *err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "series");
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(o, "series_interval_s");
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (rec)
        *rec = NULL;
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
    const cJSON *first = cJSON_GetArrayItem(arr, 0);
    out->delivery = cJSON_GetObjectItemCaseSensitive(first, "frames") != NULL;
    /* So are the points' histograms (a generator's result carries them, for the merge). */
    bool hists = rec && cJSON_GetObjectItemCaseSensitive(first, "latency_hist") != NULL;
    if (hists && !(*rec = rec_new(n, out->interval_s))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    size_t i = 0;
    const cJSON *pt;
    cJSON_ArrayForEach(pt, arr)
    {
        struct series_point *p = &out->pts[i];
        if ((rc = point_parse(pt, i, out->delivery, p, err)) ||
            (hists && (rc = hist_parse(pt, i, p, &(*rec)->slots[i], err))))
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
    if (rc) {
        load_series_free(out);
        rec_drop(rec);
    }
    return rc;
}
