/* What the output renderers share: the values paths (parsed and checked), the table columns'
 * formatters (latency, capacity, streams), the row's state and marks, the profile line. The
 * renderers themselves are output_md.c, output_json.c, output_yaml.c, output_html*.c. */

#include "output/output.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/quantity.h"
#include "load/report.h"
#include "load/report_fmt.h"
#include "output/output_capacity.h"
#include "output/output_int.h"
#include "output/output_set.h"
#include "sweep/runner.h"

void output_paths_default(struct output_paths *p)
{
    snprintf(p->workers, sizeof(p->workers), "workers.count");
    snprintf(p->resources, sizeof(p->resources), "resources");
    snprintf(p->replicas, sizeof(p->replicas), "replicaCount");
    snprintf(p->autoscaling, sizeof(p->autoscaling), "autoscaling");
}

/* The keys of values-paths and where each lands, in one table for parsing and checking. */
struct path_key {
    const char *key;
    char *path;
};

static size_t path_keys(struct output_paths *p, struct path_key k[4])
{
    k[0] = (struct path_key){"workers", p->workers};
    k[1] = (struct path_key){"resources", p->resources};
    k[2] = (struct path_key){"replicas", p->replicas};
    k[3] = (struct path_key){"autoscaling", p->autoscaling};
    return 4;
}

static int check_path(const char *key, const char *path, char *err)
{
    size_t segs = 1, seglen = 0;

    if (!*path)
        return err_set(err, -EINVAL, "values path for %s is empty", key);
    for (const char *c = path; *c; c++) {
        if (*c == '.') {
            if (seglen == 0)
                return err_set(err, -EINVAL, "values path '%s' has an empty segment", path);
            seglen = 0;
            if (++segs > OUTPUT_PATH_SEGS)
                return err_set(err, -EINVAL, "values path '%s' is deeper than %d", path,
                               OUTPUT_PATH_SEGS);
            continue;
        }
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-'))
            return err_set(err, -EINVAL,
                           "values path '%s': '%c' is not allowed (expected dotted names of "
                           "letters, digits, '_' and '-')",
                           path, *c);
        seglen++;
    }
    if (seglen == 0)
        return err_set(err, -EINVAL, "values path '%s' has an empty segment", path);
    return 0;
}

static bool is_prefix_path(const char *a, const char *b)
{
    size_t la = strlen(a);
    return strncmp(a, b, la) == 0 && (b[la] == '\0' || b[la] == '.');
}

int output_paths_parse(const char *s, struct output_paths *p, char *err)
{
    char buf[4 * OUTPUT_PATH_MAX + 64];
    struct path_key keys[4];
    size_t nkeys = path_keys(p, keys);
    int rc = 0;

    output_paths_default(p);
    if (!s || !*s)
        return 0;
    if (strlen(s) >= sizeof(buf))
        return err_set(err, -EINVAL, "values-paths is longer than %zu characters", sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", s);
    bool seen[4] = {false};
    /* strtok_r would skip the empty items of "a=b,,c=d" or "a=b,": walk the commas instead. */
    for (char *item = buf, *next; item; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        while (*item == ' ')
            item++;
        if (!*item)
            return err_set(err, -EINVAL, "values-paths has an empty item (expected key=path)");
        char *eq = strchr(item, '=');
        if (!eq)
            return err_set(err, -EINVAL,
                           "bad values-paths item '%s': expected key=path, e.g. "
                           "workers=workers.count,resources=resources",
                           item);
        *eq = '\0';
        char *val = eq + 1;
        size_t vl = strlen(val);
        while (vl > 0 && val[vl - 1] == ' ')
            val[--vl] = '\0';
        if (vl >= OUTPUT_PATH_MAX)
            return err_set(err, -EINVAL, "values path '%.32s...' is too long", val);
        size_t k;
        for (k = 0; k < nkeys && strcmp(item, keys[k].key) != 0; k++)
            ;
        if (k == nkeys)
            return err_set(err, -EINVAL,
                           "bad values-paths key '%s': expected 'workers', 'resources', "
                           "'replicas' or 'autoscaling'",
                           item);
        if (seen[k])
            return err_set(err, -EINVAL, "values-paths names '%s' twice", item);
        seen[k] = true;
        snprintf(keys[k].path, OUTPUT_PATH_MAX, "%s", val);
    }
    for (size_t k = 0; k < nkeys; k++) {
        /* The autoscaling block alone may be unmapped: the HPA then goes to hpa.yaml. */
        if (!keys[k].path[0] && strcmp(keys[k].key, "autoscaling") == 0)
            continue;
        rc = check_path(keys[k].key, keys[k].path, err);
        if (rc)
            return rc;
    }
    for (size_t a = 0; a < nkeys; a++)
        for (size_t b = a + 1; b < nkeys; b++)
            if (!keys[a].path[0] || !keys[b].path[0])
                continue;
            else if (is_prefix_path(keys[a].path, keys[b].path) ||
                     is_prefix_path(keys[b].path, keys[a].path))
                return err_set(err, -EINVAL, "values paths '%s' and '%s' overlap", keys[a].path,
                               keys[b].path);
    return 0;
}

/* Appends to buf (OUTPUT_CAPACITY_LEN bytes). The buffer holds the longest text by
 * construction (output.h), so a cut is a broken invariant, not a long figure. */
__attribute__((format(printf, 2, 3))) static void cap_cat(char *buf, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;

    va_start(ap, fmt);
    int w = vsnprintf(buf + used, OUTPUT_CAPACITY_LEN - used, fmt, ap);
    va_end(ap);
    assert(w >= 0 && used + (size_t)w < OUTPUT_CAPACITY_LEN);
    (void)w;
}

/* The smallest and largest of the repeats. */
static void repeat_range(const struct capacity_result *c, double *lo, double *hi)
{
    size_t n = c->interval.n < CAPACITY_MAX_REPEATS ? c->interval.n : CAPACITY_MAX_REPEATS;

    *lo = *hi = n ? c->repeat_rps[0] : c->rps;
    for (size_t i = 1; i < n; i++) {
        *lo = fmin(*lo, c->repeat_rps[i]);
        *hi = fmax(*hi, c->repeat_rps[i]);
    }
}

const char *output_fmt_capacity_figure(const struct capacity_result *c,
                                       char buf[OUTPUT_CAPACITY_LEN])
{
    struct capacity_shown sh;
    double lo, hi;

    buf[0] = '\0';
    if (!c->searched) {
        cap_cat(buf, "-");
        return buf;
    }
    capacity_show(c, &sh);
    if (sh.unknown) {
        repeat_range(c, &lo, &hi);
        if (c->interval.n == 2)
            cap_cat(buf, "unknown: the repeats disagreed (%.0f, %.0f req/s)", c->repeat_rps[0],
                    c->repeat_rps[1]);
        else
            cap_cat(buf, "unknown: the %zu repeats disagreed (%.0f to %.0f req/s)", c->interval.n,
                    lo, hi);
    } else if (c->flags & CAPACITY_FLAG_GENERATOR)
        cap_cat(buf, ">= %.0f req/s (generator-limited)", c->rps);
    else if (sh.interval)
        cap_cat(buf, "%.0f req/s [%.0f, %.0f]", c->rps, sh.low, sh.high);
    else
        cap_cat(buf, "%.0f req/s", c->rps);
    return buf;
}

const char *output_fmt_capacity(const struct capacity_result *c, char buf[OUTPUT_CAPACITY_LEN])
{
    struct capacity_shown sh;
    unsigned marks = 0;

    output_fmt_capacity_figure(c, buf);
    if (!c->searched)
        return buf;
    capacity_show(c, &sh);
    /* Every other mark the figure carries, in words beside it: a noisy or budget-bound figure
     * is never shown bare, as if it were the app's capacity. An unknown one already says why. */
    unsigned said = CAPACITY_FLAG_GENERATOR;
    if (sh.unknown)
        said |= CAPACITY_FLAG_NOISY | CAPACITY_FLAG_TOO_FEW_REPEATS | CAPACITY_FLAG_REPEATS_CUT;
    for (unsigned bit = 1; bit && bit <= CAPACITY_FLAG_LAST; bit <<= 1) {
        const char *name = output_capacity_flag_name(bit);
        if ((c->flags & bit) && !(said & bit) && name)
            cap_cat(buf, "%s%s", marks++ ? ", " : " (", name);
    }
    /* How the app came back after an overload, when it did not at once: an app slow to recover
     * is one an autoscaler must never let overload. */
    const struct capacity_recovery *rec = &c->recovery;
    if (rec->ran_out)
        cap_cat(buf, "%snot recovered within %.0f s after %u of %u overloads",
                marks++ ? ", " : " (", rec->bound_s, rec->ran_out, rec->settles);
    else if (rec->settles && rec->longest_s > 0)
        cap_cat(buf, "%srecovered in %.0f s", marks++ ? ", " : " (", rec->longest_s);
    if (marks)
        cap_cat(buf, ")");
    return buf;
}

enum output_autoscaler output_autoscaler(const struct output_doc *d)
{
    const struct sizing_hpa *h = &d->advice->sizing.hpa;

    if (!h->enabled)
        return OUTPUT_AUTOSCALER_NONE;
    if (h->metric == SIZING_HPA_CPU && d->paths.autoscaling[0])
        return OUTPUT_AUTOSCALER_VALUES;
    return OUTPUT_AUTOSCALER_FILE;
}

const char *output_fmt_per_core(const struct capacity_result *c, char *buf, size_t len)
{
    if (c->searched)
        snprintf(buf, len, "%.0f", c->per_core);
    else
        snprintf(buf, len, "-");
    return buf;
}

bool output_has_capacity(const struct output_doc *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].cap.searched)
            return true;
    return false;
}

const char *output_fmt_streams(const struct stream_capacity *c, char *buf, size_t len)
{
    char n[REPORT_FMT_LEN];
    const char *why = c->limited_by == STREAM_LIMIT_BUDGET        ? "budget"
                      : c->limited_by == STREAM_LIMIT_GENERATOR   ? "generator-limited"
                      : c->limited_by == STREAM_LIMIT_MAX_STREAMS ? "streams.count reached"
                                                                  : NULL;
    if (!c->searched)
        snprintf(buf, len, "-");
    else if (c->streams == 0)
        snprintf(buf, len, "none passed");
    else if (why)
        snprintf(buf, len, ">= %s streams (%s)", report_fmt_count(c->streams, n), why);
    else
        snprintf(buf, len, "%s streams", report_fmt_count(c->streams, n));
    return buf;
}

const char *output_fmt_memory_per_stream(const struct stream_capacity *c, char *buf, size_t len)
{
    char b[REPORT_FMT_LEN];
    snprintf(buf, len, "%s",
             c->searched && c->memory_per_stream_bytes >= 0
                 ? report_fmt_bytes((uint64_t)c->memory_per_stream_bytes, b)
                 : "-");
    return buf;
}

bool output_has_streams(const struct output_doc *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].scap.searched)
            return true;
    return false;
}

const char *output_fmt_time(time_t t, char buf[40])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, 40, "%Y-%m-%d %H:%M UTC", &tm))
        snprintf(buf, 40, "(unknown)");
    return buf;
}

const char *output_fmt_time_iso(time_t t, char buf[40])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, 40, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, 40, "1970-01-01T00:00:00Z");
    return buf;
}

/* Marks for a row, as short words: "exceeds host, contended". */
const char *output_marks(unsigned flags, char *buf, size_t len)
{
    buf[0] = '\0';
    static const struct {
        unsigned flag;
        const char *word;
    } marks[] = {
        {SWEEP_FLAG_CPU_EXCEEDS_HOST, "exceeds host CPU"},
        {SWEEP_FLAG_UNENFORCED, "limits not enforced"},
        {SWEEP_FLAG_CONTENDED, "contended"},
        {SWEEP_FLAG_GEN_SATURATED, "load generator saturated"},
        {SWEEP_FLAG_INTERRUPTED, "interrupted"},
    };
    size_t used = 0;
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        if (!(flags & marks[i].flag))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", marks[i].word);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    return buf;
}

const char *output_state(const struct output_doc *d, size_t i, char *buf, size_t len)
{
    const struct advisor_row *r = &d->rows[i];
    char marks[160];

    output_marks(r->flags, marks, sizeof(marks));
    if (!r->measured)
        snprintf(buf, len, "FAILED (%s)", r->note[0] ? r->note : "not run");
    else if (marks[0])
        snprintf(buf, len, "%s (%s)", verdict_name(d->advice->rows[i].verdict), marks);
    else
        snprintf(buf, len, "%s", verdict_name(d->advice->rows[i].verdict));
    return buf;
}

const char *output_fmt_capacity_note(const struct profile *p, char *buf, size_t len)
{
    char p95[QTY_LEN], p99[QTY_LEN] = "";

    if (p->search.mode != PROFILE_SEARCH_CAPACITY) {
        buf[0] = '\0';
        return buf;
    }
    qty_format_duration(p->slo.p95_us, p95);
    if (p->slo.p99_us > 0)
        qty_format_duration(p->slo.p99_us, p99);
    snprintf(buf, len,
             "Capacity search: Throughput is each variant's capacity within the SLO (p95 < %s%s%s, "
             "errors < %g%%); P50, P95, P99 and Errors are its repeats at that capacity merged, "
             "and a row whose merged repeats miss the SLO is never HEALTHY or recommended. "
             "Capacity @SLO [low, high]: the %.0f%% interval of the repeats, widened to the "
             "search's bracket; \"unknown\" when the repeats disagreed and could not be measured "
             "again.",
             p95, p99[0] ? ", p99 < " : "", p99, p->slo.errors * 100, STATS_CONFIDENCE * 100);
    return buf;
}

void output_fmt_profile(const struct profile *p, char *buf, size_t len)
{
    char dur[QTY_LEN], wu[QTY_LEN];
    size_t used;

    qty_format_duration(p->duration_us, dur);
    qty_format_duration(p->warmup_us, wu);
    if (p->search.mode == PROFILE_SEARCH_CAPACITY) {
        /* What the search ran, not the fixed-load fields it does not use (they only shape the
         * probe's users), and the SLO every step was judged against. */
        const struct profile_search *se = &p->search;
        char win[QTY_LEN], swu[QTY_LEN], bud[QTY_LEN], p95[QTY_LEN], p99[QTY_LEN], top[48] = "";
        qty_format_duration(se->window_us, win);
        qty_format_duration(se->warmup_us, swu);
        qty_format_duration(se->budget_us, bud);
        qty_format_duration(p->slo.p95_us, p95);
        if (se->max_rps > 0)
            snprintf(top, sizeof(top), ", at most %g req/s", se->max_rps);
        if (p->slo.p99_us > 0)
            qty_format_duration(p->slo.p99_us, p99);
        used = (size_t)snprintf(
            buf, len,
            "%s: capacity search within the SLO (p95 < %s%s%s, errors < %g%%): open-loop steps "
            "of %s after %s warm-up, precision %g%%, %u repeats at capacity, budget %s%s; probe "
            "%u users",
            p->source, p95, p->slo.p99_us > 0 ? ", p99 < " : "", p->slo.p99_us > 0 ? p99 : "",
            p->slo.errors * 100, win, swu, se->precision * 100, se->repeats, bud, top,
            p->users > 0 ? p->users : CAPACITY_PROBE_USERS);
    } else if (p->nstages > 0)
        used = (size_t)snprintf(buf, len, "%s: %zu stages, %s warm-up", p->source, p->nstages, wu);
    else if (p->rate > 0)
        used = (size_t)snprintf(buf, len, "%s: open loop %g req/s, %s each after %s warm-up",
                                p->source, p->rate, dur, wu);
    else
        used = (size_t)snprintf(buf, len, "%s: %u concurrent users, %s each after %s warm-up",
                                p->source, p->users, dur, wu);
    unsigned total = 0;
    for (size_t i = 0; i < p->nrequests; i++)
        total += p->requests[i].weight;
    for (size_t i = 0; i < p->nrequests && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s %.0f%%", i == 0 ? "; mix: " : ", ",
                         p->requests[i].name, total ? 100.0 * p->requests[i].weight / total : 0.0);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* True when measured row i came closer to holding the load than row j. */
static bool closer(const struct output_doc *d, size_t i, size_t j)
{
    const struct advisor_row *a = &d->rows[i], *b = &d->rows[j];
    enum verdict va = d->advice->rows[i].verdict, vb = d->advice->rows[j].verdict;

    if (va != vb)
        return va < vb;
    if (a->p95_us != b->p95_us)
        return a->p95_us < b->p95_us;
    return a->error_rate < b->error_rate;
}

const char *output_no_rec_sentence(const struct output_doc *d, char *buf, size_t len)
{
    char state[320], lat[32];
    int best = -1;

    buf[0] = '\0';
    if (d->advice->recommended >= 0)
        return buf;
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].measured && (best < 0 || closer(d, i, (size_t)best)))
            best = (int)i;
    if (best < 0) {
        snprintf(buf, len, "No variant holds the load (%s): %s.", d->advice->why,
                 d->n ? "every variant FAILED" : "no variant was measured");
        return buf;
    }
    const struct advisor_row *r = &d->rows[best];
    snprintf(buf, len,
             "No variant holds the load (%s); the closest was %s: %s, P95 %s, errors %.1f%%.",
             d->advice->why, r->variant.spec, output_state(d, (size_t)best, state, sizeof(state)),
             fmt_latency(r->p95_us, lat), r->error_rate * 100);
    return buf;
}
