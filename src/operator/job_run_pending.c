/* PENDING: the Kubernetes platform (src/kube/platform.c, behind the sweep runner's platform
 * seam) and the sweep runner (src/sweep/runner.c) are not in this tree yet. Until they are,
 * a valid request is answered with a clear failure instead of being swept; everything before
 * (annotations, profile, variants, container, port) is checked for real. job_run.c replaces
 * this file when they land. */

#include <errno.h>

#include "core/log.h"
#include "operator/job_internal.h"

#define PENDING_REASON "this build has no Kubernetes platform for the sweep runner yet"

int job_run_sweep(struct sweep_job *sj, char *err)
{
    char status[ERR_LEN + 16];

    snprintf(status, sizeof(status), "failed: %s", PENDING_REASON);
    job_event(sj->x, "Warning", "SweepFailed", "%s", status);
    metrics_sweep_result(sj->x->env->m, METRICS_SWEEP_FAILED);
    return job_set_status(sj->x, status, NULL, err);
}

int job_restore_leftovers(struct sweep_job *sj, char *err)
{
    (void)sj;
    return err_set(err, -ENOSYS, "%s", PENDING_REASON);
}
