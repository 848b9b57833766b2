#include "load/cpus.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CGROUP_ROOT "/sys/fs/cgroup"
#define PATH_LEN    1024
#define SMALL       512

/* Reads a small control file into buf (NUL-terminated). Returns 0 or a negative errno. */
static int read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, len - 1);
    int e = n < 0 ? -errno : 0;
    close(fd);
    if (e)
        return e;
    buf[n] = '\0';
    return 0;
}

int64_t load_cpus_quota_v2(const char *cpu_max)
{
    long long q, per;
    if (!cpu_max || strncmp(cpu_max, "max", 3) == 0)
        return 0;
    if (sscanf(cpu_max, "%lld %lld", &q, &per) != 2 || q <= 0 || per <= 0)
        return 0;
    return (int64_t)(q * 1000 / per);
}

int64_t load_cpus_quota_v1(const char *quota_us, const char *period_us)
{
    long long q, per;
    if (!quota_us || !period_us || sscanf(quota_us, "%lld", &q) != 1 ||
        sscanf(period_us, "%lld", &per) != 1 || q <= 0 || per <= 0)
        return 0;
    return (int64_t)(q * 1000 / per);
}

static int64_t quota_at(const char *dir, bool v2)
{
    char p[PATH_LEN + 32], a[SMALL], b[SMALL];

    if (v2) {
        snprintf(p, sizeof(p), "%s/cpu.max", dir);
        return read_text(p, a, sizeof(a)) == 0 ? load_cpus_quota_v2(a) : 0;
    }
    snprintf(p, sizeof(p), "%s/cpu.cfs_quota_us", dir);
    if (read_text(p, a, sizeof(a)) != 0)
        return 0;
    snprintf(p, sizeof(p), "%s/cpu.cfs_period_us", dir);
    if (read_text(p, b, sizeof(b)) != 0)
        return 0;
    return load_cpus_quota_v1(a, b);
}

int64_t load_cpus_quota_path(const char *root, const char *rel, bool v2)
{
    char dir[PATH_LEN];
    int64_t best = 0;
    int n = snprintf(dir, sizeof(dir), "%s/%s", root, rel ? rel : "");

    if (n < 0 || (size_t)n >= sizeof(dir))
        return 0;
    size_t rootlen = strlen(root);
    for (;;) {
        size_t len = strlen(dir);
        while (len > rootlen && dir[len - 1] == '/')
            dir[--len] = '\0';
        int64_t q = quota_at(dir, v2);
        if (q > 0 && (best == 0 || q < best))
            best = q;
        if (len <= rootlen)
            break;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < rootlen)
            break;
        *slash = '\0';
        if (strlen(dir) < rootlen)
            break;
    }
    return best;
}

unsigned load_cpus_from(unsigned affinity, int64_t quota_m)
{
    unsigned n = affinity ? affinity : 1;
    if (quota_m > 0) {
        int64_t q = (quota_m + 999) / 1000;
        if (q < (int64_t)n)
            n = (unsigned)q;
    }
    return n ? n : 1;
}

/* This process's quota: the v1 cpu hierarchy when one is mounted (the controller lives there on
 * a hybrid host), else the unified v2 hierarchy. */
static int64_t own_quota(void)
{
    char buf[4096], v1dir[PATH_LEN], v1rel[PATH_LEN] = "", v2rel[PATH_LEN] = "";
    bool have_v1 = false, have_v2 = false;

    if (read_text("/proc/self/cgroup", buf, sizeof(buf)) != 0)
        return 0;
    /* Lines are "id:controllers:path". */
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        if (!*ctrls) {
            have_v2 = snprintf(v2rel, sizeof(v2rel), "%s", path) < (int)sizeof(v2rel);
            continue;
        }
        char list[256];
        snprintf(list, sizeof(list), ",%s,", ctrls);
        if (strstr(list, ",cpu,") &&
            snprintf(v1dir, sizeof(v1dir), CGROUP_ROOT "/%s", ctrls) < (int)sizeof(v1dir) &&
            snprintf(v1rel, sizeof(v1rel), "%s", path) < (int)sizeof(v1rel))
            have_v1 = true;
    }
    if (have_v1) {
        if (access(v1dir, F_OK) != 0)
            snprintf(v1dir, sizeof(v1dir), CGROUP_ROOT "/cpu");
        return load_cpus_quota_path(v1dir, v1rel, false);
    }
    if (have_v2)
        return load_cpus_quota_path(CGROUP_ROOT, v2rel, true);
    return 0;
}

unsigned load_cpus_default(void)
{
    cpu_set_t set;
    unsigned affinity;

    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        affinity = (unsigned)CPU_COUNT(&set);
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        affinity = n > 0 ? (unsigned)n : 1;
    }
    return load_cpus_from(affinity, own_quota());
}
