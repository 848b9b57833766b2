#ifndef SIZEUP_LOCAL_SCHEDSTAT_H
#define SIZEUP_LOCAL_SCHEDSTAT_H

/* How long tasks waited for a CPU: the scheduler's per-task statistics,
 * /proc/<pid>/task/<tid>/schedstat ("<ns on CPU> <ns runnable but waiting> <timeslices>", kept
 * by CONFIG_SCHED_INFO, which every distribution kernel has). The wait is time a task was
 * runnable but not running: queued behind other work, and (as measured on Linux 6.18) time its
 * cgroup was throttled by its own CPU quota. Works the same under cgroup v1 and v2, where a
 * cgroup's cpu.pressure exists only on v2. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SCHED_WAITS_MAX 256 /* tasks followed per window; more are left out (said by ->full) */

/* The wait so far of each task of some processes at one moment. */
struct sched_waits {
    size_t n;
    bool ok;   /* at least one task's schedstat was read */
    bool full; /* more tasks than SCHED_WAITS_MAX */
    struct {
        pid_t tid;
        uint64_t wait_ns;
    } t[SCHED_WAITS_MAX];
};

/* Parses the text of a schedstat file into the time on CPU and the runnable wait (either
 * pointer may be NULL). Returns 0, or -EINVAL when the text does not start with two numbers. */
int schedstat_parse(const char *text, uint64_t *run_ns /* OUT */, uint64_t *wait_ns /* OUT */);

/* Reads the wait of every task (thread) of each of the npids processes into *out. Tasks that
 * vanish meanwhile are skipped. Never fails: out->ok false when nothing could be read. */
void sched_waits_read(const pid_t *pids, size_t npids, struct sched_waits *out /* OUT */);

/* Merges the reading now into seen: each task's wait updated, tasks not seen before added (up
 * to SCHED_WAITS_MAX); tasks that ended keep their last reading. */
void sched_waits_merge(struct sched_waits *seen, const struct sched_waits *now);

/* Nanoseconds the tasks of end waited since begin: per task, its wait less its wait in begin
 * (its whole wait when it started after begin). A task that ended before end is left out. */
uint64_t sched_waits_delta(const struct sched_waits *begin, const struct sched_waits *end);

#endif
