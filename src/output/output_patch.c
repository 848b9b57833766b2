/* deployment-patch.yaml, the GitOps form of the recommendation, and previous-results.json.
 *
 * The patch is written with fprintf, not libyaml: every scalar in it is either a number or a
 * name checked below to hold only characters a Kubernetes name or env var name may hold, and
 * every string is double-quoted, so a Deployment named "yes" or "null" stays a string. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/quantity.h"
#include "output/output.h"
#include "output/output_int.h"

int output_deployment_patch(FILE *f, const struct output_doc *d, char *err)
{
    const struct advice *a = d->advice;
    const struct output_workload *w = &d->workload;
    const char *container = output_workload_container(w), *env = output_workload_env(w);
    char lm[QTY_LEN], rm[QTY_LEN];
    int rc;

    if (a->recommended < 0)
        return err_set(err, -EINVAL, "no recommendation: no patch to write");
    if (!w->deployment)
        return err_set(err, -EINVAL, "no Deployment named: no patch to write");
    rc = output_workload_check(w, err);
    if (rc)
        return rc;
    qty_format_memory(a->limit_memory, lm);
    qty_format_memory(a->request_memory, rm);

    fprintf(f,
            "# The recommendation (%s) as a strategic-merge patch of Deployment %s:\n"
            "#   kubectl patch deployment %s --type strategic --patch-file "
            "deployment-patch.yaml\n"
            "# or, with kustomize, an entry `- path: deployment-patch.yaml` under `patches:`.\n",
            d->rows[a->recommended].variant.spec, w->deployment, w->deployment);
    fprintf(f, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"%s\"\nspec:\n",
            w->deployment);
    /* Replicas only for a target: without one the sweep sized one pod, and the Deployment's
     * own replica count (or its autoscaler's) is left alone. */
    if (a->by_target && a->replicas > 0)
        fprintf(f, "  replicas: %u\n", a->replicas);
    fprintf(f,
            "  template:\n    spec:\n      containers:\n        - name: \"%s\"\n"
            "          env:\n            - name: \"%s\"\n              value: \"%u\"\n"
            "          resources:\n"
            "            limits:\n              cpu: \"%lldm\"\n              memory: \"%s\"\n"
            "            requests:\n              cpu: \"%lldm\"\n              memory: \"%s\"\n",
            container, env, a->workers, (long long)a->limit_cpu_m, lm, (long long)a->request_cpu_m,
            rm);
    output_patch_spread(f, d);
    return ferror(f) ? err_set(err, -EIO, "write error") : 0;
}

int output_previous_results(FILE *f, const struct output_doc *d, char *err)
{
    if (!d->previous_results)
        return err_set(err, -EINVAL, "no previous results");
    fputs(d->previous_results, f);
    return ferror(f) ? err_set(err, -EIO, "write error") : 0;
}
