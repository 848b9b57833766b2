/* The profile loader: the root mapping, thresholds and target, and the public API (defaults,
 * load from a buffer or a file). The other sections live beside it: profile_requests.c
 * (requests, stages), profile_sizing.c (search, slo, cost, planning), profile_streams.c
 * (streams, producers); the YAML readers they share are in profile_yaml.c. */

#include "profile/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "core/quantity.h"
#include "profile/profile_int.h"
#include "profile/profile_streams.h"

/* Limits on what one profile may ask for, far above any sane profile. */
#define MAX_PER_USER_RPS 1000000.0
#define MAX_TARGET       1e12

#define DEFAULT_SOURCE "built-in default"

/* ---- the root sections ------------------------------------------------------------------- */

enum { TH_P95, TH_ERRORS, TH_N };
static const char *const th_keys[TH_N] = {"p95", "errors"};

static int load_threshold(struct profile__ctx *c, const yaml_node_t *map, const char *prefix,
                          int64_t *p95, double *errors)
{
    char gotbuf[64], path[48];
    yaml_node_t *v[TH_N];
    if (!profile__is_mapping(map))
        return profile__fail(c, map, prefix,
                             "expected a mapping such as { p95: 100ms, errors: 1%% }, "
                             "got %s",
                             GOT(map));
    int rc = profile__fields(c, map, prefix, th_keys, TH_N, v);
    if (!rc && v[TH_P95]) {
        snprintf(path, sizeof(path), "%s.p95", prefix);
        rc = profile__get_duration(c, v[TH_P95], path, false, MAX_TIMEOUT_US, p95);
    }
    if (!rc && v[TH_ERRORS]) {
        snprintf(path, sizeof(path), "%s.errors", prefix);
        rc = profile__get_percent(c, v[TH_ERRORS], path, errors);
    }
    return rc;
}

enum { TS_HEALTHY, TS_OVERLOADED, TS_N };
static const char *const ts_keys[TS_N] = {"healthy", "overloaded"};

static int load_thresholds(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[TS_N];
    struct profile_thresholds *t = &p->thresholds;
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "thresholds",
                             "expected a mapping with 'healthy' and/or "
                             "'overloaded', got %s",
                             GOT(map));
    int rc = profile__fields(c, map, "thresholds", ts_keys, TS_N, v);
    if (!rc && v[TS_HEALTHY])
        rc = load_threshold(c, v[TS_HEALTHY], "thresholds.healthy", &t->healthy_p95_us,
                            &t->healthy_errors);
    if (!rc && v[TS_OVERLOADED])
        rc = load_threshold(c, v[TS_OVERLOADED], "thresholds.overloaded", &t->overloaded_p95_us,
                            &t->overloaded_errors);
    if (rc)
        return rc;
    /* A healthy bound above the overloaded one would make a run both at once. */
    if (t->healthy_p95_us > t->overloaded_p95_us) {
        char a[QTY_LEN], b[QTY_LEN];
        return profile__fail(c, map, "thresholds", "healthy.p95 (%s) is above overloaded.p95 (%s)",
                             qty_format_duration(t->healthy_p95_us, a),
                             qty_format_duration(t->overloaded_p95_us, b));
    }
    if (t->healthy_errors > t->overloaded_errors)
        return profile__fail(c, map, "thresholds",
                             "healthy.errors (%g%%) is above overloaded.errors "
                             "(%g%%)",
                             t->healthy_errors * 100, t->overloaded_errors * 100);
    return 0;
}

enum { TG_USERS, TG_RPS, TG_STREAMS, TG_N };
static const char *const tg_keys[TG_N] = {"users", "rps", "streams"};

static int load_target(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[TG_N];
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "target",
                             "expected { users: N }, { rps: N } or { streams: N }, got %s",
                             GOT(map));
    int rc = profile__fields(c, map, "target", tg_keys, TG_N, v);
    if (rc)
        return rc;
    if ((v[TG_USERS] != NULL) + (v[TG_RPS] != NULL) + (v[TG_STREAMS] != NULL) != 1)
        return profile__fail(c, map, "target", "give exactly one of 'users', 'rps' or 'streams'");
    if (v[TG_STREAMS])
        return profile__get_number(c, v[TG_STREAMS], "target.streams", false, MAX_TARGET,
                                   &p->target_streams);
    if (v[TG_USERS])
        return profile__get_number(c, v[TG_USERS], "target.users", false, MAX_TARGET,
                                   &p->target_users);
    return profile__get_number(c, v[TG_RPS], "target.rps", false, MAX_TARGET, &p->target_rps);
}

enum {
    K_USERS,
    K_RATE,
    K_DURATION,
    K_WARMUP,
    K_TIMEOUT,
    K_PER_USER_RPS,
    K_THRESHOLDS,
    K_TARGET,
    K_STAGES,
    K_REQUESTS,
    K_SEARCH,
    K_SLO,
    K_COST,
    K_PLANNING,
    K_STREAMS,
    K_PRODUCERS,
    K_GENERATORS,
    K_SCALE_OUT,
    K_AVAILABILITY,
    K_NODES,
    K_AUTOSCALING,
    K_N
};
static const char *const top_keys[K_N] = {
    "users",        "rate",     "duration",   "warmup",    "timeout",    "per_user_rps",
    "thresholds",   "target",   "stages",     "requests",  "search",     "slo",
    "cost",         "planning", "streams",    "producers", "generators", "scale_out",
    "availability", "nodes",    "autoscaling"};

/* A parser, long on purpose: the profile's top-level keys (top_keys) dispatched one after
 * another to their readers, in the order the document explains them. */
static int load_root(struct profile__ctx *c, const yaml_node_t *root, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[K_N];
    int rc;

    if (root->type != YAML_MAPPING_NODE)
        return profile__fail(c, root, NULL,
                             "expected a mapping of profile fields (users, duration, "
                             "requests ...), got %s",
                             GOT(root));
    rc = profile__fields(c, root, "", top_keys, K_N, v);
    if (rc)
        return rc;

    if (v[K_USERS] && v[K_RATE]) {
        const yaml_node_t *later =
            profile__line_of(v[K_RATE]) >= profile__line_of(v[K_USERS]) ? v[K_RATE] : v[K_USERS];
        return profile__fail(
            c, later, later == v[K_RATE] ? "rate" : "users",
            "users (closed loop) and rate (open loop) are mutually exclusive; give one");
    }
    if (v[K_STAGES] && (v[K_USERS] || v[K_RATE] || v[K_DURATION])) {
        int k = v[K_USERS] ? K_USERS : v[K_RATE] ? K_RATE : K_DURATION;
        return profile__fail(c, v[k], top_keys[k],
                             "not allowed with stages (the stages set the load "
                             "and, added up, the duration)");
    }
    if (v[K_USERS]) {
        uint64_t u;
        rc = profile__get_uint(c, v[K_USERS], "users", 1, MAX_USERS, &u);
        if (rc)
            return rc;
        p->users = (unsigned)u;
        p->rate = 0;
        p->given |= PROFILE_GIVEN_USERS;
    }
    if (v[K_RATE]) {
        rc = profile__get_number(c, v[K_RATE], "rate", false, MAX_RATE, &p->rate);
        if (rc)
            return rc;
        p->users = 0;
        p->given |= PROFILE_GIVEN_RATE;
    }
    if (v[K_DURATION] && (rc = profile__get_duration(c, v[K_DURATION], "duration", false,
                                                     MAX_RUN_US, &p->duration_us)))
        return rc;
    if (v[K_WARMUP] &&
        (rc = profile__get_duration(c, v[K_WARMUP], "warmup", true, MAX_RUN_US, &p->warmup_us)))
        return rc;
    if (v[K_TIMEOUT] && (rc = profile__get_duration(c, v[K_TIMEOUT], "timeout", false,
                                                    MAX_TIMEOUT_US, &p->timeout_us)))
        return rc;
    if (v[K_PER_USER_RPS] && (rc = profile__get_number(c, v[K_PER_USER_RPS], "per_user_rps", false,
                                                       MAX_PER_USER_RPS, &p->per_user_rps)))
        return rc;
    if (v[K_GENERATORS]) {
        uint64_t g;
        rc = profile__get_uint(c, v[K_GENERATORS], "generators", 1, PROFILE_MAX_GENERATORS, &g);
        if (rc)
            return rc;
        p->generators = (unsigned)g;
    }
    if (v[K_THRESHOLDS] && (rc = load_thresholds(c, v[K_THRESHOLDS], p)))
        return rc;
    if (v[K_TARGET] && (rc = load_target(c, v[K_TARGET], p)))
        return rc;
    if (v[K_STAGES] && (rc = profile__load_stages(c, v[K_STAGES], p)))
        return rc;
    if (v[K_REQUESTS] && (rc = profile__load_requests(c, v[K_REQUESTS], p)))
        return rc;
    if ((rc = profile__load_sizing(c, v[K_SEARCH], v[K_SLO], v[K_COST], v[K_PLANNING], p)))
        return rc;
    if (v[K_SCALE_OUT] && (rc = profile__load_scale_out(c, v[K_SCALE_OUT], p)))
        return rc;
    if (v[K_AVAILABILITY] && (rc = profile__load_availability(c, v[K_AVAILABILITY], p)))
        return rc;
    if (v[K_NODES] && (rc = profile__load_nodes(c, v[K_NODES], p)))
        return rc;
    if (v[K_AUTOSCALING] && (rc = profile__load_autoscaling(c, v[K_AUTOSCALING], p)))
        return rc;
    return profile__load_streams(c, v[K_STREAMS], v[K_PRODUCERS],
                                 v[K_USERS] || v[K_RATE] || v[K_STAGES] || v[K_REQUESTS], p);
}

/* ---- public ------------------------------------------------------------------------------ */

void profile_free(struct profile *p)
{
    if (!p)
        return;
    free(p->source);
    for (size_t i = 0; i < p->nrequests; i++)
        profile__request_free(&p->requests[i]);
    free(p->requests);
    free(p->stages);
    profile_streams_free(p->streams);
    memset(p, 0, sizeof(*p));
}

const char *profile_local_note(const struct profile *p, const char *front, char *buf, size_t len)
{
    if (!p->generators)
        return NULL;
    snprintf(buf, len,
             "%s: generators: %u ignored: load from several pods is the operator's (an Indexed "
             "Job); sizeup %s sends all the load from this process",
             p->source ? p->source : "profile", p->generators, front);
    return buf;
}

static int init_default(struct profile *p, const char *source)
{
    memset(p, 0, sizeof(*p));
    p->users = 50;
    p->duration_us = 20LL * 1000000;
    p->warmup_us = 5LL * 1000000;
    p->timeout_us = 5LL * 1000000;
    p->per_user_rps = 0.5;
    p->thresholds.healthy_p95_us = 100000;
    p->thresholds.healthy_errors = 0.01;
    p->thresholds.overloaded_p95_us = 500000;
    p->thresholds.overloaded_errors = 0.01;
    p->search.mode = PROFILE_SEARCH_CAPACITY;
    p->search.warmup_us = 2LL * 1000000;
    p->search.window_us = 5LL * 1000000;
    p->search.precision = 0.05;
    p->search.repeats = 3;
    p->search.max_steps = 8;
    p->search.budget_us = 20LL * 60 * 1000000;
    p->search.settle_us = PROFILE_SETTLE_DEFAULT_US;
    p->slo.p95_us = p->thresholds.healthy_p95_us;
    p->slo.errors = p->thresholds.healthy_errors;
    p->slo.delivery_p95_us = p->thresholds.healthy_p95_us;
    p->cost.cpu = 1.0;
    p->cost.memory_gib = 0.13;
    p->planning.buffer = 0.10;
    p->planning.growth = 0.30;
    snprintf(p->autoscaling.metric, sizeof(p->autoscaling.metric), "%s",
             PROFILE_AUTOSCALING_METRIC_DEFAULT);
    p->source = strdup(source);
    p->requests = calloc(1, sizeof(*p->requests));
    if (!p->source || !p->requests)
        goto oom;
    p->nrequests = 1;
    p->requests[0].name = strdup("GET /");
    p->requests[0].method = strdup("GET");
    p->requests[0].path = strdup("/");
    p->requests[0].weight = 1;
    if (!p->requests[0].name || !p->requests[0].method || !p->requests[0].path)
        goto oom;
    return 0;
oom:
    profile_free(p);
    return -ENOMEM;
}

int profile_init_default(struct profile *p)
{
    return init_default(p, DEFAULT_SOURCE);
}

int profile_load_buffer(const char *buf, size_t len, const char *source, struct profile *p,
                        char *err)
{
    struct profile tmp;
    yaml_parser_t ps;
    yaml_document_t doc;
    bool have_parser = false, have_doc = false;
    struct profile__ctx c = {.doc = &doc, .source = source ? source : "profile", .err = err};
    int rc;

    memset(p, 0, sizeof(*p));
    memset(&tmp, 0, sizeof(tmp));
    if (len > PROFILE_MAX_BYTES)
        return err_set(err, -EFBIG, "%s: larger than %u bytes", c.source, PROFILE_MAX_BYTES);
    rc = init_default(&tmp, c.source);
    if (rc) {
        err_set(err, rc, "%s: out of memory", c.source);
        goto out;
    }
    rc = profile__prescan(&c, buf, len);
    if (rc)
        goto out;

    if (!yaml_parser_initialize(&ps)) {
        rc = err_set(err, -ENOMEM, "%s: out of memory", c.source);
        goto out;
    }
    have_parser = true;
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&ps, &doc)) {
        rc = profile__syntax_error(&c, &ps, buf, len);
        goto out;
    }
    have_doc = true;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    /* An empty file (or one with only comments) is the default profile. */
    if (root && !profile__is_null(root)) {
        rc = load_root(&c, root, &tmp);
        if (rc)
            goto out;
    }
    *p = tmp;
    memset(&tmp, 0, sizeof(tmp));
out:
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&ps);
    profile_free(&tmp);
    return rc;
}

int profile_load_file(const char *path, struct profile *p, char *err)
{
    char ebuf[128];
    char *buf = NULL;
    size_t len = 0;
    int fd, rc = 0;

    memset(p, 0, sizeof(*p));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, -errno, "%s: %s", path, err_str(errno, ebuf, sizeof(ebuf)));
    /* Read at most one byte past the cap so a file that is too large (or a pipe that never
     * ends) is detected without reading it all. */
    buf = malloc(PROFILE_MAX_BYTES + 1);
    if (!buf) {
        rc = err_set(err, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    while (len <= PROFILE_MAX_BYTES) {
        ssize_t n = read(fd, buf + len, PROFILE_MAX_BYTES + 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = err_set(err, -errno, "%s: %s", path, err_str(errno, ebuf, sizeof(ebuf)));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (len > PROFILE_MAX_BYTES) {
        rc = err_set(err, -EFBIG, "%s: larger than %u bytes", path, PROFILE_MAX_BYTES);
        goto out;
    }
    rc = profile_load_buffer(buf, len, path, p, err);
out:
    free(buf);
    close(fd);
    return rc;
}
