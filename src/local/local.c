/* The local platform: runs each variant as a process group under its own cgroup on this host.
 * This file holds the ops table, the host facts, prepare/restore and creation; the process
 * group's life cycle is in local_process.c, the usage window in local_usage.c, and what they
 * share in local_util.c (local_int.h). */

#include "local/local.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/fmt.h"
#include "core/log.h"
#include "core/quantity.h"
#include "local/local_int.h"

/* ---- facts --------------------------------------------------------------------------------- */

static int online_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static int64_t mem_total(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (int64_t)pages * size : 0;
}

static void cpu_model(char *buf, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];

    buf[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static int local_facts(void *self, struct platform_facts *out, char *err)
{
    struct local *l = self;
    struct utsname u;
    char model[128], mem[QTY_LEN];
    (void)err;

    memset(out, 0, sizeof(*out));
    int64_t cpu_m = (int64_t)online_cpus() * 1000;
    int64_t lim = cg_self_cpu_limit_m(&l->self);
    if (lim > 0 && lim < cpu_m)
        cpu_m = lim;
    out->host_millicores = cpu_m;
    int64_t memb = mem_total(), mlim = cg_self_memory_limit(&l->self);
    if (mlim > 0 && (memb == 0 || mlim < memb))
        memb = mlim;
    out->host_memory_bytes = memb;
    out->limits_enforced = l->enforced;
    snprintf(out->limits_note, sizeof(out->limits_note), "%s", l->note);
    out->load_shares_host = true;
    cpu_model(model, sizeof(model));
    if (uname(&u) != 0)
        memset(&u, 0, sizeof(u));
    snprintf(out->machine, sizeof(out->machine),
             "%s %s %s%s%s, %d CPUs (%.3g usable), %.1f GiB "
             "RAM, cgroup %s",
             u.sysname, u.release, u.machine, model[0] ? ", " : "", model, online_cpus(),
             (double)cpu_m / 1000.0, (double)memb / (double)FMT_GIB,
             l->self.version == CG_V2   ? "v2"
             : l->self.version == CG_V1 ? "v1"
                                        : "none");
    (void)mem;
    return 0;
}

/* ---- prepare / restore --------------------------------------------------------------------- */

static int local_prepare(void *self, char *err)
{
    struct local *l = self;
    char name[64], e[ERR_LEN] = "";
    (void)err;

    if (l->cfg.no_cgroup) {
        l->enforced = false;
        snprintf(l->note, sizeof(l->note), "cgroups disabled by configuration");
    } else if (l->self.version == CG_NONE || !l->enforced) {
        l->enforced = false;
        if (l->self.version == CG_NONE)
            snprintf(l->note, sizeof(l->note), "no usable cgroup: %s", l->self.why);
    } else {
        snprintf(name, sizeof(name), "sizeup-%d", (int)getpid());
        if (cg_prepare(&l->self, name, &l->parent, e) == 0) {
            l->enforced = true;
            l->note[0] = '\0';
        } else {
            l->enforced = false;
            snprintf(l->note, sizeof(l->note), "no writable cgroup: %s", e);
        }
    }
    if (!l->enforced)
        log_error("local.limits",
                  "enforced=false reason=\"%s\" effect=\"every variant runs "
                  "without its CPU and memory limits\"",
                  l->note);
    else
        log_info("local.cgroup", "version=v%d parent=%s weight=%s",
                 l->self.version == CG_V2 ? 2 : 1, l->parent.memory,
                 l->parent.weighted ? "raised" : "default");
    l->prepared = true;
    return 0;
}

static int local_restore(void *self, char *err)
{
    struct local *l = self;
    int rc = local__set_stop(self, err);

    if (l->prepared && l->enforced) {
        int r = cg_unprepare(&l->parent, rc ? NULL : err);
        if (r && !rc)
            rc = r;
    }
    l->prepared = false;
    return rc;
}

static void local_free(void *self)
{
    struct local *l = self;
    if (!l)
        return;
    local__set_stop(l, NULL); /* nothing runs after restore: frees the replicas' copies */
    local__stop_sampler(l);
    free(l);
}

static const struct platform_ops local_ops = {
    .name = "local",
    .facts = local_facts,
    .prepare = local_prepare,
    .apply = local__set_apply,
    .wait_ready = local__set_wait_ready,
    .target_url = local__target_url,
    .usage_begin = local__set_usage_begin,
    .usage_end = local__set_usage_end,
    .stop_variant = local__set_stop,
    .restore = local_restore,
    .free = local_free,
    .apply_replicas = local__set_apply_replicas,
    .target_urls = local__set_target_urls,
};

int local_platform_new(const struct local_config *cfg, struct platform *out, char *err)
{
    struct local *l;

    memset(out, 0, sizeof(*out));
    if (!cfg->argv || cfg->argc < 1 || !cfg->argv[0] || !cfg->argv[0][0])
        return err_set(err, -EINVAL, "no command to run: give it after --");
    if (cfg->argc > LOCAL_MAX_ARGS)
        return err_set(err, -EINVAL, "more than %d command arguments", LOCAL_MAX_ARGS);
    if (cfg->port == 0 || cfg->port > 65535)
        return err_set(err, -EINVAL, "port must be 1..65535");
    if (cfg->ready_path && (cfg->ready_path[0] != '/' || strlen(cfg->ready_path) > 512 ||
                            strpbrk(cfg->ready_path, " \r\n")))
        return err_set(err, -EINVAL, "ready path '%s' must start with '/' and have no spaces",
                       cfg->ready_path);
    const char *we = cfg->workers_env ? cfg->workers_env : "WORKERS";
    if (!*we || strlen(we) >= 64)
        return err_set(err, -EINVAL, "bad workers env name");
    for (const char *p = we; *p; p++)
        if (!(local__isalnum_ascii(*p) || *p == '_'))
            return err_set(err, -EINVAL, "bad workers env name '%s': letters, digits and _ only",
                           we);
    l = calloc(1, sizeof(*l));
    if (!l)
        return err_set(err, -ENOMEM, "out of memory");
    l->cfg = *cfg;
    /* Orphaned grandchildren of the app come to us to be reaped, instead of lingering as zombies
     * under a slow init and keeping the process group alive. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    snprintf(l->workers_env, sizeof(l->workers_env), "%s", we);
    if (!cfg->no_cgroup)
        cg_detect(&l->self);
    else
        snprintf(l->self.why, sizeof(l->self.why), "cgroups disabled");
    l->enforced = l->self.version != CG_NONE && !cfg->no_cgroup;
    if (!l->enforced)
        snprintf(l->note, sizeof(l->note), "%s", l->self.why);
    /* An early, cheap answer for the start-up banner; prepare gives the final one. */
    if (l->enforced && (access(l->self.cpu, W_OK) != 0 || access(l->self.memory, W_OK) != 0)) {
        l->enforced = false;
        snprintf(l->note, sizeof(l->note), "no writable cgroup: %s is not writable by this user",
                 access(l->self.cpu, W_OK) != 0 ? l->self.cpu : l->self.memory);
    }
    out->ops = &local_ops;
    out->self = l;
    return 0;
}
