/* The auto-sizing rule's three constants fitted from a sweep, each with the sentence that says
 * what it was derived from (or that the data cannot decide and the default is used). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advisor_int.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void fit_cores_per_worker(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct rule_derivation *d = &a->cores_per_worker;
    double ratios[VARIANT_MAX];
    size_t nratios = 0;
    bool seen[VARIANT_MAX] = {false}, skipped_subcore = false;
    char b1[QTY_LEN];

    d->text[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (seen[i] || !usable(rows, a, i))
            continue;
        /* Below one core a single worker is the floor, so such a level cannot show how many
         * cores a worker wants: only whole-core levels and above vote. */
        if (rows[i].variant.cpu_millicores < 1000) {
            skipped_subcore = true;
            continue;
        }
        /* Every usable row at this CPU level; the level decides when it has two worker counts. */
        int best = (int)i, count = 0;
        unsigned wmin = rows[i].variant.workers, wmax = wmin;
        for (size_t j = i; j < n; j++) {
            if (!usable(rows, a, j) ||
                rows[j].variant.cpu_millicores != rows[i].variant.cpu_millicores)
                continue;
            seen[j] = true;
            count++;
            if (rows[j].variant.workers < wmin)
                wmin = rows[j].variant.workers;
            if (rows[j].variant.workers > wmax)
                wmax = rows[j].variant.workers;
            if (rows[j].throughput_rps > rows[best].throughput_rps)
                best = (int)j;
        }
        if (wmin == wmax)
            continue;
        ratios[nratios++] = cores_of(&rows[best]) / rows[best].variant.workers;
        d->variants += (unsigned)count;
        text_catf(d->text, sizeof(d->text), "%sat %s cores %u worker%s did best (%.0f req/s",
                  nratios > 1 ? "; " : "", cores_txt(&rows[best], b1), rows[best].variant.workers,
                  rows[best].variant.workers == 1 ? "" : "s", rows[best].throughput_rps);
        for (size_t j = i; j < n; j++)
            if ((int)j != best && usable(rows, a, j) &&
                rows[j].variant.cpu_millicores == rows[i].variant.cpu_millicores)
                text_catf(d->text, sizeof(d->text), ", against %.0f with %u",
                          rows[j].throughput_rps, rows[j].variant.workers);
        text_catf(d->text, sizeof(d->text), ")");
    }
    if (nratios == 0) {
        struct rule def;
        rule_default(&def);
        d->fallback = true;
        d->variants = 0;
        snprintf(d->text, sizeof(d->text),
                 "the data cannot decide: no CPU level of 1 core or more was measured with two "
                 "worker counts%s; the default %g is used (from " ADVISOR_DEFAULTS_SOURCE ")",
                 skipped_subcore ? " (levels below 1 core cannot: one worker is the floor)" : "",
                 def.cores_per_worker);
        return;
    }
    qsort(ratios, nratios, sizeof(ratios[0]), cmp_double);
    double v = ratios[(nratios - 1) / 2];
    /* Keep the constant readable: round to 1/100 core. */
    a->rule.cores_per_worker = round(v * 100.0) / 100.0;
    if (a->rule.cores_per_worker <= 0)
        a->rule.cores_per_worker = 0.01;
    char head[ADVISOR_TEXT_LEN];
    snprintf(head, sizeof(head),
             "the worker/core ratio that did best at equal CPU%s, from %zu "
             "CPU level%s (%u variants): ",
             nratios > 1 ? " (median over the levels)" : "", nratios, nratios == 1 ? "" : "s",
             d->variants);
    char tail[ADVISOR_TEXT_LEN];
    snprintf(tail, sizeof(tail), "%s", d->text);
    snprintf(d->text, sizeof(d->text), "%s%s", head, tail);
}

/* mib rounded up to a multiple of ADVISOR_MEM_STEP_MIB. */
static double mem_step_up(double mib)
{
    return ceil(mib / ADVISOR_MEM_STEP_MIB) * ADVISOR_MEM_STEP_MIB;
}

static void fit_memory_per_worker(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct rule_derivation *d = &a->memory_per_worker;
    double worst = 0, oom_floor = 0;
    int worst_i = -1, oom_i = -1;
    char b1[QTY_LEN], oom_text[ADVISOR_TEXT_LEN] = "";
    struct rule def;

    rule_default(&def);
    for (size_t i = 0; i < n; i++) {
        const struct advisor_row *r = &rows[i];
        if (r->measured && r->peak_memory_bytes >= 0 && r->variant.workers > 0) {
            double per = (double)r->peak_memory_bytes / (double)FMT_MIB / r->variant.workers;
            d->variants++;
            if (per > worst) {
                worst = per;
                worst_i = (int)i;
            }
        }
        /* An OOM-killed variant proves limit / workers is not enough per worker. */
        if (!r->measured && r->fail == PLATFORM_FAIL_OOM && r->variant.workers > 0) {
            double per = (double)r->variant.memory_bytes / (double)FMT_MIB / r->variant.workers;
            if (per > oom_floor) {
                oom_floor = per;
                oom_i = (int)i;
            }
        }
    }
    if (worst_i < 0) {
        d->fallback = true;
        snprintf(d->text, sizeof(d->text),
                 "the data cannot decide: no variant's peak memory was measured; the default "
                 "%.0f MiB is used (from " ADVISOR_DEFAULTS_SOURCE ")",
                 def.memory_per_worker_mib);
        /* An OOM kill is the one fact that proves the default too small; only a larger value
         * replaces it, a smaller one says nothing about what would have been enough. */
        if (oom_floor > def.memory_per_worker_mib) {
            a->rule.memory_per_worker_mib = mem_step_up(oom_floor * (1.0 + ADVISOR_HEADROOM));
            snprintf(d->text, sizeof(d->text),
                     "no peak memory was measured, but a variant was OOM-killed at %.0f MiB "
                     "per worker: that + %.0f%% headroom, rounded up to %d MiB",
                     oom_floor, PCT(ADVISOR_HEADROOM), ADVISOR_MEM_STEP_MIB);
        }
        return;
    }
    double v = worst * (1.0 + ADVISOR_HEADROOM);
    if (oom_floor * (1.0 + ADVISOR_HEADROOM) > v)
        v = oom_floor * (1.0 + ADVISOR_HEADROOM);
    a->rule.memory_per_worker_mib = mem_step_up(v);
    /* Say "raised" only when the OOM kill, not the measured peak, set the value. */
    if (oom_i >= 0)
        snprintf(oom_text, sizeof(oom_text),
                 "; %s the %.0f MiB per worker at which %s was OOM-killed",
                 oom_floor > worst ? "raised to" : "above", oom_floor, rows[oom_i].variant.label);
    snprintf(
        d->text, sizeof(d->text),
        "the largest measured peak memory per worker (%.0f MiB: %s peak over %u worker%s "
        "in %s), + %.0f%% headroom, rounded up to %d MiB; from the peak memory of %u "
        "variant%s%s",
        worst,
        mem_txt(rows[worst_i].peak_memory_bytes - rows[worst_i].peak_memory_bytes % FMT_MIB, b1),
        rows[worst_i].variant.workers, rows[worst_i].variant.workers == 1 ? "" : "s",
        rows[worst_i].variant.label, PCT(ADVISOR_HEADROOM), ADVISOR_MEM_STEP_MIB, d->variants,
        d->variants == 1 ? "" : "s", oom_text);
}

/* Rows whose workers match their cores under the fitted cores_per_worker, best per worker
 * count, sorted by workers. Returns how many indices it wrote into idx. */
static size_t matched_rows(const struct advisor_row *rows, size_t n, const struct advice *a,
                           double cpw, int *idx)
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++) {
        if (!usable(rows, a, i))
            continue;
        double want = round(cores_of(&rows[i]) / cpw);
        if (want < 1 || fabs(want - rows[i].variant.workers) > 1e-9)
            continue;
        size_t k;
        for (k = 0; k < m; k++)
            if (rows[idx[k]].variant.workers == rows[i].variant.workers)
                break;
        if (k < m) {
            if (rows[i].throughput_rps > rows[idx[k]].throughput_rps)
                idx[k] = (int)i;
            continue;
        }
        idx[m++] = (int)i;
    }
    /* Insertion sort by workers: at most VARIANT_MAX entries. */
    for (size_t i = 1; i < m; i++)
        for (size_t j = i; j > 0 && rows[idx[j]].variant.workers < rows[idx[j - 1]].variant.workers;
             j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    return m;
}

static void fit_max_workers(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct rule_derivation *d = &a->max_workers;
    int idx[VARIANT_MAX];
    size_t m = matched_rows(rows, n, a, a->rule.cores_per_worker, idx);
    struct rule def;

    rule_default(&def);
    if (m < 2) {
        d->fallback = true;
        d->variants = (unsigned)m;
        snprintf(d->text, sizeof(d->text),
                 "the data cannot decide: fewer than two variants with workers matched to "
                 "cores; the default %u is used (from " ADVISOR_DEFAULTS_SOURCE ")",
                 def.max_workers);
        return;
    }
    d->variants = (unsigned)m;
    for (size_t k = 1; k < m; k++) {
        const struct advisor_row *p = &rows[idx[k - 1]], *q = &rows[idx[k]];
        double gain = q->throughput_rps / p->throughput_rps - 1.0;
        double linear = (double)q->variant.workers / p->variant.workers - 1.0;
        if (gain < ADVISOR_PAYS_FRACTION * linear) {
            a->rule.max_workers = p->variant.workers;
            snprintf(d->text, sizeof(d->text),
                     "where adding worker+core pairs stopped paying: %u -> %u workers gained "
                     "%+.0f%% throughput (%.0f -> %.0f req/s) for %+.0f%% workers and cores, "
                     "less than the %.0f%% of linear scaling's gain a step must add to pay; from "
                     "%zu variants with workers matched to cores",
                     p->variant.workers, q->variant.workers, gain * 100, p->throughput_rps,
                     q->throughput_rps, linear * 100, PCT(ADVISOR_PAYS_FRACTION), m);
            return;
        }
    }
    const struct advisor_row *last = &rows[idx[m - 1]], *prev = &rows[idx[m - 2]];
    bool own = last->variant.workers > def.max_workers;
    d->fallback = true;
    a->rule.max_workers = own ? last->variant.workers : def.max_workers;
    snprintf(d->text, sizeof(d->text),
             "the data cannot decide: adding worker+core pairs still paid at the largest "
             "variant measured (%u -> %u workers: %+.0f%% throughput for %+.0f%% workers and "
             "cores, at least the %.0f%% of linear scaling's gain a step must add), so where it "
             "stops is beyond this sweep; %s %u is used (from %zu variants with workers matched "
             "to cores)",
             prev->variant.workers, last->variant.workers,
             pct(prev->throughput_rps, last->throughput_rps),
             pct(prev->variant.workers, last->variant.workers), PCT(ADVISOR_PAYS_FRACTION),
             own ? "the largest measured," : "the default (from " ADVISOR_DEFAULTS_SOURCE ")",
             a->rule.max_workers, m);
}

void advisor__fit_rule(const struct advisor_row *rows, size_t n, struct advice *a)
{
    fit_cores_per_worker(rows, n, a);
    fit_memory_per_worker(rows, n, a);
    fit_max_workers(rows, n, a);
}
