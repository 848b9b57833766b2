/* The findings: plain sentences drawn from the numbers. Every word that judges a number belongs
 * to a band whose edges are constants in advisor.h, and the sentence names the edge beside the
 * number, so a changed constant changes the words. */

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor_int.h"
#include "core/fmt.h"

/* The best row at row i's CPU with fewer workers than it; -1 when none. */
static int fewer_workers_base(const struct advisor_row *rows, size_t n, const struct advice *a,
                              size_t i)
{
    const struct advisor_row *o = &rows[i];
    int base = -1;

    for (size_t j = 0; j < n; j++) {
        const struct advisor_row *b = &rows[j];
        if (!usable(rows, a, j) || b->variant.cpu_millicores != o->variant.cpu_millicores ||
            b->variant.workers >= o->variant.workers)
            continue;
        if (base < 0 || b->throughput_rps > rows[base].throughput_rps)
            base = (int)j;
    }
    return base;
}

/* The finding on workers beyond the cores from the comparisons' bands (worse, better, within
 * the noise), their extremes and the comparisons in words. */
static void say_oversubscription(int worse, int better, int same, double worst, double best,
                                 const char *text, struct advice *a)
{
    int total = worse + better + same;
    if (total == 0)
        return;
    /* Each word covers only the comparisons it names: "worse" is every one of them below
     * -ADVISOR_NOISE, "helped" every one above it; a mixture is said as one. */
    if (worse == total)
        advisor__finding(
            a,
            "Workers beyond the cores made things worse, not better (each by more than the "
            "%.0f%% this sweep treats as noise): %s. Workers competing for the same CPU "
            "budget pay for context switches and gain no parallelism; each worker beyond "
            "the first wants its own core.",
            PCT(ADVISOR_NOISE), text);
    else if (better == total)
        advisor__finding(
            a,
            "Workers beyond the cores helped (each by more than the %.0f%% this sweep treats "
            "as noise): %s. The app spends time waiting (I/O, locks), so extra workers use "
            "CPU time one worker leaves idle.",
            PCT(ADVISOR_NOISE), text);
    else if (same == total)
        advisor__finding(
            a,
            "Workers beyond the cores made no measurable difference (within the %.0f%% this "
            "sweep treats as noise): %s.",
            PCT(ADVISOR_NOISE), text);
    else if (better == 0)
        advisor__finding(
            a,
            "Workers beyond the cores never helped: %d of %d comparisons were worse by more "
            "than the %.0f%% this sweep treats as noise (worst %+.0f%%), the rest within it: "
            "%s.",
            worse, total, PCT(ADVISOR_NOISE), worst, text);
    else if (worse == 0)
        advisor__finding(
            a,
            "Workers beyond the cores helped in %d of %d comparisons by more than the %.0f%% "
            "this sweep treats as noise (best %+.0f%%), the rest within it: %s.",
            better, total, PCT(ADVISOR_NOISE), best, text);
    else
        advisor__finding(
            a, "Workers beyond the cores gave mixed results (worst %+.0f%%, best %+.0f%%): %s.",
            worst, best, text);
}

static void find_oversubscription(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct advisor_list l = {.sep = "; "};
    int worse = 0, better = 0, same = 0;
    double worst = 0, best = 0;

    for (size_t i = 0; i < n; i++) {
        const struct advisor_row *o = &rows[i];
        if (!usable(rows, a, i) || (double)o->variant.workers <= cores_of(o) + 1e-9)
            continue;
        int base = fewer_workers_base(rows, n, a, i);
        if (base < 0)
            continue;
        const struct advisor_row *b = &rows[base];
        double d = shown_pct(b->throughput_rps, o->throughput_rps);
        if (d < -ADVISOR_NOISE * 100)
            worse++;
        else if (d > ADVISOR_NOISE * 100)
            better++;
        else
            same++;
        if (d < worst)
            worst = d;
        if (d > best)
            best = d;
        advisor__list_add(&l, "%s did %.0f req/s against %.0f for %s (%+.0f%%)", o->variant.label,
                          o->throughput_rps, b->throughput_rps, b->variant.label, d);
    }
    say_oversubscription(worse, better, same, worst, best, advisor__list_end(&l), a);
}

/* What the CPU and memory comparisons measured: the figures find_cpu_memory phrases. */
struct cpu_memory {
    int mem_pairs;         /* pure memory pairs: same workers and CPU, different memory */
    double max_mem_effect; /* the largest change among them, as printed */
    int level_pairs;       /* without pure pairs: pairs at the same CPU with more memory */
    int mem_better;        /* of those, the ones more memory made better beyond the noise */
    int cpu_x, cpu_y;      /* the pure CPU pair with the best ratio; -1 without one */
    double best_cpu_ratio, cpu_gain;
    bool cpu_fell, cpu_flat, cpu_matters;
    int max_share_i; /* the row whose peak memory came nearest its limit; -1 unmeasured */
    double share_shown;
    bool spare, memory_flat;
};

/* x and y differ only in memory, x the smaller. */
static bool memory_pair(const struct advisor_row *rows, const struct advice *a, size_t i, size_t j)
{
    const struct advisor_row *x = &rows[i], *y = &rows[j];
    return usable(rows, a, i) && usable(rows, a, j) && x->variant.workers == y->variant.workers &&
           x->variant.cpu_millicores == y->variant.cpu_millicores &&
           x->variant.memory_bytes < y->variant.memory_bytes;
}

/* x and y at the same CPU, x with less memory. */
static bool level_pair(const struct advisor_row *rows, const struct advice *a, size_t i, size_t j)
{
    const struct advisor_row *x = &rows[i], *y = &rows[j];
    return usable(rows, a, i) && usable(rows, a, j) &&
           x->variant.cpu_millicores == y->variant.cpu_millicores &&
           x->variant.memory_bytes < y->variant.memory_bytes;
}

/* x and y differ only in CPU, x the smaller, with a throughput. */
static bool cpu_pair(const struct advisor_row *rows, const struct advice *a, size_t i, size_t j)
{
    const struct advisor_row *x = &rows[i], *y = &rows[j];
    return usable(rows, a, i) && usable(rows, a, j) && x->variant.workers == y->variant.workers &&
           x->variant.memory_bytes == y->variant.memory_bytes &&
           x->variant.cpu_millicores < y->variant.cpu_millicores && x->throughput_rps > 0;
}

/* The memory side: the pairs' counts and largest effect, and peak memory against the limits. */
static void measure_memory(const struct advisor_row *rows, size_t n, const struct advice *a,
                           struct cpu_memory *m)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (!memory_pair(rows, a, i, j))
                continue;
            double d = shown_pct(rows[i].throughput_rps, rows[j].throughput_rps);
            m->mem_pairs++;
            if (fabs(d) > fabs(m->max_mem_effect))
                m->max_mem_effect = d;
        }
    for (size_t i = 0; m->mem_pairs == 0 && i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (!level_pair(rows, a, i, j))
                continue;
            m->level_pairs++;
            if (shown_pct(rows[i].throughput_rps, rows[j].throughput_rps) > PCT(ADVISOR_NOISE))
                m->mem_better++;
        }
    double max_share = -1;
    m->max_share_i = -1;
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].measured || rows[i].peak_memory_bytes < 0)
            continue;
        double share = (double)rows[i].peak_memory_bytes / (double)rows[i].variant.memory_bytes;
        if (share > max_share) {
            max_share = share;
            m->max_share_i = (int)i;
        }
    }
    m->share_shown = round(max_share * 100);
    m->spare = max_share >= 0 && m->share_shown < PCT(ADVISOR_MEM_SPARE_SHARE);
    m->memory_flat = (m->mem_pairs > 0 && fabs(m->max_mem_effect) <= PCT(ADVISOR_NOISE)) ||
                     (m->mem_pairs == 0 && m->level_pairs > 0 && m->mem_better == 0) ||
                     (m->mem_pairs == 0 && m->level_pairs == 0 && m->spare);
}

/* The CPU side: the pure pair with the best ratio and its band, on the change as printed and
 * symmetric about zero: a fall beyond the noise, within the noise either way, clearly more than
 * it (CPU "matters"), or a gain in between. The best pair falling means every pair fell. */
static void measure_cpu(const struct advisor_row *rows, size_t n, const struct advice *a,
                        struct cpu_memory *m)
{
    m->cpu_x = m->cpu_y = -1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (!cpu_pair(rows, a, i, j))
                continue;
            double ratio = rows[j].throughput_rps / rows[i].throughput_rps;
            if (ratio > m->best_cpu_ratio) {
                m->best_cpu_ratio = ratio;
                m->cpu_x = (int)i;
                m->cpu_y = (int)j;
            }
        }
    if (m->cpu_x < 0)
        return;
    m->cpu_gain = shown_pct(rows[m->cpu_x].throughput_rps, rows[m->cpu_y].throughput_rps);
    m->cpu_fell = m->cpu_gain < -PCT(ADVISOR_NOISE);
    m->cpu_flat = fabs(m->cpu_gain) <= PCT(ADVISOR_NOISE);
    m->cpu_matters = m->cpu_gain >= PCT(ADVISOR_CPU_MATTERS);
}

/* The memory pairs in words ("512Mi -> 1Gi at 1w / 1c: 100 -> 104 req/s (+4%); ..."), or,
 * without them, the pairs at the same CPU. */
static void phrase_memory_pairs(const struct advisor_row *rows, size_t n, const struct advice *a,
                                const struct cpu_memory *m, struct advisor_list *l)
{
    char b1[QTY_LEN], b2[QTY_LEN], b3[QTY_LEN];

    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            const struct advisor_row *x = &rows[i], *y = &rows[j];
            if (m->mem_pairs > 0 && memory_pair(rows, a, i, j))
                advisor__list_add(l, "%s -> %s at %uw / %sc: %.0f -> %.0f req/s (%+.0f%%)",
                                  mem_txt(x->variant.memory_bytes, b1),
                                  mem_txt(y->variant.memory_bytes, b2), x->variant.workers,
                                  cores_txt(x, b3), x->throughput_rps, y->throughput_rps,
                                  shown_pct(x->throughput_rps, y->throughput_rps));
            else if (m->mem_pairs == 0 && level_pair(rows, a, i, j))
                advisor__list_add(l, "%s %.0f req/s, %s %.0f req/s", x->variant.label,
                                  x->throughput_rps, y->variant.label, y->throughput_rps);
        }
}

/* What memory did, as a clause ("" when nothing was measured): the pairs' effect, then peak
 * memory against the limit. */
static void phrase_memory(const struct advisor_row *rows, size_t n, const struct advice *a,
                          const struct cpu_memory *m, char *buf, size_t len)
{
    struct advisor_list l = {.sep = "; "};
    char b1[QTY_LEN], b2[QTY_LEN];

    phrase_memory_pairs(rows, n, a, m, &l);
    const char *pairs = advisor__list_end(&l);
    if (m->mem_pairs > 0 && fabs(m->max_mem_effect) <= PCT(ADVISOR_NOISE))
        snprintf(buf, len,
                 "memory made no measurable difference (%s; within the %.0f%% this sweep treats "
                 "as noise)",
                 pairs, PCT(ADVISOR_NOISE));
    else if (m->mem_pairs > 0)
        snprintf(buf, len, "more memory changed throughput by up to %+.0f%% (%s)",
                 m->max_mem_effect, pairs);
    else if (m->level_pairs > 0 && m->mem_better == 0)
        snprintf(buf, len,
                 "at the same CPU no variant with more memory did better by more than the %.0f%% "
                 "this sweep treats as noise (%s); no two variants differ only in memory, so "
                 "memory's own effect is bounded, not isolated",
                 PCT(ADVISOR_NOISE), pairs);
    if (m->max_share_i < 0)
        return;
    const struct advisor_row *r = &rows[m->max_share_i];
    text_catf(buf, len,
              "%speak memory reached at most %.0f%% of the limit (%s of %s in %s), %s %.0f%% "
              "this advisor reads as room to spare",
              buf[0] ? "; " : "", m->share_shown,
              mem_txt(r->peak_memory_bytes - r->peak_memory_bytes % FMT_MIB, b1),
              mem_txt(r->variant.memory_bytes, b2), r->variant.label,
              m->spare ? "under the" : "not under the", PCT(ADVISOR_MEM_SPARE_SHARE));
}

/* What more CPU did, as a clause: "going from 1 to 2 cores at the same memory (1w / 512Mi)
 * multiplied throughput by 1.9x (100 -> 190 req/s)". */
static void phrase_cpu(const struct advisor_row *rows, const struct cpu_memory *m, char *buf,
                       size_t len)
{
    const struct advisor_row *x = &rows[m->cpu_x], *y = &rows[m->cpu_y];
    char b1[QTY_LEN], b2[QTY_LEN], b3[QTY_LEN];

    snprintf(buf, len, "going from %s to %s cores at the same memory (%uw / %s) ", cores_txt(x, b1),
             cores_txt(y, b2), x->variant.workers, mem_txt(x->variant.memory_bytes, b3));
    if (m->cpu_flat || m->cpu_fell)
        text_catf(buf, len, "changed throughput by %+.0f%%", m->cpu_gain);
    else
        text_catf(buf, len, "multiplied throughput by %.1fx", m->best_cpu_ratio);
    text_catf(buf, len, " (%.0f -> %.0f req/s)", x->throughput_rps, y->throughput_rps);
}

/* CPU against memory: the pairs measured (measure_memory, measure_cpu), then phrased, then the
 * one finding their bands call for. */
static void find_cpu_memory(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct cpu_memory m = {0};
    char cpu_text[ADVISOR_TEXT_LEN] = "", mem_sentence[ADVISOR_TEXT_LEN] = "";

    measure_memory(rows, n, a, &m);
    measure_cpu(rows, n, a, &m);
    if (m.cpu_x >= 0)
        phrase_cpu(rows, &m, cpu_text, sizeof(cpu_text));
    phrase_memory(rows, n, a, &m, mem_sentence, sizeof(mem_sentence));
    const char *mem_lead = mem_sentence[0] ? " Memory: " : "",
               *mem_end = mem_sentence[0] ? "." : "";

    if (m.cpu_fell)
        advisor__finding(
            a,
            "More CPU lowered throughput (%s; a fall beyond the %.0f%% this sweep treats as "
            "noise): more cores did not help at this load. A fall from more CPU points at "
            "contention (in the app, or on the host during the sweep): repeat the sweep before "
            "reading it as the app's.%s%s%s",
            cpu_text, PCT(ADVISOR_NOISE), mem_lead, mem_sentence, mem_end);
    else if (m.cpu_flat)
        advisor__finding(
            a,
            "More CPU made no measurable difference (%s; within the %.0f%% this sweep treats "
            "as noise): at this load the app is not CPU-bound, so look at what it waits on "
            "(database, locks, the load itself) before buying cores.%s%s%s",
            cpu_text, PCT(ADVISOR_NOISE), mem_lead, mem_sentence, mem_end);
    else if (m.cpu_matters && m.memory_flat)
        advisor__finding(
            a,
            "CPU dominates memory for this workload: %s, while %s. Don't buy memory to fix "
            "what is a CPU shortage.",
            cpu_text, mem_sentence);
    else if (m.cpu_x >= 0)
        advisor__finding(a, "CPU: %s.%s%s%s", cpu_text, mem_lead, mem_sentence, mem_end);
    else if (mem_sentence[0]) {
        mem_sentence[0] = (char)toupper((unsigned char)mem_sentence[0]);
        advisor__finding(a, "%s.", mem_sentence);
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

/* Where a step from a smaller to a larger CPU falls, judged on the whole percentages the
 * sentence prints: first the throughput change against the noise, then the share of linear
 * scaling (throughput ratio over CPU ratio) against the linear band. */
enum scaling_band {
    SCALING_FELL,   /* throughput fell by more than the noise */
    SCALING_FLAT,   /* throughput changed by no more than the noise */
    SCALING_SUB,    /* below ADVISOR_LINEAR_LOW of linear */
    SCALING_LINEAR, /* ADVISOR_LINEAR_LOW .. ADVISOR_LINEAR_HIGH of linear */
    SCALING_SUPER,  /* above ADVISOR_LINEAR_HIGH of linear */
};

/* Share of linear scaling from -> to, as the whole percentage printed. */
static double linear_pct(const struct advisor_row *from, const struct advisor_row *to)
{
    return round(to->throughput_rps / from->throughput_rps / (cores_of(to) / cores_of(from)) *
                 100.0);
}

static enum scaling_band scaling_band(const struct advisor_row *from, const struct advisor_row *to)
{
    double change = shown_pct(from->throughput_rps, to->throughput_rps);
    double eff = linear_pct(from, to);

    if (change < -PCT(ADVISOR_NOISE))
        return SCALING_FELL;
    if (change <= PCT(ADVISOR_NOISE))
        return SCALING_FLAT;
    if (eff < PCT(ADVISOR_LINEAR_LOW))
        return SCALING_SUB;
    if (eff > PCT(ADVISOR_LINEAR_HIGH))
        return SCALING_SUPER;
    return SCALING_LINEAR;
}

static const char *scaling_word(enum scaling_band b)
{
    switch (b) {
    case SCALING_FELL:
        return "throughput fell";
    case SCALING_FLAT:
        return "no measurable change";
    case SCALING_SUB:
        return "sub-linear";
    case SCALING_LINEAR:
        return "linear";
    case SCALING_SUPER:
        return "super-linear";
    }
    return "?";
}

/* Appends "1.5x for 2.0x the CPU, 74% of linear" for from -> to. */
static void cat_step(char *buf, size_t len, const struct advisor_row *from,
                     const struct advisor_row *to)
{
    text_catf(buf, len, "%.1fx for %.1fx the CPU, %.0f%% of linear",
              to->throughput_rps / from->throughput_rps, cores_of(to) / cores_of(from),
              linear_pct(from, to));
}

/* Appends why a smallest row is the odd one when a larger row did more per core than it
 * (super-linear against it), and, with a third row, whether the rows above it scale linearly
 * among themselves. sup is the row most super-linear against base. */
static void cat_throttled(char *buf, size_t len, const struct advisor_row *rows, const int *idx,
                          size_t m, const struct advisor_row *sup)
{
    const struct advisor_row *base = &rows[idx[0]], *next = &rows[idx[1]], *top = &rows[idx[m - 1]];

    text_catf(
        buf, len,
        " %s did %.0f%% of linear against %s: more cores cannot make each core do more work, so "
        "the smallest variant was likely throttled below its share of CPU (on cgroup limits: its "
        "CFS quota spent early in each period, then idle until the next; garbage collection or "
        "the runtime's threads spending the quota under throttling). Its row is the odd one: "
        "read it as a floor, not as what one core of the app does.",
        sup->variant.label, linear_pct(base, sup), base->variant.label);
    if (m < 3 || !(next->throughput_rps > 0))
        return;
    enum scaling_band rb = scaling_band(next, top);
    text_catf(buf, len, " Without it, %s -> %s is ", next->variant.label, top->variant.label);
    cat_step(buf, len, next, top);
    text_catf(buf, len, " (%s)", scaling_word(rb));
    if (rb == SCALING_SUPER)
        text_catf(buf, len, ", so %s was likely throttled as well", next->variant.label);
    text_catf(buf, len, ".");
}

/* The scaling finding for rows idx[0..m) (m >= 2, sorted by CPU, the first throughput > 0). Its
 * word is the band of the smallest -> largest step; any larger row that did more per core than
 * the smallest (super-linear against it) names the smallest as the odd row and the likely
 * cause. */
static void say_scaling(const struct advisor_row *rows, const int *idx, size_t m, bool matched,
                        const char *text, struct advice *a)
{
    const struct advisor_row *base = &rows[idx[0]], *top = &rows[idx[m - 1]], *sup = NULL;
    double eff = linear_pct(base, top);
    const char *scope =
        matched ? "when workers match cores" : "from the smallest to the largest CPU";
    char linear[64], odd[ADVISOR_TEXT_LEN] = "";

    for (size_t k = 1; k < m; k++)
        if (scaling_band(base, &rows[idx[k]]) == SCALING_SUPER &&
            (!sup || linear_pct(base, &rows[idx[k]]) > linear_pct(base, sup)))
            sup = &rows[idx[k]];
    if (sup)
        cat_throttled(odd, sizeof(odd), rows, idx, m, sup);
    snprintf(linear, sizeof(linear), "the %.0f-%.0f%% this advisor calls linear",
             PCT(ADVISOR_LINEAR_LOW), PCT(ADVISOR_LINEAR_HIGH));
    switch (scaling_band(base, top)) {
    case SCALING_FELL:
    case SCALING_FLAT: {
        bool fell = scaling_band(base, top) == SCALING_FELL;
        advisor__finding(
            a,
            "%s %s: %s. From the smallest to the largest CPU it changed by %+.0f%%, %s the "
            "%.0f%% this sweep treats as noise: %s%s",
            fell ? "Throughput fell as CPU grew" : "Throughput did not scale with CPU", scope, text,
            shown_pct(base->throughput_rps, top->throughput_rps), fell ? "more than" : "within",
            PCT(ADVISOR_NOISE),
            fell ? "at this load the larger variants lost to something other than CPU (locks, "
                   "a database, coordination between workers)."
                 : "at this load more cores did not help.",
            odd);
        break;
    }
    case SCALING_SUB:
        advisor__finding(
            a,
            "Scaling is sub-linear %s: %s. From the smallest to the largest CPU, throughput "
            "per core kept %.0f%% of its value, below %s: the larger variants lose part of "
            "each added core to something they share (locks, a database, coordination "
            "between workers, the load itself).%s",
            scope, text, eff, linear, odd);
        break;
    case SCALING_LINEAR:
        advisor__finding(
            a,
            "Scaling is linear %s: %s. From the smallest to the largest CPU, throughput per "
            "core kept %.0f%% of its value, within %s.%s",
            scope, text, eff, linear, odd);
        break;
    case SCALING_SUPER:
        advisor__finding(
            a,
            "Scaling is super-linear %s: %s. From the smallest to the largest CPU, throughput "
            "per core rose to %.0f%% of its value, above %s.%s",
            scope, text, eff, linear, odd);
        break;
    }
}

static void find_scaling(const struct advisor_row *rows, size_t n, struct advice *a)
{
    int idx[VARIANT_MAX];
    size_t m = 0;
    struct advisor_list l = {.sep = ", "};
    char b1[QTY_LEN];
    bool matched = true;

    /* Workers equal to cores first ("match workers to cores"), else the best variant per CPU
     * level. */
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
    /* A smallest row that served nothing has no per-core rate to compare with. */
    if (!(base->throughput_rps > 0))
        return;
    for (size_t k = 0; k < m; k++) {
        const struct advisor_row *r = &rows[idx[k]];
        char step[ADVISOR_TEXT_LEN] = "";
        if (k > 0) {
            text_catf(step, sizeof(step), " (");
            cat_step(step, sizeof(step), base, r);
            text_catf(step, sizeof(step), ")");
        }
        advisor__list_add(&l, "%uw/%sc -> %.0f req/s%s", r->variant.workers, cores_txt(r, b1),
                          r->throughput_rps, step);
    }
    say_scaling(rows, idx, m, matched, advisor__list_end(&l), a);
}

/* The rows the host could not give what they asked for: more CPU than it has, or their CPU
 * limit (contended, or the load generator saturated). */
static void find_host_cpu(const struct advisor_row *rows, size_t n, double host_cores,
                          struct advice *a)
{
    struct advisor_list over = {.sep = ", "}, contended = {.sep = "; "};
    int k = 0, c = 0;

    for (size_t i = 0; i < n; i++) {
        const struct advisor_row *r = &rows[i];
        if (r->flags & SWEEP_FLAG_CPU_EXCEEDS_HOST) {
            advisor__list_add(&over, "%s", r->variant.label);
            k++;
        }
        if (!(r->flags & (SWEEP_FLAG_CONTENDED | SWEEP_FLAG_GEN_SATURATED)))
            continue;
        char other[ADVISOR_TEXT_LEN] = "";
        if (r->host_other_cores >= 0)
            snprintf(other, sizeof(other), ", everything else %.2f", r->host_other_cores);
        advisor__list_add(&contended, "%s (load generator %.2f cores%s%s)", r->variant.label,
                          r->gen_cores, other,
                          r->flags & SWEEP_FLAG_GEN_SATURATED ? ", generator saturated" : "");
        c++;
    }
    if (k)
        advisor__finding(a,
                         "%d variant%s asked for more CPU than this host has (%g cores): %s. %s "
                         "what the host could give, not the limit asked for; %s marked and never "
                         "recommended.",
                         k, k == 1 ? "" : "s", host_cores, advisor__list_end(&over),
                         k == 1 ? "Its row shows" : "Their rows show",
                         k == 1 ? "it is" : "they are");
    if (c)
        advisor__finding(
            a,
            "The host could not give %d variant%s %s CPU limit: the app's limit plus the "
            "load generator and the other processes on this %g-core host came to more "
            "than the host has, or the generator itself was saturated: %s. %s marked "
            "contended; %s a floor, not the app's capacity.",
            c, c == 1 ? "" : "s", c == 1 ? "its" : "their", host_cores,
            advisor__list_end(&contended), c == 1 ? "That row is" : "Those rows are",
            c == 1 ? "it shows" : "they show");
}

/* Capacity 0 because even one request at a time missed the SLO (runner_capacity.c). */
static void find_unmeetable(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                            struct advice *a)
{
    struct advisor_list l = {.sep = "; "};
    int k = 0;

    for (size_t i = 0; i < n; i++) {
        const struct capacity_result *c = &rows[i].cap;
        if (!rows[i].measured || !(c->flags & CAPACITY_FLAG_UNMEETABLE) || c->nsteps == 0)
            continue;
        const struct capacity_step *st = &c->steps[c->nsteps - 1];
        char got[QTY_LEN], slo[QTY_LEN];
        k++;
        if (c->limited_by == CAPACITY_LIMIT_SLO_ERRORS)
            advisor__list_add(&l, "%s fails %.1f%% of its requests (the SLO allows %.1f%%)",
                              rows[i].variant.label, st->error_rate * 100, o->slo.errors * 100);
        else if (c->limited_by == CAPACITY_LIMIT_SLO_P99)
            advisor__list_add(&l, "%s takes %s at p99 (the SLO's p99 is %s)", rows[i].variant.label,
                              qty_format_duration((int64_t)st->p99_us, got),
                              qty_format_duration(o->slo.p99_us, slo));
        else
            advisor__list_add(&l, "%s takes %s at p95 (the SLO's p95 is %s)", rows[i].variant.label,
                              qty_format_duration((int64_t)st->p95_us, got),
                              qty_format_duration(o->slo.p95_us, slo));
    }
    if (k)
        advisor__finding(a,
                         "Even one request at a time misses the SLO: %s. No load meets it, so %s "
                         "capacity within the SLO is 0 and %s never recommended; the search "
                         "stopped there instead of halving the rate to its floor.",
                         advisor__list_end(&l), k == 1 ? "that variant's" : "those variants'",
                         k == 1 ? "it is" : "they are");
}

/* Limits not enforced: every row ran on the whole host. */
static void find_unenforced(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                            struct advice *a)
{
    bool unenforced = false;
    for (size_t i = 0; i < n; i++)
        if (rows[i].flags & SWEEP_FLAG_UNENFORCED)
            unenforced = true;
    if (unenforced)
        advisor__finding(
            a,
            "LIMITS NOT ENFORCED: %s. Every row ran without its CPU and memory limits, so "
            "the table shows the app on the whole host, not at each variant's size.",
            o->limits_note && o->limits_note[0] ? o->limits_note : "no writable cgroup");
}

/* The variants that FAILED, with why. */
static void find_failed(const struct advisor_row *rows, size_t n, struct advice *a)
{
    struct advisor_list l = {.sep = "; "};
    int k = 0;

    for (size_t i = 0; i < n; i++)
        if (!rows[i].measured && rows[i].note[0]) {
            advisor__list_add(&l, "%s: %s", rows[i].variant.label, rows[i].note);
            k++;
        }
    if (k)
        advisor__finding(a, "%d variant%s FAILED: %s.", k, k == 1 ? "" : "s",
                         advisor__list_end(&l));
}

/* What the rows cannot show about the app: CPU beyond the host, contention, an SLO no load
 * meets, limits not enforced, failures. */
static void find_caveats(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                         struct advice *a)
{
    find_host_cpu(rows, n, o->host_cores, a);
    find_unmeetable(rows, n, o, a);
    find_unenforced(rows, n, o, a);
    find_failed(rows, n, a);
}

/* The row the ranking would have recommended but for repeats the budget cut short
 * (sizing.cut_short): its figure rests on fewer repeats than the profile asked for. */
static void find_cut_short(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                           struct advice *a)
{
    int i = a->sizing.cut_short;
    char asked[ADVISOR_TEXT_LEN] = "";

    if (i < 0 || (size_t)i >= n)
        return;
    const struct capacity_result *c = &rows[i].cap;
    if (o->repeats > 0)
        snprintf(asked, sizeof(asked), " of the %u", o->repeats);
    advisor__finding(a,
                     "%s would have been recommended (%.0f req/s), but its capacity rests on %zu%s "
                     "repeats the profile asks for: the search's budget ran out before the rest, "
                     "so it is not recommended. A longer search.budget measures it in full.",
                     rows[i].variant.label, c->rps, c->interval.n,
                     asked[0] ? asked : " (fewer than)");
}

void advisor__find(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                   struct advice *a)
{
    find_cut_short(rows, n, o, a);
    find_oversubscription(rows, n, a);
    find_cpu_memory(rows, n, a);
    find_scaling(rows, n, a);
    find_caveats(rows, n, o, a);
}
