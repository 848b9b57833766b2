#ifndef SIZEUP_OPERATOR_PROGRESS_AUTH_H
#define SIZEUP_OPERATOR_PROGRESS_AUTH_H

/* Who may read the progress feed off loopback, decided as kube-rbac-proxy decides it: the
 * bearer token goes to a TokenReview (who is this?), the identity to a SubjectAccessReview (may
 * it `get` the non-resource URL /progress?). Answers are cached for a short while by the
 * token's SHA-256, never by the token itself; the token is never logged or kept. The reviews
 * run on the admin server's thread with a short timeout, so a slow API server delays a page,
 * never a sweep. */

#include "core/err.h"
#include "kube/client.h"

#define PROGRESS_AUTH_TIMEOUT_MS 3000
#define PROGRESS_AUTH_ALLOW_S    60 /* an accepted token is trusted this long */
#define PROGRESS_AUTH_DENY_S     10 /* a refused one is refused this long without asking */

typedef struct progress_auth progress_auth_t;

/* A checker using cfg (borrowed, must outlive it). Returns 0 or -ENOMEM. */
int progress_auth_new(kube_config_t *cfg, progress_auth_t **out /* OUT */, char *err);
void progress_auth_free(progress_auth_t *a);

/* A progress_auth_fn (operator/progress.h): ud is the progress_auth_t. Returns 0 (allowed),
 * -EPERM (the token is not authenticated), -EACCES (authenticated, not authorised: err names
 * the user) or another negative errno (the API server could not say). */
int progress_auth_check(void *ud, const char *token, char *err);

#endif
