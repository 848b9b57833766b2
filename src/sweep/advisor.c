#include "sweep/advisor.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "sweep/sizing.h"

#define MIB (1024.0 * 1024.0)

enum verdict advisor_classify(const struct advisor_row *r, const struct profile_thresholds *t)
{
    if (r->requests == 0 || (int64_t)r->p95_us > t->overloaded_p95_us ||
        r->error_rate > t->overloaded_errors)
        return VERDICT_OVERLOADED;
    if ((int64_t)r->p95_us < t->healthy_p95_us && r->error_rate < t->healthy_errors)
        return VERDICT_HEALTHY;
    return VERDICT_STRESSED;
}

/* Appends a formatted finding; silently drops it when the list is full (the first findings are
 * the important ones, and ADVISOR_MAX_FINDINGS leaves room for every kind). */
__attribute__((format(printf, 2, 3))) static void finding(struct advice *a, const char *fmt, ...)
{
    va_list ap;

    if (a->nfindings >= ADVISOR_MAX_FINDINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(a->findings[a->nfindings], ADVISOR_TEXT_LEN, fmt, ap);
    va_end(ap);
    a->nfindings++;
}

/* Appends to a fixed buffer, keeping it NUL-terminated when it fills. */
__attribute__((format(printf, 3, 4))) static void cat(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strnlen(buf, len);
    va_list ap;

    if (used + 1 >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static double cores_of(const struct advisor_row *r)
{
    return (double)r->variant.cpu_millicores / 1000.0;
}

static const char *cores_txt(const struct advisor_row *r, char buf[QTY_LEN])
{
    return qty_format_cores(r->variant.cpu_millicores, buf);
}

static const char *mem_txt(int64_t bytes, char buf[QTY_LEN])
{
    return qty_format_memory(bytes, buf);
}

/* A percentage change "-57%" / "+12%" from a to b. */
static double pct(double from, double to)
{
    return from > 0 ? (to / from - 1.0) * 100.0 : 0.0;
}

static bool usable(const struct advisor_row *rows, const struct advice *a, size_t i)
{
    return rows[i].measured && a->rows[i].capacity;
}

/* ---- recommendation ------------------------------------------------------------------------ */

static int cheaper(const struct advisor_row *x, const struct advisor_row *y)
{
    /* Fewest cores, then least memory, then the higher throughput. */
    if (x->variant.cpu_millicores != y->variant.cpu_millicores)
        return x->variant.cpu_millicores < y->variant.cpu_millicores;
    if (x->variant.memory_bytes != y->variant.memory_bytes)
        return x->variant.memory_bytes < y->variant.memory_bytes;
    return x->throughput_rps > y->throughput_rps;
}

static void recommend(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                      struct advice *a)
{
    int best = -1;

    a->recommended = -1;
    a->replicas = 1;
    if (o->target_rps > 0) {
        a->target_rps = o->target_rps;
        /* First choice: the cheapest HEALTHY variant that alone carried the target. */
        for (size_t i = 0; i < n; i++) {
            if (!usable(rows, a, i) || a->rows[i].verdict != VERDICT_HEALTHY ||
                rows[i].throughput_rps < o->target_rps)
                continue;
            if (best < 0 || cheaper(&rows[i], &rows[best]))
                best = (int)i;
        }
        if (best >= 0) {
            a->by_target = true;
            a->recommended = best;
            snprintf(a->why, sizeof(a->why),
                     "the cheapest variant (fewest cores, then least memory) that stayed "
                     "HEALTHY while serving the target of %.0f req/s: %.0f req/s measured",
                     o->target_rps, rows[best].throughput_rps);
            return;
        }
        /* Else: the HEALTHY size whose replicas need the fewest cores in total. */
        double best_total = 0;
        for (size_t i = 0; i < n; i++) {
            if (!usable(rows, a, i) || a->rows[i].verdict != VERDICT_HEALTHY ||
                rows[i].throughput_rps <= 0)
                continue;
            double reps = ceil(o->target_rps / rows[i].throughput_rps);
            double total = reps * cores_of(&rows[i]);
            if (best < 0 || total < best_total - 1e-9 ||
                (fabs(total - best_total) < 1e-9 && cheaper(&rows[i], &rows[best]))) {
                best = (int)i;
                best_total = total;
            }
        }
        if (best >= 0) {
            a->by_target = true;
            a->recommended = best;
            a->replicas = (unsigned)ceil(o->target_rps / rows[best].throughput_rps);
            snprintf(a->why, sizeof(a->why),
                     "no single variant served the target of %.0f req/s HEALTHY; %u replicas "
                     "of this size (%.0f req/s each, HEALTHY) need the fewest cores in total "
                     "(%.1f)",
                     o->target_rps, a->replicas, rows[best].throughput_rps, best_total);
            return;
        }
        /* No HEALTHY variant at all: fall through to the default rule, and say so. */
    }
    for (size_t i = 0; i < n; i++) {
        if (!usable(rows, a, i) || a->rows[i].verdict == VERDICT_OVERLOADED)
            continue;
        if (best < 0 || rows[i].throughput_rps > rows[best].throughput_rps)
            best = (int)i;
    }
    a->recommended = best;
    if (best < 0) {
        snprintf(a->why, sizeof(a->why),
                 "no variant qualifies: every measured variant was OVERLOADED, FAILED or "
                 "marked as not showing the app's capacity");
        return;
    }
    snprintf(a->why, sizeof(a->why), "the highest-throughput variant not OVERLOADED%s",
             o->target_rps > 0 ? " (no variant was HEALTHY, so the target is not met)" : "");
    if (o->target_rps > 0)
        a->replicas = (unsigned)ceil(o->target_rps / rows[best].throughput_rps);
}

/* ---- values -------------------------------------------------------------------------------- */

static void values(const struct advisor_row *rows, struct advice *a)
{
    char b1[QTY_LEN], b2[QTY_LEN];

    if (a->recommended < 0)
        return;
    const struct advisor_row *r = &rows[a->recommended];
    a->workers = r->variant.workers;
    a->limit_cpu_m = r->variant.cpu_millicores;
    a->limit_memory = r->variant.memory_bytes;

    /* Measured cores and peak memory plus headroom, within the limits. */
    struct sizing_requests req;
    sizing_requests(r->cpu_cores_used, 1.0 + ADVISOR_HEADROOM, r->peak_memory_bytes,
                    a->limit_cpu_m, a->limit_memory, &req);
    a->request_cpu_m = req.cpu_m;
    a->request_memory = req.memory;
    a->cpu_request_measured = req.cpu_measured;
    a->memory_request_measured = req.memory_measured;
    snprintf(a->requests_note, sizeof(a->requests_note), "cpu %s: %s; memory %s: %s",
             qty_format_cpu(a->request_cpu_m, b1),
             a->cpu_request_measured ? "measured mean CPU during the measured window + 25% "
                                       "headroom"
                                     : "20% of the limit (CPU use was not measured)",
             mem_txt(a->request_memory, b2),
             a->memory_request_measured ? "measured peak memory + 25% headroom"
                                        : "50% of the limit (peak memory was not measured)");
}

/* ---- the auto-sizing rule ------------------------------------------------------------------ */

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
        cat(d->text, sizeof(d->text), "%sat %s cores %u worker%s did best (%.0f req/s",
            nratios > 1 ? "; " : "", cores_txt(&rows[best], b1), rows[best].variant.workers,
            rows[best].variant.workers == 1 ? "" : "s", rows[best].throughput_rps);
        for (size_t j = i; j < n; j++)
            if ((int)j != best && usable(rows, a, j) &&
                rows[j].variant.cpu_millicores == rows[i].variant.cpu_millicores)
                cat(d->text, sizeof(d->text), ", against %.0f with %u", rows[j].throughput_rps,
                    rows[j].variant.workers);
        cat(d->text, sizeof(d->text), ")");
    }
    if (nratios == 0) {
        d->fallback = true;
        d->variants = 0;
        snprintf(d->text, sizeof(d->text),
                 "the data cannot decide: no CPU level of 1 core or more was measured with two "
                 "worker counts%s; seed 000's value 1 is used",
                 skipped_subcore ? " (levels below 1 core cannot: one worker is the floor)" : "");
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

static void fit_memory_per_worker(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct rule_derivation *d = &a->memory_per_worker;
    double worst = 0, oom_floor = 0;
    int worst_i = -1;
    char b1[QTY_LEN];

    for (size_t i = 0; i < n; i++) {
        const struct advisor_row *r = &rows[i];
        if (r->measured && r->peak_memory_bytes >= 0 && r->variant.workers > 0) {
            double per = (double)r->peak_memory_bytes / MIB / r->variant.workers;
            d->variants++;
            if (per > worst) {
                worst = per;
                worst_i = (int)i;
            }
        }
        /* An OOM-killed variant proves limit / workers is not enough per worker. */
        if (!r->measured && strstr(r->note, "OOM")) {
            double per = (double)r->variant.memory_bytes / MIB / r->variant.workers;
            if (per > oom_floor)
                oom_floor = per;
        }
    }
    if (worst_i < 0) {
        d->fallback = true;
        snprintf(d->text, sizeof(d->text),
                 "the data cannot decide: no variant's peak memory was measured; seed 000's "
                 "value 192 MiB is used");
        if (oom_floor > 192) {
            a->rule.memory_per_worker_mib = ceil(oom_floor * (1.0 + ADVISOR_HEADROOM) / 16) * 16;
            snprintf(d->text, sizeof(d->text),
                     "no peak memory was measured, but a variant was OOM-killed at %.0f MiB "
                     "per worker: that + 25%% headroom, rounded up to 16 MiB",
                     oom_floor);
        }
        return;
    }
    double v = worst * (1.0 + ADVISOR_HEADROOM);
    if (oom_floor * (1.0 + ADVISOR_HEADROOM) > v)
        v = oom_floor * (1.0 + ADVISOR_HEADROOM);
    a->rule.memory_per_worker_mib = ceil(v / 16.0) * 16.0;
    snprintf(
        d->text, sizeof(d->text),
        "the largest measured peak memory per worker (%.0f MiB: %s peak over %u worker%s "
        "in %s), + 25%% headroom, rounded up to 16 MiB; from the peak memory of %u "
        "variant%s%s",
        worst,
        mem_txt(rows[worst_i].peak_memory_bytes - rows[worst_i].peak_memory_bytes % (1 << 20), b1),
        rows[worst_i].variant.workers, rows[worst_i].variant.workers == 1 ? "" : "s",
        rows[worst_i].variant.label, d->variants, d->variants == 1 ? "" : "s",
        oom_floor > 0 ? "; raised above the per-worker memory of an OOM-killed variant" : "");
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

    if (m < 2) {
        d->fallback = true;
        d->variants = (unsigned)m;
        snprintf(d->text, sizeof(d->text),
                 "the data cannot decide: fewer than two variants with workers matched to "
                 "cores; seed 000's value 8 is used");
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
                     "%+.0f%% throughput (%.0f -> %.0f req/s) for %+.0f%% workers and cores; from "
                     "%zu variants with workers matched to cores",
                     p->variant.workers, q->variant.workers, gain * 100, p->throughput_rps,
                     q->throughput_rps, linear * 100, m);
            return;
        }
    }
    const struct advisor_row *last = &rows[idx[m - 1]], *prev = &rows[idx[m - 2]];
    d->fallback = true;
    a->rule.max_workers = last->variant.workers > 8 ? last->variant.workers : 8;
    snprintf(d->text, sizeof(d->text),
             "the data cannot decide: adding worker+core pairs still paid at the largest "
             "variant measured (%u -> %u workers: %+.0f%%), so where it stops is beyond this "
             "sweep; %s %u is used (from %zu variants with workers matched to cores)",
             prev->variant.workers, last->variant.workers,
             pct(prev->throughput_rps, last->throughput_rps),
             a->rule.max_workers == 8 ? "seed 000's value" : "the largest measured,",
             a->rule.max_workers, m);
}

/* ---- findings ------------------------------------------------------------------------------ */

static void find_oversubscription(const struct advisor_row *rows, size_t n, struct advice *a)
{
    char text[ADVISOR_TEXT_LEN] = "";
    int worse = 0, better = 0, same = 0;
    double worst = 0;

    for (size_t i = 0; i < n; i++) {
        const struct advisor_row *o = &rows[i];
        if (!usable(rows, a, i) || (double)o->variant.workers <= cores_of(o) + 1e-9)
            continue;
        /* The best row at the same CPU with no more workers than cores. */
        int base = -1;
        for (size_t j = 0; j < n; j++) {
            const struct advisor_row *b = &rows[j];
            if (!usable(rows, a, j) || b->variant.cpu_millicores != o->variant.cpu_millicores ||
                b->variant.workers >= o->variant.workers)
                continue;
            if (base < 0 || b->throughput_rps > rows[base].throughput_rps)
                base = (int)j;
        }
        if (base < 0)
            continue;
        const struct advisor_row *b = &rows[base];
        double d = pct(b->throughput_rps, o->throughput_rps);
        if (d < -ADVISOR_NOISE * 100)
            worse++;
        else if (d > ADVISOR_NOISE * 100)
            better++;
        else
            same++;
        if (d < worst)
            worst = d;
        cat(text, sizeof(text), "%s%s did %.0f req/s against %.0f for %s (%+.0f%%)",
            text[0] ? "; " : "", o->variant.label, o->throughput_rps, b->throughput_rps,
            b->variant.label, d);
    }
    if (worse + better + same == 0)
        return;
    if (worse > 0 && better == 0)
        finding(a,
                "Workers beyond the cores made things worse, not better: %s. Workers competing "
                "for the same CPU budget pay for context switches and gain no parallelism; "
                "each worker beyond the first wants its own core.",
                text);
    else if (better > 0 && worse == 0)
        finding(a,
                "Workers beyond the cores helped: %s. The app spends time waiting (I/O, "
                "locks), so extra workers use CPU time one worker leaves idle.",
                text);
    else if (worse == 0 && better == 0)
        finding(a, "Workers beyond the cores made no measurable difference (within %.0f%%): %s.",
                ADVISOR_NOISE * 100, text);
    else
        finding(a, "Workers beyond the cores gave mixed results (worst %+.0f%%): %s.", worst, text);
}

static void find_cpu_memory(const struct advisor_row *rows, size_t n, struct advice *a)
{
    char mem_text[ADVISOR_TEXT_LEN] = "", cpu_text[ADVISOR_TEXT_LEN] = "";
    char b1[QTY_LEN], b2[QTY_LEN], b3[QTY_LEN], b4[QTY_LEN];
    double max_mem_effect = 0, best_cpu_ratio = 0;
    int mem_pairs = 0, mem_better = 0, level_pairs = 0;

    /* Pure memory pairs: same workers and CPU, different memory. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            const struct advisor_row *x = &rows[i], *y = &rows[j];
            if (!usable(rows, a, i) || !usable(rows, a, j) ||
                x->variant.workers != y->variant.workers ||
                x->variant.cpu_millicores != y->variant.cpu_millicores ||
                x->variant.memory_bytes >= y->variant.memory_bytes)
                continue;
            double d = pct(x->throughput_rps, y->throughput_rps);
            mem_pairs++;
            if (fabs(d) > fabs(max_mem_effect))
                max_mem_effect = d;
            cat(mem_text, sizeof(mem_text), "%s%s -> %s at %uw / %sc: %.0f -> %.0f req/s (%+.0f%%)",
                mem_text[0] ? "; " : "", mem_txt(x->variant.memory_bytes, b1),
                mem_txt(y->variant.memory_bytes, b2), x->variant.workers, cores_txt(x, b3),
                x->throughput_rps, y->throughput_rps, d);
        }
    /* Without pure pairs: at the same CPU, did any variant with more memory do better? */
    char level_text[ADVISOR_TEXT_LEN] = "";
    if (mem_pairs == 0) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                const struct advisor_row *x = &rows[i], *y = &rows[j];
                if (!usable(rows, a, i) || !usable(rows, a, j) ||
                    x->variant.cpu_millicores != y->variant.cpu_millicores ||
                    x->variant.memory_bytes >= y->variant.memory_bytes)
                    continue;
                level_pairs++;
                if (y->throughput_rps > x->throughput_rps * (1 + ADVISOR_NOISE))
                    mem_better++;
                cat(level_text, sizeof(level_text), "%s%s %.0f req/s, %s %.0f req/s",
                    level_text[0] ? "; " : "", x->variant.label, x->throughput_rps,
                    y->variant.label, y->throughput_rps);
            }
    }
    /* Pure CPU pairs: same workers and memory, more CPU. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            const struct advisor_row *x = &rows[i], *y = &rows[j];
            if (!usable(rows, a, i) || !usable(rows, a, j) ||
                x->variant.workers != y->variant.workers ||
                x->variant.memory_bytes != y->variant.memory_bytes ||
                x->variant.cpu_millicores >= y->variant.cpu_millicores || x->throughput_rps <= 0)
                continue;
            double ratio = y->throughput_rps / x->throughput_rps;
            if (ratio > best_cpu_ratio) {
                best_cpu_ratio = ratio;
                snprintf(cpu_text, sizeof(cpu_text),
                         "going from %s to %s cores at the same memory (%uw / %s) multiplied "
                         "throughput by %.1fx (%.0f -> %.0f req/s)",
                         cores_txt(x, b1), cores_txt(y, b2), x->variant.workers,
                         mem_txt(x->variant.memory_bytes, b4), ratio, x->throughput_rps,
                         y->throughput_rps);
            }
        }
    /* Peak memory against the limits, where measured. */
    double max_share = -1;
    int max_share_i = -1;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].measured || rows[i].peak_memory_bytes < 0)
            continue;
        double s = (double)rows[i].peak_memory_bytes / (double)rows[i].variant.memory_bytes;
        if (s > max_share) {
            max_share = s;
            max_share_i = (int)i;
        }
    }

    bool memory_flat = (mem_pairs > 0 && fabs(max_mem_effect) <= ADVISOR_NOISE * 100) ||
                       (mem_pairs == 0 && level_pairs > 0 && mem_better == 0) ||
                       (mem_pairs == 0 && level_pairs == 0 && max_share >= 0 && max_share < 0.8);
    char mem_sentence[ADVISOR_TEXT_LEN] = "";
    if (mem_pairs > 0 && fabs(max_mem_effect) <= ADVISOR_NOISE * 100)
        snprintf(mem_sentence, sizeof(mem_sentence),
                 "memory made no measurable difference (%s; within the %.0f%% this sweep treats "
                 "as noise)",
                 mem_text, ADVISOR_NOISE * 100);
    else if (mem_pairs > 0)
        snprintf(mem_sentence, sizeof(mem_sentence),
                 "more memory changed throughput by up to "
                 "%+.0f%% (%s)",
                 max_mem_effect, mem_text);
    else if (level_pairs > 0 && mem_better == 0)
        snprintf(mem_sentence, sizeof(mem_sentence),
                 "at the same CPU no variant with more memory did better (%s); no two variants "
                 "differ only in memory, so memory's own effect is bounded, not isolated",
                 level_text);
    if (max_share_i >= 0) {
        char extra[ADVISOR_TEXT_LEN];
        snprintf(extra, sizeof(extra),
                 "%speak memory reached at most %.0f%% of the limit (%s of "
                 "%s in %s)",
                 mem_sentence[0] ? "; " : "", max_share * 100,
                 mem_txt(rows[max_share_i].peak_memory_bytes -
                             rows[max_share_i].peak_memory_bytes % (1 << 20),
                         b1),
                 mem_txt(rows[max_share_i].variant.memory_bytes, b2),
                 rows[max_share_i].variant.label);
        cat(mem_sentence, sizeof(mem_sentence), "%s", extra);
    }

    if (best_cpu_ratio > 0 && best_cpu_ratio <= 1.0 + ADVISOR_NOISE)
        finding(a,
                "More CPU made no measurable difference (%s; within the %.0f%% this sweep treats "
                "as noise): at this load the app is not CPU-bound, so look at what it waits on "
                "(database, locks, the load itself) before buying cores.%s%s%s",
                cpu_text, ADVISOR_NOISE * 100, mem_sentence[0] ? " Memory: " : "", mem_sentence,
                mem_sentence[0] ? "." : "");
    else if (best_cpu_ratio >= 1.0 + 2 * ADVISOR_NOISE && memory_flat)
        finding(a,
                "CPU dominates memory for this workload: %s, while %s. Don't buy memory to fix "
                "what is a CPU shortage.",
                cpu_text, mem_sentence);
    else if (best_cpu_ratio > 0 && cpu_text[0])
        finding(a, "CPU: %s.%s%s%s", cpu_text, mem_sentence[0] ? " Memory: " : "", mem_sentence,
                mem_sentence[0] ? "." : "");
    else if (mem_sentence[0]) {
        mem_sentence[0] = (char)toupper((unsigned char)mem_sentence[0]);
        finding(a, "%s.", mem_sentence);
    }
}

/* Fills idx with the highest-throughput usable row per CPU level, in sweep order of first
 * appearance; with matched_only, only rows whose workers equal their cores count. Returns how
 * many indices were written (at most n). */
static size_t best_per_cpu(const struct advisor_row *rows, size_t n, const struct advice *a,
                           bool matched_only, int idx[VARIANT_MAX])
{
    size_t m = 0;

    for (size_t i = 0; i < n; i++) {
        if (!usable(rows, a, i) || (matched_only && (int64_t)rows[i].variant.workers * 1000 !=
                                                        rows[i].variant.cpu_millicores))
            continue;
        size_t k;
        for (k = 0; k < m; k++)
            if (rows[idx[k]].variant.cpu_millicores == rows[i].variant.cpu_millicores)
                break;
        if (k < m) {
            if (rows[i].throughput_rps > rows[idx[k]].throughput_rps)
                idx[k] = (int)i;
        } else {
            idx[m++] = (int)i;
        }
    }
    return m;
}

static void find_scaling(const struct advisor_row *rows, size_t n, struct advice *a)
{
    int idx[VARIANT_MAX];
    size_t m = 0;
    char text[ADVISOR_TEXT_LEN] = "", b1[QTY_LEN];
    bool matched = true;

    /* Workers equal to cores first (seed 000's "match workers to cores"), else the best
     * variant per CPU level. */
    m = best_per_cpu(rows, n, a, true, idx);
    if (m < 2) {
        matched = false;
        m = best_per_cpu(rows, n, a, false, idx);
    }
    if (m < 2)
        return;
    for (size_t i = 1; i < m; i++)
        for (size_t j = i;
             j > 0 && rows[idx[j]].variant.cpu_millicores < rows[idx[j - 1]].variant.cpu_millicores;
             j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    const struct advisor_row *base = &rows[idx[0]];
    double eff = 0;
    for (size_t k = 0; k < m; k++) {
        const struct advisor_row *r = &rows[idx[k]];
        if (k == 0) {
            cat(text, sizeof(text), "%uw/%sc -> %.0f req/s", r->variant.workers, cores_txt(r, b1),
                r->throughput_rps);
            continue;
        }
        double ratio = base->throughput_rps > 0 ? r->throughput_rps / base->throughput_rps : 0;
        double cpu_ratio = cores_of(r) / cores_of(base);
        eff = cpu_ratio > 0 ? ratio / cpu_ratio : 0;
        cat(text, sizeof(text),
            ", %uw/%sc -> %.0f req/s (%.1fx for %.1fx the CPU, %.0f%% of "
            "linear)",
            r->variant.workers, cores_txt(r, b1), r->throughput_rps, ratio, cpu_ratio, eff * 100);
    }
    const char *shape = eff >= 0.9   ? "Scaling is linear"
                        : eff >= 0.6 ? "Scaling is roughly linear"
                        : eff >= 0.3 ? "Scaling falls well short of linear"
                                     : "Scaling barely pays";
    finding(a,
            "%s %s: %s. From the smallest to the largest CPU, throughput per core kept %.0f%% "
            "of its value.",
            shape, matched ? "when workers match cores" : "from the smallest to the largest CPU",
            text, eff * 100);
}

static void find_caveats(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                         struct advice *a)
{
    char list[ADVISOR_TEXT_LEN] = "";
    int k = 0;

    for (size_t i = 0; i < n; i++)
        if (rows[i].flags & ADVISOR_ROW_CPU_EXCEEDS_HOST) {
            cat(list, sizeof(list), "%s%s", k++ ? ", " : "", rows[i].variant.label);
        }
    if (k)
        finding(a,
                "%d variant%s asked for more CPU than this host has (%.0f cores): %s. %s "
                "what the host could give, not the limit asked for; %s marked and never "
                "recommended.",
                k, k == 1 ? "" : "s", o->host_cores, list,
                k == 1 ? "Its row shows" : "Their rows show", k == 1 ? "it is" : "they are");
    list[0] = '\0';
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].flags & (ADVISOR_ROW_CONTENDED | ADVISOR_ROW_GEN_SATURATED)) {
            char other[64] = "";
            if (rows[i].host_other_cores >= 0)
                snprintf(other, sizeof(other), ", everything else %.2f", rows[i].host_other_cores);
            cat(list, sizeof(list), "%s%s (load generator %.2f cores%s%s)", k++ ? "; " : "",
                rows[i].variant.label, rows[i].gen_cores, other,
                rows[i].flags & ADVISOR_ROW_GEN_SATURATED ? ", generator saturated" : "");
        }
    if (k)
        finding(a,
                "The host could not give %d variant%s %s CPU limit: the app's limit plus the "
                "load generator and the other processes on this %.0f-core host came to more "
                "than the host has, or the generator itself was saturated: %s. Those rows are "
                "marked contended; they show a floor, not the app's capacity.",
                k, k == 1 ? "" : "s", k == 1 ? "its" : "their", o->host_cores, list);
    bool unenforced = false;
    for (size_t i = 0; i < n; i++)
        if (rows[i].flags & ADVISOR_ROW_UNENFORCED)
            unenforced = true;
    if (unenforced)
        finding(a,
                "LIMITS NOT ENFORCED: %s. Every row ran without its CPU and memory limits, so "
                "the table shows the app on the whole host, not at each variant's size.",
                o->limits_note && o->limits_note[0] ? o->limits_note : "no writable cgroup");
    list[0] = '\0';
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (!rows[i].measured && rows[i].note[0])
            cat(list, sizeof(list), "%s%s: %s", k++ ? "; " : "", rows[i].variant.label,
                rows[i].note);
    if (k)
        finding(a, "%d variant%s FAILED: %s.", k, k == 1 ? "" : "s", list);
}

int advisor_run(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                struct advice *out, char *err)
{
    memset(out, 0, sizeof(*out));
    out->recommended = -1;
    if (n > VARIANT_MAX)
        return err_set(err, -EINVAL, "more than %d variants", VARIANT_MAX);
    if (!(o->per_user_rps > 0))
        return err_set(err, -EINVAL, "per_user_rps must be above 0");
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        out->rows[i].verdict =
            rows[i].measured ? advisor_classify(&rows[i], &o->thresholds) : VERDICT_OVERLOADED;
        out->rows[i].est_users = rows[i].measured ? rows[i].throughput_rps / o->per_user_rps : 0;
        out->rows[i].capacity = rows[i].measured && !(rows[i].flags & ADVISOR_ROW_NOT_CAPACITY);
    }
    recommend(rows, n, o, out);
    values(rows, out);
    rule_default(&out->rule);
    fit_cores_per_worker(rows, n, out);
    fit_memory_per_worker(rows, n, out);
    fit_max_workers(rows, n, out);
    find_oversubscription(rows, n, out);
    find_cpu_memory(rows, n, out);
    find_scaling(rows, n, out);
    find_caveats(rows, n, o, out);
    return 0;
}
