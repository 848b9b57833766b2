#ifndef SIZEUP_OUTPUT_OUTPUT_HPA_H
#define SIZEUP_OUTPUT_OUTPUT_HPA_H

/* hpa.yaml: the sizing answer's autoscaling/v2 HorizontalPodAutoscaler for the app's
 * Deployment, written only when the sizing recommends one (a target was given and some count
 * holds it with room to scale): on CPU utilization when CPU tracks load, else on the request
 * rate (a Pods metric at the planned req/s per pod). The derivation travels with the object as an
 * annotation, so whoever applies it can read where each number came from. */

#include <stdio.h>

#include "core/err.h"
#include "output/output.h"
#include "advise/sizing.h"

/* The annotation on the HPA that carries the sizing's sentence about it. */
#define OUTPUT_HPA_NOTE_ANNOTATION "sizeup.dev/derivation"
/* A Kubernetes object name (DNS-1123 subdomain) is at most this long. */
#define OUTPUT_HPA_NAME_MAX 253

/* The scaleTargetRef of a document that names no Deployment (a local sweep without
 * --deployment): edit it to your Deployment's name before applying. */
#define OUTPUT_HPA_DEFAULT_NAME "app"

/* hpa.yaml for the one output path: output_hpa_yaml with d->advice->sizing and
 * d->workload.deployment (OUTPUT_HPA_DEFAULT_NAME when NULL). */
SIZEUP_MUST_USE int output_hpa_doc(FILE *f, const struct output_doc *d, char *err);

/* Writes the HPA for Deployment `name` (borrowed; a DNS-1123 subdomain, the HPA takes the same
 * name) from s->hpa to f. Returns 0, -ENOENT when s recommends no HPA (err says why), -EINVAL
 * for a bad name, -ENOMEM or -EIO. */
SIZEUP_MUST_USE int output_hpa_yaml(FILE *f, const struct sizing *s, const char *name, char *err);

/* ---- the document tree hpa.yaml and keda.yaml are built as (output_hpa.c) ---------------- */

#include <stdbool.h>
#include <yaml.h>

struct output_tree {
    yaml_document_t doc; /* initialized by the caller */
    bool failed;         /* an allocation failed: every later call does nothing */
};
int output__tree_scalar(struct output_tree *t, const char *v, yaml_scalar_style_t style);
int output__tree_mapping(struct output_tree *t);
int output__tree_sequence(struct output_tree *t);
/* A new mapping appended to the sequence seq. */
int output__tree_item(struct output_tree *t, int seq);
void output__tree_put(struct output_tree *t, int map, const char *key, int value);
void output__tree_put_str(struct output_tree *t, int map, const char *key, const char *v);
void output__tree_put_uint(struct output_tree *t, int map, const char *key, unsigned v);
/* The root mapping { apiVersion, kind, metadata: { name, annotations: { derivation: note } } }. */
int output__tree_object(struct output_tree *t, const char *api, const char *kind, const char *name,
                        const char *note);
/* Writes t's document to f and frees it (also when building it failed: -ENOMEM). */
SIZEUP_MUST_USE int output__tree_dump(FILE *f, struct output_tree *t, char *err);
/* A per-pod average (req/s) as a Kubernetes quantity: to 0.001, no trailing zeros. */
void output__average_value(double v, char *buf /* OUT */, size_t len);
/* A DNS-1123 subdomain of at most OUTPUT_HPA_NAME_MAX characters. */
bool output__name_ok(const char *name);

#endif
