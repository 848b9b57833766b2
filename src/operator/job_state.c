/* The progress document (state.json) a sweep keeps in its ConfigMap: the rows measured so far,
 * each with what its capacity search found, so that a restarted operator resumes where the last
 * one stopped. Anyone who may edit the ConfigMap may edit this document: reading it back is
 * parsing outside input (tests/fuzz/fuzz_operator_state.c). */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jb.h"
#include "core/stats.h"
#include "kube/objects.h"
#include "operator/job_int.h"
#include "output/output_set.h"
#include "sweep/search.h"

#define STATE_VERSION 1

/* The share of a ConfigMap state.json may take before the capacity searches' step tables are
 * left out of it: the output path keeps OUTPUT_RESERVE free for it, and the outputs are trimmed
 * to make room for anything beyond. Without its steps a resumed row keeps its capacity, its
 * interval and its marks; only results.json's `steps` of that row come back empty. */
#define STATE_STEPS_MAX OUTPUT_RESERVE

/* Significant digits kept of a measured figure: far below the noise of any measurement, and a
 * step table stays about 80 bytes a step. */
#define STATE_DIGITS 6

#define U64_CAP 9.0e18 /* below UINT64_MAX and INT64_MAX, exactly representable */

/* ---- writing --------------------------------------------------------------------------- */

/* v rounded to STATE_DIGITS significant digits, so that cJSON prints it short. */
static double rounded(double v)
{
    char buf[32];
    if (!isfinite(v) || v == 0)
        return isfinite(v) ? v : 0;
    snprintf(buf, sizeof(buf), "%.*g", STATE_DIGITS, v);
    return strtod(buf, NULL);
}

static void add_nums(struct jb *b, cJSON *arr, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        jb_num(b, arr, NULL, v[i]);
}

/* Bits of a step's third-to-last element. */
#define STEP_PASS      1u
#define STEP_GEN       2u
#define STEP_THROTTLED 4u /* the throttling figures after it are known */

/* One step as an array: kind, offered, achieved, sustained rps, p50, p95, p99 (us), error rate,
 * cpu cores, peak memory bytes, generator cores, bits, periods, throttled periods, throttled s,
 * usage window s. A state written before the usage window was kept has the first 15. */
#define STEP_FIELDS      16
#define STEP_FIELDS_PREV 15

static void step_to_json(struct jb *b, cJSON *arr, const struct capacity_step *st)
{
    unsigned bits = (st->pass ? STEP_PASS : 0) | (st->gen_limited ? STEP_GEN : 0) |
                    (st->throttling.known ? STEP_THROTTLED : 0);
    double v[STEP_FIELDS] = {
        (double)st->kind,
        rounded(st->offered_rps),
        rounded(st->achieved_rps),
        rounded(st->sustained_rps),
        (double)st->p50_us,
        (double)st->p95_us,
        (double)st->p99_us,
        rounded(st->error_rate),
        st->cpu_cores < 0 ? -1 : rounded(st->cpu_cores),
        (double)st->peak_memory_bytes,
        st->gen_cores < 0 ? -1 : rounded(st->gen_cores),
        (double)bits,
        (double)st->throttling.periods,
        (double)st->throttling.throttled_periods,
        rounded(st->throttling.throttled_s),
        st->usage_window_s < 0 ? -1 : rounded(st->usage_window_s),
    };
    add_nums(b, jb_arr(b, arr, NULL), v, STEP_FIELDS);
}

/* A capacity result in compact form (the field names of results.json's slo_capacity where they
 * exist). The interval is not stored: it is recomputed from the repeats it was made of. */
static void cap_to_json(struct jb *b, cJSON *parent, const struct capacity_result *cap,
                        bool with_steps)
{
    cJSON *o = jb_obj(b, parent, "capacity"), *a;
    if (!o)
        return;
    jb_num(b, o, "rps", rounded(cap->rps));
    jb_num(b, o, "per_core", rounded(cap->per_core));
    jb_str(b, o, "limited_by", search_limit_name(cap->limited_by));
    jb_num(b, o, "flags", cap->flags);
    jb_num(b, o, "cpu_cores", cap->cpu_cores < 0 ? -1 : rounded(cap->cpu_cores));
    jb_num(b, o, "peak_memory_bytes", (double)cap->peak_memory_bytes);
    if ((a = jb_arr(b, o, "repeat_rps")))
        for (size_t i = 0; i < cap->interval.n && i < CAPACITY_MAX_REPEATS; i++)
            jb_num(b, a, NULL, rounded(cap->repeat_rps[i]));
    if (cap->throttling.known && (a = jb_arr(b, o, "throttling"))) {
        double t[3] = {(double)cap->throttling.periods, (double)cap->throttling.throttled_periods,
                       rounded(cap->throttling.throttled_s)};
        add_nums(b, a, t, 3);
    }
    const struct capacity_recovery *rec = &cap->recovery;
    if (rec->settles && (a = jb_arr(b, o, "recovery"))) {
        /* settles, ran_out, longest_s, bound_s, at_rate */
        double t[5] = {rec->settles, rec->ran_out, rounded(rec->longest_s), rounded(rec->bound_s),
                       rec->at_rate};
        add_nums(b, a, t, 5);
    }
    if (with_steps && (a = jb_arr(b, o, "steps")))
        for (size_t i = 0; i < cap->nsteps && i < CAPACITY_MAX_STEPS; i++)
            step_to_json(b, a, &cap->steps[i]);
}

static void row_to_json(struct jb *b, cJSON *arr, const struct advisor_row *r, bool with_steps)
{
    cJSON *o = jb_obj(b, arr, NULL);
    if (!o)
        return;
    jb_str(b, o, "spec", r->variant.spec);
    jb_bool(b, o, "measured", r->measured);
    jb_str(b, o, "note", r->note);
    jb_str(b, o, "fail", platform_fail_name(r->fail));
    jb_num(b, o, "throughput_rps", r->throughput_rps);
    jb_num(b, o, "p50_us", (double)r->p50_us);
    jb_num(b, o, "p95_us", (double)r->p95_us);
    jb_num(b, o, "p99_us", (double)r->p99_us);
    jb_num(b, o, "error_rate", r->error_rate);
    jb_num(b, o, "requests", (double)r->requests);
    jb_num(b, o, "cpu_cores_used", r->cpu_cores_used);
    jb_num(b, o, "peak_memory_bytes", (double)r->peak_memory_bytes);
    jb_num(b, o, "gen_cores", r->gen_cores);
    jb_num(b, o, "host_other_cores", r->host_other_cores);
    jb_num(b, o, "flags", r->flags);
    if (r->applied_by[0])
        jb_str(b, o, "applied_by", r->applied_by);
    if (r->cap.searched)
        cap_to_json(b, o, &r->cap, with_steps);
}

/* The scale-out's finished points: replicas, where each came from (the enum's value), flags,
 * note and capacity (without steps: the 1-replica row keeps its own). */
static void scale_out_to_json(struct jb *b, cJSON *parent, const struct sweep_scale_out *so,
                              const char *spec)
{
    cJSON *o = jb_obj(b, parent, "scale_out"), *pts;
    if (!o)
        return;
    jb_str(b, o, "variant", spec);
    pts = jb_arr(b, o, "points");
    for (size_t i = 0; pts && i < so->npoints && i < PLATFORM_MAX_REPLICAS; i++) {
        const struct sweep_scale_point *pt = &so->points[i];
        cJSON *p = jb_obj(b, pts, NULL);
        if (!p)
            return;
        jb_num(b, p, "replicas", pt->replicas);
        jb_num(b, p, "from", (double)pt->from);
        jb_num(b, p, "flags", pt->flags);
        jb_str(b, p, "note", pt->note);
        if (pt->cap.searched)
            cap_to_json(b, p, &pt->cap, false);
    }
}

static char *state_text(const struct sweep_job *sj, const struct advisor_row *rows, size_t n,
                        const char *phase, bool with_steps)
{
    struct jb jb = JB_INIT, *b = &jb;
    cJSON *o = jb_new(b), *arr;
    char ts[40] = "";
    struct timespec now;
    char *text = NULL;

    if (!o)
        return NULL;
    clock_gettime(CLOCK_REALTIME, &now);
    if (kube_time_format(&now, 0, ts, sizeof(ts)) != 0)
        jb_fail(b); /* cannot happen with ts[40]; a document without its time is no document */
    jb_num(b, o, "version", STATE_VERSION);
    jb_str(b, o, "sweep", sj->x->j->handled);
    jb_str(b, o, "uid", sj->x->j->uid);
    jb_str(b, o, "mode", annot_mode_name(sj->x->req.mode));
    jb_str(b, o, "configs", sj->configs);
    jb_num(b, o, "total", (double)sj->all.n);
    jb_num(b, o, "done", (double)n);
    jb_str(b, o, "phase", phase);
    jb_str(b, o, "updated", ts);
    arr = jb_arr(b, o, "rows");
    for (size_t i = 0; arr && i < n; i++)
        row_to_json(b, arr, &rows[i], with_steps);
    /* This run's points, or (before its first) those an earlier operator recorded. */
    const struct sweep_scale_out *so = sj->so_state ? sj->so_state : sj->so_prior;
    if (so && so->run && sj->so_spec[0])
        scale_out_to_json(b, o, so, sj->so_spec);
    if (jb_done(b, &o, "state.json", NULL) != 0)
        return NULL;
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

char *job_state_json(const struct sweep_job *sj, const struct advisor_row *rows, size_t n,
                     const char *phase)
{
    char *text = state_text(sj, rows, n, phase, true);
    if (text && strlen(text) > STATE_STEPS_MAX) {
        free(text);
        text = state_text(sj, rows, n, phase, false);
    }
    return text;
}

/* ---- reading --------------------------------------------------------------------------- */

static double num(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt;
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* num() clamped to [lo, hi] before conversion: a hand-edited state must not make a float to
 * integer conversion overflow (undefined behaviour) or a nonsense figure. */
static double clamped(const cJSON *o, const char *k, double dflt, double lo, double hi)
{
    return clamp(num(o, k, dflt), lo, hi);
}

/* Element i of a number array, clamped; dflt when missing or not a finite number. */
static double item(const cJSON *a, int i, double dflt, double lo, double hi)
{
    const cJSON *v = cJSON_GetArrayItem(a, i);
    return clamp(cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt, lo, hi);
}

#define RATE_CAP  1e12
#define CORES_CAP 1e6
#define U32_CAP   4.0e9 /* below UINT_MAX */

static int step_from_json(const cJSON *a, struct capacity_step *st)
{
    int n = cJSON_GetArraySize(a);
    if (!cJSON_IsArray(a) || (n != STEP_FIELDS && n != STEP_FIELDS_PREV))
        return -EINVAL;
    memset(st, 0, sizeof(*st));
    st->kind = (enum capacity_step_kind)item(a, 0, 0, CAPACITY_STEP_PROBE, CAPACITY_STEP_REPEAT);
    st->offered_rps = item(a, 1, 0, 0, RATE_CAP);
    st->achieved_rps = item(a, 2, 0, 0, RATE_CAP);
    st->sustained_rps = item(a, 3, 0, 0, RATE_CAP);
    st->p50_us = (uint64_t)item(a, 4, 0, 0, U64_CAP);
    st->p95_us = (uint64_t)item(a, 5, 0, 0, U64_CAP);
    st->p99_us = (uint64_t)item(a, 6, 0, 0, U64_CAP);
    st->error_rate = item(a, 7, 0, 0, 1);
    st->cpu_cores = item(a, 8, -1, -1, CORES_CAP);
    st->peak_memory_bytes = (int64_t)item(a, 9, -1, -1, U64_CAP);
    st->gen_cores = item(a, 10, -1, -1, CORES_CAP);
    unsigned bits = (unsigned)item(a, 11, 0, 0, 7);
    st->pass = bits & STEP_PASS;
    st->gen_limited = bits & STEP_GEN;
    st->throttling.known = bits & STEP_THROTTLED;
    if (st->throttling.known) {
        st->throttling.periods = (uint64_t)item(a, 12, 0, 0, U64_CAP);
        st->throttling.throttled_periods = (uint64_t)item(a, 13, 0, 0, U64_CAP);
        st->throttling.throttled_s = item(a, 14, 0, 0, U64_CAP);
    }
    st->usage_window_s = item(a, 15, -1, -1, U64_CAP);
    return 0;
}

/* Reads a capacity result written by cap_to_json; -EINVAL for one that is not. */
static int cap_from_json(const cJSON *o, const struct variant *v, struct capacity_result *cap)
{
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(o, "repeat_rps");
    const cJSON *thr = cJSON_GetObjectItemCaseSensitive(o, "throttling");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(o, "steps");
    const char *lim = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "limited_by"));
    const unsigned known = CAPACITY_FLAG_GENERATOR | CAPACITY_FLAG_NOISY | CAPACITY_FLAG_CONTENDED |
                           CAPACITY_FLAG_TOO_FEW_REPEATS | CAPACITY_FLAG_BUDGET |
                           CAPACITY_FLAG_NONE_PASSED | CAPACITY_FLAG_UNMEETABLE |
                           CAPACITY_FLAG_REPEATS_CUT;

    memset(cap, 0, sizeof(*cap));
    if (!cJSON_IsObject(o) || !cJSON_IsArray(rep) ||
        cJSON_GetArraySize(rep) > CAPACITY_MAX_REPEATS || (steps && !cJSON_IsArray(steps)) ||
        (steps && cJSON_GetArraySize(steps) > CAPACITY_MAX_STEPS))
        return -EINVAL;
    cap->searched = true;
    cap->rps = clamped(o, "rps", 0, 0, RATE_CAP);
    cap->flags = (unsigned)clamped(o, "flags", 0, 0, 0xffffffffu) & known;
    cap->cpu_cores = clamped(o, "cpu_cores", -1, -1, CORES_CAP);
    cap->peak_memory_bytes = (int64_t)clamped(o, "peak_memory_bytes", -1, -1, U64_CAP);
    for (int k = CAPACITY_LIMIT_NONE; lim && k <= CAPACITY_LIMIT_MAX_RPS; k++)
        if (strcmp(lim, search_limit_name((enum capacity_limit)k)) == 0)
            cap->limited_by = (enum capacity_limit)k;
    size_t nrep = (size_t)cJSON_GetArraySize(rep);
    for (size_t i = 0; i < nrep; i++)
        cap->repeat_rps[i] = item(rep, (int)i, 0, 0, RATE_CAP);
    /* Derived, not trusted: per core from the variant's limit, valid from the marks. */
    if (v->cpu_millicores > 0)
        cap->per_core = cap->rps / variant_cores(v);
    cap->valid = capacity_valid(cap);
    if (cJSON_IsArray(thr)) {
        cap->throttling.known = true;
        cap->throttling.periods = (uint64_t)item(thr, 0, 0, 0, U64_CAP);
        cap->throttling.throttled_periods = (uint64_t)item(thr, 1, 0, 0, U64_CAP);
        cap->throttling.throttled_s = item(thr, 2, 0, 0, U64_CAP);
    }
    const cJSON *rec = cJSON_GetObjectItemCaseSensitive(o, "recovery");
    if (cJSON_IsArray(rec)) {
        cap->recovery.settles = (unsigned)item(rec, 0, 0, 0, U32_CAP);
        cap->recovery.ran_out = (unsigned)item(rec, 1, 0, 0, cap->recovery.settles);
        cap->recovery.longest_s = item(rec, 2, 0, 0, U32_CAP);
        cap->recovery.bound_s = item(rec, 3, 0, 0, U32_CAP);
        cap->recovery.at_rate = item(rec, 4, 0, 0, 1) > 0;
    }
    for (int i = 0; i < cJSON_GetArraySize(steps); i++)
        if (step_from_json(cJSON_GetArrayItem(steps, i), &cap->steps[cap->nsteps++]) != 0)
            return -EINVAL;
    /* As the runner made it: from the repeats (one figure, a single repeat or the best step when
     * none ran, has only its mean), its top widened to the search's bracket (when the steps were
     * kept). */
    if (capacity_set_interval(cap, nrep) != 0)
        return -EINVAL;
    return 0;
}

/* Reads a row written by row_to_json; the spec must parse and match want. */
static int row_from_json(const cJSON *o, const struct variant *want, struct advisor_row *r)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(o, "note");
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(o, "capacity");

    memset(r, 0, sizeof(*r));
    if (!cJSON_IsString(spec) || variant_parse(spec->valuestring, &r->variant, NULL) != 0 ||
        strcmp(r->variant.spec, want->spec) != 0)
        return -EINVAL;
    r->measured = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "measured"));
    if (cJSON_IsString(note))
        snprintf(r->note, sizeof(r->note), "%s", note->valuestring);
    /* The failure kind by its name (the advisor reads OOM kills from it); unknown: NONE. */
    const cJSON *fail = cJSON_GetObjectItemCaseSensitive(o, "fail");
    for (int k = PLATFORM_FAIL_NONE; cJSON_IsString(fail) && k <= PLATFORM_FAIL_CANCELLED; k++)
        if (strcmp(fail->valuestring, platform_fail_name((enum platform_fail)k)) == 0)
            r->fail = (enum platform_fail)k;
    r->throughput_rps = clamped(o, "throughput_rps", 0, 0, RATE_CAP);
    r->p50_us = (uint64_t)clamped(o, "p50_us", 0, 0, U64_CAP);
    r->p95_us = (uint64_t)clamped(o, "p95_us", 0, 0, U64_CAP);
    r->p99_us = (uint64_t)clamped(o, "p99_us", 0, 0, U64_CAP);
    r->error_rate = clamped(o, "error_rate", 0, 0, 1);
    r->requests = (uint64_t)clamped(o, "requests", 0, 0, U64_CAP);
    r->cpu_cores_used = clamped(o, "cpu_cores_used", -1, -1, CORES_CAP);
    r->peak_memory_bytes = (int64_t)clamped(o, "peak_memory_bytes", -1, -1, U64_CAP);
    r->gen_cores = clamped(o, "gen_cores", -1, -1, CORES_CAP);
    r->host_other_cores = clamped(o, "host_other_cores", -1, -1, CORES_CAP);
    r->flags = (unsigned)clamped(o, "flags", 0, 0, 0xffffffffu);
    /* Only the values a platform writes: a hand-edited state cannot put text in results.json. */
    const char *by = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "applied_by"));
    if (by && (strcmp(by, "rollout") == 0 || strcmp(by, "resize") == 0))
        snprintf(r->applied_by, sizeof(r->applied_by), "%s", by);
    /* A row of a fixed-load sweep (or one that failed before its search) has none. */
    if (cap && !cJSON_IsNull(cap) && cap_from_json(cap, &r->variant, &r->cap) != 0)
        return -EINVAL;
    return 0;
}

int job_progress_parse(const char *text, const char *sweep, const char *uid, const char *configs,
                       const struct variant_list *all, struct advisor_row **prior, size_t *nprior)
{
    cJSON *st = NULL;
    struct advisor_row *rows_out = NULL;
    int rc = -ENOENT;

    *prior = NULL;
    *nprior = 0;
    if (!text || !(st = cJSON_Parse(text)))
        goto out;
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(st, "version");
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(st, "sweep");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(st, "uid");
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(st, "configs");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(st, "rows");
    /* Progress of another sweep, another Deployment of the same name, or another variant list
     * is not this sweep's: start over rather than mix results. */
    if (!cJSON_IsNumber(ver) || ver->valueint != STATE_VERSION || !cJSON_IsString(sw) ||
        strcmp(sw->valuestring, sweep) != 0 || !cJSON_IsString(id) ||
        strcmp(id->valuestring, uid) != 0 || !cJSON_IsString(cfg) ||
        strcmp(cfg->valuestring, configs) != 0 || !cJSON_IsArray(rows))
        goto out;
    size_t k = (size_t)cJSON_GetArraySize(rows);
    if (k > all->n)
        goto out;
    rows_out = calloc(k ? k : 1, sizeof(*rows_out));
    if (!rows_out) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        if (row_from_json(cJSON_GetArrayItem(rows, (int)i), &all->items[i], &rows_out[i]))
            goto out;
    *prior = rows_out;
    *nprior = k;
    rows_out = NULL;
    rc = 0;
out:
    free(rows_out);
    cJSON_Delete(st);
    return rc;
}

int job_progress_scale_out(const char *text, struct sweep_scale_out *so, char *spec, size_t len)
{
    cJSON *st = text ? cJSON_Parse(text) : NULL;
    struct variant v;
    int rc = -ENOENT;

    memset(so, 0, sizeof(*so));
    if (len)
        spec[0] = '\0';
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(st, "scale_out");
    if (!cJSON_IsObject(o))
        goto out;
    rc = -EINVAL;
    const char *vs = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "variant"));
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(o, "points");
    if (!vs || variant_parse(vs, &v, NULL) != 0 || !cJSON_IsArray(pts) ||
        cJSON_GetArraySize(pts) < 1 || cJSON_GetArraySize(pts) > PLATFORM_MAX_REPLICAS ||
        (size_t)snprintf(spec, len, "%s", v.spec) >= len)
        goto out;
    unsigned last = 0;
    for (int i = 0; i < cJSON_GetArraySize(pts); i++) {
        const cJSON *p = cJSON_GetArrayItem(pts, i);
        const cJSON *cap = cJSON_GetObjectItemCaseSensitive(p, "capacity");
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(p, "note");
        struct sweep_scale_point *pt = &so->points[i];
        double r = num(p, "replicas", 0), from = num(p, "from", -1);
        /* The counts a scale-out measures: rising, 1 first, each 1..PLATFORM_MAX_REPLICAS. */
        if (!cJSON_IsObject(p) || r != floor(r) || r <= last || r > PLATFORM_MAX_REPLICAS ||
            (i == 0) != (r == 1) || from != floor(from) || from < SWEEP_POINT_MEASURED ||
            from > SWEEP_POINT_FAILED)
            goto out;
        pt->replicas = last = (unsigned)r;
        pt->from = (enum sweep_point_from)from;
        pt->flags = (unsigned)clamped(p, "flags", 0, 0, 0xffffffffu);
        if (cJSON_IsString(note))
            snprintf(pt->note, sizeof(pt->note), "%s", note->valuestring);
        if (cap && cap_from_json(cap, &v, &pt->cap) != 0)
            goto out;
        if (pt->flags & SWEEP_FLAG_CONTENDED)
            pt->cap.valid = false; /* as the runner marks a contended point */
        so->npoints++;
    }
    so->run = true;
    rc = 0;
out:
    if (rc)
        memset(so, 0, sizeof(*so));
    cJSON_Delete(st);
    return rc;
}
