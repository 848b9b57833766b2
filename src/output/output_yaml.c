/* values.yaml and auto-sizing.yaml, emitted with libyaml so quoting and escaping are right for
 * any path or text. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "core/quantity.h"
#include "output/output.h"
#include "output/output_int.h"
#include "advise/rule.h"
#include "advise/sizing.h"

#ifndef SIZEUP_VERSION
#define SIZEUP_VERSION "0.1.0"
#endif

struct em {
    yaml_emitter_t e;
    int failed;
};

int output_yaml_write(void *data, unsigned char *buf, size_t size)
{
    FILE *f = data;
    return fwrite(buf, 1, size, f) == size;
}

static void emit(struct em *m, yaml_event_t *ev)
{
    if (m->failed) {
        yaml_event_delete(ev);
        return;
    }
    if (!yaml_emitter_emit(&m->e, ev))
        m->failed = 1;
}

static void ev_scalar(struct em *m, const char *v, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    int plain = style == YAML_PLAIN_SCALAR_STYLE || style == YAML_ANY_SCALAR_STYLE;
    /* Untagged: a plain scalar resolves implicitly, a quoted one is implicitly a string. */
    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), plain, 1,
                                      style)) {
        m->failed = 1;
        return;
    }
    emit(m, &ev);
}

static void ev_map_start(struct em *m, int flow)
{
    yaml_event_t ev;
    if (!yaml_mapping_start_event_initialize(
            &ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE)) {
        m->failed = 1;
        return;
    }
    emit(m, &ev);
}

static void ev_map_end(struct em *m)
{
    yaml_event_t ev;
    yaml_mapping_end_event_initialize(&ev);
    emit(m, &ev);
}

static void kv(struct em *m, const char *k, const char *v, yaml_scalar_style_t style)
{
    ev_scalar(m, k, YAML_ANY_SCALAR_STYLE);
    ev_scalar(m, v, style);
}

static int doc_begin(struct em *m, FILE *f)
{
    yaml_event_t ev;

    memset(m, 0, sizeof(*m));
    if (!yaml_emitter_initialize(&m->e))
        return -ENOMEM;
    yaml_emitter_set_output(&m->e, output_yaml_write, f);
    yaml_emitter_set_width(&m->e, 100);
    yaml_emitter_set_unicode(&m->e, 1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    emit(m, &ev);
    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
    emit(m, &ev);
    return 0;
}

static int doc_end(struct em *m, char *err)
{
    yaml_event_t ev;
    int rc = 0;

    yaml_document_end_event_initialize(&ev, 1);
    emit(m, &ev);
    yaml_stream_end_event_initialize(&ev);
    emit(m, &ev);
    if (!m->failed && !yaml_emitter_flush(&m->e))
        m->failed = 1;
    if (m->failed)
        rc = err_set(err, -EIO, "YAML emitter: %s", m->e.problem ? m->e.problem : "write error");
    yaml_emitter_delete(&m->e);
    return rc;
}

/* ---- values.yaml --------------------------------------------------------------------------- */

/* A leaf of values.yaml: a dotted path and its value. The leaves are emitted as nested block
 * mappings, grouping leaves that share a prefix, in the order given. */
struct leaf {
    char path[OUTPUT_PATH_MAX + 32];
    char value[QTY_LEN];
    int quoted;
};

/* Length of the first `depth+1` segments of path's prefix match: returns the segment at depth
 * (start, len) or 0 when path has fewer segments. */
static int segment(const char *path, int depth, const char **start, size_t *len)
{
    const char *p = path;
    for (int i = 0; i < depth; i++) {
        p = strchr(p, '.');
        if (!p)
            return 0;
        p++;
    }
    const char *dot = strchr(p, '.');
    *start = p;
    *len = dot ? (size_t)(dot - p) : strlen(p);
    return 1;
}

static int is_last_segment(const char *path, int depth)
{
    const char *s;
    size_t l;
    return segment(path, depth, &s, &l) && !segment(path, depth + 1, &s, &l);
}

/* Emits leaves[lo..hi), which share their first `depth` segments, as one mapping. */
static void emit_leaves(struct em *m, const struct leaf *leaves, size_t lo, size_t hi, int depth,
                        int flow)
{
    bool done[16] = {false};

    ev_map_start(m, flow);
    for (size_t i = lo; i < hi; i++) {
        if (done[i])
            continue;
        const char *s;
        size_t l;
        char key[OUTPUT_PATH_MAX];
        segment(leaves[i].path, depth, &s, &l);
        snprintf(key, sizeof(key), "%.*s", (int)l, s);
        if (is_last_segment(leaves[i].path, depth)) {
            done[i] = true;
            kv(m, key, leaves[i].value,
               leaves[i].quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
            continue;
        }
        /* Gather every later leaf with the same segment here into one sub-mapping. The leaves
         * are few (at most 10), so a copy per group is simplest. */
        struct leaf group[16];
        size_t ng = 0;
        for (size_t j = i; j < hi; j++) {
            const char *s2;
            size_t l2;
            if (done[j] || !segment(leaves[j].path, depth, &s2, &l2) || l2 != l ||
                strncmp(s, s2, l) != 0)
                continue;
            group[ng++] = leaves[j];
            done[j] = true;
        }
        ev_scalar(m, key, YAML_ANY_SCALAR_STYLE);
        /* The reference load test writes limits and requests as one-line flow mappings: keep that
         * look for the innermost level when it only holds scalars. */
        bool leaf_level = true;
        for (size_t k = 0; k < ng; k++)
            if (!is_last_segment(group[k].path, depth + 1))
                leaf_level = false;
        emit_leaves(m, group, 0, ng, depth + 1, leaf_level && depth >= 1);
    }
    ev_map_end(m);
}

/* Sets a leaf at base (+ "." + key when key is not NULL) to the text v. */
static void leaf_set(struct leaf *l, const char *base, const char *key, const char *v)
{
    if (key)
        snprintf(l->path, sizeof(l->path), "%s.%s", base, key);
    else
        snprintf(l->path, sizeof(l->path), "%s", base);
    snprintf(l->value, sizeof(l->value), "%s", v);
}

/* With a target load, the replica count and the autoscaling block of a chart made by `helm
 * create`. Without one they are left out: a `replicaCount: 1` applied with `helm upgrade -f`
 * would scale a ten-replica app down to one. Returns the number of leaves written (at most 5). */
static size_t sizing_leaves(const struct output_doc *d, struct leaf *l)
{
    const struct sizing *s = &d->advice->sizing;
    const char *as = d->paths.autoscaling;
    char b[16];
    size_t n = 0;

    /* by_target covers every kind of target (req/s, users, streams), as deployment-patch.yaml's
     * replicas do. */
    if (!s->by_target || s->recommended < 0)
        return 0;
    /* An unreachable target (the scale-out's curve never holds it): the shape stands, but no
     * count of it is the answer, so neither path is written. */
    if (s->unreachable || s->replicas == 0)
        return 0;
    snprintf(b, sizeof(b), "%u", s->replicas);
    leaf_set(&l[n++], d->paths.replicas, NULL, b);
    /* Unmapped: the chart's autoscaling is not values.yaml's (the HPA is hpa.yaml's). */
    if (!as[0])
        return n;
    /* enabled: false is written too: the chart's replicaCount only counts with its HPA off.
     * Charts made by `helm create` template CPU and memory utilization only: a request-rate
     * HPA is hpa.yaml's or keda.yaml's, and the chart's own stays off. */
    bool in_values = output_autoscaler(d) == OUTPUT_AUTOSCALER_VALUES;
    leaf_set(&l[n++], as, "enabled", in_values ? "true" : "false");
    if (!in_values)
        return n;
    snprintf(b, sizeof(b), "%u", s->hpa.min_replicas);
    leaf_set(&l[n++], as, "minReplicas", b);
    snprintf(b, sizeof(b), "%u", s->hpa.max_replicas);
    leaf_set(&l[n++], as, "maxReplicas", b);
    snprintf(b, sizeof(b), "%u", s->hpa.target_cpu_utilization);
    leaf_set(&l[n++], as, "targetCPUUtilizationPercentage", b);
    return n;
}

int output_values_yaml(FILE *f, const struct output_doc *d, char *err)
{
    const struct advice *a = d->advice;
    struct leaf leaves[10];
    struct em m;
    int rc;

    if (a->recommended < 0)
        return err_set(err, -EINVAL, "no recommendation: no values to write");
    memset(leaves, 0, sizeof(leaves));
    snprintf(leaves[0].path, sizeof(leaves[0].path), "%s", d->paths.workers);
    snprintf(leaves[0].value, sizeof(leaves[0].value), "%u", a->workers);
    leaves[0].quoted = 1; /* charts take "auto" or a number here: a string either way */
    snprintf(leaves[1].path, sizeof(leaves[1].path), "%s.limits.cpu", d->paths.resources);
    snprintf(leaves[1].value, sizeof(leaves[1].value), "%lldm", (long long)a->limit_cpu_m);
    snprintf(leaves[2].path, sizeof(leaves[2].path), "%s.limits.memory", d->paths.resources);
    qty_format_memory(a->limit_memory, leaves[2].value);
    snprintf(leaves[3].path, sizeof(leaves[3].path), "%s.requests.cpu", d->paths.resources);
    snprintf(leaves[3].value, sizeof(leaves[3].value), "%lldm", (long long)a->request_cpu_m);
    snprintf(leaves[4].path, sizeof(leaves[4].path), "%s.requests.memory", d->paths.resources);
    qty_format_memory(a->request_memory, leaves[4].value);
    size_t n = 5 + sizing_leaves(d, leaves + 5);

    rc = doc_begin(&m, f);
    if (rc)
        return err_set(err, rc, "out of memory");
    emit_leaves(&m, leaves, 0, n, 0, 0);
    return doc_end(&m, err);
}

/* ---- auto-sizing.yaml ---------------------------------------------------------------------- */

static void num(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%g", v);
}

static void derivation(struct em *m, const char *name, double value,
                       const struct rule_derivation *dv)
{
    char b[64];

    ev_scalar(m, name, YAML_ANY_SCALAR_STYLE);
    ev_map_start(m, 0);
    num(b, sizeof(b), value);
    kv(m, "value", b, YAML_PLAIN_SCALAR_STYLE);
    kv(m, "source", dv->fallback ? "fallback (default rule)" : "measured", YAML_ANY_SCALAR_STYLE);
    snprintf(b, sizeof(b), "%u", dv->variants);
    kv(m, "variants", b, YAML_PLAIN_SCALAR_STYLE);
    kv(m, "from", dv->text, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    ev_map_end(m);
}

int output_rule_yaml(FILE *f, const struct output_doc *d, char *err)
{
    const struct advice *a = d->advice;
    char b[256], t[40], expr[RULE_EXPRESSION_LEN];
    struct em m;
    int rc;

    rc = doc_begin(&m, f);
    if (rc)
        return err_set(err, rc, "out of memory");
    ev_map_start(&m, 0);
    kv(&m, "rule", rule_format(NULL, expr), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    kv(&m, "expression", rule_format(&a->rule, expr), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    kv(&m, "notes",
       "cores = CPU limit in cores, memory_mib = memory limit in MiB; round() is half away "
       "from zero; the result is at least 1",
       YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    ev_scalar(&m, "constants", YAML_ANY_SCALAR_STYLE);
    ev_map_start(&m, 0);
    num(b, sizeof(b), a->rule.cores_per_worker);
    kv(&m, "cores_per_worker", b, YAML_PLAIN_SCALAR_STYLE);
    num(b, sizeof(b), a->rule.memory_per_worker_mib);
    kv(&m, "memory_per_worker_mib", b, YAML_PLAIN_SCALAR_STYLE);
    snprintf(b, sizeof(b), "%u", a->rule.max_workers);
    kv(&m, "max_workers", b, YAML_PLAIN_SCALAR_STYLE);
    ev_map_end(&m);
    ev_scalar(&m, "derivation", YAML_ANY_SCALAR_STYLE);
    ev_map_start(&m, 0);
    derivation(&m, "cores_per_worker", a->rule.cores_per_worker, &a->cores_per_worker);
    derivation(&m, "memory_per_worker_mib", a->rule.memory_per_worker_mib, &a->memory_per_worker);
    derivation(&m, "max_workers", a->rule.max_workers, &a->max_workers);
    ev_map_end(&m);
    kv(&m, "generated_by", "sizeup " SIZEUP_VERSION, YAML_ANY_SCALAR_STYLE);
    kv(&m, "generated_at", output_fmt_time_iso(d->finished ? d->finished : d->started, t),
       YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    ev_map_end(&m);
    return doc_end(&m, err);
}
