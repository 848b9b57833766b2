/* Exec credential plugins: parsing the ExecCredential a plugin prints, building the
 * KUBERNETES_EXEC_INFO it reads, and running it with a bounded time and output. See
 * exec_cred.h. Nothing the plugin prints is ever copied into an error or a log line. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/clock.h"
#include "core/err.h"
#include "kube/exec_cred.h"
#include "kube/kube_int.h"
#include "kube/objects.h"

extern char **environ;

void kube_exec_free(struct kube_exec *ex)
{
    if (!ex)
        return;
    free(ex->api_version);
    free(ex->command);
    for (size_t i = 0; i < ex->nargs; i++)
        free(ex->args[i]);
    for (size_t i = 0; i < ex->nenv; i++) {
        free(ex->env[i].name);
        free(ex->env[i].value);
    }
    free(ex->install_hint);
    free(ex->cluster_json);
    memset(ex, 0, sizeof(*ex));
}

static void wipe(void *p, size_t n)
{
    if (p) {
        explicit_bzero(p, n);
        free(p);
    }
}

void kube_exec_cred_clear(struct kube_exec_cred *c)
{
    if (!c)
        return;
    if (c->token)
        wipe(c->token, strlen(c->token));
    wipe(c->cert, c->cert_len);
    wipe(c->key, c->key_len);
    memset(c, 0, sizeof(*c));
}

int kube_exec_interactive_parse(const char *s, enum kube_exec_interactive *out)
{
    if (s && strcmp(s, "Never") == 0)
        *out = KUBE_EXEC_NEVER;
    else if (s && strcmp(s, "IfAvailable") == 0)
        *out = KUBE_EXEC_IF_AVAILABLE;
    else if (s && strcmp(s, "Always") == 0)
        *out = KUBE_EXEC_ALWAYS;
    else
        return -EINVAL;
    return 0;
}

/* ---- the ExecCredential ------------------------------------------------------------------- */

/* A token is one header-safe word (printable ASCII, no spaces) of at most KUBE_TOKEN_MAX - 1
 * bytes: anything else could inject header lines. */
static bool token_ok(const char *t)
{
    size_t n = strlen(t);
    if (n == 0 || n >= KUBE_TOKEN_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f)
            return false;
    return true;
}

static int dup_pem(const char *s, unsigned char **out, size_t *len)
{
    *len = strlen(s);
    *out = (unsigned char *)strdup(s);
    return *out ? 0 : -ENOMEM;
}

/* True when s is short printable ASCII: the only part of a plugin's output an error may quote
 * (its apiVersion), and only then. */
static bool plain(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] >= 0x7f || n >= 64)
            return false;
    return true;
}

/* A parser, long on purpose: the ExecCredential's fields checked one after another against the
 * apiVersion asked for, without ever copying the plugin's output into an error. */
int kube_exec_parse(const char *json, size_t len, const char *api_version,
                    struct kube_exec_cred *out, char *err)
{
    cJSON *root = NULL;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (len == 0)
        return err_set(err, -EBADMSG, "printed nothing");
    root = cJSON_ParseWithLength(json, len);
    if (!root || !cJSON_IsObject(root)) {
        rc = err_set(err, -EBADMSG, "printed something that is not a JSON object");
        goto out;
    }
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "kind"));
    const char *av = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "apiVersion"));
    if (!kind || strcmp(kind, "ExecCredential") != 0) {
        rc = err_set(err, -EBADMSG, "printed JSON that is not an ExecCredential");
        goto out;
    }
    if (!av || !api_version || strcmp(av, api_version) != 0) {
        rc = err_set(err, -EBADMSG, "returned apiVersion %.64s, but the kubeconfig asks for %.64s",
                     !av         ? "(none)"
                     : plain(av) ? av
                                 : "(unprintable)",
                     api_version ? api_version : "(none)");
        goto out;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "status");
    if (!cJSON_IsObject(st)) {
        rc = err_set(err, -EBADMSG, "returned no status");
        goto out;
    }
    const cJSON *tokj = cJSON_GetObjectItemCaseSensitive(st, "token");
    const cJSON *certj = cJSON_GetObjectItemCaseSensitive(st, "clientCertificateData");
    const cJSON *keyj = cJSON_GetObjectItemCaseSensitive(st, "clientKeyData");
    const cJSON *expj = cJSON_GetObjectItemCaseSensitive(st, "expirationTimestamp");
    const char *tok = cJSON_GetStringValue(tokj), *cert = cJSON_GetStringValue(certj),
               *key = cJSON_GetStringValue(keyj);
    if ((tokj && !cJSON_IsNull(tokj) && !tok) || (certj && !cJSON_IsNull(certj) && !cert) ||
        (keyj && !cJSON_IsNull(keyj) && !key)) {
        rc = err_set(err, -EBADMSG, "returned a status field that is not a string");
        goto out;
    }
    if (tok && !tok[0])
        tok = NULL;
    if (cert && !cert[0])
        cert = NULL;
    if (key && !key[0])
        key = NULL;
    if (!cert != !key) {
        rc = err_set(err, -EBADMSG,
                     "returned a client certificate without a key, or a key "
                     "without a certificate");
        goto out;
    }
    if (!tok && !cert) {
        rc = err_set(err, -EBADMSG, "returned neither a token nor a client certificate and key");
        goto out;
    }
    if (tok && !token_ok(tok)) {
        rc = err_set(err, -EBADMSG,
                     "returned a token with characters not allowed in a token, "
                     "or longer than %u bytes",
                     KUBE_TOKEN_MAX - 1);
        goto out;
    }
    if (cert && (strncmp(cert, "-----BEGIN", 10) != 0 || strncmp(key, "-----BEGIN", 10) != 0)) {
        rc = err_set(err, -EBADMSG, "returned a client certificate or key that is not PEM");
        goto out;
    }
    if (expj && !cJSON_IsNull(expj)) {
        const char *es = cJSON_GetStringValue(expj);
        struct timespec ts;
        if (!es || kube_time_parse(es, &ts) != 0) {
            rc = err_set(err, -EBADMSG,
                         "returned an expirationTimestamp that is not an RFC 3339 "
                         "time");
            goto out;
        }
        /* 0 means "never"; the epoch itself is long expired. */
        out->expiry = ts.tv_sec ? ts.tv_sec : 1;
    }
    if (tok && !(out->token = strdup(tok))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (cert &&
        (dup_pem(cert, &out->cert, &out->cert_len) || dup_pem(key, &out->key, &out->key_len))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
out:
    cJSON_Delete(root);
    if (rc)
        kube_exec_cred_clear(out);
    return rc;
}

char *kube_exec_info(const struct kube_exec *ex, bool interactive)
{
    cJSON *root = cJSON_CreateObject(), *spec = NULL, *cl = NULL;
    char *s = NULL;

    if (!root || !cJSON_AddStringToObject(root, "kind", "ExecCredential") ||
        !cJSON_AddStringToObject(root, "apiVersion",
                                 ex->api_version ? ex->api_version : KUBE_EXEC_API_V1) ||
        !(spec = cJSON_AddObjectToObject(root, "spec")) ||
        !cJSON_AddBoolToObject(spec, "interactive", interactive))
        goto out;
    if (ex->provide_cluster_info && ex->cluster_json) {
        cl = cJSON_Parse(ex->cluster_json);
        if (!cl || !cJSON_AddItemToObject(spec, "cluster", cl)) {
            cJSON_Delete(cl);
            goto out;
        }
    }
    s = cJSON_PrintUnformatted(root);
out:
    cJSON_Delete(root);
    return s;
}

/* ---- running the plugin ------------------------------------------------------------------- */

/* err = "exec plugin 'cmd': <what>" and, when there is one, " (install hint: <hint>)", all on
 * one line. Returns code. */
static int fail(const struct kube_exec *ex, char *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const struct kube_exec *ex, char *err, int code, const char *fmt, ...)
{
    char what[ERR_LEN], hint[160] = "";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (ex->install_hint && ex->install_hint[0]) {
        snprintf(hint, sizeof(hint), " (install hint: %s)", ex->install_hint);
        for (char *p = hint; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
    }
    return err_set(err, code, "exec plugin '%.64s': %s%s", ex->command ? ex->command : "", what,
                   hint);
}

static long timeout_ms(const struct kube_exec *ex)
{
    if (ex->timeout_ms > 0)
        return ex->timeout_ms;
    const char *e = getenv("SIZEUP_EXEC_TIMEOUT");
    if (e && *e) {
        char *end;
        long s = strtol(e, &end, 10);
        if (*end == '\0' && s > 0 && s <= 3600)
            return s * 1000;
    }
    return KUBE_EXEC_TIMEOUT_MS;
}

/* The plugin's environment: ours without the names the kubeconfig sets (and without
 * KUBERNETES_EXEC_INFO), then the kubeconfig's, then KUBERNETES_EXEC_INFO=info. Owned array of
 * owned strings, NULL-terminated; free with free_env. */
static void free_env(char **envp)
{
    if (!envp)
        return;
    for (char **p = envp; *p; p++)
        free(*p);
    free(envp);
}

static bool env_named(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

static char **build_env(const struct kube_exec *ex, const char *info)
{
    size_t n = 0, k = 0;
    for (char **p = environ; p && *p; p++)
        n++;
    char **envp = calloc(n + ex->nenv + 2, sizeof(*envp));
    if (!envp)
        return NULL;
    for (char **p = environ; p && *p; p++) {
        bool skip = env_named(*p, "KUBERNETES_EXEC_INFO");
        for (size_t i = 0; !skip && i < ex->nenv; i++)
            skip = env_named(*p, ex->env[i].name);
        if (skip)
            continue;
        if (!(envp[k++] = strdup(*p)))
            goto oom;
    }
    for (size_t i = 0; i < ex->nenv; i++) {
        size_t len = strlen(ex->env[i].name) + strlen(ex->env[i].value) + 2;
        if (!(envp[k] = malloc(len)))
            goto oom;
        snprintf(envp[k++], len, "%s=%s", ex->env[i].name, ex->env[i].value);
    }
    size_t len = strlen("KUBERNETES_EXEC_INFO=") + strlen(info) + 1;
    if (!(envp[k] = malloc(len)))
        goto oom;
    snprintf(envp[k++], len, "KUBERNETES_EXEC_INFO=%s", info);
    return envp;
oom:
    free_env(envp);
    return NULL;
}

/* Reads the child's stdout from fd until EOF, the cap or the deadline. 0, -EFBIG, -ETIMEDOUT
 * or -errno. *buf is owned by the caller (NUL-terminated) even on failure. */
static int read_output(int fd, long long deadline_ms, char **buf, size_t *len)
{
    size_t alloc = 0;
    *buf = NULL;
    *len = 0;
    for (;;) {
        long long left = deadline_ms - kube__now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd pfd = {fd, POLLIN, 0};
        int pr = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -errno;
        if (pr == 0)
            continue;
        if (*len + 4096 + 1 > alloc) {
            size_t want = alloc ? alloc * 2 : 8192;
            if (want > KUBE_EXEC_OUTPUT_MAX + 4096 + 1)
                want = KUBE_EXEC_OUTPUT_MAX + 4096 + 1;
            char *nb = realloc(*buf, want);
            if (!nb)
                return -ENOMEM;
            *buf = nb;
            alloc = want;
        }
        ssize_t r = read(fd, *buf + *len, alloc - 1 - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        *len += (size_t)r;
        (*buf)[*len] = '\0';
        if (*len > KUBE_EXEC_OUTPUT_MAX)
            return -EFBIG;
    }
    if (!*buf && !(*buf = calloc(1, 1)))
        return -ENOMEM;
    return 0;
}

/* Kills pid and, when it leads its own process group, whatever it started. */
static void kill_plugin(pid_t pid, bool group)
{
    if (group)
        kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

/* Waits for pid up to deadline_ms, then kills it; *status as waitpid's. */
static int reap(pid_t pid, bool group, long long deadline_ms, int *status)
{
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        if (w < 0 && errno != EINTR)
            return -errno;
        if (kube__now_ms() >= deadline_ms) {
            kill_plugin(pid, group);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR)
                ;
            return -ETIMEDOUT;
        }
        clock_sleep_us(20 * 1000);
    }
}

/* Starts the plugin with envp, its stdout the write end of pipefd: not interactive, stdin from
 * /dev/null, stderr discarded, in its own process group. Returns 0 with *pid set, or an error
 * (err says why; *pid stays -1). */
static int spawn_plugin(const struct kube_exec *ex, bool interactive, char **envp, int pipefd[2],
                        pid_t *pid, char *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    char *argv[KUBE_EXEC_ARGS_MAX + 2];
    bool fa_init = false, attr_init = false;
    char why[ERR_LEN];
    int rc = 0;

    *pid = -1;
    argv[0] = ex->command;
    for (size_t i = 0; i < ex->nargs; i++)
        argv[i + 1] = ex->args[i];
    argv[ex->nargs + 1] = NULL;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        rc = fail(ex, err, -ENOMEM, "out of memory");
        goto out;
    }
    fa_init = true;
    /* Not interactive: stdin from /dev/null, stderr discarded (a plugin's messages could carry
     * anything; none may reach a log). Interactive: the user's terminal, as kubectl does. */
    if (posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO) ||
        (!interactive &&
         (posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0) ||
          posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0)))) {
        rc = fail(ex, err, -ENOMEM, "out of memory");
        goto out;
    }
    /* Its own process group when not interactive, so a timeout kills what it started too (an
     * interactive one keeps the terminal's group, or it could not read from it). */
    if (posix_spawnattr_init(&attr) != 0) {
        rc = fail(ex, err, -ENOMEM, "out of memory");
        goto out;
    }
    attr_init = true;
    if (!interactive && (posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP) ||
                         posix_spawnattr_setpgroup(&attr, 0))) {
        rc = fail(ex, err, -ENOMEM, "out of memory");
        goto out;
    }
    int sp = posix_spawnp(pid, ex->command, &fa, &attr, argv, envp);
    if (sp != 0) {
        *pid = -1;
        rc = fail(ex, err, -sp, "cannot run it: %s", err_str(-sp, why, sizeof(why)));
    }
out:
    if (fa_init)
        posix_spawn_file_actions_destroy(&fa);
    if (attr_init)
        posix_spawnattr_destroy(&attr);
    return rc;
}

/* How the plugin's run ended, as the run's result: read_rc from reading its output, reap_rc
 * and status from waiting for it. Returns 0 when it printed within the bounds and exited 0. */
static int judge_exit(const struct kube_exec *ex, int read_rc, int reap_rc, int status, char *err)
{
    char why[ERR_LEN];

    if (read_rc == -ETIMEDOUT || reap_rc == -ETIMEDOUT)
        /* -ETIME, not -ETIMEDOUT: the client retries a transport's timeout, and running a
         * hung plugin again would only multiply the wait. */
        return fail(ex, err, -ETIME, "did not finish within %ld s", timeout_ms(ex) / 1000);
    if (read_rc == -EFBIG)
        return fail(ex, err, read_rc, "printed more than %u bytes", KUBE_EXEC_OUTPUT_MAX);
    if (read_rc)
        return fail(ex, err, read_rc, "reading its output: %s", err_str(read_rc, why, sizeof(why)));
    if (WIFSIGNALED(status))
        return fail(ex, err, -ECHILD, "killed by signal %d", WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        /* 127: posix_spawnp's child could not exec the command. */
        return fail(ex, err, -ECHILD, "exited with status %d%s", WEXITSTATUS(status),
                    WEXITSTATUS(status) == 127 ? " (command not found?)" : "");
    return 0;
}

int kube_exec_run(const struct kube_exec *ex, bool have_tty, struct kube_exec_cred *out, char *err)
{
    char **envp = NULL, *info = NULL, *buf = NULL;
    int pipefd[2] = {-1, -1}, rc = 0, status = 0;
    bool interactive = false;
    size_t len = 0;
    pid_t pid = -1;
    char why[ERR_LEN];

    memset(out, 0, sizeof(*out));
    if (!ex->command || !ex->command[0])
        return fail(ex, err, -EINVAL, "no command");
    if (ex->interactive == KUBE_EXEC_ALWAYS && !have_tty)
        return fail(ex, err, -ENOTTY,
                    "interactiveMode is Always, but there is no terminal to interact on");
    interactive = have_tty && ex->interactive != KUBE_EXEC_NEVER;
    long long deadline = kube__now_ms() + timeout_ms(ex);

    if (!(info = kube_exec_info(ex, interactive)) || !(envp = build_env(ex, info))) {
        rc = fail(ex, err, -ENOMEM, "out of memory");
        goto out;
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        int e = -errno;
        rc = fail(ex, err, e, "pipe: %s", err_str(e, why, sizeof(why)));
        goto out;
    }
    rc = spawn_plugin(ex, interactive, envp, pipefd, &pid, err);
    if (rc)
        goto out;
    close(pipefd[1]);
    pipefd[1] = -1;
    rc = read_output(pipefd[0], deadline, &buf, &len);
    close(pipefd[0]);
    pipefd[0] = -1;
    int rr = reap(pid, !interactive, rc ? kube__now_ms() : deadline, &status);
    pid = -1;
    rc = judge_exit(ex, rc, rr, status, err);
    if (rc)
        goto out;
    rc = kube_exec_parse(buf, len, ex->api_version, out, why);
    if (rc)
        rc = fail(ex, err, rc, "%s", why);
out:
    if (pid > 0) {
        kill_plugin(pid, !interactive);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    if (buf) {
        explicit_bzero(buf, len);
        free(buf);
    }
    free_env(envp);
    free(info);
    return rc;
}
