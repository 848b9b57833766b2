/* The operator's work: Deployment informers feed the cache, which decides what to queue; worker
 * threads take jobs off the queue and run them; re-sweeps are scheduled per Deployment and
 * decided again when due. Everything shared is guarded by op->mu. */

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/log.h"
#include "kube/client.h"
#include "kube/objects.h"
#include "operator/annotations.h"
#include "operator/operator_int.h"
#include "operator/resweep.h"

static int informer_should_stop(void *ctx)
{
    struct op *op = ctx;
    return atomic_load(&op->informers_stop);
}

/* ---- the queue (callers hold op->mu) -------------------------------------------------------- */

static void enqueue_locked(struct op *op, enum cache_action kind, const char *ns, const char *name,
                           const char *uid)
{
    struct job *j = calloc(1, sizeof(*j));
    if (!j || strlen(ns) >= sizeof(j->ns) || strlen(name) >= sizeof(j->name) ||
        strlen(uid) >= sizeof(j->uid)) {
        const char *why = j ? "name-too-long" : "out-of-memory";
        /* Not queued: let the cache forget the busy mark so a later event can retry. */
        free(j);
        cache_job_done(op->cache, ns, name, NULL);
        log_error("operator.enqueue", "namespace=%s deployment=%s error=%s", ns, name, why);
        return;
    }
    j->kind = kind;
    snprintf(j->ns, sizeof(j->ns), "%s", ns);
    snprintf(j->name, sizeof(j->name), "%s", name);
    snprintf(j->uid, sizeof(j->uid), "%s", uid);
    if (op->qtail)
        op->qtail->next = j;
    else
        op->qhead = j;
    op->qtail = j;
    log_info("operator.queued", "namespace=%s deployment=%s kind=%s", ns, name,
             kind == CACHE_RECOVER ? "recover" : "sweep");
    pthread_cond_signal(&op->cv);
}

void operator__scan_cb(void *ctx, enum cache_action a, const char *ns, const char *name,
                       const char *uid)
{
    enqueue_locked(ctx, a, ns, name, uid);
}

/* Moves the delayed jobs that are due (or all of ns/name when name is set) to the queue. */
void operator__promote_delayed_locked(struct op *op, const char *ns, const char *name)
{
    struct job **pp = &op->delayed;
    int64_t now = clock_mono_ms();

    while (*pp) {
        struct job *j = *pp;
        int match = name ? strcmp(j->ns, ns) == 0 && strcmp(j->name, name) == 0 : now >= j->due_ms;
        if (!match) {
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        j->next = NULL;
        if (op->qtail)
            op->qtail->next = j;
        else
            op->qhead = j;
        op->qtail = j;
        log_info("operator.queued", "namespace=%s deployment=%s kind=sweep attempt=%d", j->ns,
                 j->name, j->attempt);
        pthread_cond_signal(&op->cv);
    }
}

/* Asks every running job (or only the one on ns/name) to stop for reason. */
void operator__stop_jobs_locked(struct op *op, const char *ns, const char *name, enum job_stop why)
{
    /* A request waiting for its retry runs at once on a cancel: it finds the annotation gone
     * and says so in the status. */
    if (ns && why == JOB_STOP_CANCEL)
        operator__promote_delayed_locked(op, ns, name);
    for (int i = 0; i < op->nworkers; i++) {
        struct job *j = op->running[i];
        if (!j || (ns && (strcmp(j->ns, ns) != 0 || strcmp(j->name, name) != 0)))
            continue;
        j->stop_reason = why;
        j->stop = 1;
        log_info("operator.stop-job", "namespace=%s deployment=%s reason=%s", j->ns, j->name,
                 why == JOB_STOP_CANCEL     ? "cancelled"
                 : why == JOB_STOP_SHUTDOWN ? "shutdown"
                                            : "lease-lost");
    }
}

/* Drops every queued and delayed job, releasing their busy marks. A delayed one's status
 * still reads "pending: retrying ...", which the next leader takes up as a sweep to recover. */
void operator__drain_queue_locked(struct op *op)
{
    struct job *lists[2] = {op->qhead, op->delayed}, *next;
    for (int i = 0; i < 2; i++) {
        for (struct job *j = lists[i]; j; j = next) {
            next = j->next;
            cache_job_done(op->cache, j->ns, j->name, NULL);
            free(j);
        }
    }
    op->qhead = op->qtail = op->delayed = NULL;
}

/* ---- re-sweeps ---------------------------------------------------------------------------- */

/* Asks for ns/name to be decided again at due_ms, or sooner if it already waits. An entry that
 * cannot be allocated is logged: the next event of the Deployment schedules it again. */
static void resweep_schedule_locked(struct op *op, const char *ns, const char *name, int64_t due_ms)
{
    struct resweep_item *it;

    if (strlen(ns) >= sizeof(it->ns) || strlen(name) >= sizeof(it->name))
        return;
    for (it = op->resweeps; it; it = it->next) {
        if (strcmp(it->ns, ns) == 0 && strcmp(it->name, name) == 0) {
            if (due_ms < it->due_ms)
                it->due_ms = due_ms;
            return;
        }
    }
    it = calloc(1, sizeof(*it));
    if (!it) {
        log_error("resweep.schedule", "namespace=%s deployment=%s error=out-of-memory", ns, name);
        return;
    }
    snprintf(it->ns, sizeof(it->ns), "%s", ns);
    snprintf(it->name, sizeof(it->name), "%s", name);
    it->due_ms = due_ms;
    it->next = op->resweeps;
    op->resweeps = it;
}

/* Takes the first due entry off the list (owned by the caller), or NULL. */
static struct resweep_item *resweep_take_due_locked(struct op *op, int64_t now)
{
    for (struct resweep_item **pp = &op->resweeps; *pp; pp = &(*pp)->next) {
        if ((*pp)->due_ms <= now) {
            struct resweep_item *it = *pp;
            *pp = it->next;
            it->next = NULL;
            return it;
        }
    }
    return NULL;
}

static void resweep_event(struct op *op, kube_client_t *c, const cJSON *deploy, const char *reason,
                          const char *note)
{
    struct kube_event_spec spec = {0};
    char err[ERR_LEN] = "";

    spec.regarding = deploy;
    spec.type = "Normal";
    spec.reason = reason;
    spec.action = "Resweep";
    spec.note = note;
    spec.reporting_controller = JOB_REPORTER;
    spec.reporting_instance = op->identity;
    if (kube_event_emit(c, &spec, err) != 0)
        log_warn("resweep.event", "reason=%s error=\"%s\"", reason, LOGQ(err));
}

/* Reads ns/name afresh and acts on what resweep_decide says: records the images, starts a
 * sweep by writing a new sizeup.dev/sweep value, or looks again when the interval ends. */
static void resweep_check(struct op *op, kube_client_t *c, const char *ns, const char *name)
{
    struct resweep_decision d;
    cJSON *deploy = NULL;
    char err[ERR_LEN] = "", note[RESWEEP_IMAGES_MAX + 128];
    char *patch = NULL;
    time_t now = time(NULL);
    int64_t retry_ms = 0;

    int rc = kube_get(c, &KUBE_DEPLOYMENTS, ns, name, &deploy, err);
    if (rc == -ENOENT)
        goto out;
    if (rc) {
        retry_ms = 5000;
        log_warn("resweep.read", "namespace=%s deployment=%s error=\"%s\"", ns, name, LOGQ(err));
        goto out;
    }
    if (resweep_decide(deploy, now, &d, err) != 0) {
        log_warn("resweep.annotation", "namespace=%s deployment=%s error=\"%s\"", ns, name,
                 LOGQ(err));
        goto out;
    }
    if (d.action == RESWEEP_LATER) {
        retry_ms = (int64_t)(d.due - now) * 1000;
        log_info("resweep.deferred", "namespace=%s deployment=%s in_s=%lld images=\"%s\"", ns, name,
                 (long long)(d.due - now), LOGQ(d.images));
        goto out;
    }
    if (d.action == RESWEEP_NONE)
        goto out;
    patch = resweep_patch(deploy, &d, now);
    if (!patch) {
        retry_ms = 5000;
        goto out;
    }
    rc = kube_patch(c, &KUBE_DEPLOYMENTS, ns, name, KUBE_PATCH_MERGE, patch, NULL, err);
    if (rc == KUBE_ECONFLICT) {
        retry_ms = 1000; /* changed since it was read: decide again on the fresh object */
        goto out;
    }
    if (rc) {
        retry_ms = 5000;
        log_warn("resweep.patch", "namespace=%s deployment=%s error=\"%s\"", ns, name, LOGQ(err));
        goto out;
    }
    if (d.action == RESWEEP_START) {
        log_info("resweep.start", "namespace=%s deployment=%s images=\"%s\"", ns, name,
                 LOGQ(d.images));
        snprintf(note, sizeof(note), "image changed and rolled out (%s): sweeping again", d.images);
        resweep_event(op, c, deploy, "ResweepStarted", note);
    } else {
        log_info("resweep.baseline", "namespace=%s deployment=%s images=\"%s\"", ns, name,
                 LOGQ(d.images));
    }
out:
    if (retry_ms > 0) {
        pthread_mutex_lock(&op->mu);
        resweep_schedule_locked(op, ns, name, clock_mono_ms() + retry_ms);
        pthread_mutex_unlock(&op->mu);
    }
    free(patch);
    cJSON_Delete(deploy);
}

/* Decides every due entry, while this replica leads. */
void operator__resweep_run_due(struct op *op, kube_client_t *c)
{
    for (;;) {
        pthread_mutex_lock(&op->mu);
        struct resweep_item *it =
            op->leader && !op->stopping ? resweep_take_due_locked(op, clock_mono_ms()) : NULL;
        pthread_mutex_unlock(&op->mu);
        if (!it)
            return;
        resweep_check(op, c, it->ns, it->name);
        free(it);
    }
}

/* ---- informers ---------------------------------------------------------------------------- */

static void observe(struct informer *inf, const cJSON *obj)
{
    struct op *op = inf->op;
    struct kube_meta meta;
    int rc = 0;

    if (!obj || kube_meta_read(obj, &meta) != 0)
        return;
    struct cache_obs o = {meta.ns,
                          meta.name,
                          meta.uid,
                          kube_annotation(obj, ANNOT_SWEEP),
                          kube_annotation(obj, ANNOT_LAST_SWEEP),
                          kube_annotation(obj, ANNOT_STATUS)};
    pthread_mutex_lock(&op->mu);
    const char *rs = kube_annotation(obj, ANNOT_RESWEEP);
    if (rs && strcmp(rs, "off") != 0)
        resweep_schedule_locked(op, meta.ns, meta.name, clock_mono_ms());
    enum cache_action a = cache_observe(op->cache, &o, op->leader && !op->stopping, &rc);
    if (a == CACHE_START || a == CACHE_RECOVER)
        enqueue_locked(op, a, meta.ns, meta.name, meta.uid);
    else if (a == CACHE_CANCEL)
        operator__stop_jobs_locked(op, meta.ns, meta.name, JOB_STOP_CANCEL);
    atomic_store(&op->m.deployments_tracked, cache_count(op->cache));
    pthread_mutex_unlock(&op->mu);
    if (rc)
        log_error("operator.cache", "namespace=%s deployment=%s error=out-of-memory", meta.ns,
                  meta.name);
}

static int on_event(void *ctx, const struct kube_event *ev)
{
    struct informer *inf = ctx;
    struct op *op = inf->op;
    struct kube_meta meta;

    switch (ev->type) {
    case KUBE_EV_LIST_BEGIN:
        pthread_mutex_lock(&op->mu);
        cache_list_begin(op->cache, inf->ns);
        pthread_mutex_unlock(&op->mu);
        break;
    case KUBE_EV_LIST_END:
        pthread_mutex_lock(&op->mu);
        cache_list_end(op->cache, inf->ns);
        atomic_store(&op->m.deployments_tracked, cache_count(op->cache));
        if (!inf->synced) {
            inf->synced = 1;
            if (++op->nsynced == op->ninf) {
                atomic_store(&op->m.ready, 1);
                log_info("operator.synced", "tracked=%zu", cache_count(op->cache));
            }
        }
        pthread_mutex_unlock(&op->mu);
        /* The list's pages were parsed and dropped: hand the memory back to the system so an
         * idle operator stays small. */
        malloc_trim(0);
        break;
    case KUBE_EV_RESTART:
        atomic_fetch_add(&op->m.watch_restarts, 1);
        break;
    case KUBE_EV_ADDED:
    case KUBE_EV_MODIFIED:
        observe(inf, ev->object);
        break;
    case KUBE_EV_DELETED:
        if (ev->object && kube_meta_read(ev->object, &meta) == 0) {
            pthread_mutex_lock(&op->mu);
            if (cache_delete(op->cache, meta.ns, meta.name) == CACHE_CANCEL)
                operator__stop_jobs_locked(op, meta.ns, meta.name, JOB_STOP_CANCEL);
            atomic_store(&op->m.deployments_tracked, cache_count(op->cache));
            pthread_mutex_unlock(&op->mu);
        }
        break;
    default:
        break;
    }
    return 0;
}

static void *informer_thread(void *arg)
{
    struct informer *inf = arg;
    struct op *op = inf->op;
    char err[ERR_LEN] = "";
    struct kube_informer_opts io = {0};

    io.res = &KUBE_DEPLOYMENTS;
    io.ns = inf->ns;
    io.list_limit = op->o->list_limit > 0 ? op->o->list_limit : 100;
    io.on_event = on_event;
    io.ctx = inf;
    int rc = kube_informer_run(inf->client, &io, err);
    if (rc != -ECANCELED)
        log_error("operator.informer", "namespace=%s rc=%d error=\"%s\"", inf->ns ? inf->ns : "*",
                  rc, LOGQ(err));
    atomic_store(&inf->alive, 0);
    return NULL;
}

/* ---- workers ------------------------------------------------------------------------------ */

struct worker_arg {
    struct op *op;
    int slot;
};

static void *worker_thread(void *arg)
{
    struct worker_arg *wa = arg;
    struct op *op = wa->op;
    int slot = wa->slot;
    struct job_env env = {op->cfg, &op->m, op->identity, &op->hard_stop, op->feed};
    char err[ERR_LEN];

    free(wa);
    for (;;) {
        pthread_mutex_lock(&op->mu);
        while (!op->qhead && !op->stopping)
            pthread_cond_wait(&op->cv, &op->mu);
        if (op->stopping) {
            pthread_mutex_unlock(&op->mu);
            break;
        }
        struct job *j = op->qhead;
        op->qhead = j->next;
        if (!op->qhead)
            op->qtail = NULL;
        j->next = NULL;
        op->running[slot] = j;
        pthread_mutex_unlock(&op->mu);

        atomic_fetch_add(&op->m.sweeps_in_progress, 1);
        err[0] = '\0';
        int rc = job_run(&env, j, err);
        atomic_fetch_sub(&op->m.sweeps_in_progress, 1);
        if (rc)
            log_error("operator.job", "namespace=%s deployment=%s rc=%d error=\"%s\"", j->ns,
                      j->name, rc, LOGQ(err));

        pthread_mutex_lock(&op->mu);
        op->running[slot] = NULL;
        if (j->retry_in_s > 0 && !j->stop && op->leader && !op->stopping) {
            /* Requeued with backoff: the Deployment stays busy, so no event starts it twice;
             * a new sweep value seen meanwhile is taken by the next run, which reads the
             * annotations afresh. */
            j->kind = CACHE_START;
            j->attempt = (j->attempt > 0 ? j->attempt : 1) + 1;
            j->due_ms = clock_mono_ms() + (int64_t)j->retry_in_s * 1000;
            j->retry_in_s = 0;
            j->stop = 0;
            j->next = op->delayed;
            op->delayed = j;
            pthread_mutex_unlock(&op->mu);
            continue;
        }
        enum cache_action next = cache_job_done(op->cache, j->ns, j->name, j->handled);
        if (next == CACHE_START && op->leader && !op->stopping)
            enqueue_locked(op, CACHE_START, j->ns, j->name, j->uid);
        else if (next == CACHE_START)
            cache_job_done(op->cache, j->ns, j->name, NULL);
        pthread_mutex_unlock(&op->mu);
        free(j);
    }
    return NULL;
}

int operator__start_informers(struct op *op, char *err)
{
    size_t n = op->o->nnamespaces ? op->o->nnamespaces : 1;
    int rc;

    op->inf = calloc(n, sizeof(*op->inf));
    if (!op->inf)
        return err_set(err, -ENOMEM, "out of memory");
    op->ninf = n;
    for (size_t i = 0; i < n; i++) {
        struct informer *inf = &op->inf[i];
        inf->op = op;
        inf->ns = op->o->nnamespaces ? op->o->namespaces[i] : NULL;
        atomic_init(&inf->alive, 1);
        /* Watches are long requests: the client's request timeout covers the other calls. */
        rc = operator__new_client(op, informer_should_stop, 0, 0, &inf->client, err);
        if (rc)
            return rc;
        rc = pthread_create(&inf->thread, NULL, informer_thread, inf);
        if (rc)
            return err_set(err, -rc, "cannot start the informer thread");
        inf->started = 1;
    }
    return 0;
}

int operator__start_workers(struct op *op, char *err)
{
    op->workers = calloc((size_t)op->nworkers, sizeof(*op->workers));
    op->running = calloc((size_t)op->nworkers, sizeof(*op->running));
    if (!op->workers || !op->running) {
        op->nworkers = 0;
        return err_set(err, -ENOMEM, "out of memory");
    }
    for (int i = 0; i < op->nworkers; i++) {
        struct worker_arg *wa = malloc(sizeof(*wa));
        if (!wa)
            return err_set(err, -ENOMEM, "out of memory");
        wa->op = op;
        wa->slot = i;
        int rc = pthread_create(&op->workers[i], NULL, worker_thread, wa);
        if (rc) {
            free(wa);
            op->nworkers = i;
            return err_set(err, -rc, "cannot start worker threads");
        }
    }
    return 0;
}

/* Stops sweeps (they restore and persist), waits for them within the budget, then aborts what
 * is left of their API calls. */
void operator__stop_workers(struct op *op, int64_t deadline_ms)
{
    pthread_mutex_lock(&op->mu);
    op->stopping = 1;
    operator__drain_queue_locked(op);
    operator__stop_jobs_locked(op, NULL, NULL, JOB_STOP_SHUTDOWN);
    pthread_cond_broadcast(&op->cv);
    pthread_mutex_unlock(&op->mu);

    for (int i = 0; i < op->nworkers; i++) {
        for (;;) {
            int64_t left = deadline_ms - clock_mono_ms();
            if (left <= 0) {
                if (!op->hard_stop)
                    log_warn("operator.shutdown", "event=deadline action=abort-api-calls");
                op->hard_stop = 1;
                pthread_join(op->workers[i], NULL);
                break;
            }
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            if (pthread_timedjoin_np(op->workers[i], NULL, &ts) == 0)
                break;
        }
    }
}
