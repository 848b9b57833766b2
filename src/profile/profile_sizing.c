/* The profile's sizing sections: how a sweep searches each variant's capacity (search:), what
 * "sustained" means (slo:), the cost model (cost:) and the planning margins (planning:). The
 * defaults are set by profile_init_default (profile.c); fields absent here keep them. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"

#include "profile/profile_int.h"

#define MAX_SEARCH_RPS 10000000.0 /* the engine's own cap on a rate */
#define MAX_COST       1e9
#define MAX_GROWTH     100.0 /* planning.growth: at most 10000% */

enum {
    SE_MODE,
    SE_WARMUP,
    SE_WINDOW,
    SE_PRECISION,
    SE_REPEATS,
    SE_MAX_STEPS,
    SE_MAX_RPS,
    SE_BUDGET,
    SE_SETTLE,
    SE_N
};
static const char *const se_keys[SE_N] = {"mode",      "warmup",  "window", "precision", "repeats",
                                          "max_steps", "max_rps", "budget", "settle"};

static int load_search(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[SE_N];
    struct profile_search *s = &p->search;
    uint64_t u;
    int rc;

    if (!profile__is_mapping(map))
        return profile__fail(c, map, "search",
                             "expected a mapping such as { mode: capacity, window: 5s }, got %s",
                             GOT(map));
    rc = profile__fields(c, map, "search", se_keys, SE_N, v);
    if (rc)
        return rc;
    if (v[SE_MODE]) {
        const yaml_node_t *n = v[SE_MODE];
        const char *t = n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
        if (t && !strcmp(t, "capacity"))
            s->mode = PROFILE_SEARCH_CAPACITY;
        else if (t && !strcmp(t, "fixed"))
            s->mode = PROFILE_SEARCH_FIXED;
        else
            return profile__fail(c, n, "search.mode", "expected capacity or fixed, got %s", GOT(n));
    }
    if (v[SE_WARMUP] && (rc = profile__get_duration(c, v[SE_WARMUP], "search.warmup", true,
                                                    MAX_RUN_US, &s->warmup_us)))
        return rc;
    if (v[SE_WINDOW] && (rc = profile__get_duration(c, v[SE_WINDOW], "search.window", false,
                                                    MAX_RUN_US, &s->window_us)))
        return rc;
    if (v[SE_PRECISION]) {
        rc = profile__get_percent(c, v[SE_PRECISION], "search.precision", &s->precision);
        if (rc)
            return rc;
        if (!(s->precision > 0) || s->precision >= 1)
            return profile__fail(c, v[SE_PRECISION], "search.precision",
                                 "must be above 0%% and below 100%%, got %s", GOT(v[SE_PRECISION]));
    }
    if (v[SE_REPEATS]) {
        rc = profile__get_uint(c, v[SE_REPEATS], "search.repeats", 1, PROFILE_MAX_REPEATS, &u);
        if (rc)
            return rc;
        s->repeats = (unsigned)u;
    }
    if (v[SE_MAX_STEPS]) {
        rc = profile__get_uint(c, v[SE_MAX_STEPS], "search.max_steps", 1, PROFILE_MAX_SEARCH_STEPS,
                               &u);
        if (rc)
            return rc;
        s->max_steps = (unsigned)u;
    }
    if (v[SE_MAX_RPS] && (rc = profile__get_number(c, v[SE_MAX_RPS], "search.max_rps", false,
                                                   MAX_SEARCH_RPS, &s->max_rps)))
        return rc;
    if (v[SE_BUDGET] && (rc = profile__get_duration(c, v[SE_BUDGET], "search.budget", false,
                                                    MAX_RUN_US, &s->budget_us)))
        return rc;
    if (v[SE_SETTLE] && (rc = profile__get_duration(c, v[SE_SETTLE], "search.settle", true,
                                                    MAX_RUN_US, &s->settle_us)))
        return rc;
    return 0;
}

enum { SL_P95, SL_P99, SL_ERRORS, SL_DELIVERY_P95, SL_N };
static const char *const sl_keys[SL_N] = {"p95", "p99", "errors", "delivery_p95"};

/* Starts from the HEALTHY thresholds, so an absent slo: (or an absent field in it) means what
 * HEALTHY means in the table. */
static int load_slo(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[SL_N];
    int rc;

    p->slo.p95_us = p->thresholds.healthy_p95_us;
    p->slo.p99_us = 0;
    p->slo.errors = p->thresholds.healthy_errors;
    p->slo.delivery_p95_us = p->thresholds.healthy_p95_us;
    if (!map)
        return 0;
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "slo",
                             "expected a mapping such as { p95: 250ms, p99: 1s, errors: 0.1%% }, "
                             "got %s",
                             GOT(map));
    rc = profile__fields(c, map, "slo", sl_keys, SL_N, v);
    if (!rc && v[SL_P95])
        rc = profile__get_duration(c, v[SL_P95], "slo.p95", false, MAX_TIMEOUT_US, &p->slo.p95_us);
    if (!rc && v[SL_P99])
        rc = profile__get_duration(c, v[SL_P99], "slo.p99", false, MAX_TIMEOUT_US, &p->slo.p99_us);
    if (!rc && v[SL_ERRORS])
        rc = profile__get_percent(c, v[SL_ERRORS], "slo.errors", &p->slo.errors);
    if (!rc && v[SL_DELIVERY_P95])
        rc = profile__get_duration(c, v[SL_DELIVERY_P95], "slo.delivery_p95", false, MAX_TIMEOUT_US,
                                   &p->slo.delivery_p95_us);
    if (rc)
        return rc;
    if (p->slo.p99_us > 0 && p->slo.p99_us < p->slo.p95_us) {
        char a[QTY_LEN], b[QTY_LEN];
        return profile__fail(c, map, "slo", "p99 (%s) is below p95 (%s)",
                             qty_format_duration(p->slo.p99_us, a),
                             qty_format_duration(p->slo.p95_us, b));
    }
    return 0;
}

enum { CO_CPU, CO_MEMORY, CO_N };
static const char *const co_keys[CO_N] = {"cpu", "memory_gib"};

static int load_cost(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[CO_N];
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "cost",
                             "expected a mapping such as { cpu: 1, memory_gib: 0.13 }, got %s",
                             GOT(map));
    int rc = profile__fields(c, map, "cost", co_keys, CO_N, v);
    if (!rc && v[CO_CPU])
        rc = profile__get_number(c, v[CO_CPU], "cost.cpu", true, MAX_COST, &p->cost.cpu);
    if (!rc && v[CO_MEMORY])
        rc = profile__get_number(c, v[CO_MEMORY], "cost.memory_gib", true, MAX_COST,
                                 &p->cost.memory_gib);
    if (!rc && p->cost.cpu == 0 && p->cost.memory_gib == 0)
        rc = profile__fail(c, map, "cost", "cpu and memory_gib are both 0: nothing to compare");
    return rc;
}

/* Growth may pass 100% (traffic that doubles and more), which a plain percentage may not. */
static int get_growth(struct profile__ctx *c, const yaml_node_t *n, double *out)
{
    char gotbuf[64], num[32];
    const char *t = n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
    size_t len = t ? strlen(t) : 0;
    char *end = NULL;

    if (!t || len == 0 || len >= sizeof(num) || len != n->data.scalar.length || t[len - 1] != '%' ||
        !strchr("0123456789.", t[0]))
        return profile__fail(c, n, "planning.growth",
                             "expected a percentage such as 30%% or 150%%, got %s", GOT(n));
    memcpy(num, t, len - 1);
    num[len - 1] = '\0';
    double v = strtod(num, &end);
    if (*end || !isfinite(v) || v < 0 || num[strspn(num, "0123456789.")])
        return profile__fail(c, n, "planning.growth",
                             "expected a percentage such as 30%% or 150%%, got %s", GOT(n));
    if (v / 100 > MAX_GROWTH)
        return profile__fail(c, n, "planning.growth", "%s is too large (at most %g%%)", GOT(n),
                             MAX_GROWTH * 100);
    *out = v / 100;
    return 0;
}

enum { PL_BUFFER, PL_GROWTH, PL_RAMP, PL_N };
static const char *const pl_keys[PL_N] = {"buffer", "growth", "ramp"};

static int load_planning(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[PL_N];
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "planning",
                             "expected a mapping such as { buffer: 10%%, growth: 30%% }, got %s",
                             GOT(map));
    int rc = profile__fields(c, map, "planning", pl_keys, PL_N, v);
    if (!rc && v[PL_BUFFER]) {
        rc = profile__get_percent(c, v[PL_BUFFER], "planning.buffer", &p->planning.buffer);
        if (!rc && p->planning.buffer >= 1)
            rc = profile__fail(c, v[PL_BUFFER], "planning.buffer",
                               "must be below 100%% (it is kept free of every pod's capacity)");
    }
    if (!rc && v[PL_GROWTH])
        rc = get_growth(c, v[PL_GROWTH], &p->planning.growth);
    if (!rc && v[PL_RAMP])
        rc = profile__get_ramp(c, v[PL_RAMP], &p->planning.ramp);
    if (!rc && v[PL_RAMP])
        p->planning.ramp_given = true;
    return rc;
}

int profile__load_sizing(struct profile__ctx *c, const yaml_node_t *search, const yaml_node_t *slo,
                         const yaml_node_t *cost, const yaml_node_t *planning, struct profile *p)
{
    int rc = 0;
    if (search && (rc = load_search(c, search, p)))
        return rc;
    if ((rc = load_slo(c, slo, p)))
        return rc;
    if (cost && (rc = load_cost(c, cost, p)))
        return rc;
    if (planning && (rc = load_planning(c, planning, p)))
        return rc;
    return 0;
}
