/* results.md: the answer (shape, replicas, autoscaler, values.yaml, the commands), then the
 * evidence: the setup, the results table, the measured usage, the findings and the auto-sizing
 * rule, each a step of output_results_md in the order a reader meets them. */

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "advise/rule.h"
#include "core/fmt.h"
#include "core/quantity.h"
#include "output/output.h"
#include "output/output_int.h"
#include "output/output_set.h"
#include "sweep/runner.h"

#ifndef SIZEUP_VERSION
#define SIZEUP_VERSION "0.1.0"
#endif

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

/* The banners above everything: cancelled, limits not enforced, trimmed, since the previous. */
static void md_banners(FILE *f, const struct output_doc *d)
{
    char line[1024];

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
}

/* The Setup table: date, machine, platform, profile, variants, command, tool. */
static void md_setup(FILE *f, const struct output_doc *d)
{
    char t[40], line[1024];

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
}

/* One row of the results table; cap and streams add their columns. */
static void md_result_row(FILE *f, const struct output_doc *d, size_t i, bool cap, bool streams)
{
    const struct advice *a = d->advice;
    const struct advisor_row *r = &d->rows[i];
    char line[1024], capbuf[OUTPUT_CAPACITY_LEN], b1[QTY_LEN], b2[QTY_LEN], l1[32], l2[32], l3[32],
        st[320];

    output_state(d, i, st, sizeof(st));
    fprintf(f, "| %s%s | %u | %s | %s | ", (int)i == a->recommended ? "* " : "", r->variant.label,
            r->variant.workers, qty_format_cores(r->variant.cpu_millicores, b1),
            qty_format_memory(r->variant.memory_bytes, b2));
    if (r->measured)
        fprintf(f, "%.0f req/s | %s | %s | %s | %.1f%% | %s | ", r->throughput_rps,
                fmt_latency(r->p50_us, l1), fmt_latency(r->p95_us, l2), fmt_latency(r->p99_us, l3),
                r->error_rate * 100, st);
    else
        fprintf(f, "- | - | - | - | - | %s | ", st);
    if (r->measured && a->rows[i].capacity)
        fprintf(f, "~%.0f |", round(a->rows[i].est_users));
    else if (r->measured)
        fprintf(f, "(not capacity) |");
    else
        fprintf(f, "- |");
    if (cap)
        fprintf(f, " %s | %s |", output_fmt_capacity(&r->cap, capbuf),
                output_fmt_per_core(&r->cap, l1, sizeof(l1)));
    if (streams)
        fprintf(f, " %s | %s |", output_fmt_streams(&r->scap, line, sizeof(line)),
                output_fmt_memory_per_stream(&r->scap, l1, sizeof(l1)));
    fputc('\n', f);
}

/* ## Results: the recommendation's sentence, the table, the thresholds, the target. */
static void md_results(FILE *f, const struct output_doc *d)
{
    const struct advice *a = d->advice;
    char line[1024];

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
    for (size_t i = 0; i < d->n; i++)
        md_result_row(f, d, i, cap, streams);
    fmt_threshold_line(d, line, sizeof(line));
    fprintf(f, "\n%s\n", line);
    if (output_fmt_capacity_note(d->profile, line, sizeof(line))[0])
        fprintf(f, "\n%s\n", line);
    /* The target in the unit it was given in: req/s, users or streams (the sizing's). */
    if (a->recommended >= 0 && a->sizing.by_target && a->sizing.unreachable)
        fprintf(f, "\nTarget: %s; %s.\n", output_answer_target(&a->sizing, line, sizeof(line)),
                a->sizing.replicas_note);
    else if (a->recommended >= 0 && a->sizing.by_target && a->sizing.replicas == 0)
        fprintf(f, "\nTarget: %s; no replica count of the recommended size reaches it.\n",
                output_answer_target(&a->sizing, line, sizeof(line)));
    else if (a->recommended >= 0 && a->sizing.by_target)
        fprintf(f, "\nTarget: %s; at the recommended size that takes %u replica%s%s.\n",
                output_answer_target(&a->sizing, line, sizeof(line)), a->sizing.replicas,
                a->sizing.replicas == 1 ? "" : "s",
                a->sizing.from_curve ? " (from the scale-out's curve)" : "");
}

/* ### Measured usage, when any measured row has a figure. */
static void md_usage(FILE *f, const struct output_doc *d)
{
    char b1[QTY_LEN], b2[QTY_LEN];
    bool usage = false;

    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].measured && (d->rows[i].cpu_cores_used >= 0 ||
                                    d->rows[i].peak_memory_bytes >= 0 || d->rows[i].gen_cores >= 0))
            usage = true;
    if (!usage)
        return;
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
            fprintf(f, "%.0fMi of %s | ", (double)r->peak_memory_bytes / (double)FMT_MIB,
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

/* ## What the shape tells you: the findings, numbered. */
static void md_findings(FILE *f, const struct advice *a)
{
    fprintf(f, "\n## What the shape tells you\n\n");
    if (a->nfindings == 0)
        fprintf(f, "Too few variants were measured to draw findings.\n");
    for (size_t i = 0; i < a->nfindings; i++)
        fprintf(f, "%zu. %s\n", i + 1, a->findings[i]);
}

/* ## Auto-sizing rule: the expression and each constant's derivation. */
static void md_rule(FILE *f, const struct advice *a)
{
    fprintf(f, "\n## Auto-sizing rule (`auto-sizing.yaml`)\n\n");
    char expr[RULE_EXPRESSION_LEN];
    fprintf(f, "`%s`\n\n", rule_format(&a->rule, expr));
    fprintf(f, "- cores_per_worker = %g: %s\n", a->rule.cores_per_worker, a->cores_per_worker.text);
    fprintf(f, "- memory_per_worker_mib = %g: %s\n", a->rule.memory_per_worker_mib,
            a->memory_per_worker.text);
    fprintf(f, "- max_workers = %u: %s\n", a->rule.max_workers, a->max_workers.text);
    fprintf(f, "\nA chart's `workers.count: \"auto\"` resolves to this; `sizeup rule --rule "
               "auto-sizing.yaml --cpu C --memory M` evaluates it.\n");
}

int output_results_md(FILE *f, const struct output_doc *d, char *err)
{
    int rc;

    md_banners(f, d);
    rc = output_answer(f, d, OUTPUT_ANSWER_MD, err);
    if (rc)
        return rc;
    md_setup(f, d);
    md_results(f, d);
    md_usage(f, d);
    output_scale_out_table(f, d->scale_out_from ? d->scale_out_from : d->sweep, true);
    md_findings(f, d->advice);
    md_rule(f, d->advice);
    if (ferror(f))
        return err_set(err, -EIO, "write error");
    return 0;
}
