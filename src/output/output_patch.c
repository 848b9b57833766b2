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

#define NAME_MAX_LEN 253

/* A DNS-1123 subdomain (a Deployment name) or label (a container name): lower-case letters,
 * digits, '-' and (subdomain only) '.'. */
static int valid_name(const char *s, int dots)
{
    size_t n = strlen(s);
    if (n == 0 || n > (dots ? NAME_MAX_LEN : 63))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.')))
            return 0;
    }
    return 1;
}

int output_env_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 256 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

static const char *container_of(const struct output_workload *w)
{
    return w->container && *w->container ? w->container : w->deployment;
}

static const char *env_of(const struct output_workload *w)
{
    return w->workers_env && *w->workers_env ? w->workers_env : "WORKERS";
}

int output_workload_check(const struct output_workload *w, char *err)
{
    if (w->selector && output_selector_check(w->selector, err) != 0)
        return -EINVAL;
    if (!w->deployment)
        return 0;
    if (!valid_name(w->deployment, 1))
        return err_set(err, -EINVAL,
                       "'%.64s' is not a Deployment name (lower-case letters, digits, '-', '.')",
                       w->deployment);
    if (!valid_name(container_of(w), 0))
        return err_set(err, -EINVAL,
                       "'%.64s' is not a container name (lower-case letters, digits, '-')",
                       container_of(w));
    if (!output_env_name_valid(env_of(w)))
        return err_set(err, -EINVAL, "'%.64s' is not an env var name", env_of(w));
    return 0;
}

int output_deployment_patch(FILE *f, const struct output_doc *d, char *err)
{
    const struct advice *a = d->advice;
    const struct output_workload *w = &d->workload;
    const char *container = container_of(w), *env = env_of(w);
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
