/* The local variant's process group: start it in its cgroup (apply), wait until it answers,
 * and stop it with everything it spawned, reaping as we go. */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "local/local_int.h"

extern char **environ;

/* ---- apply --------------------------------------------------------------------------------- */

/* Connects to 127.0.0.1:port within timeout_ms. Returns a connected fd or -1. */
static int connect_port(unsigned port, int timeout_ms)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
        return fd;
    if (errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int soerr = 0;
    socklen_t sl = sizeof(soerr);
    if (poll(&p, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 ||
        soerr != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* GET path on the port; returns the HTTP status, or -1 when no status line came in time. */
static int http_status(unsigned port, const char *path, int timeout_ms)
{
    char req[1024], buf[128];
    int fd = connect_port(port, timeout_ms), status = -1;
    size_t got = 0;

    if (fd < 0)
        return -1;
    int n = snprintf(req, sizeof(req),
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUser-Agent: sizeup-ready\r\n"
                     "Connection: close\r\n\r\n",
                     path, port);
    if (n <= 0 || (size_t)n >= sizeof(req) || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
        goto out;
    double deadline = clock_mono_s() + timeout_ms / 1000.0;
    while (got < sizeof(buf) - 1) {
        int left = (int)((deadline - clock_mono_s()) * 1000);
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) != 1)
            break;
        ssize_t r = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
        buf[got] = '\0';
        if (strchr(buf, '\n'))
            break;
    }
    buf[got] = '\0';
    if (strncmp(buf, "HTTP/1.", 7) == 0 && got >= 12)
        status = (int)strtol(buf + 9, NULL, 10);
out:
    close(fd);
    return status;
}

static void safe_name(const char *spec, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = spec; *p && o + 1 < len; p++)
        out[o++] = (local__isalnum_ascii(*p) || *p == '.' || *p == '-') ? *p : '_';
    out[o] = '\0';
}

/* Builds the child's environment: ours without the two variables we set, then those. Returns an
 * owned array whose strings [0..n) are borrowed from environ except the last two (owned). */
static char **build_env(const char *workers_env, unsigned workers, unsigned port)
{
    size_t n = 0, wl = strlen(workers_env);
    while (environ[n] && n < MAX_ENV)
        n++;
    char **env = calloc(n + 3, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if ((strncmp(environ[i], workers_env, wl) == 0 && environ[i][wl] == '=') ||
            strncmp(environ[i], "PORT=", 5) == 0)
            continue;
        env[k++] = environ[i];
    }
    char *w = malloc(wl + 24), *p = malloc(24);
    if (!w || !p) {
        free(w);
        free(p);
        free(env);
        return NULL;
    }
    snprintf(w, wl + 24, "%s=%u", workers_env, workers);
    snprintf(p, 24, "PORT=%u", port);
    env[k++] = w;
    env[k++] = p;
    env[k] = NULL;
    return env;
}

static void free_env(char **env)
{
    if (!env)
        return;
    size_t n = 0;
    while (env[n])
        n++;
    /* The last two entries are ours. */
    if (n >= 2) {
        free(env[n - 1]);
        free(env[n - 2]);
    }
    free(env);
}

static void free_args(char **args)
{
    for (size_t i = 0; args && args[i]; i++)
        free(args[i]);
    free(args);
}

/* How long apply waits for a port that another socket holds: a connection's local end that is
 * closing lets go within milliseconds; one held longer (an earlier replica's pooled connection
 * to a database, say) will not, and the app is started anyway (below). */
#define PORT_HELD_WAIT_US 2000000LL

/* 0 when a server could bind the port now, bound as servers bind it (0.0.0.0, SO_REUSEADDR, so
 * a TIME_WAIT an earlier variant left does not count); -errno while another socket holds it:
 * a listener, or an outgoing connection's local end. */
static int port_bindable(unsigned port)
{
    struct sockaddr_in a;
    int one = 1, rc = 0, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -errno;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        rc = -errno;
    close(fd);
    return rc;
}

/* Someone else answering on the port would be measured instead of the app: refuses then. A
 * port that nothing answers on but another socket holds (an outgoing connection's local end:
 * the kernel hands the ports of its ephemeral range to connections, the generator's and the
 * app's own) is waited for, up to PORT_HELD_WAIT_US; still held, the app starts anyway (it may
 * bind one address only, which the other socket need not conflict with) and l->port_held says
 * why, for the failure's reason should the app then exit. */
static int check_port(struct local *l, struct platform_failure *fail, char *err)
{
    unsigned port = l->cfg.port, lo, hi;
    int probe = connect_port(port, 100);

    l->port_held[0] = '\0';
    if (probe >= 0) {
        close(probe);
        fail->kind = PLATFORM_FAIL_APPLY;
        snprintf(fail->reason, sizeof(fail->reason),
                 "port %u already answers before the app started (another process?)", port);
        return err_set(err, -EADDRINUSE, "%s", fail->reason);
    }
    int rc = port_bindable(port);
    if (rc != -EADDRINUSE)
        return 0;
    log_info("local.port",
             "port=%u held by another socket, nothing listening; waiting up to %.0f s", port,
             (double)PORT_HELD_WAIT_US / 1e6);
    int64_t deadline = clock_mono_us() + PORT_HELD_WAIT_US;
    while (rc == -EADDRINUSE && clock_mono_us() < deadline) {
        clock_sleep_us(POLL_MS * 1000);
        rc = port_bindable(port);
    }
    if (rc != -EADDRINUSE)
        return 0;
    if (local__ephemeral_port(port, &lo, &hi))
        snprintf(l->port_held, sizeof(l->port_held),
                 "port %u was held by another socket (it is in the ephemeral range %u-%u, where "
                 "outgoing connections get their ports: a --port below %u avoids it)",
                 port, lo, hi, lo);
    else
        snprintf(l->port_held, sizeof(l->port_held), "port %u was held by another socket", port);
    log_warn("local.port", "port=%u still held after %.0f s; starting the app anyway", port,
             (double)PORT_HELD_WAIT_US / 1e6);
    return 0;
}

/* The command's arguments with $WORKERS and $PORT expanded for v, NULL-terminated, into
 * *out (owned, free with free_args; also on failure). */
static int build_args(const struct local *l, const struct variant *v, char ***out, char *err)
{
    char **args = calloc((size_t)l->cfg.argc + 1, sizeof(*args));

    *out = args;
    if (!args)
        return err_set(err, -ENOMEM, "out of memory");
    for (int i = 0; i < l->cfg.argc; i++) {
        args[i] = malloc(LOCAL_ARG_MAX);
        if (!args[i])
            return err_set(err, -ENOMEM, "out of memory");
        if (local_expand_arg(l->cfg.argv[i], l->workers_env, v->workers, l->cfg.port, args[i],
                             LOCAL_ARG_MAX) != 0)
            return err_set(err, -E2BIG, "argument %d is longer than %d characters once expanded", i,
                           LOCAL_ARG_MAX);
    }
    return 0;
}

/* With limits enforced, the variant's own cgroup (named after the sequence and name) with its
 * CPU and memory limits; l->have_cg says whether one was made. */
static int make_cgroup(struct local *l, const struct variant *v, const char *name, char *err)
{
    char cgname[128], e[ERR_LEN] = "";

    if (!l->enforced)
        return 0;
    snprintf(cgname, sizeof(cgname), "v%u-%s", l->seq, name);
    int rc = cg_create(&l->parent, cgname, v->cpu_millicores, v->memory_bytes, &l->cg, e);
    if (rc)
        return err_set(err, rc, "%s", e);
    l->have_cg = true;
    return 0;
}

/* The descriptor the variant's stdout and stderr go to: its log under the log directory (its
 * path in l->log_path), else /dev/null. Returns the fd (owned) or -1. */
static int open_log(struct local *l, const char *name)
{
    int logfd = -1;

    if (l->cfg.log_dir) {
        snprintf(l->log_path, sizeof(l->log_path), "%s/%s.log", l->cfg.log_dir, name);
        logfd = open(l->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    } else {
        l->log_path[0] = '\0';
    }
    if (logfd < 0)
        logfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    return logfd;
}

/* The child after fork: its own process group, default signals, its cgroup, stdin from
 * /dev/null, stdout and stderr to logfd, then exec. Only async-signal-safe calls until exec;
 * a failure writes its errno to errfd and exits. Never returns. */
static _Noreturn void exec_child(const struct local *l, char **args, char **env, int nullin,
                                 int logfd, int errfd)
{
    int code;
    sigset_t all;
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (l->have_cg && (code = cg_enter(&l->cg, getpid())) != 0) {
        int ecode = -code;
        (void)!write(errfd, &ecode, sizeof(ecode));
        _exit(126);
    }
    if (nullin >= 0)
        dup2(nullin, 0);
    if (logfd >= 0) {
        dup2(logfd, 1);
        dup2(logfd, 2);
    }
    execvpe(args[0], args, env);
    code = errno;
    (void)!write(errfd, &code, sizeof(code));
    _exit(127);
}

/* Forks the variant's process (exec_child), records it in l, and waits on the close-on-exec
 * pipe until the exec happened (the pipe closes) or failed (the child's errno comes back, a
 * failure described in fail). A fork or pipe error returns before any child exists. */
static int spawn(struct local *l, char **args, char **env, int logfd, struct platform_failure *fail,
                 char *err)
{
    char ebuf[64];
    int pipefd[2] = {-1, -1}, rc = 0;
    int nullin = open("/dev/null", O_RDONLY | O_CLOEXEC);

    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        rc = err_set(err, -errno, "pipe: %s", err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    pid_t pid = fork();
    if (pid < 0) {
        rc = err_set(err, -errno, "fork: %s", err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    if (pid == 0)
        exec_child(l, args, env, nullin, logfd, pipefd[1]);
    setpgid(pid, pid); /* also from the parent: no window where a signal misses the group */
    l->pid = pid;
    l->reaped = false;
    l->started = clock_mono_s();
    close(pipefd[1]);
    pipefd[1] = -1;
    int child_errno = 0;
    ssize_t got;
    do {
        got = read(pipefd[0], &child_errno, sizeof(child_errno));
    } while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof(child_errno)) {
        fail->kind = PLATFORM_FAIL_APPLY;
        snprintf(fail->reason, sizeof(fail->reason), "cannot run '%s': %s", args[0],
                 err_str(child_errno, ebuf, sizeof(ebuf)));
        rc = err_set(err, -child_errno, "%s", fail->reason);
    }
out:
    if (nullin >= 0)
        close(nullin);
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    return rc;
}

int local__apply(void *self, const struct variant *v, struct platform_failure *fail, char *err)
{
    struct local *l = self;
    char **args = NULL, **env = NULL, name[96];
    int logfd = -1, rc = 0;

    memset(fail, 0, sizeof(*fail));
    if (l->pid > 0)
        local__stop_variant(self, NULL);
    l->v = v;
    l->seq++;
    if ((rc = check_port(l, fail, err)))
        return rc;
    if ((rc = build_args(l, v, &args, err)))
        goto fail_apply;
    env = build_env(l->workers_env, v->workers, l->cfg.port);
    if (!env) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto fail_apply;
    }
    safe_name(v->spec, name, sizeof(name));
    if (l->in_set) /* a scale-out's replica: <variant>-r<i> for its log and cgroup */
        snprintf(name + strlen(name), sizeof(name) - strlen(name), "-r%u", l->replica);
    if ((rc = make_cgroup(l, v, name, err)))
        goto fail_apply;
    logfd = open_log(l, name);
    rc = spawn(l, args, env, logfd, fail, err);
    if (rc && l->pid <= 0)
        goto fail_apply; /* no child: the pipe or the fork failed */
    if (!rc)
        log_info("local.start", "variant=%s pid=%d cgroup=%s", v->spec, (int)l->pid,
                 l->have_cg ? l->cg.memory : "none");
    goto out;
fail_apply:
    fail->kind = PLATFORM_FAIL_APPLY;
    snprintf(fail->reason, sizeof(fail->reason), "%s", err ? err : "could not start");
out:
    if (logfd >= 0)
        close(logfd);
    free_args(args);
    free_env(env);
    if (rc && l->pid <= 0 && l->have_cg) {
        cg_destroy(&l->cg, NULL);
        l->have_cg = false;
    }
    return rc;
}

/* ---- wait_ready ---------------------------------------------------------------------------- */

/* The last non-empty line of the variant's log, for a FAILED row's reason. */
static void log_tail(const struct local *l, char *out, size_t len)
{
    char buf[512];
    out[0] = '\0';
    if (!l->log_path[0])
        return;
    int fd = open(l->log_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t start = end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, start);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    char *last = strrchr(buf, '\n');
    last = last ? last + 1 : buf;
    size_t o = 0;
    for (; *last && o + 1 < len; last++)
        out[o++] = (*last >= 32 && *last < 127) ? *last : '?';
    out[o] = '\0';
}

int local__wait_ready(void *self, int64_t timeout_us, volatile sig_atomic_t *stop,
                      struct platform_failure *fail, char *err)
{
    struct local *l = self;
    double deadline = clock_mono_s() + (double)timeout_us / 1e6;
    int last_status = -1;
    char how[128], tail[200];

    memset(fail, 0, sizeof(*fail));
    for (;;) {
        if (stop && *stop) {
            fail->kind = PLATFORM_FAIL_CANCELLED;
            snprintf(fail->reason, sizeof(fail->reason), "cancelled");
            return err_set(err, -ECANCELED, "cancelled");
        }
        if (local__exited(l, how, sizeof(how))) {
            uint64_t ooms = 0;
            bool oom = l->have_cg && cg_oom_kills(&l->cg, &ooms, NULL) == 0 && ooms > 0;
            log_tail(l, tail, sizeof(tail));
            fail->kind = oom ? PLATFORM_FAIL_OOM : PLATFORM_FAIL_DIED;
            snprintf(fail->reason, sizeof(fail->reason), "%s%s%s%s%s%s%s",
                     oom ? "OOM-killed at the memory limit; " : "", l->port_held,
                     l->port_held[0] ? "; " : "", how, tail[0] ? " (last output: \"" : "", tail,
                     tail[0] ? "\")" : "");
            return err_set(err, -ECHILD, "%s", fail->reason);
        }
        int fd = connect_port(l->cfg.port, 200);
        if (fd >= 0) {
            close(fd);
            if (!l->cfg.ready_path)
                return 0;
            last_status = http_status(l->cfg.port, l->cfg.ready_path, 1000);
            if (last_status > 0 && last_status < 500)
                return 0;
        }
        if (clock_mono_s() >= deadline)
            break;
        clock_sleep_us(POLL_MS * 1000);
    }
    fail->kind = PLATFORM_FAIL_NEVER_READY;
    if (last_status >= 500)
        snprintf(fail->reason, sizeof(fail->reason),
                 "never ready: GET %s still returned %d after %.0f s", l->cfg.ready_path,
                 last_status, (double)timeout_us / 1e6);
    else
        snprintf(fail->reason, sizeof(fail->reason),
                 "never ready: nothing answered on 127.0.0.1:%u within %.0f s", l->cfg.port,
                 (double)timeout_us / 1e6);
    return err_set(err, -ETIMEDOUT, "%s", fail->reason);
}

int local__target_url(void *self, char *buf, size_t len, char *err)
{
    struct local *l = self;
    int n = snprintf(buf, len, "http://127.0.0.1:%u", l->cfg.port);
    if (n < 0 || (size_t)n >= len)
        return err_set(err, -ENAMETOOLONG, "URL buffer too small");
    return 0;
}

/* ---- stop ---------------------------------------------------------------------------------- */

/* Reaps every exited child of ours without blocking: sizeup is a child subreaper (set in
 * local_platform_new), so the app's orphaned grandchildren come to us and would otherwise stay
 * zombies, which still count as members of the process group. The main process's status is
 * kept. */
static void reap_children(struct local *l)
{
    for (;;) {
        int st;
        pid_t r = waitpid(-1, &st, WNOHANG);
        if (r <= 0)
            return;
        if (r == l->pid) {
            l->reaped = true;
            l->status = st;
        }
    }
}

/* True when a live (not zombie) process is in process group pgid, from /proc. */
static bool group_alive(pid_t pgid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    bool alive = false;

    if (!d)
        return kill(-pgid, 0) == 0;
    while (!alive && (e = readdir(d))) {
        char path[64], buf[512];
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        /* pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses. */
        char *rp = strrchr(buf, ')');
        char state;
        long ppid, pgrp;
        if (rp && sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid &&
            state != 'Z' && state != 'X')
            alive = true;
    }
    closedir(d);
    return alive;
}

/* True when nothing of the variant is left: the main process reaped, and no live process in its
 * cgroup (every process of the variant, whatever its process group) or, without a cgroup, in its
 * process group. Zombies do not count: they hold no resources and are reaped above. */
static bool all_gone(struct local *l)
{
    reap_children(l);
    local__exited(l, NULL, 0);
    if (!l->reaped)
        return false;
    if (l->have_cg) {
        pid_t pids[4];
        size_t n = 0;
        if (cg_pids(&l->cg, pids, 4, &n, NULL) == 0)
            return n == 0;
    }
    return !group_alive(l->pid);
}

static void signal_all(struct local *l, int sig)
{
    kill(-l->pid, sig);
    if (l->have_cg)
        cg_signal_all(&l->cg, sig, NULL);
}

int local__stop_variant(void *self, char *err)
{
    struct local *l = self;
    int rc = 0;

    local__stop_sampler(l);
    if (l->pid > 0) {
        double grace = l->cfg.stop_grace_us > 0 ? (double)l->cfg.stop_grace_us / 1e6 : 5.0;
        signal_all(l, SIGTERM);
        double until = clock_mono_s() + grace;
        while (!all_gone(l) && clock_mono_s() < until)
            clock_sleep_us(10 * 1000);
        if (!all_gone(l)) {
            log_warn("local.stop", "variant=%s pid=%d action=SIGKILL after_s=%.1f",
                     l->v ? l->v->spec : "?", (int)l->pid, grace);
            signal_all(l, SIGKILL);
            until = clock_mono_s() + (double)KILL_WAIT_US / 1e6;
            while (!all_gone(l) && clock_mono_s() < until)
                clock_sleep_us(10 * 1000);
        }
        if (!l->reaped && waitpid(l->pid, &l->status, 0) == l->pid)
            l->reaped = true;
        if (!all_gone(l))
            rc = err_set(err, -EBUSY, "processes of variant %s survived SIGKILL",
                         l->v ? l->v->spec : "?");
        l->pid = 0;
    }
    if (l->have_cg) {
        int r = cg_destroy(&l->cg, rc ? NULL : err);
        if (r && !rc)
            rc = r;
        if (!r)
            l->have_cg = false;
    }
    return rc;
}
