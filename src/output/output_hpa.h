#ifndef SIZEUP_OUTPUT_OUTPUT_HPA_H
#define SIZEUP_OUTPUT_OUTPUT_HPA_H

/* hpa.yaml: the sizing answer's autoscaling/v2 HorizontalPodAutoscaler for the app's
 * Deployment, written only when the sizing recommends one (a target was given and CPU tracks
 * load). The derivation travels with the object as an annotation, so whoever applies it can read
 * where each number came from. */

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

#endif
