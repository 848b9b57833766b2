#ifndef SIZEUP_OUTPUT_OUTPUT_KEDA_H
#define SIZEUP_OUTPUT_OUTPUT_KEDA_H

/* keda.yaml: a KEDA ScaledObject (keda.sh/v1alpha1) for the app's Deployment with a prometheus
 * trigger at the planned req/s per pod, written beside hpa.yaml when the sizing's HPA is on the
 * request rate (CPU does not track load). Apply it or hpa.yaml, never both: KEDA makes its own
 * HPA for the Deployment. The server and query come from the profile's autoscaling.keda
 * (defaults in profile/profile.h). */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "advise/sizing.h"
#include "core/err.h"
#include "output/output.h"

/* s recommends a request-rate autoscaler, so keda.yaml is written. */
bool output_keda_applies(const struct sizing *s);

/* The trigger's query: the profile's, else PROFILE_AUTOSCALING_QUERY_DEFAULT for Deployment
 * `name`. */
void output_keda_query(const struct sizing *s, const char *name, char *buf /* OUT */, size_t len);

/* keda.yaml for the one output path. Returns 0, -ENOENT when there is no request-rate
 * autoscaler (err says why), -EINVAL for a bad name, -ENOMEM or -EIO. */
SIZEUP_MUST_USE int output_keda_doc(FILE *f, const struct output_doc *d, char *err);

#endif
