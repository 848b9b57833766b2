/* The sizing's helpers (sizing_int.h), below every step that calls them: sizing.c (steps 1,
 * 2 and the requests), sizing_curve.c (steps 3 to 5), autoscale.c (step 6), packing.c and the
 * advisor; none of them calls back up. */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advisor.h"
#include "advise/sizing.h"
#include "advise/sizing_int.h"
#include "core/fmt.h"

bool sizing__same(double a, double b)
{
    return fabs(a - b) <= SIZING_EPS * fmax(fabs(a), fabs(b));
}

/* ceil() that does not turn 7.000000000001 (a product of rounded decimals) into 8. */
unsigned sizing__ceil_count(double x)
{
    double c = ceil(x - SIZING_EPS * fabs(x));
    return c < 1 ? 1 : (unsigned)c;
}

/* With a target: is x a better choice than y? The cheaper total; on equal cost fewer replicas;
 * then the one planned with more room per pod. */
static bool better_for_target(const struct sizing_variant *x, const struct sizing_variant *y)
{
    if (!sizing__same(x->total_cost, y->total_cost))
        return x->total_cost < y->total_cost;
    if (x->replicas != y->replicas)
        return x->replicas < y->replicas;
    return x->planned_rps > y->planned_rps && !sizing__same(x->planned_rps, y->planned_rps);
}

/* The best and the runner-up candidate under `better`; -1 when absent. */
void sizing__rank(const struct sizing *s,
                  bool (*better)(const struct sizing_variant *, const struct sizing_variant *),
                  int *best, int *second)
{
    *best = *second = -1;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->rows[i].candidate)
            continue;
        if (*best < 0 || better(&s->rows[i], &s->rows[*best])) {
            *second = *best;
            *best = (int)i;
        } else if (*second < 0 || better(&s->rows[i], &s->rows[*second])) {
            *second = (int)i;
        }
    }
}

void sizing__rank_target(const struct sizing *s, int *best, int *second)
{
    sizing__rank(s, better_for_target, best, second);
}

void sizing_requests(double cores, double cpu_factor, int64_t peak_bytes, int64_t limit_cpu_m,
                     int64_t limit_memory, struct sizing_requests *out)
{
    memset(out, 0, sizeof(*out));
    const int64_t step = ADVISOR_REQ_CPU_STEP_M;
    if (cores >= 0) {
        int64_t m = (int64_t)ceil(cores * cpu_factor * 1000.0 / step - SIZING_EPS) * step;
        out->cpu_m = m < step ? step : (m > limit_cpu_m ? limit_cpu_m : m);
        out->cpu_measured = true;
    } else {
        out->cpu_m = (int64_t)((double)limit_cpu_m * ADVISOR_REQ_CPU_FRACTION);
        out->cpu_m -= out->cpu_m % step;
        if (out->cpu_m < step)
            out->cpu_m = step;
    }
    if (peak_bytes >= 0) {
        int64_t mib =
            (int64_t)ceil((double)peak_bytes * (1.0 + ADVISOR_HEADROOM) / (double)FMT_MIB);
        int64_t b = mib * FMT_MIB;
        out->memory = b > limit_memory ? limit_memory : b;
        out->memory_measured = true;
    } else {
        int64_t mib = (int64_t)((double)limit_memory * ADVISOR_REQ_MEM_FRACTION / (double)FMT_MIB);
        out->memory = (mib < 1 ? 1 : mib) * FMT_MIB;
    }
}

/* ---- CPU against load ---------------------------------------------------------------------- */

struct point {
    double rps, cpu;
};

static int cmp_point(const void *x, const void *y)
{
    double a = ((const struct point *)x)->rps, b = ((const struct point *)y)->rps;
    return (a > b) - (a < b);
}

/* The measured (rate, CPU) points within the SLO, sorted by rate, equal rates averaged (the
 * repeats at capacity). Returns how many. */
static size_t cpu_points(const struct capacity_result *cap, struct point *p)
{
    size_t m = 0, out = 0;

    for (size_t i = 0; i < cap->nsteps && i < CAPACITY_MAX_STEPS; i++) {
        const struct capacity_step *st = &cap->steps[i];
        if (st->pass && !st->gen_limited && st->cpu_cores >= 0 && st->offered_rps > 0)
            p[m++] = (struct point){st->offered_rps, st->cpu_cores};
    }
    if (cap->rps > 0 && cap->cpu_cores >= 0)
        p[m++] = (struct point){cap->rps, cap->cpu_cores};
    qsort(p, m, sizeof(*p), cmp_point);
    for (size_t i = 0; i < m;) {
        size_t j = i;
        double sum = 0;
        while (j < m && sizing__same(p[j].rps, p[i].rps))
            sum += p[j++].cpu;
        p[out++] = (struct point){p[i].rps, sum / (double)(j - i)};
        i = j;
    }
    return out;
}

double sizing__cpu_lowest_rps(const struct capacity_result *cap)
{
    struct point p[CAPACITY_MAX_STEPS + 1];
    return cpu_points(cap, p) > 0 ? p[0].rps : -1;
}

double sizing_cpu_at(const struct capacity_result *cap, double rps, bool *extrapolated)
{
    struct point p[CAPACITY_MAX_STEPS + 1];
    size_t m = cpu_points(cap, p);
    bool ex = true;
    double c = -1;

    if (m == 0 || !(rps >= 0))
        goto out;
    if (rps < p[0].rps) {
        /* Proportional below the lowest step: it can only under-state CPU there (an idle cost
         * is ignored), which lowers the HPA's target and makes it scale out earlier. */
        c = p[0].cpu * rps / p[0].rps;
        goto out;
    }
    if (rps >= p[m - 1].rps) {
        c = p[m - 1].cpu;
        ex = !sizing__same(rps, p[m - 1].rps);
        goto out;
    }
    ex = false;
    for (size_t i = 1; i < m; i++)
        if (rps <= p[i].rps) {
            double f = (rps - p[i - 1].rps) / (p[i].rps - p[i - 1].rps);
            c = p[i - 1].cpu + f * (p[i].cpu - p[i - 1].cpu);
            break;
        }
out:
    if (extrapolated)
        *extrapolated = ex;
    return c;
}
