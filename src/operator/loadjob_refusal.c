/* Why a generator Job cannot run its pods, in the API server's own words (loadjob.h): the Job's
 * conditions first, then the Job controller's FailedCreate Events. Apart from the run
 * (loadjob.c) because it reads what other controllers wrote, not what the workers report. */

#include "operator/loadjob.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "kube/objects.h"

static const struct kube_resource JOBS = {"batch", "v1", "jobs", 1};
/* The core view of Events: its field selectors (involvedObject.uid, reason) are the ones every
 * API server serves for the Job controller's Warnings. */
static const struct kube_resource CORE_EVENTS = {"", "v1", "events", 1};

/* The Job's FailureTarget or Failed condition that holds, as "<reason>: <message>". The Job is
 * read through list with a name field selector: the generators' Role grants list, not get. */
static int job_condition(kube_client_t *c, const char *ns, const char *job, const char *uid,
                         char *why, char *err)
{
    char sel[300];
    struct kube_list_opts lo = {0};
    cJSON *list = NULL, *item, *cond;

    snprintf(sel, sizeof(sel), "metadata.name=%s", job);
    lo.field_selector = sel;
    int rc = kube_list(c, &JOBS, ns, &lo, &list, err);
    if (rc)
        return err_wrap(err, rc, "reading the generator Job");
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *u = kube_path_string(item, "metadata.uid");
        if (!u || strcmp(u, uid) != 0)
            continue;
        cJSON_ArrayForEach(cond, kube_path_get(item, "status.conditions"))
        {
            const char *type = kube_path_string(cond, "type");
            const char *status = kube_path_string(cond, "status");
            const char *reason = kube_path_string(cond, "reason");
            const char *msg = kube_path_string(cond, "message");
            if (!type || !status || strcmp(status, "True") != 0 ||
                (strcmp(type, "Failed") != 0 && strcmp(type, "FailureTarget") != 0))
                continue;
            snprintf(why, ERR_LEN, "was ended by the Job controller (%s: %s)",
                     reason ? reason : type, msg ? msg : "no message");
            if (strcmp(type, "Failed") == 0)
                break; /* the final word; FailureTarget precedes it with the same reason */
        }
    }
    cJSON_Delete(list);
    return 0;
}

/* The latest Warning FailedCreate Event on the Job: "Error creating: <the API server's
 * message>". -EPERM when the operator may not list Events. */
static int failed_create(kube_client_t *c, const char *ns, const char *uid, char *why, char *err)
{
    char sel[160], last[40] = "";
    struct kube_list_opts lo = {0};
    cJSON *list = NULL, *ev;

    snprintf(sel, sizeof(sel), "involvedObject.uid=%s,reason=FailedCreate", uid);
    lo.field_selector = sel;
    int rc = kube_list(c, &CORE_EVENTS, ns, &lo, &list, err);
    if (rc)
        return rc;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items"))
    {
        const char *m = kube_path_string(ev, "message");
        const char *t = kube_path_string(ev, "lastTimestamp");
        if (!t)
            t = kube_path_string(ev, "eventTime");
        /* RFC 3339 times of one server compare as strings. */
        if (m && (!last[0] || (t && strcmp(t, last) >= 0))) {
            snprintf(why, ERR_LEN, "was refused by the API server (%s)", m);
            snprintf(last, sizeof(last), "%s", t ? t : "");
        }
    }
    cJSON_Delete(list);
    return 0;
}

int loadjob_refusal(kube_client_t *c, const char *ns, const char *job, const char *uid,
                    bool *no_events, char *why, char *err)
{
    why[0] = '\0';
    int rc = job_condition(c, ns, job, uid, why, err);
    if (rc || why[0] || *no_events)
        return rc;
    rc = failed_create(c, ns, uid, why, err);
    if (rc == -EPERM) {
        /* A Role without the Events rule (an older chart): the Job's conditions and the
         * deadline still end the run, only later and in fewer words. */
        log_warn("loadjob.events", "namespace=%s job=%s error=\"%s\" events=unreadable", ns, job,
                 err);
        *no_events = true;
        return 0;
    }
    return rc ? err_wrap(err, rc, "reading the generator Job's events") : 0;
}
