/* (Size: one interface over both kernel APIs, v1 and v2, for the four things a
 * sweep does with cgroups: find its own, prepare and weigh the parent, make a variant's, read it;
 * they share the path and file helpers at the top, which no other file needs.) */

#include "local/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"

#define PERIOD_US 100000 /* the kubelet's CFS period */
#define SMALL     4096   /* any control file sizeup reads (cgroup.procs has its own cap) */

/* ---- small file helpers -------------------------------------------------------------------- */

static int read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n, total = 0;

    if (fd < 0)
        return -errno;
    while ((size_t)total < len - 1) {
        n = read(fd, buf + total, len - 1 - (size_t)total);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = -errno;
            close(fd);
            return e;
        }
        if (n == 0)
            break;
        total += n;
    }
    close(fd);
    buf[total] = '\0';
    return (int)total;
}

static int write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    size_t len = strlen(s);

    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, s, len);
    int e = n < 0 ? -errno : 0;
    close(fd);
    if (!e && (size_t)n != len)
        e = -EIO;
    return e;
}

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static int join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, CG_PATH, "%s/%s", dir, name);
    return n < 0 || n >= CG_PATH ? -ENAMETOOLONG : 0;
}

static int read_i64(const char *path, int64_t *v)
{
    char buf[64], *end;
    int rc = read_small(path, buf, sizeof(buf));

    if (rc < 0)
        return rc;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (errno || end == buf)
        return -EINVAL;
    *v = x;
    return 0;
}

/* Value of "key N" in the text of a flat-keyed file (memory.events, memory.oom_control,
 * cpu.stat). Returns 0, or -ENOENT when no line has the key. */
static int keyed_value(const char *text, const char *key, uint64_t *v)
{
    size_t klen = strlen(key);

    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
            *v = strtoull(line + klen + 1, NULL, 10);
            return 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    return -ENOENT;
}

static int read_keyed(const char *path, const char *key, uint64_t *v)
{
    char buf[SMALL];
    int rc = read_small(path, buf, sizeof(buf));

    if (rc < 0)
        return rc;
    return keyed_value(buf, key, v);
}

/* ---- finding sizeup's own cgroup ----------------------------------------------------------- */

struct mount {
    char point[CG_PATH];
    char root[CG_PATH];
};

/* Finds the mount of a v1 hierarchy carrying controller (or the v2 mount when controller is
 * NULL) in mountinfo text. Returns 1 when found. */
static int find_mount(const char *mountinfo, const char *controller, struct mount *m)
{
    const char *line = mountinfo;

    while (line && *line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[2048];
        if (len < sizeof(buf)) {
            memcpy(buf, line, len);
            buf[len] = '\0';
            /* id parent maj:min root point options [optional...] - fstype source superopts */
            char *f[6] = {0}, *save = NULL, *tok = strtok_r(buf, " ", &save);
            int i = 0;
            for (; tok && i < 6; tok = strtok_r(NULL, " ", &save))
                f[i++] = tok;
            char *sep = NULL;
            while (tok && strcmp(tok, "-") != 0)
                tok = strtok_r(NULL, " ", &save);
            sep = tok;
            char *fstype = sep ? strtok_r(NULL, " ", &save) : NULL;
            char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
            char *super = source ? strtok_r(NULL, " ", &save) : NULL;
            (void)source;
            if (i >= 5 && fstype) {
                int match = 0;
                if (!controller && strcmp(fstype, "cgroup2") == 0)
                    match = 1;
                if (controller && strcmp(fstype, "cgroup") == 0 && super) {
                    char opts[512];
                    snprintf(opts, sizeof(opts), "%s", super);
                    char *s2 = NULL;
                    for (char *o = strtok_r(opts, ",", &s2); o; o = strtok_r(NULL, ",", &s2))
                        if (strcmp(o, controller) == 0)
                            match = 1;
                }
                if (match) {
                    snprintf(m->root, sizeof(m->root), "%s", f[3]);
                    snprintf(m->point, sizeof(m->point), "%s", f[4]);
                    return 1;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Finds the path of this process in a v1 hierarchy holding controller (or v2 with NULL) from
 * /proc/self/cgroup text. Returns 1 when found. */
static int find_path(const char *proc_cgroup, const char *controller, char *out, size_t len)
{
    const char *line = proc_cgroup;

    while (line && *line) {
        const char *nl = strchr(line, '\n');
        size_t l = nl ? (size_t)(nl - line) : strlen(line);
        char buf[1024];
        if (l < sizeof(buf)) {
            memcpy(buf, line, l);
            buf[l] = '\0';
            char *c1 = strchr(buf, ':');
            char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (c1 && c2) {
                *c1 = '\0';
                *c2 = '\0';
                const char *ctrls = c1 + 1, *path = c2 + 1;
                int match = 0;
                if (!controller && strcmp(buf, "0") == 0 && *ctrls == '\0')
                    match = 1;
                if (controller && *ctrls) {
                    char cs[256], *save = NULL;
                    snprintf(cs, sizeof(cs), "%s", ctrls);
                    for (char *o = strtok_r(cs, ",", &save); o; o = strtok_r(NULL, ",", &save))
                        if (strcmp(o, controller) == 0)
                            match = 1;
                }
                if (match) {
                    snprintf(out, len, "%s", path);
                    return 1;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Directory of path (a cgroup path from /proc/self/cgroup) under mount m. */
static int dir_of(const struct mount *m, const char *path, char *out)
{
    const char *rel = path;
    size_t rl = strlen(m->root);

    /* Inside a container the mount's root is the container's own cgroup: strip it. */
    if (strcmp(m->root, "/") != 0 && strncmp(path, m->root, rl) == 0 &&
        (path[rl] == '/' || path[rl] == '\0'))
        rel = path + rl;
    int n = snprintf(out, CG_PATH, "%s%s", m->point, strcmp(rel, "/") == 0 ? "" : rel);
    return n < 0 || n >= CG_PATH ? -ENAMETOOLONG : 0;
}

static bool has_word(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\n')
            p++;
        if (strncmp(p, word, wl) == 0 && (p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\0'))
            return true;
        p = strpbrk(p, " \n");
    }
    return false;
}

void cg_find_self(const char *mountinfo, const char *proc_cgroup, const char *controllers_v2,
                  struct cg_self *out)
{
    struct mount m;
    char path[CG_PATH];

    memset(out, 0, sizeof(*out));
    if (find_mount(mountinfo, NULL, &m) && find_path(proc_cgroup, NULL, path, sizeof(path)) &&
        controllers_v2 && has_word(controllers_v2, "cpu") && has_word(controllers_v2, "memory")) {
        if (dir_of(&m, path, out->cpu) == 0) {
            snprintf(out->cpuacct, CG_PATH, "%s", out->cpu);
            snprintf(out->memory, CG_PATH, "%s", out->cpu);
            out->version = CG_V2;
            return;
        }
    }
    static const char *ctrl[3] = {"cpu", "cpuacct", "memory"};
    char *dst[3] = {out->cpu, out->cpuacct, out->memory};
    for (int i = 0; i < 3; i++) {
        if (!find_mount(mountinfo, ctrl[i], &m)) {
            snprintf(out->why, sizeof(out->why),
                     "no cgroup v2 with cpu and memory controllers for this process, and no "
                     "cgroup v1 '%s' hierarchy mounted",
                     ctrl[i]);
            out->version = CG_NONE;
            return;
        }
        if (!find_path(proc_cgroup, ctrl[i], path, sizeof(path)) || dir_of(&m, path, dst[i]) != 0) {
            snprintf(out->why, sizeof(out->why),
                     "this process's cgroup v1 '%s' path is not in /proc/self/cgroup", ctrl[i]);
            out->version = CG_NONE;
            return;
        }
    }
    out->version = CG_V1;
}

void cg_detect(struct cg_self *out)
{
    char *mi = malloc(65536), pc[4096], ctl[512];
    const char *ctlp = NULL;
    struct mount m;
    char path[CG_PATH], dir[CG_PATH + 32];

    memset(out, 0, sizeof(*out));
    if (!mi) {
        snprintf(out->why, sizeof(out->why), "out of memory");
        return;
    }
    if (read_small("/proc/self/mountinfo", mi, 65536) < 0 ||
        read_small("/proc/self/cgroup", pc, sizeof(pc)) < 0) {
        snprintf(out->why, sizeof(out->why), "cannot read /proc/self/mountinfo or cgroup");
        free(mi);
        return;
    }
    /* The v2 controllers this process's cgroup may hand to children. */
    if (find_mount(mi, NULL, &m) && find_path(pc, NULL, path, sizeof(path)) &&
        dir_of(&m, path, dir) == 0) {
        size_t dl = strlen(dir);
        if (dl + sizeof("/cgroup.controllers") < sizeof(dir)) {
            memcpy(dir + dl, "/cgroup.controllers", sizeof("/cgroup.controllers"));
            if (read_small(dir, ctl, sizeof(ctl)) >= 0)
                ctlp = ctl;
        }
    }
    cg_find_self(mi, pc, ctlp, out);
    free(mi);
}

/* ---- parent -------------------------------------------------------------------------------- */

static int mkdir_cg(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    return -errno;
}

/* rmdir with a short retry: the kernel may hold a cgroup briefly after its last process. */
static int rmdir_cg(const char *path)
{
    for (int i = 0; i < 100; i++) {
        if (rmdir(path) == 0 || errno == ENOENT)
            return 0;
        if (errno != EBUSY)
            return -errno;
        clock_sleep_us(20 * 1000);
    }
    return -EBUSY;
}

static int move_self(const char *dir)
{
    char p[CG_PATH], pid[32];
    int rc = join(p, dir, "cgroup.procs");
    if (rc)
        return rc;
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    return write_str(p, pid);
}

static int set_weight(const char *dir, enum cg_version v)
{
    char p[CG_PATH], val[32];
    int rc = join(p, dir, v == CG_V2 ? "cpu.weight" : "cpu.shares");
    if (rc)
        return rc;
    snprintf(val, sizeof(val), "%d", (v == CG_V2 ? 100 : 1024) * CG_WEIGHT_FACTOR);
    return write_str(p, val);
}

/* Gives the variants' parent and the generator (sizeup itself) the measurement's weight. The
 * generator needs it as much as the app: a starved generator measures its own queue. v2: sizeup
 * is in its leaf beside the parent (when it made one); v1: it moves into "<self>/<name>-gen" in
 * the cpu hierarchy. Best effort: a refusal leaves the default weight, said in the log. */
static void weigh(struct cg_parent *out, const char *name)
{
    char ebuf[64];
    int rc = set_weight(out->cpu, out->self.version);

    if (!rc && out->self.version == CG_V2 && out->self_leaf[0])
        rc = set_weight(out->self_leaf, CG_V2);
    if (!rc && out->self.version == CG_V1) {
        char leaf[64];
        snprintf(leaf, sizeof(leaf), "%s-gen", name);
        rc = join(out->gen_cpu, out->self.cpu, leaf);
        if (!rc)
            rc = mkdir_cg(out->gen_cpu);
        if (!rc)
            rc = set_weight(out->gen_cpu, CG_V1);
        if (!rc)
            rc = move_self(out->gen_cpu);
        if (rc && out->gen_cpu[0]) {
            rmdir_cg(out->gen_cpu);
            out->gen_cpu[0] = '\0';
        }
    }
    out->weighted = rc == 0;
    if (rc)
        log_warn("local.cgroup.weight",
                 "error=\"%s\" effect=\"the sweep runs at the default CPU "
                 "weight: other work on the host competes with it as an equal\"",
                 err_str(rc, ebuf, sizeof(ebuf)));
}

/* How a step of cg_prepare failed, for its error: a path too long, a path that could not be
 * created or written, or one that could not be read. */
enum prep_fail { PREP_TOO_LONG, PREP_PATH, PREP_READ };

/* Sets err for a failed step of cg_prepare (p: the path it was at, root: the cgroup under
 * which it works). Returns rc. */
static int prep_fail(char *err, int rc, enum prep_fail how, const char *p, const char *root)
{
    char ebuf[64];

    if (how == PREP_PATH)
        return err_set(err, rc, "cannot set up cgroup %s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    if (how == PREP_READ)
        return err_set(err, rc, "cannot read %s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    return err_set(err, rc, "cgroup path too long under %s", root);
}

/* cgroup v2's rule of no internal processes: when <self> does not yet hand cpu and memory to
 * its children, sizeup moves itself to a leaf (<self>/<name>-self) and enables them. p is a
 * CG_PATH scratch buffer. Returns 0, or an error in err. */
static int delegate_v2(const struct cg_self *self, const char *name, struct cg_parent *out, char *p,
                       char *err)
{
    char ctl[256];
    int rc = join(p, self->cpu, "cgroup.subtree_control");

    if (rc)
        return prep_fail(err, rc, PREP_TOO_LONG, p, self->cpu);
    rc = read_small(p, ctl, sizeof(ctl));
    if (rc < 0)
        return prep_fail(err, rc, PREP_READ, p, self->cpu);
    bool need_cpu = !has_word(ctl, "cpu"), need_mem = !has_word(ctl, "memory");
    if (!need_cpu && !need_mem)
        return 0;
    char leaf[64];
    snprintf(leaf, sizeof(leaf), "%s-self", name);
    rc = join(out->self_leaf, self->cpu, leaf);
    if (rc)
        return prep_fail(err, rc, PREP_TOO_LONG, p, self->cpu);
    rc = mkdir_cg(out->self_leaf);
    if (!rc)
        rc = move_self(out->self_leaf);
    if (rc)
        return prep_fail(err, rc, PREP_PATH, p, self->cpu);
    rc = join(p, self->cpu, "cgroup.subtree_control");
    if (rc)
        return prep_fail(err, rc, PREP_TOO_LONG, p, self->cpu);
    if (need_cpu) {
        rc = write_str(p, "+cpu");
        if (rc)
            return prep_fail(err, rc, PREP_PATH, p, self->cpu);
        out->enabled_cpu = true;
    }
    if (need_mem) {
        rc = write_str(p, "+memory");
        if (rc)
            return prep_fail(err, rc, PREP_PATH, p, self->cpu);
        out->enabled_memory = true;
    }
    return 0;
}

int cg_prepare(const struct cg_self *self, const char *name, struct cg_parent *out, char *err)
{
    char p[CG_PATH];
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->self = *self;
    if (self->version == CG_NONE)
        return err_set(err, -ENOTSUP, "%s", self->why);
    if (self->version == CG_V2) {
        rc = delegate_v2(self, name, out, p, err);
        if (rc)
            goto undo;
    }
    rc = join(out->cpu, self->cpu, name);
    if (!rc)
        rc = join(out->cpuacct, self->cpuacct, name);
    if (!rc)
        rc = join(out->memory, self->memory, name);
    if (rc) {
        prep_fail(err, rc, PREP_TOO_LONG, p, self->cpu);
        goto undo;
    }
    const char *dirs[3] = {out->cpu, out->cpuacct, out->memory};
    for (int i = 0; i < 3; i++) {
        if (i > 0 && strcmp(dirs[i], dirs[0]) == 0)
            continue;
        snprintf(p, sizeof(p), "%s", dirs[i]);
        rc = mkdir_cg(p);
        if (rc) {
            prep_fail(err, rc, PREP_PATH, p, self->cpu);
            goto undo;
        }
    }
    if (self->version == CG_V2) {
        rc = join(p, out->cpu, "cgroup.subtree_control");
        if (!rc)
            rc = write_str(p, "+cpu +memory");
        if (rc) {
            prep_fail(err, rc, PREP_PATH, p, self->cpu);
            goto undo;
        }
    }
    out->prepared = true;
    weigh(out, name);
    return 0;
undo:
    out->prepared = true;
    cg_unprepare(out, NULL);
    return rc;
}

int cg_unprepare(struct cg_parent *p, char *err)
{
    char path[CG_PATH], ebuf[64];
    int rc = 0, r;

    if (!p->prepared)
        return 0;
    if (p->gen_cpu[0]) {
        /* Back to where sizeup started, then its weighted cgroup can go. */
        move_self(p->self.cpu);
        r = rmdir_cg(p->gen_cpu);
        if (r && !rc)
            rc = err_set(err, r, "cannot remove cgroup %s: %s", p->gen_cpu,
                         err_str(r, ebuf, sizeof(ebuf)));
        p->gen_cpu[0] = '\0';
    }
    const char *dirs[3] = {p->cpu, p->cpuacct, p->memory};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i][0] || (i > 0 && strcmp(dirs[i], dirs[0]) == 0))
            continue;
        r = rmdir_cg(dirs[i]);
        if (r && !rc)
            rc = err_set(err, r, "cannot remove cgroup %s: %s", dirs[i],
                         err_str(r, ebuf, sizeof(ebuf)));
    }
    if (p->self.version == CG_V2) {
        if (join(path, p->self.cpu, "cgroup.subtree_control") == 0) {
            if (p->enabled_cpu)
                write_str(path, "-cpu");
            if (p->enabled_memory)
                write_str(path, "-memory");
        }
        if (p->self_leaf[0]) {
            /* Back to where sizeup started, then the leaf can go. */
            move_self(p->self.cpu);
            r = rmdir_cg(p->self_leaf);
            if (r && !rc)
                rc = err_set(err, r, "cannot remove cgroup %s: %s", p->self_leaf,
                             err_str(r, ebuf, sizeof(ebuf)));
        }
    }
    p->prepared = false;
    return rc;
}

/* ---- a variant's cgroup -------------------------------------------------------------------- */

int64_t cg_quota_us(int64_t millicores, int64_t period_us)
{
    int64_t q = millicores * period_us / 1000;
    return q < 1000 ? 1000 : q;
}

static int set_limits(struct cg *g, int64_t cpu_m, int64_t mem, char *where)
{
    char p[CG_PATH], v[64];
    int rc;

    if (g->version == CG_V2) {
        snprintf(v, sizeof(v), "%lld %d", (long long)cg_quota_us(cpu_m, PERIOD_US), PERIOD_US);
        if ((rc = join(p, g->cpu, "cpu.max")) || (rc = write_str(p, v)))
            goto out;
        snprintf(v, sizeof(v), "%lld", (long long)mem);
        if ((rc = join(p, g->memory, "memory.max")) || (rc = write_str(p, v)))
            goto out;
        /* A container gets no swap from the kubelet by default; without this the limit leaks
         * into swap and an over-limit variant crawls instead of being OOM-killed. */
        if (join(p, g->memory, "memory.swap.max") == 0 && exists(p) && (rc = write_str(p, "0")))
            goto out;
        g->has_peak = join(p, g->memory, "memory.peak") == 0 && exists(p);
        g->peak_reset = false;
        return 0;
    }
    snprintf(v, sizeof(v), "%d", PERIOD_US);
    if ((rc = join(p, g->cpu, "cpu.cfs_period_us")) || (rc = write_str(p, v)))
        goto out;
    snprintf(v, sizeof(v), "%lld", (long long)cg_quota_us(cpu_m, PERIOD_US));
    if ((rc = join(p, g->cpu, "cpu.cfs_quota_us")) || (rc = write_str(p, v)))
        goto out;
    snprintf(v, sizeof(v), "%lld", (long long)mem);
    if ((rc = join(p, g->memory, "memory.limit_in_bytes")) || (rc = write_str(p, v)))
        goto out;
    if (join(p, g->memory, "memory.memsw.limit_in_bytes") == 0 && exists(p)) {
        /* memory + swap = memory: no swap, as the kubelet runs containers. */
        if ((rc = write_str(p, v)))
            goto out;
        g->memsw = true;
    }
    g->has_peak = join(p, g->memory, "memory.max_usage_in_bytes") == 0 && exists(p);
    g->peak_reset = g->has_peak;
    return 0;
out:
    snprintf(where, CG_PATH, "%s", p);
    return rc;
}

int cg_create(const struct cg_parent *parent, const char *name, int64_t cpu_millicores,
              int64_t memory_bytes, struct cg *out, char *err)
{
    char where[CG_PATH] = "", ebuf[64];
    int rc;

    memset(out, 0, sizeof(*out));
    out->version = parent->self.version;
    if (!parent->prepared)
        return err_set(err, -EINVAL, "cgroup parent not prepared");
    if ((rc = join(out->cpu, parent->cpu, name)) ||
        (rc = join(out->cpuacct, parent->cpuacct, name)) ||
        (rc = join(out->memory, parent->memory, name)))
        return err_set(err, rc, "cgroup path too long under %s", parent->cpu);
    const char *dirs[3] = {out->cpu, out->cpuacct, out->memory};
    for (int i = 0; i < 3; i++) {
        if (i > 0 && (strcmp(dirs[i], dirs[0]) == 0 || strcmp(dirs[i], dirs[i - 1]) == 0))
            continue;
        rc = mkdir_cg(dirs[i]);
        if (rc) {
            snprintf(where, sizeof(where), "%s", dirs[i]);
            goto fail;
        }
        out->created = true;
    }
    rc = set_limits(out, cpu_millicores, memory_bytes, where);
    if (rc)
        goto fail;
    return 0;
fail:
    err_set(err, rc, "cannot set up cgroup %s: %s", where, err_str(rc, ebuf, sizeof(ebuf)));
    out->created = true;
    cg_destroy(out, NULL);
    return rc;
}

int cg_enter(const struct cg *g, pid_t pid)
{
    /* Only open/write/close and hand-made formatting: this runs in a forked child. */
    char num[24], path[CG_PATH];
    int n = 0, rc = 0;
    unsigned long v = (unsigned long)pid;
    char tmp[24];

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < (int)sizeof(tmp));
    for (int i = 0; i < n; i++)
        num[i] = tmp[n - 1 - i];
    const char *dirs[3] = {g->cpu, g->cpuacct, g->memory};
    for (int i = 0; i < 3; i++) {
        if (i > 0 && (strcmp(dirs[i], dirs[0]) == 0 || strcmp(dirs[i], dirs[i - 1]) == 0))
            continue;
        size_t dl = strlen(dirs[i]);
        if (dl + sizeof("/cgroup.procs") > sizeof(path))
            return -ENAMETOOLONG;
        memcpy(path, dirs[i], dl);
        memcpy(path + dl, "/cgroup.procs", sizeof("/cgroup.procs"));
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        if (write(fd, num, (size_t)n) != n)
            rc = -errno ? -errno : -EIO;
        close(fd);
        if (rc)
            return rc;
    }
    return 0;
}

int cg_cpu_ns(const struct cg *g, uint64_t *ns, char *err)
{
    char p[CG_PATH], ebuf[64];
    int rc;

    if (g->version == CG_V2) {
        uint64_t us;
        if ((rc = join(p, g->cpu, "cpu.stat")) || (rc = read_keyed(p, "usage_usec", &us)))
            return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
        *ns = us * 1000;
        return 0;
    }
    int64_t v;
    if ((rc = join(p, g->cpuacct, "cpuacct.usage")) || (rc = read_i64(p, &v)))
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    *ns = (uint64_t)v;
    return 0;
}

int cg_parse_cpu_stat(const char *text, enum cg_version version, struct cg_throttle *out)
{
    uint64_t t;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = keyed_value(text, "nr_periods", &out->periods)) ||
        (rc = keyed_value(text, "nr_throttled", &out->throttled_periods)))
        return rc;
    if (version == CG_V2) {
        if ((rc = keyed_value(text, "throttled_usec", &t)))
            return rc;
        out->throttled_ns = t * 1000;
    } else {
        if ((rc = keyed_value(text, "throttled_time", &t)))
            return rc;
        out->throttled_ns = t;
    }
    return 0;
}

int cg_cpu_throttle(const struct cg *g, struct cg_throttle *out, char *err)
{
    char p[CG_PATH], buf[SMALL], ebuf[64];
    int rc;

    if ((rc = join(p, g->cpu, "cpu.stat")) || (rc = read_small(p, buf, sizeof(buf))) < 0 ||
        (rc = cg_parse_cpu_stat(buf, g->version, out)))
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    return 0;
}

int cg_mem_current(const struct cg *g, int64_t *bytes, char *err)
{
    char p[CG_PATH], ebuf[64];
    int rc = join(p, g->memory, g->version == CG_V2 ? "memory.current" : "memory.usage_in_bytes");
    if (!rc)
        rc = read_i64(p, bytes);
    if (rc)
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    return 0;
}

int cg_mem_peak(const struct cg *g, int64_t *bytes, char *err)
{
    char p[CG_PATH], ebuf[64];
    int rc;

    if (!g->has_peak)
        return -ENOENT;
    rc = join(p, g->memory, g->version == CG_V2 ? "memory.peak" : "memory.max_usage_in_bytes");
    if (!rc)
        rc = read_i64(p, bytes);
    if (rc)
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    return 0;
}

int cg_mem_peak_reset(const struct cg *g, char *err)
{
    char p[CG_PATH], ebuf[64];
    int rc;

    if (!g->peak_reset)
        return -ENOTSUP;
    rc = join(p, g->memory, "memory.max_usage_in_bytes");
    if (!rc)
        rc = write_str(p, "0");
    if (rc)
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    return 0;
}

int cg_oom_kills(const struct cg *g, uint64_t *n, char *err)
{
    char p[CG_PATH], ebuf[64];
    int rc = join(p, g->memory, g->version == CG_V2 ? "memory.events" : "memory.oom_control");
    if (!rc)
        rc = read_keyed(p, "oom_kill", n);
    if (rc)
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    return 0;
}

int cg_pids(const struct cg *g, pid_t *pids, size_t max, size_t *n, char *err)
{
    char p[CG_PATH], ebuf[64], buf[16384];
    int rc = join(p, g->memory, "cgroup.procs");

    *n = 0;
    if (!rc)
        rc = read_small(p, buf, sizeof(buf));
    if (rc < 0)
        return err_set(err, rc, "%s: %s", p, err_str(rc, ebuf, sizeof(ebuf)));
    for (char *s = buf; *s;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        if (v > 0) {
            if (*n < max)
                pids[*n] = (pid_t)v;
            (*n)++;
        }
        s = end;
        while (*s == '\n')
            s++;
    }
    return 0;
}

int cg_signal_all(const struct cg *g, int sig, char *err)
{
    pid_t pids[1024];
    size_t n = 0;
    char p[CG_PATH];
    int rc;

    if (g->version == CG_V2 && sig == SIGKILL && join(p, g->cpu, "cgroup.kill") == 0 && exists(p) &&
        write_str(p, "1") == 0)
        return 0;
    rc = cg_pids(g, pids, sizeof(pids) / sizeof(pids[0]), &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n && i < sizeof(pids) / sizeof(pids[0]); i++)
        kill(pids[i], sig);
    return 0;
}

int cg_destroy(struct cg *g, char *err)
{
    char ebuf[64];
    int rc = 0;

    if (!g->created)
        return 0;
    const char *dirs[3] = {g->cpu, g->cpuacct, g->memory};
    for (int i = 0; i < 3; i++) {
        if (i > 0 && (strcmp(dirs[i], dirs[0]) == 0 || strcmp(dirs[i], dirs[i - 1]) == 0))
            continue;
        int r = rmdir_cg(dirs[i]);
        if (r && !rc)
            rc = err_set(err, r, "cannot remove cgroup %s: %s", dirs[i],
                         err_str(r, ebuf, sizeof(ebuf)));
    }
    if (!rc)
        g->created = false;
    return rc;
}

/* ---- sizeup's own limits ------------------------------------------------------------------- */

int64_t cg_self_cpu_limit_m(const struct cg_self *self)
{
    char p[CG_PATH], buf[64];

    if (self->version == CG_V2) {
        if (join(p, self->cpu, "cpu.max") || read_small(p, buf, sizeof(buf)) < 0)
            return 0;
        if (strncmp(buf, "max", 3) == 0)
            return 0;
        long long q = 0, per = 0;
        if (sscanf(buf, "%lld %lld", &q, &per) != 2 || per <= 0)
            return 0;
        return q * 1000 / per;
    }
    if (self->version == CG_V1) {
        int64_t q, per;
        if (join(p, self->cpu, "cpu.cfs_quota_us") || read_i64(p, &q) || q <= 0)
            return 0;
        if (join(p, self->cpu, "cpu.cfs_period_us") || read_i64(p, &per) || per <= 0)
            return 0;
        return q * 1000 / per;
    }
    return 0;
}

int64_t cg_self_memory_limit(const struct cg_self *self)
{
    char p[CG_PATH];
    int64_t v;

    if (self->version == CG_NONE)
        return 0;
    if (join(p, self->memory, self->version == CG_V2 ? "memory.max" : "memory.limit_in_bytes") ||
        read_i64(p, &v) || v <= 0)
        return 0;
    /* v1 reports "no limit" as a huge page-rounded number. */
    if (v >= (INT64_MAX / 2))
        return 0;
    return v;
}
