/* pdb.yaml, the policy/v1 PodDisruptionBudget of the availability plan, and the zone spread of
 * deployment-patch.yaml (advise/availability.h). Both select the app's pods by the Deployment's
 * spec.selector.matchLabels: the operator reads them, a local sweep takes --selector KEY=VALUE.
 *
 * Written with fprintf like the patch: every name and label is checked below to hold only the
 * characters Kubernetes allows, and every string is double-quoted. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/jb.h"
#include "core/quantity.h"
#include "output/output.h"
#include "output/output_int.h"

int output_pdb_doc(FILE *f, const struct output_doc *d, char *err)
{
    const struct availability_plan *av = &d->advice->availability;
    const char *name = d->workload.deployment ? d->workload.deployment : OUTPUT_PDB_DEFAULT_NAME;
    const char *sel = d->workload.selector;
    int rc;

    if (!av->applied)
        return err_set(err, -ENOENT, "no availability plan: no PodDisruptionBudget");
    rc = output_workload_check(&d->workload, err);
    if (rc)
        return rc;
    fprintf(f,
            "# The PodDisruptionBudget of the availability plan: a drain keeps %u pods up, the "
            "target's.\n#   kubectl apply -f pdb.yaml\n",
            av->min_available);
    if (!sel)
        fprintf(f, "# Edit matchLabels to the Deployment's spec.selector.matchLabels (sizeup sweep "
                   "--selector KEY=VALUE writes them).\n");
    fprintf(f,
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: \"%s\"\n"
            "  annotations:\n    sizeup.dev/derivation: \"",
            name);
    /* The sentence holds digits, letters, spaces and "()/=>,;+": nothing to escape but a
     * possible quote or backslash, which it never has; they are dropped to be safe. */
    for (const char *p = av->text; *p; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= ' ')
            fputc(*p, f);
    fprintf(f, "\"\nspec:\n  minAvailable: %u\n  selector:\n    matchLabels:\n", av->min_available);
    if (sel)
        output_match_labels(f, sel, 6);
    else
        fprintf(f, "      \"app\": \"%s\"\n", name);
    return ferror(f) ? err_set(err, -EIO, "write error") : 0;
}

void output_patch_spread(FILE *f, const struct output_doc *d)
{
    const struct availability_plan *av = &d->advice->availability;

    if (!av->applied || av->zones < 2)
        return;
    if (!d->workload.selector) {
        fprintf(f,
                "      # topologySpreadConstraints over %u zones need the pods' labels: "
                "sizeup sweep --selector KEY=VALUE\n",
                av->zones);
        return;
    }
    fprintf(f,
            "      # %u replicas over %u zones: at most ceil(N / %u) pods in one zone.\n"
            "      topologySpreadConstraints:\n"
            "        - maxSkew: 1\n"
            "          topologyKey: \"topology.kubernetes.io/zone\"\n"
            "          whenUnsatisfiable: \"DoNotSchedule\"\n"
            "          labelSelector:\n"
            "            matchLabels:\n",
            av->replicas, av->zones, av->zones);
    output_match_labels(f, d->workload.selector, 14);
}

void output_availability_json(struct jb *b, cJSON *rec, const struct advice *a)
{
    const struct availability_plan *av = &a->availability;

    if (!av->applied) {
        jb_null(b, rec, "availability");
        return;
    }
    cJSON *o = jb_obj(b, rec, "availability");
    jb_num(b, o, "zones", av->zones);
    jb_num(b, o, "drain", av->drain);
    jb_num(b, o, "needed", av->needed);
    jb_num(b, o, "zone_replicas", av->zone_replicas);
    jb_num(b, o, "drain_replicas", av->drain_replicas);
    jb_num(b, o, "replicas", av->replicas);
    jb_num(b, o, "min_available", av->min_available);
    jb_str(b, o, "text", av->text);
}

void output_profile_nodes_json(struct jb *b, cJSON *prof, const struct profile *p)
{
    if (!p->nnodes)
        return;
    cJSON *arr = jb_arr(b, prof, "nodes");
    for (size_t i = 0; arr && i < p->nnodes; i++) {
        const struct profile_node_type *n = &p->nodes[i];
        char q[QTY_LEN];
        cJSON *o = jb_obj(b, arr, NULL);
        jb_str(b, o, "name", n->name);
        jb_str(b, o, "cpu", qty_format_cpu(n->cpu_m, q));
        jb_str(b, o, "memory", qty_format_memory(n->memory, q));
        jb_num(b, o, "price", n->price);
        cJSON *r = jb_obj(b, o, "reserved");
        jb_str(b, r, "cpu", qty_format_cpu(n->reserved_cpu_m, q));
        jb_str(b, r, "memory", qty_format_memory(n->reserved_memory, q));
    }
}

void output_profile_availability_json(struct jb *b, cJSON *prof, const struct profile *p)
{
    if (!p->availability.given)
        return;
    cJSON *o = jb_obj(b, prof, "availability");
    jb_num(b, o, "zones", p->availability.zones);
    jb_num(b, o, "drain", p->availability.drain);
}
