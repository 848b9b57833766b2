/* hpa.yaml (output_hpa.h). The object is built as a libyaml document tree and dumped in one call:
 * its shape is fixed and nested, which the tree states more plainly than a stream of events. */

#include "output/output_hpa.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <yaml.h>

#include "output/output_int.h"

int output__tree_scalar(struct output_tree *t, const char *v, yaml_scalar_style_t style)
{
    int id = t->failed ? 0
                       : yaml_document_add_scalar(&t->doc, NULL, (const yaml_char_t *)v,
                                                  (int)strlen(v), style);
    if (!id)
        t->failed = true;
    return id;
}

int output__tree_mapping(struct output_tree *t)
{
    int id = t->failed ? 0 : yaml_document_add_mapping(&t->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    if (!id)
        t->failed = true;
    return id;
}

int output__tree_item(struct output_tree *t, int seq)
{
    int m = output__tree_mapping(t);
    if (!t->failed && !yaml_document_append_sequence_item(&t->doc, seq, m))
        t->failed = true;
    return m;
}

int output__tree_sequence(struct output_tree *t)
{
    int id = t->failed ? 0 : yaml_document_add_sequence(&t->doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
    if (!id)
        t->failed = true;
    return id;
}

void output__tree_put(struct output_tree *t, int map, const char *key, int value)
{
    int k = output__tree_scalar(t, key, YAML_PLAIN_SCALAR_STYLE);
    if (!t->failed && !yaml_document_append_mapping_pair(&t->doc, map, k, value))
        t->failed = true;
}

void output__tree_put_str(struct output_tree *t, int map, const char *key, const char *v)
{
    output__tree_put(t, map, key, output__tree_scalar(t, v, YAML_ANY_SCALAR_STYLE));
}

void output__tree_put_uint(struct output_tree *t, int map, const char *key, unsigned v)
{
    char b[16];
    snprintf(b, sizeof(b), "%u", v);
    output__tree_put(t, map, key, output__tree_scalar(t, b, YAML_PLAIN_SCALAR_STYLE));
}

/* The object's metadata: its name and the sizing's sentence as an annotation. */
int output__tree_object(struct output_tree *t, const char *api, const char *kind, const char *name,
                        const char *note)
{
    int root = output__tree_mapping(t);
    output__tree_put_str(t, root, "apiVersion", api);
    output__tree_put_str(t, root, "kind", kind);
    int meta = output__tree_mapping(t);
    output__tree_put(t, root, "metadata", meta);
    output__tree_put_str(t, meta, "name", name);
    int ann = output__tree_mapping(t);
    output__tree_put(t, meta, "annotations", ann);
    output__tree_put(t, ann, OUTPUT_HPA_NOTE_ANNOTATION,
                     output__tree_scalar(t, note, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    return root;
}

void output__average_value(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.3f", v);
    char *e = buf + strlen(buf) - 1;
    while (e > buf && *e == '0')
        *e-- = '\0';
    if (e > buf && *e == '.')
        *e = '\0';
}

/* A DNS-1123 subdomain: lowercase alphanumerics, '-' and '.', starting and ending alphanumeric. */
static bool valid_name(const char *s)
{
    size_t n = s ? strnlen(s, OUTPUT_HPA_NAME_MAX + 1) : 0;

    if (n == 0 || n > OUTPUT_HPA_NAME_MAX || !isalnum((unsigned char)s[0]) ||
        !isalnum((unsigned char)s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
              s[i] == '.'))
            return false;
    return true;
}

/* Builds the HPA into t->doc (initialized by the caller). */
static void build(struct output_tree *t, const struct sizing_hpa *h, const char *name)
{
    int root = output__tree_object(t, "autoscaling/v2", "HorizontalPodAutoscaler", name, h->note);
    int spec = output__tree_mapping(t);
    output__tree_put(t, root, "spec", spec);
    int ref = output__tree_mapping(t);
    output__tree_put(t, spec, "scaleTargetRef", ref);
    output__tree_put_str(t, ref, "apiVersion", "apps/v1");
    output__tree_put_str(t, ref, "kind", "Deployment");
    output__tree_put_str(t, ref, "name", name);
    output__tree_put_uint(t, spec, "minReplicas", h->min_replicas);
    output__tree_put_uint(t, spec, "maxReplicas", h->max_replicas);

    int metrics = output__tree_sequence(t);
    output__tree_put(t, spec, "metrics", metrics);
    int metric = output__tree_item(t, metrics);
    int target = output__tree_mapping(t);
    if (h->metric == SIZING_HPA_PODS) {
        char v[32];
        output__tree_put_str(t, metric, "type", "Pods");
        int pods = output__tree_mapping(t);
        output__tree_put(t, metric, "pods", pods);
        int m = output__tree_mapping(t);
        output__tree_put(t, pods, "metric", m);
        output__tree_put_str(t, m, "name", h->metric_name);
        output__tree_put(t, pods, "target", target);
        output__tree_put_str(t, target, "type", "AverageValue");
        output__average_value(h->target_average_value, v, sizeof(v));
        output__tree_put(t, target, "averageValue",
                         output__tree_scalar(t, v, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
        return;
    }
    output__tree_put_str(t, metric, "type", "Resource");
    int res = output__tree_mapping(t);
    output__tree_put(t, metric, "resource", res);
    output__tree_put_str(t, res, "name", "cpu");
    output__tree_put(t, res, "target", target);
    output__tree_put_str(t, target, "type", "Utilization");
    output__tree_put_uint(t, target, "averageUtilization", h->target_cpu_utilization);
}

int output_hpa_doc(FILE *f, const struct output_doc *d, char *err)
{
    const char *name = d->workload.deployment;
    return output_hpa_yaml(f, &d->advice->sizing, name ? name : OUTPUT_HPA_DEFAULT_NAME, err);
}

bool output__name_ok(const char *name)
{
    return valid_name(name);
}

int output__tree_dump(FILE *f, struct output_tree *t, char *err)
{
    yaml_emitter_t em;
    int rc = 0;

    if (t->failed) {
        yaml_document_delete(&t->doc);
        return err_set(err, -ENOMEM, "out of memory building the document");
    }
    if (!yaml_emitter_initialize(&em)) {
        yaml_document_delete(&t->doc);
        return err_set(err, -ENOMEM, "out of memory");
    }
    yaml_emitter_set_output(&em, output_yaml_write, f);
    yaml_emitter_set_width(&em, 100);
    yaml_emitter_set_unicode(&em, 1);
    /* yaml_emitter_dump consumes the document, whether it succeeds or not. */
    if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, &t->doc) || !yaml_emitter_close(&em) ||
        !yaml_emitter_flush(&em))
        rc = err_set(err, -EIO, "YAML emitter: %s", em.problem ? em.problem : "write error");
    yaml_emitter_delete(&em);
    return rc;
}

int output_hpa_yaml(FILE *f, const struct sizing *s, const char *name, char *err)
{
    struct output_tree t = {0};

    if (!s->hpa.enabled)
        return err_set(err, -ENOENT, "no HPA recommended: %s",
                       s->hpa.note[0] ? s->hpa.note : "no recommendation");
    if (!valid_name(name))
        return err_set(err, -EINVAL,
                       "'%.64s' is not a Kubernetes object name (lowercase letters, digits, '-' "
                       "and '.', at most %d characters)",
                       name ? name : "", OUTPUT_HPA_NAME_MAX);
    if (!yaml_document_initialize(&t.doc, NULL, NULL, NULL, 1, 1))
        return err_set(err, -ENOMEM, "out of memory");
    build(&t, &s->hpa, name);
    return output__tree_dump(f, &t, err);
}
