#include "load/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fmt.h"
#include "load/spread.h"
#include "load/streams.h"
#include "profile/url.h"

/* ---- text -------------------------------------------------------------------------------- */

/* Why the verdict is what it is, in the thresholds' own terms. */
static void verdict_reason(const struct load_result *r, const struct profile *p, char *out,
                           size_t len)
{
    char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], d[FMT_LEN];
    const struct profile_thresholds *t = &p->thresholds;
    uint64_t p95 = hist_percentile(&r->total.latency, 95);
    double er = load_stats_error_rate(&r->total);

    out[0] = '\0';
    if (r->total.requests == 0) {
        snprintf(out, len, "no request completed");
        return;
    }
    fmt_latency(p95, a);
    fmt_pct(er, c);
    switch (r->verdict) {
    case VERDICT_HEALTHY:
        snprintf(out, len, "p95 %s < %s and errors %s < %s", a,
                 fmt_latency((uint64_t)t->healthy_p95_us, b), c, fmt_pct(t->healthy_errors, d));
        break;
    case VERDICT_OVERLOADED:
        if ((int64_t)p95 > t->overloaded_p95_us)
            snprintf(out, len, "p95 %s > %s", a, fmt_latency((uint64_t)t->overloaded_p95_us, b));
        else if (er > t->overloaded_errors)
            snprintf(out, len, "errors %s > %s", c, fmt_pct(t->overloaded_errors, d));
        break;
    case VERDICT_STRESSED:
        if ((int64_t)p95 >= t->healthy_p95_us)
            snprintf(out, len, "p95 %s between %s and %s", a,
                     fmt_latency((uint64_t)t->healthy_p95_us, b),
                     fmt_latency((uint64_t)t->overloaded_p95_us, d));
        else
            snprintf(out, len, "errors %s, at or above %s", c, fmt_pct(t->healthy_errors, d));
        break;
    }
}

static size_t name_width(const struct load_result *r)
{
    size_t w = strlen("name");
    for (size_t i = 0; i < r->nnames; i++) {
        size_t l = r->names[i] ? strlen(r->names[i]) : 0;
        if (l > w)
            w = l;
    }
    return w > 40 ? 40 : w;
}

static void scope_row(FILE *f, const char *label, int width, const struct load_stats *s,
                      double duration_s)
{
    char n[FMT_LEN], rate[FMT_LEN], err[FMT_LEN], l[5][FMT_LEN];
    const struct hist *h = &s->latency;
    fprintf(f, "  %-*.*s %10s %9s %8s %8s %8s %8s %8s %8s\n", width, width, label,
            fmt_count(s->requests, n), fmt_rate(load_stats_throughput(s, duration_s), rate),
            fmt_pct(load_stats_error_rate(s), err), fmt_latency((uint64_t)hist_mean(h), l[0]),
            fmt_latency(hist_percentile(h, 50), l[1]), fmt_latency(hist_percentile(h, 95), l[2]),
            fmt_latency(hist_percentile(h, 99), l[3]), fmt_latency(h->count ? h->max_us : 0, l[4]));
}

/* The run in figures: what ran, the totals, latency, errors, bytes, the generator's CPU, the
 * verdict (its reason from p when given). */
static void summary_text(FILE *f, const struct load_result *r, const struct profile *p)
{
    char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN], reason[160];
    const struct load_stats *t = &r->total;
    const struct hist *h = &t->latency;
    bool open_loop = r->target_rate_rps > 0;

    fprintf(f, "Load test: %.1fs measured, ", r->duration_s);
    if (open_loop)
        fprintf(f, "open loop at %s req/s", fmt_rate(r->target_rate_rps, a));
    else if (r->nstages)
        fprintf(f, "%zu stages, up to %u users", r->nstages, r->users);
    else
        fprintf(f, "closed loop, %u users", r->users);
    fprintf(f, ", %u thread%s\n", r->threads, r->threads == 1 ? "" : "s");
    if (r->interrupted)
        fprintf(f, "  INTERRUPTED: the figures cover only what ran before the signal\n");

    fprintf(f, "\n  requests     %s", fmt_count(t->requests, a));
    fprintf(f, " (%s responses, %s failed)\n", fmt_count(t->responses, b), fmt_count(t->failed, c));
    fprintf(f, "  duration     %.2f s\n", r->duration_s);
    fprintf(f, "  throughput   %s req/s\n", fmt_rate(load_stats_throughput(t, r->duration_s), a));
    if (open_loop)
        fprintf(f, "  rate         target %s req/s, achieved %s req/s, peak concurrency %u\n",
                fmt_rate(r->target_rate_rps, a), fmt_rate(r->achieved_rate_rps, b),
                r->peak_concurrency);
    if (h->count) {
        char l[7][FMT_LEN];
        fprintf(
            f, "  latency      mean %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s\n",
            fmt_latency((uint64_t)llround(hist_mean(h)), l[0]),
            fmt_latency(hist_percentile(h, 50), l[1]), fmt_latency(hist_percentile(h, 90), l[2]),
            fmt_latency(hist_percentile(h, 95), l[3]), fmt_latency(hist_percentile(h, 99), l[4]),
            fmt_latency(hist_percentile(h, 99.9), l[5]), fmt_latency(h->max_us, l[6]));
    } else {
        fprintf(f, "  latency      none recorded\n");
    }
    fprintf(f, "  errors       %s (%s of %s)\n", fmt_pct(load_stats_error_rate(t), a),
            fmt_count(t->failed, b), fmt_count(t->requests, c));
    fprintf(f, "  bytes        in %s, out %s\n", fmt_bytes(t->bytes_in, a),
            fmt_bytes(t->bytes_out, b));
    fprintf(f, "  tool CPU     %.2f s", r->tool_cpu_s);
    if (r->duration_s > 0)
        fprintf(f, " (%.2f cores)", r->tool_cpu_s / r->duration_s);
    fprintf(f, "\n");
    if (p)
        verdict_reason(r, p, reason, sizeof(reason));
    else
        reason[0] = '\0';
    fprintf(f, "  verdict      %s%s%s%s\n", verdict_name(r->verdict), *reason ? " (" : "", reason,
            *reason ? ")" : "");
}

/* One table per scope the run measured: by request name, by URL (a spread), by stage. */
static void tables_text(FILE *f, const struct load_result *r, const struct profile *p)
{
    char a[FMT_LEN], b[FMT_LEN], c[FMT_LEN];

    int w = (int)name_width(r);
    if (r->nnames > 0) {
        fprintf(f, "\n  %-*s %10s %9s %8s %8s %8s %8s %8s %8s\n", w, "name", "requests", "req/s",
                "errors", "mean", "p50", "p95", "p99", "max");
        for (size_t i = 0; i < r->nnames; i++)
            scope_row(f, r->names[i] ? r->names[i] : "", w, &r->by_name[i], r->duration_s);
    }

    if (r->nurls > 0) {
        int uw = 3;
        for (size_t i = 0; i < r->nurls; i++)
            if ((int)strlen(r->urls[i]) > uw)
                uw = (int)strlen(r->urls[i]);
        fprintf(f, "\n  %-*s %10s %9s %8s %8s %8s %8s %8s %8s\n", uw, "url", "requests", "req/s",
                "errors", "mean", "p50", "p95", "p99", "max");
        for (size_t i = 0; i < r->nurls; i++)
            scope_row(f, r->urls[i], uw, &r->by_url[i], r->duration_s);
    }

    if (r->nstages > 0) {
        fprintf(f, "\n  %-5s %9s %-12s %10s %9s %8s %8s %8s %8s\n", "stage", "duration", "target",
                "requests", "req/s", "errors", "p50", "p95", "p99");
        for (size_t i = 0; i < r->nstages; i++) {
            const struct load_stats *s = &r->by_stage[i];
            double dur = r->stage_duration_s[i];
            char target[FMT_LEN] = "";
            if (p && p->nstages == r->nstages) {
                if (p->stages[i].rate >= 0)
                    snprintf(target, sizeof(target), "%g req/s", p->stages[i].rate);
                else
                    snprintf(target, sizeof(target), "%g users", p->stages[i].users);
            }
            char l[3][FMT_LEN];
            fprintf(f, "  %-5zu %8.1fs %-12s %10s %9s %8s %8s %8s %8s\n", i + 1, dur, target,
                    fmt_count(s->requests, a), fmt_rate(load_stats_throughput(s, dur), b),
                    fmt_pct(load_stats_error_rate(s), c),
                    fmt_latency(hist_percentile(&s->latency, 50), l[0]),
                    fmt_latency(hist_percentile(&s->latency, 95), l[1]),
                    fmt_latency(hist_percentile(&s->latency, 99), l[2]));
        }
    }
}

/* The outcomes: responses by HTTP status, then the failures without a response by class. */
static void outcomes_text(FILE *f, const struct load_stats *t)
{
    char a[FMT_LEN];

    fprintf(f, "\n  status codes");
    int any = 0;
    for (int code = 0; code < LOAD_STATUS_MAX; code++) {
        if (t->status[code]) {
            fprintf(f, "%s%d: %s", any ? ", " : " ", code, fmt_count(t->status[code], a));
            any = 1;
        }
    }
    fprintf(f, "%s\n", any ? "" : " none");
    /* Failures by HTTP status are in the line above; this one names what failed without a
     * response, so "none" here next to a non-zero error rate is not a contradiction. */
    fprintf(f, "  no response ");
    any = 0;
    for (int e = 0; e < LOAD_ERR_COUNT; e++) {
        if (t->errors[e]) {
            fprintf(f, "%s%s: %s", any ? ", " : " ", load_errclass_name((enum load_errclass)e),
                    fmt_count(t->errors[e], a));
            any = 1;
        }
    }
    fprintf(f, "%s\n", any ? "" : " none");
}

int report_text(FILE *f, const struct load_result *r, const struct profile *p)
{
    summary_text(f, r, p);
    tables_text(f, r, p);
    outcomes_text(f, &r->total);
    if (r->streams && stream_report_text(f, r->streams) != 0)
        return -EIO;
    fflush(f);
    return ferror(f) ? -EIO : 0;
}

/* ---- JSON -------------------------------------------------------------------------------- */

/* Figures rounded to what they mean (a microsecond, a thousandth of a request per second), so
 * the JSON reads "617.3" rather than "617.29999999999995". */
static double round3(double v)
{
    if (!isfinite(v))
        return 0;
    return round(v * 1000) / 1000;
}

static bool add_num(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

/* The fields every scope (overall, one name, one stage) carries. */
static bool scope_json(cJSON *o, const struct load_stats *s, double duration_s)
{
    const struct hist *h = &s->latency;
    cJSON *lat, *codes, *errs;
    char key[8];
    bool ok =
        add_num(o, "requests", (double)s->requests) &&
        add_num(o, "responses", (double)s->responses) && add_num(o, "failed", (double)s->failed) &&
        add_num(o, "error_rate", load_stats_error_rate(s)) &&
        add_num(o, "throughput_rps", round3(load_stats_throughput(s, duration_s))) &&
        (lat = cJSON_AddObjectToObject(o, "latency_ms")) &&
        add_num(lat, "mean", round3(hist_mean(h) / 1e3)) &&
        add_num(lat, "min", h->count ? (double)h->min_us / 1e3 : 0) &&
        add_num(lat, "p50", (double)hist_percentile(h, 50) / 1e3) &&
        add_num(lat, "p90", (double)hist_percentile(h, 90) / 1e3) &&
        add_num(lat, "p95", (double)hist_percentile(h, 95) / 1e3) &&
        add_num(lat, "p99", (double)hist_percentile(h, 99) / 1e3) &&
        add_num(lat, "p999", (double)hist_percentile(h, 99.9) / 1e3) &&
        add_num(lat, "max", (double)h->max_us / 1e3) && add_num(lat, "samples", (double)h->count) &&
        (codes = cJSON_AddObjectToObject(o, "status_codes")) &&
        (errs = cJSON_AddObjectToObject(o, "errors")) &&
        add_num(o, "bytes_in", (double)s->bytes_in) &&
        add_num(o, "bytes_out", (double)s->bytes_out);
    if (!ok)
        return false;
    for (int c = 0; c < LOAD_STATUS_MAX; c++) {
        if (!s->status[c])
            continue;
        snprintf(key, sizeof(key), "%d", c);
        if (!add_num(codes, key, (double)s->status[c]))
            return false;
    }
    /* Every class, zeros included: a script can read .errors.timeout without a null check. */
    for (int e = 0; e < LOAD_ERR_COUNT; e++) {
        if (!add_num(errs, load_errclass_name((enum load_errclass)e), (double)s->errors[e]))
            return false;
    }

    char *enc = hist_b64_encode(h);
    ok = enc && cJSON_AddStringToObject(o, "latency_hist", enc);
    free(enc);
    return ok;
}

static cJSON *report_json_build(const struct load_result *r, bool series_hists)
{
    cJSON *o = cJSON_CreateObject(), *names, *stages;
    bool open_loop = r->target_rate_rps > 0;
    bool ok = o && scope_json(o, &r->total, r->duration_s) &&
              add_num(o, "duration_s", round3(r->duration_s)) &&
              add_num(o, "tool_cpu_s", round3(r->tool_cpu_s)) &&
              cJSON_AddStringToObject(o, "verdict", verdict_name(r->verdict)) &&
              cJSON_AddBoolToObject(o, "interrupted", r->interrupted) &&
              cJSON_AddStringToObject(o, "mode", open_loop ? "open" : "closed") &&
              add_num(o, "threads", r->threads) && add_num(o, "users", r->users) &&
              add_num(o, "peak_concurrency", r->peak_concurrency);
    if (ok && open_loop)
        ok = add_num(o, "target_rate_rps", round3(r->target_rate_rps)) &&
             add_num(o, "achieved_rate_rps", round3(r->achieved_rate_rps));
    ok = ok && (names = cJSON_AddObjectToObject(o, "by_name"));
    for (size_t i = 0; ok && i < r->nnames; i++) {
        cJSON *n = cJSON_CreateObject();
        ok = n && cJSON_AddItemToObject(names, r->names[i] ? r->names[i] : "", n);
        if (!ok)
            cJSON_Delete(n);
        ok = ok && scope_json(n, &r->by_name[i], r->duration_s);
    }
    if (ok && r->nurls > 0) {
        cJSON *urls = cJSON_AddObjectToObject(o, "by_url");
        ok = urls != NULL;
        for (size_t i = 0; ok && i < r->nurls; i++) {
            cJSON *u = cJSON_CreateObject();
            ok = u && cJSON_AddItemToObject(urls, r->urls[i], u);
            if (!ok)
                cJSON_Delete(u);
            ok = ok && scope_json(u, &r->by_url[i], r->duration_s);
        }
    }
    if (ok && r->nstages > 0) {
        ok = (stages = cJSON_AddArrayToObject(o, "by_stage")) != NULL;
        for (size_t i = 0; ok && i < r->nstages; i++) {
            cJSON *s = cJSON_CreateObject();
            ok = s && cJSON_AddItemToArray(stages, s);
            if (!ok)
                cJSON_Delete(s);
            ok = ok && add_num(s, "stage", (double)(i + 1)) &&
                 add_num(s, "duration_s", round3(r->stage_duration_s[i])) &&
                 scope_json(s, &r->by_stage[i], r->stage_duration_s[i]);
        }
    }
    ok = ok && series_json_add(o, &r->series, series_hists ? r->series_rec : NULL);
    ok = ok && (!r->streams || stream_report_json(o, r->streams));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *report_json(const struct load_result *r)
{
    return report_json_build(r, false);
}

cJSON *report_json_mergeable(const struct load_result *r)
{
    return report_json_build(r, true);
}

/* ---- JSON back into a result ------------------------------------------------------------- */

#define JSON_MAX_COUNT 9007199254740992.0 /* 2^53: above it a double no longer counts exactly */
#define JSON_MAX_NAME  1024

static const cJSON *member(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static int json_number_of(const cJSON *v, const char *k, const char *path, double max, double *out,
                          char *err)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > max)
        return err_set(err, -EINVAL, "%s%s: expected a number between 0 and %g", path, k, max);
    *out = v->valuedouble;
    return 0;
}

static int json_number(const cJSON *o, const char *k, const char *path, double max, double *out,
                       char *err)
{
    return json_number_of(member(o, k), k, path, max, out, err);
}

static int json_count_of(const cJSON *v, const char *k, const char *path, uint64_t *out, char *err)
{
    double d = 0;
    int rc = json_number_of(v, k, path, JSON_MAX_COUNT, &d, err);
    if (rc)
        return rc;
    if (d != floor(d))
        return err_set(err, -EINVAL, "%s%s: expected a whole number", path, k);
    *out = (uint64_t)d;
    return 0;
}

static int json_count(const cJSON *o, const char *k, const char *path, uint64_t *out, char *err)
{
    return json_count_of(member(o, k), k, path, out, err);
}

static int scope_parse(const cJSON *o, const char *path, struct load_stats *s, char *err)
{
    const cJSON *codes, *errs, *hist, *it;
    int rc;

    load_stats_init(s);
    if (!cJSON_IsObject(o)) {
        size_t l = strlen(path); /* the path ends in '.', ready for a field name */
        return err_set(err, -EINVAL, "%.*s: expected an object", (int)(l ? l - 1 : 0), path);
    }
    if ((rc = json_count(o, "requests", path, &s->requests, err)) ||
        (rc = json_count(o, "responses", path, &s->responses, err)) ||
        (rc = json_count(o, "failed", path, &s->failed, err)) ||
        (rc = json_count(o, "bytes_in", path, &s->bytes_in, err)) ||
        (rc = json_count(o, "bytes_out", path, &s->bytes_out, err)))
        return rc;
    if (s->responses > s->requests || s->failed > s->requests)
        return err_set(err, -EINVAL, "%s: responses and failed cannot exceed requests", path);

    codes = member(o, "status_codes");
    if (!cJSON_IsObject(codes))
        return err_set(err, -EINVAL, "%sstatus_codes: expected an object", path);
    cJSON_ArrayForEach(it, codes)
    {
        char *end;
        long code = it->string ? strtol(it->string, &end, 10) : -1;
        if (code < 100 || code >= LOAD_STATUS_MAX || *end || strlen(it->string) != 3)
            return err_set(err, -EINVAL, "%sstatus_codes: '%.8s' is not a status code", path,
                           it->string ? it->string : "");
        if ((rc = json_count_of(it, it->string, path, &s->status[code], err)))
            return rc;
    }

    errs = member(o, "errors");
    if (!cJSON_IsObject(errs))
        return err_set(err, -EINVAL, "%serrors: expected an object", path);
    cJSON_ArrayForEach(it, errs)
    {
        int e = 0;
        while (e < LOAD_ERR_COUNT &&
               strcmp(it->string ? it->string : "", load_errclass_name((enum load_errclass)e)))
            e++;
        if (e == LOAD_ERR_COUNT)
            return err_set(err, -EINVAL, "%serrors: unknown class '%.32s'", path,
                           it->string ? it->string : "");
        if ((rc = json_count_of(it, it->string, path, &s->errors[e], err)))
            return rc;
    }

    hist = member(o, "latency_hist");
    if (!cJSON_IsString(hist) || !hist->valuestring)
        return err_set(err, -EINVAL, "%slatency_hist: expected a base64 string", path);
    if ((rc = hist_b64_decode(hist->valuestring, &s->latency, err)) != 0)
        return err_wrap(err, rc, "%slatency_hist", path);
    if (s->latency.count > s->requests)
        return err_set(err, -EINVAL, "%slatency_hist: more samples than requests", path);
    return 0;
}

/* by_url: { URL: scope }, in the order written; absent (or null) for a load to one target. */
static int by_url_parse(const cJSON *urls, struct load_result *r, char *err)
{
    const cJSON *it;
    char path[96];
    size_t n, i = 0;

    if (!urls || cJSON_IsNull(urls))
        return 0;
    if (!cJSON_IsObject(urls))
        return err_set(err, -EINVAL, "by_url: expected an object");
    n = (size_t)cJSON_GetArraySize(urls);
    if (n > LOAD_MAX_URLS)
        return err_set(err, -EINVAL, "by_url: more than %d URLs", LOAD_MAX_URLS);
    if (!n)
        return 0;
    r->urls = calloc(n, sizeof(*r->urls));
    r->by_url = calloc(n, sizeof(*r->by_url));
    if (!r->urls || !r->by_url)
        return err_set(err, -ENOMEM, "out of memory");
    r->nurls = n;
    cJSON_ArrayForEach(it, urls)
    {
        int rc;
        if (!it->string || !it->string[0] || strlen(it->string) > URL_MAX)
            return err_set(err, -EINVAL, "by_url: a URL is missing or too long");
        for (size_t k = 0; k < i; k++)
            if (!strcmp(r->urls[k], it->string))
                return err_set(err, -EINVAL, "by_url: '%.64s' appears twice", it->string);
        if (!(r->urls[i] = strdup(it->string)))
            return err_set(err, -ENOMEM, "out of memory");
        snprintf(path, sizeof(path), "by_url.%.64s.", it->string);
        if ((rc = scope_parse(it, path, &r->by_url[i], err)))
            return rc;
        i++;
    }
    return 0;
}

/* A parser, long on purpose: every field of results.json's load section read and checked in
 * the order the document gives them, each error naming its path; split, a field's check would
 * sit apart from the field. */
int report_json_parse(const cJSON *j, struct load_result *r, char *err)
{
    const cJSON *v, *names, *stages, *it;
    char path[64];
    double d;
    int rc;

    memset(r, 0, sizeof(*r));
    if (!cJSON_IsObject(j))
        return err_set(err, -EINVAL, "report: expected a JSON object");
    if ((rc = scope_parse(j, "", &r->total, err)))
        goto out;
    if ((rc = json_number(j, "duration_s", "", 1e9, &r->duration_s, err)) ||
        (rc = json_number(j, "tool_cpu_s", "", 1e12, &r->tool_cpu_s, err)))
        goto out;
    if ((rc = json_number(j, "threads", "", 1e6, &d, err)))
        goto out;
    r->threads = (unsigned)d;
    if ((rc = json_number(j, "users", "", 1e9, &d, err)))
        goto out;
    r->users = (unsigned)d;
    if ((rc = json_number(j, "peak_concurrency", "", 1e9, &d, err)))
        goto out;
    r->peak_concurrency = (unsigned)d;

    v = member(j, "interrupted");
    if (!cJSON_IsBool(v)) {
        rc = err_set(err, -EINVAL, "interrupted: expected true or false");
        goto out;
    }
    r->interrupted = cJSON_IsTrue(v);

    v = member(j, "verdict");
    r->verdict = VERDICT_HEALTHY;
    while (cJSON_IsString(v) && r->verdict <= VERDICT_OVERLOADED &&
           strcmp(v->valuestring, verdict_name(r->verdict)))
        r->verdict++;
    if (!cJSON_IsString(v) || r->verdict > VERDICT_OVERLOADED) {
        rc = err_set(err, -EINVAL, "verdict: expected HEALTHY, STRESSED or OVERLOADED");
        goto out;
    }

    v = member(j, "mode");
    if (cJSON_IsString(v) && !strcmp(v->valuestring, "open")) {
        if ((rc = json_number(j, "target_rate_rps", "", 1e12, &r->target_rate_rps, err)) ||
            (rc = json_number(j, "achieved_rate_rps", "", 1e12, &r->achieved_rate_rps, err)))
            goto out;
        if (r->target_rate_rps <= 0) {
            rc = err_set(err, -EINVAL, "target_rate_rps: must be positive in open loop");
            goto out;
        }
    } else if (!cJSON_IsString(v) || strcmp(v->valuestring, "closed")) {
        rc = err_set(err, -EINVAL, "mode: expected \"open\" or \"closed\"");
        goto out;
    }

    names = member(j, "by_name");
    if (!cJSON_IsObject(names)) {
        rc = err_set(err, -EINVAL, "by_name: expected an object");
        goto out;
    }
    size_t n = (size_t)cJSON_GetArraySize(names);
    if (n > PROFILE_MAX_REQUESTS) {
        rc = err_set(err, -EINVAL, "by_name: more than %d names", PROFILE_MAX_REQUESTS);
        goto out;
    }
    if (n) {
        r->names = calloc(n, sizeof(*r->names));
        r->by_name = calloc(n, sizeof(*r->by_name));
        r->nnames = n;
        if (!r->names || !r->by_name) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
    }
    size_t i = 0;
    cJSON_ArrayForEach(it, names)
    {
        if (!it->string || strlen(it->string) > JSON_MAX_NAME) {
            rc = err_set(err, -EINVAL, "by_name: a name is missing or too long");
            goto out;
        }
        for (size_t k = 0; k < i; k++) {
            if (!strcmp(r->names[k], it->string)) {
                rc = err_set(err, -EINVAL, "by_name: '%.64s' appears twice", it->string);
                goto out;
            }
        }
        if (!(r->names[i] = strdup(it->string))) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        snprintf(path, sizeof(path), "by_name.%.40s.", it->string);
        if ((rc = scope_parse(it, path, &r->by_name[i], err)))
            goto out;
        i++;
    }

    /* A load over several URLs (loadtest --url repeated) adds by_url beside the total. */
    if ((rc = by_url_parse(member(j, "by_url"), r, err)))
        goto out;

    if ((rc = series_json_parse(j, &r->series, &r->series_rec, err)))
        goto out;

    stages = member(j, "by_stage");
    if (stages) {
        if (!cJSON_IsArray(stages)) {
            rc = err_set(err, -EINVAL, "by_stage: expected an array");
            goto out;
        }
        n = (size_t)cJSON_GetArraySize(stages);
        if (n > PROFILE_MAX_STAGES) {
            rc = err_set(err, -EINVAL, "by_stage: more than %d stages", PROFILE_MAX_STAGES);
            goto out;
        }
        if (n) {
            r->by_stage = calloc(n, sizeof(*r->by_stage));
            r->stage_duration_s = calloc(n, sizeof(*r->stage_duration_s));
            r->nstages = n;
            if (!r->by_stage || !r->stage_duration_s) {
                rc = err_set(err, -ENOMEM, "out of memory");
                goto out;
            }
        }
        i = 0;
        cJSON_ArrayForEach(it, stages)
        {
            snprintf(path, sizeof(path), "by_stage[%zu].", i);
            if ((rc = scope_parse(it, path, &r->by_stage[i], err)) ||
                (rc = json_number(it, "duration_s", path, 1e9, &r->stage_duration_s[i], err)))
                goto out;
            i++;
        }
    }
out:
    if (rc)
        load_result_free(r);
    return rc;
}
