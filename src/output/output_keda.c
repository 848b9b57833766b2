/* keda.yaml (output_keda.h): the KEDA ScaledObject beside the request-rate HPA. Built with the
 * same document tree as hpa.yaml (output_hpa.h), from the same numbers: the threshold is the
 * HPA's averageValue, the replica bounds its minReplicas and maxReplicas. */

#include "output/output_keda.h"

#include <errno.h>
#include <stdio.h>

#include "output/output_hpa.h"
#include "output/output_int.h"

static const char *name_of(const struct output_doc *d)
{
    return d->workload.deployment ? d->workload.deployment : OUTPUT_HPA_DEFAULT_NAME;
}

bool output_keda_applies(const struct sizing *s)
{
    return s->hpa.enabled && s->hpa.metric == SIZING_HPA_PODS;
}

void output_keda_query(const struct sizing *s, const char *name, char *buf, size_t len)
{
    if (s->hpa.keda_query[0])
        snprintf(buf, len, "%s", s->hpa.keda_query);
    else
        snprintf(buf, len, PROFILE_AUTOSCALING_QUERY_DEFAULT, name);
}

int output_keda_doc(FILE *f, const struct output_doc *d, char *err)
{
    const struct sizing *s = &d->advice->sizing;
    const struct sizing_hpa *h = &s->hpa;
    const char *name = name_of(d);
    struct output_tree t = {0};
    char query[PROFILE_KEDA_TEXT_MAX + OUTPUT_HPA_NAME_MAX + 64], v[32];

    if (!output_keda_applies(s))
        return err_set(err, -ENOENT, "no request-rate autoscaler recommended: %s",
                       h->note[0] ? h->note : "no recommendation");
    if (!output__name_ok(name))
        return err_set(err, -EINVAL, "'%.64s' is not a Kubernetes object name", name);
    output_keda_query(s, name, query, sizeof(query));
    output__average_value(h->target_average_value, v, sizeof(v));
    if (!yaml_document_initialize(&t.doc, NULL, NULL, NULL, 1, 1))
        return err_set(err, -ENOMEM, "out of memory");
    int root = output__tree_object(&t, "keda.sh/v1alpha1", "ScaledObject", name, h->note);
    int spec = output__tree_mapping(&t);
    output__tree_put(&t, root, "spec", spec);
    int ref = output__tree_mapping(&t);
    output__tree_put(&t, spec, "scaleTargetRef", ref);
    output__tree_put_str(&t, ref, "apiVersion", "apps/v1");
    output__tree_put_str(&t, ref, "kind", "Deployment");
    output__tree_put_str(&t, ref, "name", name);
    output__tree_put_uint(&t, spec, "minReplicaCount", h->min_replicas);
    output__tree_put_uint(&t, spec, "maxReplicaCount", h->max_replicas);
    int triggers = output__tree_sequence(&t);
    output__tree_put(&t, spec, "triggers", triggers);
    int trig = output__tree_item(&t, triggers);
    output__tree_put_str(&t, trig, "type", "prometheus");
    /* AverageValue: the HPA KEDA makes divides the query's total by the replicas. */
    output__tree_put_str(&t, trig, "metricType", "AverageValue");
    int md = output__tree_mapping(&t);
    output__tree_put(&t, trig, "metadata", md);
    output__tree_put(&t, md, "serverAddress",
                     output__tree_scalar(&t, h->keda_server, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    output__tree_put(&t, md, "query",
                     output__tree_scalar(&t, query, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    /* KEDA's trigger metadata is a map of strings: the threshold is quoted. */
    output__tree_put(&t, md, "threshold",
                     output__tree_scalar(&t, v, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    return output__tree_dump(f, &t, err);
}
