#include "output/output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
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

#ifndef SIZEUP_VERSION
#define SIZEUP_VERSION "0.1.0"
#endif

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
        rc = check_path(keys[k].key, keys[k].path, err);
        if (rc)
            return rc;
    }
    for (size_t a = 0; a < nkeys; a++)
        for (size_t b = a + 1; b < nkeys; b++)
            if (is_prefix_path(keys[a].path, keys[b].path) ||
                is_prefix_path(keys[b].path, keys[a].path))
                return err_set(err, -EINVAL, "values paths '%s' and '%s' overlap", keys[a].path,
                               keys[b].path);
    return 0;
}

const char *output_fmt_capacity(const struct capacity_result *c, char *buf, size_t len)
{
    if (!c->searched)
        snprintf(buf, len, "-");
    else if (c->flags & CAPACITY_FLAG_GENERATOR)
        snprintf(buf, len, ">= %.0f req/s (generator-limited)", c->rps);
    else if (c->interval.n >= 2)
        snprintf(buf, len, "%.0f req/s [%.0f-%.0f]", c->rps, c->interval.low, c->interval.high);
    else
        snprintf(buf, len, "%.0f req/s", c->rps);
    return buf;
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

const char *output_fmt_latency(uint64_t us, char buf[32])
{
    if (us >= 10000000)
        snprintf(buf, 32, "%.1fs", (double)us / 1e6);
    else if (us >= 1000000)
        snprintf(buf, 32, "%.2fs", (double)us / 1e6);
    else if (us >= 1000)
        snprintf(buf, 32, "%.0fms", (double)us / 1e3);
    else
        snprintf(buf, 32, "%.1fms", (double)us / 1e3);
    return buf;
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

static void fmt_threshold_line(const struct output_doc *d, char *buf, size_t len)
{
    const struct profile_thresholds *t = &d->profile->thresholds;
    char a[QTY_LEN], b[QTY_LEN];

    snprintf(buf, len,
             "Verdict thresholds: HEALTHY = P95 < %s and errors < %g%%. STRESSED = P95 %s-%s. "
             "OVERLOADED = P95 > %s or errors > %g%%. Estimated active users assumes %g req/s "
             "per user.",
             qty_format_duration(t->healthy_p95_us, a), t->healthy_errors * 100,
             qty_format_duration(t->healthy_p95_us, a),
             qty_format_duration(t->overloaded_p95_us, b),
             qty_format_duration(t->overloaded_p95_us, b), t->overloaded_errors * 100,
             d->profile->per_user_rps);
}

void output_fmt_profile(const struct profile *p, char *buf, size_t len)
{
    char dur[QTY_LEN], wu[QTY_LEN];
    size_t used;

    qty_format_duration(p->duration_us, dur);
    qty_format_duration(p->warmup_us, wu);
    if (p->nstages > 0)
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

int output_results_md(FILE *f, const struct output_doc *d, char *err)
{
    const struct advice *a = d->advice;
    char t[40], line[1024], b1[QTY_LEN], b2[QTY_LEN], l1[32], l2[32], l3[32], st[320];

    fprintf(f, "# Sizing results\n\n");
    if (d->cancelled)
        fprintf(f, "> **Cancelled**: the sweep was stopped before its end; the rows below are "
                   "what was measured until then.\n\n");
    if (d->facts && !d->facts->limits_enforced)
        fprintf(f,
                "> **LIMITS NOT ENFORCED**: %s. Every row ran without its CPU and memory "
                "limits.\n\n",
                d->facts->limits_note[0] ? d->facts->limits_note : "no writable cgroup");
    if (d->omit)
        fprintf(f, "> **Trimmed to fit**: %s\n\n", output_omit_note(d->omit, line, sizeof(line)));
    if (d->comparison)
        fprintf(f, "> **Since the previous sweep**: %s\n\n", d->comparison);
    fprintf(f, "| Setup | |\n|---|---|\n");
    fprintf(f, "| Date | %s |\n", output_fmt_time(d->started, t));
    if (d->facts && d->facts->machine[0])
        fprintf(f, "| Machine | %s |\n", d->facts->machine);
    if (d->platform)
        fprintf(f, "| Platform | %s%s |\n", d->platform,
                d->facts ? (d->facts->limits_enforced ? ", limits enforced by cgroups"
                                                      : ", limits NOT enforced")
                         : "");
    output_fmt_profile(d->profile, line, sizeof(line));
    fprintf(f, "| Profile | %s |\n", line);
    if (d->configs)
        fprintf(f, "| Variants | `%s` |\n", d->configs);
    if (d->command)
        fprintf(f, "| Command | `%s` |\n", d->command);
    fprintf(f, "| Tool | sizeup %s |\n\n", SIZEUP_VERSION);

    fprintf(f, "## Results\n\n");
    if (a->recommended >= 0)
        fprintf(f, "`*` marks the recommendation: %s.\n\n", a->why);
    else
        fprintf(f, "%s No `values.yaml` is written.\n\n",
                output_no_rec_sentence(d, line, sizeof(line)));
    /* A capacity search adds its two columns; a fixed-load sweep keeps the reference table. */
    bool cap = output_has_capacity(d), streams = output_has_streams(d);
    fprintf(f,
            "| Config | Workers | CPU | Memory | Throughput | P50 | P95 | P99 | Errors | State "
            "| Est. active users |%s%s\n",
            cap ? " Capacity @SLO | per core |" : "",
            streams ? " Streams @SLO | Memory/stream |" : "");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|%s%s\n", cap ? "---|---|" : "",
            streams ? "---|---|" : "");
    for (size_t i = 0; i < d->n; i++) {
        const struct advisor_row *r = &d->rows[i];
        output_state(d, i, st, sizeof(st));
        fprintf(f, "| %s%s | %u | %s | %s | ", (int)i == a->recommended ? "* " : "",
                r->variant.label, r->variant.workers,
                qty_format_cores(r->variant.cpu_millicores, b1),
                qty_format_memory(r->variant.memory_bytes, b2));
        if (r->measured)
            fprintf(f, "%.0f req/s | %s | %s | %s | %.1f%% | %s | ", r->throughput_rps,
                    output_fmt_latency(r->p50_us, l1), output_fmt_latency(r->p95_us, l2),
                    output_fmt_latency(r->p99_us, l3), r->error_rate * 100, st);
        else
            fprintf(f, "- | - | - | - | - | %s | ", st);
        if (r->measured && a->rows[i].capacity)
            fprintf(f, "~%.0f |", round(a->rows[i].est_users));
        else if (r->measured)
            fprintf(f, "(not capacity) |");
        else
            fprintf(f, "- |");
        if (cap)
            fprintf(f, " %s | %s |", output_fmt_capacity(&r->cap, line, sizeof(line)),
                    output_fmt_per_core(&r->cap, l1, sizeof(l1)));
        if (streams)
            fprintf(f, " %s | %s |", output_fmt_streams(&r->scap, line, sizeof(line)),
                    output_fmt_memory_per_stream(&r->scap, l1, sizeof(l1)));
        fputc('\n', f);
    }
    fmt_threshold_line(d, line, sizeof(line));
    fprintf(f, "\n%s\n", line);
    if (a->recommended >= 0 && a->by_target)
        fprintf(f, "\nTarget: %.0f req/s; at the recommended size that takes %u replica%s.\n",
                a->target_rps, a->replicas, a->replicas == 1 ? "" : "s");

    bool usage = false;
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].measured && (d->rows[i].cpu_cores_used >= 0 ||
                                    d->rows[i].peak_memory_bytes >= 0 || d->rows[i].gen_cores >= 0))
            usage = true;
    if (usage) {
        fprintf(f, "\n### Measured usage\n\n| Config | CPU used (cores) | Peak memory | Load "
                   "generator CPU (cores) | Rest of the host (cores) |\n|---|---|---|---|---|\n");
        for (size_t i = 0; i < d->n; i++) {
            const struct advisor_row *r = &d->rows[i];
            if (!r->measured)
                continue;
            fprintf(f, "| %s | ", r->variant.label);
            if (r->cpu_cores_used >= 0)
                fprintf(f, "%.2f of %s | ", r->cpu_cores_used,
                        qty_format_cores(r->variant.cpu_millicores, b1));
            else
                fprintf(f, "- | ");
            if (r->peak_memory_bytes >= 0)
                fprintf(f, "%.0fMi of %s | ", (double)r->peak_memory_bytes / 1048576.0,
                        qty_format_memory(r->variant.memory_bytes, b2));
            else
                fprintf(f, "- | ");
            if (r->gen_cores >= 0)
                fprintf(f, "%.2f | ", r->gen_cores);
            else
                fprintf(f, "- | ");
            if (r->host_other_cores >= 0)
                fprintf(f, "%.2f |\n", r->host_other_cores);
            else
                fprintf(f, "- |\n");
        }
    }

    output_scale_out_table(f, d->sweep, true);

    fprintf(f, "\n## What the shape tells you\n\n");
    if (a->nfindings == 0)
        fprintf(f, "Too few variants were measured to draw findings.\n");
    for (size_t i = 0; i < a->nfindings; i++)
        fprintf(f, "%zu. %s\n", i + 1, a->findings[i]);

    if (a->recommended >= 0) {
        fprintf(f, "\n## Recommended values (`values.yaml`)\n\n```yaml\n");
        if (output_values_yaml(f, d, err) != 0)
            return -EIO;
        fprintf(f, "```\n\nRequests: %s.\n", a->requests_note);
    }
    fprintf(f, "\n## Auto-sizing rule (`auto-sizing.yaml`)\n\n");
    fprintf(f, "`workers = min(round(cores / %g), floor(memory_mib / %g), %u)` (at least 1)\n\n",
            a->rule.cores_per_worker, a->rule.memory_per_worker_mib, a->rule.max_workers);
    fprintf(f, "- cores_per_worker = %g: %s\n", a->rule.cores_per_worker, a->cores_per_worker.text);
    fprintf(f, "- memory_per_worker_mib = %g: %s\n", a->rule.memory_per_worker_mib,
            a->memory_per_worker.text);
    fprintf(f, "- max_workers = %u: %s\n", a->rule.max_workers, a->max_workers.text);
    fprintf(f, "\nA chart's `workers.count: \"auto\"` resolves to this; `sizeup rule --rule "
               "auto-sizing.yaml --cpu C --memory M` evaluates it.\n");
    if (ferror(f))
        return err_set(err, -EIO, "write error");
    return 0;
}

/* ---- results.json -------------------------------------------------------------------------- */

static cJSON *json_profile(const struct profile *p)
{
    cJSON *o = cJSON_CreateObject(), *th, *reqs;
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "source", p->source ? p->source : "");
    if (p->rate > 0)
        cJSON_AddNumberToObject(o, "rate", p->rate);
    else
        cJSON_AddNumberToObject(o, "users", p->users);
    cJSON_AddNumberToObject(o, "stages", (double)p->nstages);
    cJSON_AddNumberToObject(o, "duration_s", (double)p->duration_us / 1e6);
    cJSON_AddNumberToObject(o, "warmup_s", (double)p->warmup_us / 1e6);
    cJSON_AddNumberToObject(o, "timeout_s", (double)p->timeout_us / 1e6);
    cJSON_AddNumberToObject(o, "per_user_rps", p->per_user_rps);
    if (p->target_users > 0)
        cJSON_AddNumberToObject(o, "target_users", p->target_users);
    if (p->target_rps > 0)
        cJSON_AddNumberToObject(o, "target_rps", p->target_rps);
    th = cJSON_AddObjectToObject(o, "thresholds");
    if (th) {
        cJSON_AddNumberToObject(th, "healthy_p95_ms", (double)p->thresholds.healthy_p95_us / 1e3);
        cJSON_AddNumberToObject(th, "healthy_errors", p->thresholds.healthy_errors);
        cJSON_AddNumberToObject(th, "overloaded_p95_ms",
                                (double)p->thresholds.overloaded_p95_us / 1e3);
        cJSON_AddNumberToObject(th, "overloaded_errors", p->thresholds.overloaded_errors);
    }
    reqs = cJSON_AddArrayToObject(o, "requests");
    for (size_t i = 0; reqs && i < p->nrequests; i++) {
        cJSON *r = cJSON_CreateObject();
        if (!r)
            break;
        cJSON_AddStringToObject(r, "name", p->requests[i].name);
        cJSON_AddStringToObject(r, "method", p->requests[i].method);
        cJSON_AddStringToObject(r, "path", p->requests[i].path);
        cJSON_AddNumberToObject(r, "weight", p->requests[i].weight);
        cJSON_AddItemToArray(reqs, r);
    }
    return o;
}

/* Takes out of a variant's load fields the parts output_set_render left out for size. */
static void omit_load_parts(cJSON *o, unsigned omit)
{
    if (omit & OUTPUT_OMIT_JSON_BY_NAME)
        cJSON_DeleteItemFromObjectCaseSensitive(o, "by_name");
    if (omit & OUTPUT_OMIT_JSON_BY_STAGE)
        cJSON_DeleteItemFromObjectCaseSensitive(o, "by_stage");
    if (!(omit & OUTPUT_OMIT_JSON_HIST))
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(o, "latency_hist");
    cJSON *scope;
    cJSON_ArrayForEach(scope, cJSON_GetObjectItemCaseSensitive(o, "by_name"))
        cJSON_DeleteItemFromObjectCaseSensitive(scope, "latency_hist");
    cJSON_ArrayForEach(scope, cJSON_GetObjectItemCaseSensitive(o, "by_stage"))
        cJSON_DeleteItemFromObjectCaseSensitive(scope, "latency_hist");
}

static cJSON *json_variant(const struct output_doc *d, size_t i)
{
    const struct advisor_row *r = &d->rows[i];
    const struct advice *a = d->advice;
    const struct sweep_row *sr = d->sweep && i < d->sweep->n ? &d->sweep->rows[i] : NULL;
    cJSON *o = NULL;
    char b[QTY_LEN], st[320];

    /* The load run's own fields first, exactly as report_json names them. */
    if (sr && sr->have_load)
        o = report_json(&sr->load);
    if (!o)
        o = cJSON_CreateObject();
    if (!o)
        return NULL;
    omit_load_parts(o, d->omit);
    cJSON_DeleteItemFromObject(o, "verdict");
    cJSON_AddStringToObject(o, "spec", r->variant.spec);
    cJSON_AddStringToObject(o, "label", r->variant.label);
    cJSON_AddNumberToObject(o, "workers", r->variant.workers);
    cJSON_AddStringToObject(o, "cpu", qty_format_cpu(r->variant.cpu_millicores, b));
    cJSON_AddNumberToObject(o, "cpu_millicores", (double)r->variant.cpu_millicores);
    cJSON_AddStringToObject(o, "memory", qty_format_memory(r->variant.memory_bytes, b));
    cJSON_AddNumberToObject(o, "memory_bytes", (double)r->variant.memory_bytes);
    cJSON_AddStringToObject(o, "state", r->measured ? "measured" : "failed");
    if (r->applied_by[0])
        cJSON_AddStringToObject(o, "applied_by", r->applied_by);
    if (r->measured) {
        cJSON_AddStringToObject(o, "verdict", verdict_name(a->rows[i].verdict));
        cJSON_AddNumberToObject(o, "est_active_users", round(a->rows[i].est_users));
        if (!sr || !sr->have_load) {
            /* No load result at hand (e.g. rows given as figures): the scalar figures. */
            cJSON_AddNumberToObject(o, "throughput_rps", r->throughput_rps);
            cJSON *lat = cJSON_AddObjectToObject(o, "latency_ms");
            if (lat) {
                cJSON_AddNumberToObject(lat, "p50", (double)r->p50_us / 1e3);
                cJSON_AddNumberToObject(lat, "p95", (double)r->p95_us / 1e3);
                cJSON_AddNumberToObject(lat, "p99", (double)r->p99_us / 1e3);
            }
            cJSON_AddNumberToObject(o, "error_rate", r->error_rate);
        }
    } else {
        cJSON_AddNullToObject(o, "verdict");
        cJSON *fl = cJSON_AddObjectToObject(o, "failure");
        if (fl) {
            cJSON_AddStringToObject(fl, "kind",
                                    sr ? platform_fail_name(sr->failure.kind) : "failed");
            cJSON_AddStringToObject(fl, "reason", r->note);
        }
    }
    cJSON_AddStringToObject(o, "state_text", output_state(d, i, st, sizeof(st)));
    cJSON_AddBoolToObject(o, "recommended", (int)i == a->recommended);
    cJSON_AddBoolToObject(o, "capacity", a->rows[i].capacity);
    cJSON *marks = cJSON_AddArrayToObject(o, "marks");
    static const struct {
        unsigned flag;
        const char *name;
    } names[] = {{SWEEP_FLAG_CPU_EXCEEDS_HOST, "cpu_exceeds_host"},
                 {SWEEP_FLAG_UNENFORCED, "limits_not_enforced"},
                 {SWEEP_FLAG_CONTENDED, "contended"},
                 {SWEEP_FLAG_GEN_SATURATED, "load_generator_saturated"},
                 {SWEEP_FLAG_INTERRUPTED, "interrupted"}};
    for (size_t k = 0; marks && k < sizeof(names) / sizeof(names[0]); k++)
        if (r->flags & names[k].flag)
            cJSON_AddItemToArray(marks, cJSON_CreateString(names[k].name));
    cJSON *u = cJSON_AddObjectToObject(o, "usage");
    if (u) {
        if (sr && sr->have_usage) {
            cJSON_AddNumberToObject(u, "window_s", sr->usage.window_s);
            if (sr->usage.cpu_s >= 0)
                cJSON_AddNumberToObject(u, "cpu_s", sr->usage.cpu_s);
            else
                cJSON_AddNullToObject(u, "cpu_s");
            cJSON_AddNumberToObject(u, "restarts", sr->usage.restarts);
            cJSON_AddBoolToObject(u, "oom_killed", sr->usage.oom_killed);
            cJSON_AddBoolToObject(u, "peak_is_lifetime", sr->usage.peak_is_lifetime);
            if (sr->usage.note[0])
                cJSON_AddStringToObject(u, "note", sr->usage.note);
        }
        if (r->cpu_cores_used >= 0)
            cJSON_AddNumberToObject(u, "cpu_cores", r->cpu_cores_used);
        else
            cJSON_AddNullToObject(u, "cpu_cores");
        if (r->peak_memory_bytes >= 0)
            cJSON_AddNumberToObject(u, "peak_memory_bytes", (double)r->peak_memory_bytes);
        else
            cJSON_AddNullToObject(u, "peak_memory_bytes");
        if (r->host_other_cores >= 0)
            cJSON_AddNumberToObject(u, "host_other_cores", r->host_other_cores);
        else
            cJSON_AddNullToObject(u, "host_other_cores");
    }
    cJSON *g = cJSON_AddObjectToObject(o, "load_generator");
    if (g) {
        if (r->gen_cores >= 0)
            cJSON_AddNumberToObject(g, "cpu_cores", r->gen_cores);
        else
            cJSON_AddNullToObject(g, "cpu_cores");
        cJSON_AddBoolToObject(g, "saturated", (r->flags & SWEEP_FLAG_GEN_SATURATED) != 0);
    }
    if (sr) {
        cJSON *t = cJSON_AddObjectToObject(o, "timing");
        if (t) {
            cJSON_AddNumberToObject(t, "ready_s", sr->ready_s);
            cJSON_AddNumberToObject(t, "stop_s", sr->stop_s);
            cJSON_AddNumberToObject(t, "wall_s", sr->wall_s);
            cJSON_AddNumberToObject(t, "overhead_s", sr->overhead_s);
        }
    }
    output_capacity_add(o, &r->cap);
    output_stream_capacity_add(o, &r->scap);
    return o;
}

static void json_derivation(cJSON *parent, const char *name, double value,
                            const struct rule_derivation *dv)
{
    cJSON *o = cJSON_AddObjectToObject(parent, name);
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "value", value);
    cJSON_AddStringToObject(o, "source", dv->fallback ? "fallback" : "measured");
    cJSON_AddNumberToObject(o, "variants", dv->variants);
    cJSON_AddStringToObject(o, "from", dv->text);
}

/* recommendation.hpa ({min_replicas, max_replicas, target_cpu_utilization} or null) and
 * recommendation.planned_rps_per_pod (null without a capacity search). */
static void json_sizing(cJSON *x, const struct sizing *s)
{
    /* The sizing's per-pod plan counts streams in a stream sweep, req/s otherwise. */
    if (s->planned_rps_per_pod > 0 && !s->streams)
        cJSON_AddNumberToObject(x, "planned_rps_per_pod", s->planned_rps_per_pod);
    else
        cJSON_AddNullToObject(x, "planned_rps_per_pod");
    if (s->streams && s->recommended >= 0) {
        cJSON_AddNumberToObject(x, "planned_streams_per_pod", floor(s->planned_rps_per_pod));
        cJSON_AddNumberToObject(x, "streams_per_pod", s->streams_per_pod);
        if (s->target_streams > 0)
            cJSON_AddNumberToObject(x, "target_streams", s->target_streams);
    }
    if (!s->hpa.enabled) {
        cJSON_AddNullToObject(x, "hpa");
        return;
    }
    cJSON *h = cJSON_AddObjectToObject(x, "hpa");
    if (!h)
        return;
    cJSON_AddNumberToObject(h, "min_replicas", s->hpa.min_replicas);
    cJSON_AddNumberToObject(h, "max_replicas", s->hpa.max_replicas);
    cJSON_AddNumberToObject(h, "target_cpu_utilization", s->hpa.target_cpu_utilization);
}

cJSON *output_results_json(const struct output_doc *d)
{
    const struct advice *a = d->advice;
    cJSON *root = cJSON_CreateObject(), *arr, *x;
    char t[40], b[QTY_LEN];

    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "tool", "sizeup " SIZEUP_VERSION);
    cJSON_AddStringToObject(root, "started_at", output_fmt_time_iso(d->started, t));
    cJSON_AddStringToObject(root, "finished_at", output_fmt_time_iso(d->finished, t));
    cJSON_AddBoolToObject(root, "cancelled", d->cancelled);
    if (d->command)
        cJSON_AddStringToObject(root, "command", d->command);
    if (d->configs)
        cJSON_AddStringToObject(root, "configs", d->configs);
    if (d->workload.images)
        cJSON_AddStringToObject(root, "images", d->workload.images);
    if (d->platform)
        cJSON_AddStringToObject(root, "platform", d->platform);
    if (d->facts) {
        cJSON_AddStringToObject(root, "machine", d->facts->machine);
        cJSON_AddNumberToObject(root, "host_cores", (double)d->facts->host_millicores / 1000.0);
        cJSON_AddBoolToObject(root, "limits_enforced", d->facts->limits_enforced);
        if (!d->facts->limits_enforced)
            cJSON_AddStringToObject(root, "limits_note", d->facts->limits_note);
        cJSON_AddBoolToObject(root, "load_shares_host", d->facts->load_shares_host);
    }
    x = json_profile(d->profile);
    if (x)
        cJSON_AddItemToObject(root, "profile", x);
    arr = cJSON_AddArrayToObject(root, "omitted");
    for (unsigned bit = 1; arr && bit <= OUTPUT_OMIT_HTML; bit <<= 1)
        if (d->omit & bit)
            cJSON_AddItemToArray(arr, cJSON_CreateString(output_omit_id(bit)));
    arr = cJSON_AddArrayToObject(root, "variants");
    for (size_t i = 0; arr && i < d->n; i++) {
        x = json_variant(d, i);
        if (x)
            cJSON_AddItemToArray(arr, x);
    }
    x = cJSON_AddObjectToObject(root, "recommendation");
    if (x) {
        if (a->recommended >= 0) {
            cJSON_AddNumberToObject(x, "index", a->recommended);
            cJSON_AddStringToObject(x, "spec", d->rows[a->recommended].variant.spec);
            cJSON_AddStringToObject(x, "label", d->rows[a->recommended].variant.label);
        } else {
            cJSON_AddNullToObject(x, "index");
        }
        cJSON_AddStringToObject(x, "why", a->why);
        cJSON_AddBoolToObject(x, "by_target", a->by_target);
        if (a->target_rps > 0)
            cJSON_AddNumberToObject(x, "target_rps", a->target_rps);
        cJSON_AddNumberToObject(x, "replicas", a->replicas);
        json_sizing(x, &a->sizing);
    }
    if (a->recommended >= 0) {
        x = cJSON_AddObjectToObject(root, "values");
        if (x) {
            cJSON_AddNumberToObject(x, "workers", a->workers);
            cJSON *l = cJSON_AddObjectToObject(x, "limits");
            if (l) {
                snprintf(b, sizeof(b), "%lldm", (long long)a->limit_cpu_m);
                cJSON_AddStringToObject(l, "cpu", b);
                cJSON_AddStringToObject(l, "memory", qty_format_memory(a->limit_memory, b));
            }
            cJSON *r = cJSON_AddObjectToObject(x, "requests");
            if (r) {
                snprintf(b, sizeof(b), "%lldm", (long long)a->request_cpu_m);
                cJSON_AddStringToObject(r, "cpu", b);
                cJSON_AddStringToObject(r, "memory", qty_format_memory(a->request_memory, b));
            }
            cJSON_AddStringToObject(x, "requests_note", a->requests_note);
        }
    }
    x = cJSON_AddObjectToObject(root, "rule");
    if (x) {
        cJSON_AddStringToObject(x, "expression", RULE_EXPRESSION);
        cJSON *c = cJSON_AddObjectToObject(x, "constants");
        if (c) {
            cJSON_AddNumberToObject(c, "cores_per_worker", a->rule.cores_per_worker);
            cJSON_AddNumberToObject(c, "memory_per_worker_mib", a->rule.memory_per_worker_mib);
            cJSON_AddNumberToObject(c, "max_workers", a->rule.max_workers);
        }
        cJSON *dv = cJSON_AddObjectToObject(x, "derivation");
        if (dv) {
            json_derivation(dv, "cores_per_worker", a->rule.cores_per_worker, &a->cores_per_worker);
            json_derivation(dv, "memory_per_worker_mib", a->rule.memory_per_worker_mib,
                            &a->memory_per_worker);
            json_derivation(dv, "max_workers", a->rule.max_workers, &a->max_workers);
        }
    }
    x = output_scale_out_json(d->sweep, a);
    if (x)
        cJSON_AddItemToObject(root, "scale_out", x);
    arr = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; arr && i < a->nfindings; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(a->findings[i]));
    return root;
}

/* results.json as text: the object of output_results_json, printed, with a final newline. */
int output_results_json_print(FILE *f, const struct output_doc *d, char *err)
{
    cJSON *j = output_results_json(d);
    char *s = NULL;
    int rc = 0;

    if (!j)
        return err_set(err, -ENOMEM, "out of memory building results.json");
    s = cJSON_Print(j);
    if (!s) {
        rc = err_set(err, -ENOMEM, "out of memory printing results.json");
        goto out;
    }
    if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
        rc = err_set(err, -EIO, "write error");
out:
    free(s);
    cJSON_Delete(j);
    return rc;
}
