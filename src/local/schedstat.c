/* Per-task scheduler waits from /proc (contracts in schedstat.h). */

#include "local/schedstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int schedstat_parse(const char *text, uint64_t *run_ns, uint64_t *wait_ns)
{
    char *end;
    const char *s = text;

    if (!s)
        return -EINVAL;
    while (*s == ' ')
        s++;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    unsigned long long run = strtoull(s, &end, 10);
    if (errno || end == s || *end != ' ')
        return -EINVAL;
    s = end + 1;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    unsigned long long wait = strtoull(s, &end, 10);
    if (errno || end == s || (*end && *end != ' ' && *end != '\n'))
        return -EINVAL;
    if (run_ns)
        *run_ns = run;
    if (wait_ns)
        *wait_ns = wait;
    return 0;
}

static int read_task(pid_t pid, pid_t tid, uint64_t *wait_ns)
{
    char p[96], buf[128];
    snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    return schedstat_parse(buf, NULL, wait_ns);
}

void sched_waits_read(const pid_t *pids, size_t npids, struct sched_waits *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < npids; i++) {
        char p[64];
        snprintf(p, sizeof(p), "/proc/%d/task", (int)pids[i]);
        DIR *d = opendir(p);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            char *end;
            long tid = strtol(e->d_name, &end, 10);
            uint64_t w;
            if (end == e->d_name || *end || tid <= 0 || read_task(pids[i], (pid_t)tid, &w))
                continue;
            out->ok = true;
            if (out->n == SCHED_WAITS_MAX) {
                out->full = true;
                continue;
            }
            out->t[out->n].tid = (pid_t)tid;
            out->t[out->n].wait_ns = w;
            out->n++;
        }
        closedir(d);
    }
}

uint64_t sched_waits_delta(const struct sched_waits *begin, const struct sched_waits *end)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < end->n; i++) {
        uint64_t w0 = 0;
        for (size_t j = 0; j < begin->n; j++) {
            if (begin->t[j].tid == end->t[i].tid) {
                w0 = begin->t[j].wait_ns;
                break;
            }
        }
        if (end->t[i].wait_ns > w0)
            sum += end->t[i].wait_ns - w0;
    }
    return sum;
}

void sched_waits_merge(struct sched_waits *seen, const struct sched_waits *now)
{
    seen->ok = seen->ok || now->ok;
    seen->full = seen->full || now->full;
    for (size_t i = 0; i < now->n; i++) {
        size_t j = 0;
        while (j < seen->n && seen->t[j].tid != now->t[i].tid)
            j++;
        if (j == seen->n) {
            if (seen->n == SCHED_WAITS_MAX) {
                seen->full = true;
                continue;
            }
            seen->t[seen->n++].tid = now->t[i].tid;
        }
        seen->t[j].wait_ns = now->t[i].wait_ns;
    }
}
