#ifndef SIZEUP_LOCAL_LOCAL_H
#define SIZEUP_LOCAL_LOCAL_H

/* The local platform: each variant is COMMAND started on this machine, in its own process
 * group, with the variant's environment (WORKERS or --workers-env, and PORT), inside a cgroup
 * limited as a kubelet limits a container (src/local/cgroup.h). Where no cgroup is writable the
 * processes still run, and every fact and row says "limits not enforced". */

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "sweep/platform.h"

#define LOCAL_MAX_ARGS 256
#define LOCAL_ARG_MAX  4096 /* one argument after $WORKERS / $PORT expansion */

struct local_config {
    char *const *argv; /* borrowed: COMMAND and its arguments, argv[argc] == NULL */
    int argc;
    const char *workers_env; /* env var for the worker count; NULL: "WORKERS" */
    unsigned port;           /* the app's port on 127.0.0.1; also exported as PORT */
    const char *ready_path;  /* NULL: ready when the port accepts; else GET must return < 500 */
    const char *log_dir;     /* app stdout/stderr go to <log_dir>/<spec>.log; NULL: /dev/null */
    int64_t stop_grace_us;   /* SIGTERM -> SIGKILL; 0: 5 s */
    bool no_cgroup;          /* never use cgroups (tests of the unenforced path) */
};

/* Creates the platform into *out (ops + self). Borrows cfg's strings until ops->free. Returns 0,
 * or -EINVAL (empty command, too many arguments) / -ENOMEM. */
int local_platform_new(const struct local_config *cfg, struct platform *out /* OUT */, char *err);

/* Expands "$NAME", "${NAME}" for the worker-count variable and PORT in arg into out (len bytes).
 * Other text, including other $-words, is copied unchanged. Returns 0 or -E2BIG. */
int local_expand_arg(const char *arg, const char *workers_env, unsigned workers, unsigned port,
                     char *out /* OUT */, size_t len);

#endif
