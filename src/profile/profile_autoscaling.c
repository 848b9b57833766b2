/* The profile's autoscaling: section, and planning.ramp: how the request-rate autoscaler names
 * its metric and where KEDA reads it (profile.h, struct profile_autoscaling), and the load
 * growth per minute the scale-up lag is read against. The autoscaler itself is decided in the
 * advisor (advise/autoscale.c); here only the inputs are read and checked. */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile_int.h"

/* planning.ramp may pass 100% per minute (a load that doubles in a minute), up to this. */
#define MAX_RAMP 100.0

enum { AS_METRIC, AS_KEDA, AS_N };
static const char *const as_keys[AS_N] = {"metric", "keda"};
enum { KD_SERVER, KD_QUERY, KD_N };
static const char *const kd_keys[KD_N] = {"server_address", "query"};

/* A metric name as the custom metrics API takes it: letters, digits, '_', ':', '.', '-',
 * starting with a letter. */
static bool metric_name_ok(const char *s)
{
    if (!isalpha((unsigned char)s[0]))
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || strchr("_:.-", *s)))
            return false;
    return true;
}

static bool printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

/* A non-empty scalar of at most max bytes into out (max + 1 bytes). */
static int text(struct profile__ctx *c, const yaml_node_t *n, const char *path, size_t max,
                const char *what, char *out)
{
    const char *t;
    int rc = profile__get_text(c, n, path, max, what, &t);
    if (rc)
        return rc;
    if (!printable(t))
        return profile__fail(c, n, path, "holds a control character (expected %s)", what);
    snprintf(out, max + 1, "%s", t);
    return 0;
}

static int load_keda(struct profile__ctx *c, const yaml_node_t *map, struct profile_autoscaling *as)
{
    char gotbuf[64];
    yaml_node_t *v[KD_N];
    int rc;

    rc = profile__section(c, map, "autoscaling.keda",
                          "{ server_address: http://prometheus:9090, query: 'sum(rate(...))' }",
                          kd_keys, KD_N, v);
    if (rc)
        return rc < 0 ? rc : 0;
    if (v[KD_SERVER]) {
        rc = text(c, v[KD_SERVER], "autoscaling.keda.server_address", PROFILE_KEDA_TEXT_MAX,
                  "the Prometheus server's URL (http://host:port)", as->server_address);
        if (rc)
            return rc;
        if (strncmp(as->server_address, "http://", 7) != 0 &&
            strncmp(as->server_address, "https://", 8) != 0)
            return profile__fail(c, v[KD_SERVER], "autoscaling.keda.server_address",
                                 "expected an http:// or https:// URL, got %s", GOT(v[KD_SERVER]));
    }
    if (v[KD_QUERY] && (rc = text(c, v[KD_QUERY], "autoscaling.keda.query", PROFILE_KEDA_TEXT_MAX,
                                  "a PromQL query of the app's total request rate", as->query)))
        return rc;
    return 0;
}

int profile__load_autoscaling(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    yaml_node_t *v[AS_N];
    struct profile_autoscaling *as = &p->autoscaling;
    int rc;

    /* "autoscaling:" with nothing after it is absent. */
    rc = profile__section(c, map, "autoscaling", "{ metric: http_requests_per_second }", as_keys,
                          AS_N, v);
    if (rc)
        return rc < 0 ? rc : 0;
    as->given = true;
    if (v[AS_METRIC]) {
        rc = text(c, v[AS_METRIC], "autoscaling.metric", PROFILE_METRIC_NAME_MAX,
                  "a metric name such as http_requests_per_second", as->metric);
        if (rc)
            return rc;
        if (!metric_name_ok(as->metric))
            return profile__fail(c, v[AS_METRIC], "autoscaling.metric",
                                 "'%.64s' is not a metric name (a letter, then letters, digits, "
                                 "'_', ':', '.' or '-')",
                                 as->metric);
    }
    if (v[AS_KEDA] && (rc = load_keda(c, v[AS_KEDA], as)))
        return rc;
    return 0;
}

int profile__get_ramp(struct profile__ctx *c, const yaml_node_t *n, double *out)
{
    char gotbuf[64], num[32];
    const char *t = n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
    size_t len = t ? strlen(t) : 0;
    char *end = NULL;

    if (!t || len < 2 || len >= sizeof(num) || len != n->data.scalar.length || t[len - 1] != '%' ||
        !strchr("0123456789.", t[0]))
        return profile__fail(c, n, "planning.ramp",
                             "expected the load growth per minute as a percentage such as 20%%, "
                             "got %s",
                             GOT(n));
    memcpy(num, t, len - 1);
    num[len - 1] = '\0';
    double v = strtod(num, &end);
    if (*end || !(v >= 0) || num[strspn(num, "0123456789.")])
        return profile__fail(c, n, "planning.ramp",
                             "expected the load growth per minute as a percentage such as 20%%, "
                             "got %s",
                             GOT(n));
    if (v / 100 > MAX_RAMP)
        return profile__fail(c, n, "planning.ramp", "%s is too large (at most %g%% per minute)",
                             GOT(n), MAX_RAMP * 100);
    *out = v / 100;
    return 0;
}
