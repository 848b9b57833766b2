/* What the local platform's files share (local_int.h): the expansion of $WORKERS and
 * $PORT in the command's arguments (local.h) and the name check it uses, and whether the
 * variant's process has exited (which local_process.c's stop and wait and local_usage.c's window
 * both ask). Nothing here calls back into local.c, local_process.c or local_usage.c; the clock
 * and the sleep are core's (core/clock.h). */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "core/clock.h"

#include "local/local.h"
#include "local/local_int.h"

bool local__ephemeral_port(unsigned port, unsigned *lo, unsigned *hi)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
    unsigned a = 0, b = 0;
    bool ok = f && fscanf(f, "%u %u", &a, &b) == 2 && a <= b && b <= 65535;

    if (f)
        fclose(f);
    if (!ok) {
        a = 32768;
        b = 60999;
    }
    *lo = a;
    *hi = b;
    return port >= a && port <= b;
}

bool local__isalnum_ascii(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int local_expand_arg(const char *arg, const char *workers_env, unsigned workers, unsigned port,
                     char *out, size_t len)
{
    size_t o = 0, wl = strlen(workers_env);

    for (const char *p = arg; *p;) {
        char val[24];
        size_t skip = 0;
        if (p[0] == '$') {
            if (strncmp(p + 1, workers_env, wl) == 0 &&
                !(local__isalnum_ascii(p[1 + wl]) || p[1 + wl] == '_')) {
                skip = 1 + wl;
                snprintf(val, sizeof(val), "%u", workers);
            } else if (p[1] == '{' && strncmp(p + 2, workers_env, wl) == 0 && p[2 + wl] == '}') {
                skip = 3 + wl;
                snprintf(val, sizeof(val), "%u", workers);
            } else if (strncmp(p + 1, "PORT", 4) == 0 &&
                       !(local__isalnum_ascii(p[5]) || p[5] == '_')) {
                skip = 5;
                snprintf(val, sizeof(val), "%u", port);
            } else if (strncmp(p + 1, "{PORT}", 6) == 0) {
                skip = 7;
                snprintf(val, sizeof(val), "%u", port);
            }
        }
        if (skip) {
            size_t vl = strlen(val);
            if (o + vl >= len)
                return -E2BIG;
            memcpy(out + o, val, vl);
            o += vl;
            p += skip;
            continue;
        }
        if (o + 1 >= len)
            return -E2BIG;
        out[o++] = *p++;
    }
    out[o] = '\0';
    return 0;
}

/* Returns true when the variant's main process has exited (reaping it), describing how. */
bool local__exited(struct local *l, char *how, size_t len)
{
    if (l->pid <= 0)
        return true;
    if (!l->reaped) {
        int st;
        pid_t r = waitpid(l->pid, &st, WNOHANG);
        if (r == l->pid) {
            l->reaped = true;
            l->status = st;
        } else {
            return false;
        }
    }
    if (how) {
        if (WIFEXITED(l->status))
            snprintf(how, len, "exited with status %d after %.1f s", WEXITSTATUS(l->status),
                     clock_mono_s() - l->started);
        else if (WIFSIGNALED(l->status))
            snprintf(how, len, "killed by signal %d after %.1f s", WTERMSIG(l->status),
                     clock_mono_s() - l->started);
        else
            snprintf(how, len, "stopped after %.1f s", clock_mono_s() - l->started);
    }
    return true;
}
