/* The operator's main loop: configuration, the admin and progress server, leader election
 * through a Lease, re-sweeps due, and the shutdown within its budget. The informers, the work
 * queue and the workers are in operator_queue.c; the API client both make, in operator_client.c
 * (below both). */

#include "operator/operator.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "kube/client.h"
#include "kube/objects.h"
#include "operator/loadjob.h"
#include "operator/operator_int.h"

#define TICK_MS           200
#define LEASE_RETRY_S     2
#define WORKER_STOP_GRACE 8 /* seconds of the shutdown budget left to sweeps to restore */

static int hard_should_stop(void *ctx)
{
    struct op *op = ctx;
    return op->hard_stop != 0;
}

/* The admin server with the progress page: loopback only, or (progress_public) anywhere for
 * the readers a TokenReview and a SubjectAccessReview accept. */
static int start_admin(struct op *op, const char *addr, char *err)
{
    struct progress_srv_opts po = {0};
    int rc = progress_feed_new(&op->feed);
    if (rc)
        return err_set(err, rc, "out of memory");
    po.feed = op->feed;
    po.loopback_only = true;
    if (op->o->progress_public) {
        if ((rc = progress_auth_new(op->cfg, &op->auth, err)))
            return rc;
        po.public_ = true;
        po.auth = progress_auth_check;
        po.auth_ud = op->auth;
    }
    if ((rc = progress_srv_new(&po, &op->progress, err)))
        return rc;
    log_info("progress.serve", "public=%d", op->o->progress_public ? 1 : 0);
    return admin_start(addr, &op->m, op->progress, &op->admin, err);
}

/* Deletes the generator Jobs an earlier operator left in this namespace (killed mid-run: its
 * sweeps could not delete theirs). Runs before this operator starts sweeps of its own, so none of
 * its own Jobs can be taken for a leftover. Only where generators are configured (the chart's
 * env): without them the operator holds no permission on Jobs. */
static void delete_generator_leftovers(kube_client_t *c)
{
    struct loadjob_config gen = {0};
    char err[ERR_LEN] = "";
    unsigned n = 0;

    if (loadjob_config_from_env(&gen, err) != 0)
        return;
    if (loadjob_delete_leftovers(c, gen.ns, &n, err) != 0)
        log_warn("operator.generators", "namespace=%s event=leftovers-not-deleted error=\"%s\"",
                 gen.ns, LOGQ(err));
    else if (n)
        log_info("operator.generators", "namespace=%s event=leftovers-deleted jobs=%u", gen.ns, n);
}

/* ---- leadership --------------------------------------------------------------------------- */

static void set_leader(struct op *op, int leader)
{
    pthread_mutex_lock(&op->mu);
    if (leader == op->leader) {
        pthread_mutex_unlock(&op->mu);
        return;
    }
    op->leader = leader;
    atomic_store(&op->m.leader, leader);
    if (leader) {
        log_info("operator.leader", "identity=%s state=acquired", op->identity);
        cache_scan(op->cache, operator__scan_cb, op);
    } else {
        log_warn("operator.leader", "identity=%s state=lost", op->identity);
        operator__drain_queue_locked(op);
        operator__stop_jobs_locked(op, NULL, NULL, JOB_STOP_LEASE);
    }
    pthread_mutex_unlock(&op->mu);
}

static void identity_init(struct op *op)
{
    const char *pod = getenv("POD_NAME");
    char host[200] = "sizeup";

    if (op->o->identity && *op->o->identity) {
        snprintf(op->identity, sizeof(op->identity), "%s", op->o->identity);
        return;
    }
    if (pod && *pod) {
        snprintf(op->identity, sizeof(op->identity), "%s", pod);
        return;
    }
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    snprintf(op->identity, sizeof(op->identity), "%s-%ld", host, (long)getpid());
}

/* ---- the main loop ------------------------------------------------------------------------ */

/* What operator_run keeps beside the op: the main loop's clients and the lease's timing. */
struct run {
    bool mu_ready;                 /* op->mu and op->cv initialized */
    kube_client_t *lease_client;   /* leader election only */
    kube_client_t *resweep_client; /* the re-sweeps due */
    int64_t next_lease;            /* monotonic ms of the next lease attempt */
    int64_t last_renew;            /* monotonic ms of the last renewal that made us leader */
    int dur;                       /* the lease's duration, s */
    int renew;                     /* how often a leader renews it, s */
};

/* The op from o: identity, kubeconfig, cache, lock, the Lease's name, the admin server; leader
 * at once without leader election. */
static int setup(struct op *op, const struct operator_opts *o, struct run *r, char *err)
{
    struct kube_config_opts kco = {0};
    int rc;

    memset(op, 0, sizeof(*op));
    op->o = o;
    op->nworkers = o->max_concurrent > 0 ? o->max_concurrent : 1;
    atomic_init(&op->informers_stop, 0);
    metrics_init(&op->m);
    /* Few malloc arenas: every thread's arena would otherwise keep its own freed pages. */
    mallopt(M_ARENA_MAX, 2);
    identity_init(op);

    kco.kubeconfig = o->kubeconfig;
    rc = kube_config_load(&kco, &op->cfg, err);
    if (rc)
        return rc;
    /* An exec credential plugin runs unattended here, even when started from a terminal. */
    kube_config_exec_no_terminal(op->cfg);
    rc = cache_new(&op->cache);
    if (rc)
        return err_set(err, rc, "out of memory");
    pthread_mutex_init(&op->mu, NULL);
    pthread_cond_init(&op->cv, NULL);
    r->mu_ready = true;

    op->lease_name = o->lease_name && *o->lease_name ? o->lease_name : OPERATOR_DEFAULT_LEASE;
    snprintf(op->lease_ns, sizeof(op->lease_ns), "%s",
             o->lease_namespace && *o->lease_namespace ? o->lease_namespace
                                                       : kube_config_namespace(op->cfg));
    const char *addr = o->admin_addr ? o->admin_addr : ADMIN_DEFAULT_ADDR;
    if (*addr && strcmp(addr, "off") != 0) {
        rc = start_admin(op, addr, err);
        if (rc)
            return rc;
    }
    metrics_heartbeat(&op->m);
    if (!o->leader_elect) {
        op->leader = 1;
        atomic_store(&op->m.leader, 1);
    }
    r->dur = o->lease_duration_s > 0 ? o->lease_duration_s : OPERATOR_LEASE_DURATION_S;
    r->renew = r->dur / 3 > 0 ? r->dur / 3 : 1;
    log_info("operator.start",
             "identity=%s server=%s namespaces=%zu max_concurrent=%d leader_elect=%d", op->identity,
             kube_config_server(op->cfg), o->nnamespaces, op->nworkers, o->leader_elect ? 1 : 0);
    return 0;
}

/* The workers, the informers and the main loop's clients; a leader without election first
 * deletes the generator Jobs an earlier operator left. */
static int start(struct op *op, struct run *r, char *err)
{
    const struct operator_opts *o = op->o;
    int rc;

    if (!o->leader_elect) {
        kube_client_t *c = NULL;
        if (operator__new_client(op, hard_should_stop, 3000, 2, &c, err) == 0) {
            delete_generator_leftovers(c);
            kube_client_free(c);
        }
    }
    rc = operator__start_workers(op, err);
    if (rc)
        return rc;
    rc = operator__start_informers(op, err);
    if (rc)
        return rc;
    if (o->leader_elect) {
        rc = operator__new_client(op, hard_should_stop, 3000, 2, &r->lease_client, err);
        if (rc)
            return rc;
    }
    return operator__new_client(op, hard_should_stop, 5000, 2, &r->resweep_client, err);
}

/* One try at the Lease when its time has come: acquire or renew, and act as leader only while
 * the last renewal is surely still valid. */
static void lease_tick(struct op *op, struct run *r)
{
    char lerr[ERR_LEN] = "";
    int leader = 0;
    int64_t now = clock_mono_ms();

    if (!op->o->leader_elect || now < r->next_lease)
        return;
    int lrc = kube_lease_acquire(r->lease_client, op->lease_ns, op->lease_name, op->identity,
                                 r->dur, &leader, lerr);
    now = clock_mono_ms();
    if (lrc == 0 && leader)
        r->last_renew = now;
    if (lrc) {
        log_warn("operator.lease", "namespace=%s name=%s rc=%d error=\"%s\"", op->lease_ns,
                 op->lease_name, lrc, LOGQ(lerr));
        /* Keep acting only while the last renewal is surely still valid: stop with a
         * margin before another candidate may take the lease over. */
        leader = op->leader && now - r->last_renew < (int64_t)(r->dur * 1000 * 2 / 3);
    }
    if (leader && !op->leader)
        delete_generator_leftovers(r->lease_client);
    set_leader(op, leader);
    r->next_lease = now + (leader ? r->renew : LEASE_RETRY_S) * 1000;
}

/* Every tick until the stop flag: the watches still alive, the heartbeat, delayed requests
 * promoted, the Lease, the re-sweeps due. Returns -EIO when a watch stopped for good. */
static int main_loop(struct op *op, struct run *r, char *err)
{
    int rc = 0;

    while (!*op->o->stop) {
        int alive = 1;
        for (size_t i = 0; i < op->ninf; i++)
            alive &= atomic_load(&op->inf[i].alive);
        if (!alive) {
            rc = err_set(err, -EIO, "a Deployment watch stopped for good; exiting");
            break;
        }
        metrics_heartbeat(&op->m);
        pthread_mutex_lock(&op->mu);
        if (op->leader && !op->stopping)
            operator__promote_delayed_locked(op, NULL, NULL);
        pthread_mutex_unlock(&op->mu);
        lease_tick(op, r);
        operator__resweep_run_due(op, r->resweep_client);
        clock_sleep_us(TICK_MS * 1000);
    }
    log_info("operator.shutdown", "event=begin budget_s=%d", OPERATOR_SHUTDOWN_BUDGET_S);
    return rc;
}

/* Stops what setup and start began, whatever got that far: the workers (sweeps get
 * WORKER_STOP_GRACE seconds to restore), the informers, the Lease (released when held), the
 * servers, the queue. */
static void shut_down(struct op *op, struct run *r)
{
    int64_t deadline = clock_mono_ms() + WORKER_STOP_GRACE * 1000;

    atomic_store(&op->informers_stop, 1);
    if (op->workers)
        operator__stop_workers(op, deadline);
    for (size_t i = 0; op->inf && i < op->ninf; i++) {
        if (op->inf[i].started)
            pthread_join(op->inf[i].thread, NULL);
        kube_client_free(op->inf[i].client);
    }
    if (r->lease_client) {
        char lerr[ERR_LEN] = "";
        if (op->leader && kube_lease_release(r->lease_client, op->lease_ns, op->lease_name,
                                             op->identity, lerr) != 0)
            log_warn("operator.lease", "event=release-failed error=\"%s\"", LOGQ(lerr));
        else if (op->leader)
            log_info("operator.lease", "event=released name=%s", op->lease_name);
        kube_client_free(r->lease_client);
    }
    kube_client_free(r->resweep_client);
    admin_stop(op->admin);
    progress_srv_free(op->progress);
    progress_auth_free(op->auth);
    while (op->resweeps) {
        struct resweep_item *it = op->resweeps;
        op->resweeps = it->next;
        free(it);
    }
    if (r->mu_ready) {
        pthread_mutex_lock(&op->mu);
        operator__drain_queue_locked(op);
        pthread_mutex_unlock(&op->mu);
        pthread_mutex_destroy(&op->mu);
        pthread_cond_destroy(&op->cv);
    }
    free(op->workers);
    free(op->running);
    free(op->inf);
    cache_free(op->cache);
    progress_feed_free(op->feed);
    kube_config_free(op->cfg);
}

int operator_run(const struct operator_opts *o, char *err)
{
    struct op op;
    struct run r = {0};
    int rc;

    rc = setup(&op, o, &r, err);
    if (rc == 0)
        rc = start(&op, &r, err);
    if (rc == 0)
        rc = main_loop(&op, &r, err);
    shut_down(&op, &r);
    if (rc == 0)
        log_info("operator.shutdown", "event=done");
    return rc;
}
