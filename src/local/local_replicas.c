/* A scale-out's replica set on this machine: replica 0 is the platform's own instance, replicas
 * 1..n-1 copies of it that differ in their port (--port + i, exported as PORT and $PORT) and
 * their index (logs DIR/logs/<variant>-r<i>.log, cgroups <seq>-<variant>-r<i>). Each runs
 * through the single-instance operations of local_process.c and local_usage.c; this file only
 * applies them to every replica, so one variant and a set of replicas are stopped, measured
 * and cleaned up by the same code. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "local/local_int.h"

/* Stops and frees replicas 1..n-1 (the first error kept), and leaves the set. */
static int drop_replicas(struct local *l, char *err)
{
    int rc = 0;
    for (size_t i = 0; i < l->nrep; i++) {
        int r = local__stop_variant(l->rep[i], rc ? NULL : err);
        if (r && !rc)
            rc = r;
        local__stop_sampler(l->rep[i]);
        free(l->rep[i]);
        l->rep[i] = NULL;
    }
    l->nrep = 0;
    l->in_set = false;
    l->replica = 0;
    return rc;
}

int local__set_stop(void *self, char *err)
{
    struct local *l = self;
    int rc = drop_replicas(l, err);
    int r = local__stop_variant(l, rc ? NULL : err);
    return rc ? rc : r;
}

int local__set_apply(void *self, const struct variant *v, struct platform_failure *fail, char *err)
{
    struct local *l = self;
    drop_replicas(l, NULL);
    return local__apply(l, v, fail, err);
}

/* A copy of l for replica i: the same command, configuration and parent cgroup, nothing
 * running. Returns NULL without memory or when the port would pass 65535. */
static struct local *new_replica(const struct local *l, unsigned i)
{
    struct local *r;
    if (l->cfg.port + i > 65535)
        return NULL;
    r = malloc(sizeof(*r));
    if (!r)
        return NULL;
    *r = *l;
    r->cfg.port = l->cfg.port + i;
    r->replica = i;
    r->in_set = true;
    r->v = NULL;
    r->pid = 0;
    r->reaped = false;
    r->have_cg = false;
    r->sampling = false;
    r->nrep = 0;
    memset(r->rep, 0, sizeof(r->rep));
    return r;
}

int local__set_apply_replicas(void *self, const struct variant *v, unsigned n,
                              struct platform_failure *fail, char *err)
{
    struct local *l = self;
    int rc;

    memset(fail, 0, sizeof(*fail));
    local__set_stop(l, NULL);
    if (n < 2 || n > PLATFORM_MAX_REPLICAS) {
        fail->kind = PLATFORM_FAIL_APPLY;
        rc = err_set(err, -EINVAL, "a scale-out runs 2 to %d replicas, not %u",
                     PLATFORM_MAX_REPLICAS, n);
        snprintf(fail->reason, sizeof(fail->reason), "%s", err);
        return rc;
    }
    l->in_set = true;
    l->replica = 0;
    unsigned lo = 0, hi = 0, last = l->cfg.port + n - 1;
    if (!l->warned_ephemeral) {
        (void)local__ephemeral_port(l->cfg.port, &lo, &hi);
        if (hi > 0 && l->cfg.port <= hi && last >= lo) {
            log_warn("local.replicas",
                     "ports=%u-%u lie in the kernel's ephemeral range %u-%u, where outgoing "
                     "connections get their ports: one may be held when its replica starts; a "
                     "--port below %u avoids it",
                     l->cfg.port, last, lo, hi, lo);
            l->warned_ephemeral = true;
        }
    }
    rc = local__apply(l, v, fail, err);
    for (unsigned i = 1; !rc && i < n; i++) {
        struct local *r = new_replica(l, i);
        if (!r) {
            fail->kind = PLATFORM_FAIL_APPLY;
            rc = err_set(err, -ENOMEM, "replica %u: out of memory or no port %u", i,
                         l->cfg.port + i);
            snprintf(fail->reason, sizeof(fail->reason), "%s", err);
            break;
        }
        l->rep[l->nrep++] = r;
        rc = local__apply(r, v, fail, err);
        if (rc) {
            char why[ERR_LEN];
            snprintf(why, sizeof(why), "replica %u: %s", i, fail->reason);
            snprintf(fail->reason, sizeof(fail->reason), "%s", why);
        }
    }
    if (!rc)
        log_info("local.replicas", "variant=%s replicas=%u ports=%u-%u", v->spec, n, l->cfg.port,
                 l->cfg.port + n - 1);
    return rc;
}

int local__set_wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                          struct platform_failure *fail, char *err)
{
    struct local *l = self;
    int rc = local__wait_ready(l, timeout_us, stop, fail, err);
    for (size_t i = 0; !rc && i < l->nrep; i++) {
        rc = local__wait_ready(l->rep[i], timeout_us, stop, fail, err);
        if (rc) {
            char why[ERR_LEN];
            snprintf(why, sizeof(why), "replica %u: %s", l->rep[i]->replica, fail->reason);
            snprintf(fail->reason, sizeof(fail->reason), "%s", why);
        }
    }
    return rc;
}

int local__set_target_urls(void *self, char (*urls)[PLATFORM_URL_LEN], size_t max, size_t *n,
                           char *err)
{
    struct local *l = self;
    int rc = 0;

    *n = 0;
    if (max < 1 + l->nrep)
        return err_set(err, -ENOSPC, "room for %zu URLs, %zu replicas run", max, 1 + l->nrep);
    rc = local__target_url(l, urls[0], PLATFORM_URL_LEN, err);
    for (size_t i = 0; !rc && i < l->nrep; i++)
        rc = local__target_url(l->rep[i], urls[1 + i], PLATFORM_URL_LEN, err);
    if (!rc)
        *n = 1 + l->nrep;
    return rc;
}

int local__set_usage_begin(void *self, char *err)
{
    struct local *l = self;
    int rc = local__usage_begin(l, err);
    for (size_t i = 0; !rc && i < l->nrep; i++)
        rc = local__usage_begin(l->rep[i], err);
    return rc;
}

/* The set's usage: CPU, throttling and restarts add up; memory is the largest replica's (what
 * one pod needs); the host's other CPU is what neither the load generator nor any replica
 * used... as replica 0 sees it, less the other replicas' CPU. Unknown anywhere: unknown. */
int local__set_usage_end(void *self, struct platform_usage *out, char *err)
{
    struct local *l = self;
    double others = 0;
    int rc = local__usage_end(l, out, err);

    for (size_t i = 0; !rc && i < l->nrep; i++) {
        struct platform_usage u;
        rc = local__usage_end(l->rep[i], &u, err);
        if (rc)
            break;
        if (out->cpu_s >= 0 && u.cpu_s >= 0)
            out->cpu_s += u.cpu_s;
        else
            out->cpu_s = -1;
        if (u.cpu_s >= 0 && u.window_s > 0)
            others += u.cpu_s / u.window_s;
        if (u.peak_memory_bytes > out->peak_memory_bytes)
            out->peak_memory_bytes = u.peak_memory_bytes;
        if (u.memory_bytes > out->memory_bytes)
            out->memory_bytes = u.memory_bytes;
        out->throttle_known = out->throttle_known && u.throttle_known;
        out->cpu_periods += u.cpu_periods;
        out->cpu_throttled_periods += u.cpu_throttled_periods;
        out->cpu_throttled_s += u.cpu_throttled_s;
        out->wait_known = out->wait_known && u.wait_known;
        out->cpu_wait_s += u.cpu_wait_s;
        out->restarts += u.restarts;
        out->oom_killed = out->oom_killed || u.oom_killed;
        out->died = out->died || u.died;
        if (!out->note[0] && u.note[0])
            snprintf(out->note, sizeof(out->note), "replica %u: %s", l->rep[i]->replica, u.note);
    }
    if (!rc && out->host_other_cores >= 0) {
        double other = out->host_other_cores - others;
        out->host_other_cores = other > 0 ? other : 0;
    }
    return rc;
}
