/* hpa.yaml (output_hpa.h). The object is built as a libyaml document tree and dumped in one call:
 * its shape is fixed and nested, which the tree states more plainly than a stream of events. */

#include "output/output_hpa.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <yaml.h>

#include "output/output_int.h"

struct tree {
    yaml_document_t doc;
    bool failed;
};

static int scalar(struct tree *t, const char *v, yaml_scalar_style_t style)
{
    int id = t->failed ? 0
                       : yaml_document_add_scalar(&t->doc, NULL, (const yaml_char_t *)v,
                                                  (int)strlen(v), style);
    if (!id)
        t->failed = true;
    return id;
}

static int mapping(struct tree *t)
{
    int id = t->failed ? 0 : yaml_document_add_mapping(&t->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    if (!id)
        t->failed = true;
    return id;
}

/* Adds key: value (a node id) to the mapping `map`. */
static void put(struct tree *t, int map, const char *key, int value)
{
    int k = scalar(t, key, YAML_PLAIN_SCALAR_STYLE);
    if (!t->failed && !yaml_document_append_mapping_pair(&t->doc, map, k, value))
        t->failed = true;
}

static void put_str(struct tree *t, int map, const char *key, const char *v)
{
    put(t, map, key, scalar(t, v, YAML_ANY_SCALAR_STYLE));
}

static void put_uint(struct tree *t, int map, const char *key, unsigned v)
{
    char b[16];
    snprintf(b, sizeof(b), "%u", v);
    put(t, map, key, scalar(t, b, YAML_PLAIN_SCALAR_STYLE));
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
static void build(struct tree *t, const struct sizing_hpa *h, const char *name)
{
    int root = mapping(t);
    put_str(t, root, "apiVersion", "autoscaling/v2");
    put_str(t, root, "kind", "HorizontalPodAutoscaler");

    int meta = mapping(t);
    put(t, root, "metadata", meta);
    put_str(t, meta, "name", name);
    int ann = mapping(t);
    put(t, meta, "annotations", ann);
    put(t, ann, OUTPUT_HPA_NOTE_ANNOTATION, scalar(t, h->note, YAML_DOUBLE_QUOTED_SCALAR_STYLE));

    int spec = mapping(t);
    put(t, root, "spec", spec);
    int ref = mapping(t);
    put(t, spec, "scaleTargetRef", ref);
    put_str(t, ref, "apiVersion", "apps/v1");
    put_str(t, ref, "kind", "Deployment");
    put_str(t, ref, "name", name);
    put_uint(t, spec, "minReplicas", h->min_replicas);
    put_uint(t, spec, "maxReplicas", h->max_replicas);

    int metrics =
        t->failed ? 0 : yaml_document_add_sequence(&t->doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
    if (!metrics)
        t->failed = true;
    put(t, spec, "metrics", metrics);
    int metric = mapping(t);
    if (!t->failed && !yaml_document_append_sequence_item(&t->doc, metrics, metric))
        t->failed = true;
    put_str(t, metric, "type", "Resource");
    int res = mapping(t);
    put(t, metric, "resource", res);
    put_str(t, res, "name", "cpu");
    int target = mapping(t);
    put(t, res, "target", target);
    put_str(t, target, "type", "Utilization");
    put_uint(t, target, "averageUtilization", h->target_cpu_utilization);
}

int output_hpa_doc(FILE *f, const struct output_doc *d, char *err)
{
    const char *name = d->workload.deployment;
    return output_hpa_yaml(f, &d->advice->sizing, name ? name : OUTPUT_HPA_DEFAULT_NAME, err);
}

int output_hpa_yaml(FILE *f, const struct sizing *s, const char *name, char *err)
{
    yaml_emitter_t em;
    struct tree t = {0};
    bool em_ready = false, doc_ready = false;
    int rc = 0;

    if (!s->hpa.enabled)
        return err_set(err, -ENOENT, "no HPA recommended: %s",
                       s->hpa.note[0] ? s->hpa.note : "no recommendation");
    if (!valid_name(name))
        return err_set(err, -EINVAL,
                       "'%.64s' is not a Kubernetes object name (lowercase letters, digits, '-' "
                       "and '.', at most %d characters)",
                       name ? name : "", OUTPUT_HPA_NAME_MAX);
    if (!yaml_emitter_initialize(&em)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    em_ready = true;
    yaml_emitter_set_output(&em, output_yaml_write, f);
    yaml_emitter_set_width(&em, 100);
    yaml_emitter_set_unicode(&em, 1);
    if (!yaml_document_initialize(&t.doc, NULL, NULL, NULL, 1, 1)) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    doc_ready = true;
    build(&t, &s->hpa, name);
    if (t.failed) {
        rc = err_set(err, -ENOMEM, "out of memory building hpa.yaml");
        goto out;
    }
    /* yaml_emitter_dump consumes the document, whether it succeeds or not. */
    doc_ready = false;
    if (!yaml_emitter_open(&em) || !yaml_emitter_dump(&em, &t.doc) || !yaml_emitter_close(&em) ||
        !yaml_emitter_flush(&em))
        rc = err_set(err, -EIO, "YAML emitter: %s", em.problem ? em.problem : "write error");
out:
    if (doc_ready)
        yaml_document_delete(&t.doc);
    if (em_ready)
        yaml_emitter_delete(&em);
    return rc;
}
