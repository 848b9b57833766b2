/* (Size: the kubeconfig's clusters, users and contexts, merged across files as
 * kubectl merges them, and the credentials they name (token files and their rotation, client
 * certificates, the exec plugin's refresh) fill one private struct under one lock; the exec
 * plugin itself runs in exec_cred.c. Splitting the rest would put that struct in a header every
 * part reaches into.)
 *
 * Kubernetes client configuration: kubeconfig (libyaml) and in-cluster service account, and
 * the bearer token's rotation. Credentials never reach a log line or an error message. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <yaml.h>

#include "core/clock.h"
#include "core/log.h"
#include "kube/kube_int.h"

#define FILE_MAX         (1u << 20) /* CA, certificate and key files */
#define DEFAULT_SA_DIR   "/var/run/secrets/kubernetes.io/serviceaccount"
#define DEFAULT_RELOAD_S 60

int kube__read_file(const char *path, size_t cap, char **out, size_t *len, char *err)
{
    char *buf = NULL;
    size_t n = 0, alloc = 0;
    int fd, rc = 0;
    char eb[128];

    *out = NULL;
    if (len)
        *len = 0;
    /* O_NONBLOCK and the regular-file check: a path naming a FIFO or a device (a kubeconfig
     * can name any path) must fail, not block or read forever. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        rc = -errno;
        return err_set(err, rc, "%s: %s", path, err_str(rc, eb, sizeof(eb)));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, -EINVAL, "%s: not a regular file", path);
    }
    for (;;) {
        if (n + 1 >= alloc) {
            size_t want = alloc ? alloc * 2 : 4096;
            if (want > cap + 2)
                want = cap + 2;
            if (want <= n + 1) {
                rc = err_set(err, -EFBIG, "%s: larger than %zu bytes", path, cap);
                goto out;
            }
            char *nb = realloc(buf, want);
            if (!nb) {
                rc = err_set(err, -ENOMEM, "%s: out of memory", path);
                goto out;
            }
            buf = nb;
            alloc = want;
        }
        ssize_t r = read(fd, buf + n, alloc - 1 - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            err_set(err, rc, "%s: %s", path, err_str(rc, eb, sizeof(eb)));
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > cap) {
            rc = err_set(err, -EFBIG, "%s: larger than %zu bytes", path, cap);
            goto out;
        }
    }
    if (!buf) {
        buf = malloc(1);
        if (!buf) {
            rc = err_set(err, -ENOMEM, "%s: out of memory", path);
            goto out;
        }
    }
    buf[n] = '\0';
out:
    close(fd);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

int kube__b64_decode(const char *in, size_t len, unsigned char **out, size_t *out_len)
{
    unsigned char *buf = malloc(len / 4 * 3 + 4);
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0, pad = 0;

    *out = NULL;
    *out_len = 0;
    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)in[i];
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=') {
            pad++;
            continue;
        }
        int v = b64_val(ch);
        if (v < 0 || pad) {
            free(buf);
            return -EINVAL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[n++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    /* Six leftover bits cannot encode a byte: the input was truncated. */
    if (bits >= 6 || pad > 2) {
        free(buf);
        return -EINVAL;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

/* A token is one header-safe word: printable ASCII without spaces. Anything else would let a
 * corrupt file inject header lines. */
static int token_clean(char *tok, size_t *len)
{
    size_t n = *len;
    while (n > 0 &&
           (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' ' || tok[n - 1] == '\t'))
        n--;
    size_t s = 0;
    while (s < n && (tok[s] == ' ' || tok[s] == '\t' || tok[s] == '\n' || tok[s] == '\r'))
        s++;
    memmove(tok, tok + s, n - s);
    n -= s;
    tok[n] = '\0';
    *len = n;
    if (n == 0)
        return -ENODATA;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)tok[i] <= 0x20 || (unsigned char)tok[i] >= 0x7f)
            return -EINVAL;
    return 0;
}

static void wipe_free(char *s)
{
    if (!s)
        return;
    explicit_bzero(s, strlen(s));
    free(s);
}

/* Reads and validates the token file into an owned string. */
static int read_token(const char *path, char **out, char *err)
{
    char *tok = NULL;
    size_t n = 0;
    int rc = kube__read_file(path, KUBE_TOKEN_MAX, &tok, &n, err);
    if (rc)
        return rc;
    rc = token_clean(tok, &n);
    if (rc == -ENODATA)
        err_set(err, rc, "token file %s is empty", path);
    else if (rc)
        err_set(err, rc, "token file %s holds characters not allowed in a token", path);
    if (rc) {
        wipe_free(tok);
        return rc;
    }
    *out = tok;
    return 0;
}

static int config_alloc(kube_config_t **out, int token_reload_s)
{
    kube_config_t *cfg = calloc(1, sizeof(*cfg));
    if (!cfg)
        return -ENOMEM;
    if (pthread_mutex_init(&cfg->mu, NULL) != 0) {
        free(cfg);
        return -ENOMEM;
    }
    if (pthread_mutex_init(&cfg->exec_run_mu, NULL) != 0) {
        pthread_mutex_destroy(&cfg->mu);
        free(cfg);
        return -ENOMEM;
    }
    cfg->token_reload_s = token_reload_s > 0 ? token_reload_s : DEFAULT_RELOAD_S;
    *out = cfg;
    return 0;
}

void kube_config_free(kube_config_t *cfg)
{
    if (!cfg)
        return;
    free(cfg->server);
    free(cfg->ns);
    free(cfg->ca);
    free(cfg->cert);
    if (cfg->key) {
        explicit_bzero(cfg->key, cfg->key_len);
        free(cfg->key);
    }
    free(cfg->token_file);
    wipe_free(cfg->token);
    free(cfg->proxy);
    kube_exec_free(cfg->exec);
    free(cfg->exec);
    pthread_mutex_destroy(&cfg->exec_run_mu);
    pthread_mutex_destroy(&cfg->mu);
    free(cfg);
}

const char *kube_config_server(const kube_config_t *cfg)
{
    return cfg->server;
}

const char *kube_config_namespace(const kube_config_t *cfg)
{
    return cfg->ns ? cfg->ns : "default";
}

int kube_config_reload_token(kube_config_t *cfg, int force, int *changed, char *err)
{
    char local[ERR_LEN] = "";
    struct timespec now;
    char *tok = NULL;
    int rc = 0;

    if (changed)
        *changed = 0;
    if (cfg->exec)
        return kube__exec_refresh(cfg, force, changed, err);
    if (!cfg->token_file)
        return 0;
    now = clock_mono_ts();
    pthread_mutex_lock(&cfg->mu);
    int due = force || cfg->token == NULL ||
              now.tv_sec - cfg->token_read_at.tv_sec >= cfg->token_reload_s;
    if (due)
        cfg->token_read_at = now; /* a failing file is retried next period, not per request */
    pthread_mutex_unlock(&cfg->mu);
    if (!due)
        return 0;

    if (!err)
        err = local; /* the log line still says why */
    rc = read_token(cfg->token_file, &tok, err);
    if (rc) {
        log_warn("kube.token.reload_failed", "path=%s error=\"%s\" action=keep_old_token",
                 cfg->token_file, err);
        return rc;
    }
    pthread_mutex_lock(&cfg->mu);
    if (!cfg->token || strcmp(cfg->token, tok) != 0) {
        wipe_free(cfg->token);
        cfg->token = tok;
        tok = NULL;
        if (changed)
            *changed = 1;
    }
    pthread_mutex_unlock(&cfg->mu);
    if (changed && *changed)
        log_info("kube.token.reloaded", "path=%s", cfg->token_file);
    wipe_free(tok);
    return 0;
}

int kube_config_token(kube_config_t *cfg, char *buf, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&cfg->mu);
    if (!cfg->token)
        rc = -ENOENT;
    else if (strlen(cfg->token) >= len)
        rc = -ENOSPC;
    else
        memcpy(buf, cfg->token, strlen(cfg->token) + 1);
    pthread_mutex_unlock(&cfg->mu);
    return rc;
}

/* ---- exec credential plugins ------------------------------------------------------------- */

void kube_config_exec_no_terminal(kube_config_t *cfg)
{
    cfg->exec_no_tty = true;
}

static bool exec_due(kube_config_t *cfg)
{
    pthread_mutex_lock(&cfg->mu);
    bool due = !cfg->exec_have || (cfg->exec_expiry && time(NULL) >= cfg->exec_expiry);
    pthread_mutex_unlock(&cfg->mu);
    return due;
}

int kube__exec_refresh(kube_config_t *cfg, int force, int *ran, char *err)
{
    struct kube_exec_cred cred;
    char local[ERR_LEN];
    int rc = 0;

    if (ran)
        *ran = 0;
    if (!force && !exec_due(cfg))
        return 0;
    if (!err)
        err = local;
    pthread_mutex_lock(&cfg->exec_run_mu);
    /* Another thread may have run it while this one waited. */
    if (!force && !exec_due(cfg))
        goto out;
    rc = kube_exec_run(cfg->exec, !cfg->exec_no_tty && isatty(STDIN_FILENO) == 1, &cred, err);
    if (rc) {
        log_warn("kube.exec.failed", "error=\"%s\"", err);
        goto out;
    }
    pthread_mutex_lock(&cfg->mu);
    wipe_free(cfg->token);
    cfg->token = cred.token;
    if (cred.cert) {
        /* The plugin's certificate replaces the kubeconfig's (curl copies the blobs per
         * request, under this lock). */
        free(cfg->cert);
        if (cfg->key) {
            explicit_bzero(cfg->key, cfg->key_len);
            free(cfg->key);
        }
        cfg->cert = cred.cert;
        cfg->cert_len = cred.cert_len;
        cfg->key = cred.key;
        cfg->key_len = cred.key_len;
    }
    cfg->exec_have = true;
    cfg->exec_expiry = cred.expiry;
    unsigned runs = ++cfg->exec_runs;
    pthread_mutex_unlock(&cfg->mu);
    log_info("kube.exec.credential", "plugin=%.64s kind=%s expires_in_s=%lld runs=%u",
             cfg->exec->command, cred.token ? "token" : "client-certificate",
             cred.expiry ? (long long)(cred.expiry - time(NULL)) : -1LL, runs);
    memset(&cred, 0, sizeof(cred)); /* ownership moved into cfg */
    if (ran)
        *ran = 1;
out:
    pthread_mutex_unlock(&cfg->exec_run_mu);
    return rc;
}

/* Joins dir and a relative path; absolute paths are returned as they are. Owned result. */
static char *resolve_path(const char *base_dir, const char *p)
{
    char *out;
    size_t n;
    if (p[0] == '/' || !base_dir || !base_dir[0])
        return strdup(p);
    n = strlen(base_dir) + 1 + strlen(p) + 1;
    out = malloc(n);
    if (out)
        snprintf(out, n, "%s/%s", base_dir, p);
    return out;
}

static int load_pem_file(const char *base_dir, const char *p, unsigned char **out, size_t *len,
                         const char *what, char *err)
{
    char *path = resolve_path(base_dir, p), *buf = NULL;
    int rc;
    if (!path)
        return err_set(err, -ENOMEM, "out of memory");
    rc = kube__read_file(path, FILE_MAX, &buf, len, err);
    if (rc)
        err_wrap(err, rc, "%s", what);
    free(path);
    *out = (unsigned char *)buf;
    return rc;
}

static int load_pem_data(const char *b64, unsigned char **out, size_t *len, const char *what,
                         char *err)
{
    int rc = kube__b64_decode(b64, strlen(b64), out, len);
    if (rc == -EINVAL)
        return err_set(err, rc, "%s: not valid base64", what);
    if (rc)
        return err_set(err, rc, "%s: out of memory", what);
    if (*len == 0)
        return err_set(err, -EINVAL, "%s: empty", what);
    return 0;
}

/* ---- YAML navigation over libyaml's document model ---------------------------------------- */

/* Mapping value for key, or NULL. Only looks one level down, so anchors and aliases (which may
 * form cycles) never cause unbounded work. */
static yaml_node_t *ymap(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == strlen(key) &&
            memcmp(k->data.scalar.value, key, k->data.scalar.length) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

/* Scalar string of node, or NULL when it is not a scalar or holds a NUL byte. */
static const char *yscalar(yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
        return NULL;
    return (const char *)n->data.scalar.value;
}

static const char *ymap_str(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    return yscalar(ymap(doc, map, key));
}

static int ybool(const char *s, int *out)
{
    static const char *const t[] = {"true", "True", "TRUE", "yes", "on"};
    static const char *const f[] = {"false", "False", "FALSE", "no", "off"};
    for (size_t i = 0; i < 5; i++) {
        if (strcmp(s, t[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcmp(s, f[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -EINVAL;
}

static int check_server(const char *s, char *err)
{
    if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
        return err_set(err, -EINVAL, "cluster server '%.80s' is not an http(s) URL", s);
    const char *host = s + (s[4] == 's' ? 8 : 7);
    if (*host == '\0' || *host == '/')
        return err_set(err, -EINVAL, "cluster server '%.80s' names no host", s);
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return err_set(err, -EINVAL, "cluster server URL holds a control character or space");
    if (strlen(s) > 1024)
        return err_set(err, -EINVAL, "cluster server URL longer than 1024 bytes");
    return 0;
}

static int set_server(kube_config_t *cfg, const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/')
        n--;
    cfg->server = strndup(s, n);
    return cfg->server ? 0 : -ENOMEM;
}

/* One parsed kubeconfig of a merged list, and the directory its relative paths resolve from. */
struct kc_source {
    yaml_document_t doc;
    const char *base_dir;
    int loaded;
};

/* The first source (in list order) whose sequence `section` holds an entry named name, as
 * kubectl merges: the first file to name a context, cluster or user wins. Returns that entry's
 * `field` mapping and sets *which, or NULL. */
static yaml_node_t *kc_find(struct kc_source *src, size_t n, const char *section, const char *name,
                            const char *field, size_t *which)
{
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *root = yaml_document_get_root_node(&src[i].doc);
        yaml_node_t *seq = ymap(&src[i].doc, root, section);
        if (!seq || seq->type != YAML_SEQUENCE_NODE)
            continue;
        for (yaml_node_item_t *it = seq->data.sequence.items.start;
             it < seq->data.sequence.items.top; it++) {
            yaml_node_t *e = yaml_document_get_node(&src[i].doc, *it);
            const char *en = ymap_str(&src[i].doc, e, "name");
            if (en && strcmp(en, name) == 0) {
                *which = i;
                return ymap(&src[i].doc, e, field);
            }
        }
    }
    return NULL;
}

/* spec.cluster of KUBERNETES_EXEC_INFO from cfg's cluster: an owned JSON string or NULL. */
static char *exec_cluster_json(const kube_config_t *cfg, const char *tls_server_name)
{
    cJSON *cl = cJSON_CreateObject();
    char *ca = NULL, *s = NULL;

    if (!cl || !cJSON_AddStringToObject(cl, "server", cfg->server) ||
        (tls_server_name && !cJSON_AddStringToObject(cl, "tls-server-name", tls_server_name)) ||
        (cfg->insecure && !cJSON_AddBoolToObject(cl, "insecure-skip-tls-verify", 1)) ||
        (cfg->proxy && !cJSON_AddStringToObject(cl, "proxy-url", cfg->proxy)))
        goto out;
    if (cfg->ca) {
        /* certificate-authority-data is bytes: base64 in JSON, as kubectl sends it. */
        ca = malloc(4 * ((cfg->ca_len + 2) / 3) + 1);
        if (!ca)
            goto out;
        EVP_EncodeBlock((unsigned char *)ca, cfg->ca, (int)cfg->ca_len);
        if (!cJSON_AddStringToObject(cl, "certificate-authority-data", ca))
            goto out;
    }
    s = cJSON_PrintUnformatted(cl);
out:
    free(ca);
    cJSON_Delete(cl);
    return s;
}

/* A scalar of the exec mapping as an owned string into *dst; absent is fine (NULL). */
static int exec_str(yaml_document_t *doc, yaml_node_t *ex, const char *key, char **dst)
{
    const char *v = ymap_str(doc, ex, key);
    if (!v)
        return 0;
    *dst = strdup(v);
    return *dst ? 0 : -ENOMEM;
}

/* Reads a user's exec section into cfg->exec. A parser, long on purpose: the section's keys
 * (command, args, env, apiVersion, interactiveMode ...) read and checked in turn, each error
 * naming the user. */
static int kc_exec(kube_config_t *cfg, yaml_document_t *doc, yaml_node_t *exn,
                   const char *user_name, const char *base_dir, char *err)
{
    struct kube_exec *ex = calloc(1, sizeof(*ex));
    yaml_node_t *n;
    int rc = 0;

    if (!ex)
        return err_set(err, -ENOMEM, "out of memory");
    cfg->exec = ex;
    if (exn->type != YAML_MAPPING_NODE)
        return err_set(err, -EINVAL, "user '%.64s': exec is not a mapping", user_name);
    if (exec_str(doc, exn, "apiVersion", &ex->api_version) ||
        exec_str(doc, exn, "installHint", &ex->install_hint))
        return err_set(err, -ENOMEM, "out of memory");
    const char *cmd = ymap_str(doc, exn, "command");
    if (!cmd || !cmd[0])
        return err_set(err, -EINVAL, "user '%.64s': exec has no command", user_name);
    /* A relative path with a slash is relative to the kubeconfig, as kubectl resolves it; a
     * bare name is looked up in PATH. */
    ex->command = strchr(cmd, '/') ? resolve_path(base_dir, cmd) : strdup(cmd);
    if (!ex->command)
        return err_set(err, -ENOMEM, "out of memory");
    if (!ex->api_version || (strcmp(ex->api_version, KUBE_EXEC_API_V1) != 0 &&
                             strcmp(ex->api_version, KUBE_EXEC_API_V1BETA1) != 0))
        return err_set(err, -ENOTSUP,
                       "user '%.64s': exec apiVersion '%.64s' is not supported (use %s or %s)",
                       user_name, ex->api_version ? ex->api_version : "", KUBE_EXEC_API_V1,
                       KUBE_EXEC_API_V1BETA1);
    const char *im = ymap_str(doc, exn, "interactiveMode");
    if (im && im[0]) {
        if (kube_exec_interactive_parse(im, &ex->interactive) != 0)
            return err_set(err, -EINVAL,
                           "user '%.64s': exec interactiveMode '%.32s' is not Never, IfAvailable "
                           "or Always",
                           user_name, im);
    } else if (strcmp(ex->api_version, KUBE_EXEC_API_V1) == 0) {
        return err_set(err, -EINVAL, "user '%.64s': exec interactiveMode is required with %s",
                       user_name, KUBE_EXEC_API_V1);
    } else {
        ex->interactive = KUBE_EXEC_IF_AVAILABLE;
    }
    if ((n = ymap(doc, exn, "args")) != NULL) {
        if (n->type != YAML_SEQUENCE_NODE)
            return err_set(err, -EINVAL, "user '%.64s': exec args is not a list", user_name);
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            const char *a = yscalar(yaml_document_get_node(doc, *it));
            if (!a)
                return err_set(err, -EINVAL, "user '%.64s': an exec arg is not a string",
                               user_name);
            if (ex->nargs >= KUBE_EXEC_ARGS_MAX)
                return err_set(err, -E2BIG, "user '%.64s': more than %d exec args", user_name,
                               KUBE_EXEC_ARGS_MAX);
            if (!(ex->args[ex->nargs++] = strdup(a)))
                return err_set(err, -ENOMEM, "out of memory");
        }
    }
    if ((n = ymap(doc, exn, "env")) != NULL && n->type != YAML_SCALAR_NODE) {
        if (n->type != YAML_SEQUENCE_NODE)
            return err_set(err, -EINVAL, "user '%.64s': exec env is not a list", user_name);
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *e = yaml_document_get_node(doc, *it);
            const char *en = ymap_str(doc, e, "name"), *ev = ymap_str(doc, e, "value");
            if (!en || !en[0] || strchr(en, '=') || !ev)
                return err_set(err, -EINVAL,
                               "user '%.64s': an exec env entry needs a name (without '=') and a "
                               "value",
                               user_name);
            if (ex->nenv >= KUBE_EXEC_ENV_MAX)
                return err_set(err, -E2BIG, "user '%.64s': more than %d exec env entries",
                               user_name, KUBE_EXEC_ENV_MAX);
            struct kube_exec_env *ee = &ex->env[ex->nenv++];
            if (!(ee->name = strdup(en)) || !(ee->value = strdup(ev)))
                return err_set(err, -ENOMEM, "out of memory");
        }
    }
    const char *pci = ymap_str(doc, exn, "provideClusterInfo");
    int b = 0;
    if (pci && ybool(pci, &b) != 0)
        return err_set(err, -EINVAL,
                       "user '%.64s': exec provideClusterInfo '%.16s' is not a "
                       "boolean",
                       user_name, pci);
    ex->provide_cluster_info = b;
    if (ex->provide_cluster_info && !(ex->cluster_json = exec_cluster_json(cfg, NULL)))
        return err_set(err, -ENOMEM, "out of memory");
    return rc;
}

/* Fills cfg's user credentials from user (a mapping of doc, relative paths from base_dir). */
static int kc_user(kube_config_t *cfg, yaml_document_t *doc, yaml_node_t *user,
                   const char *user_name, const char *base_dir, char *err)
{
    const char *s;
    int rc = 0;

    if (ymap(doc, user, "auth-provider"))
        return err_set(err, -ENOTSUP,
                       "user '%.64s' uses an auth-provider, which sizeup does not support: "
                       "use a token, tokenFile or client certificate",
                       user_name);
    if (ymap(doc, user, "username") || ymap(doc, user, "password"))
        return err_set(err, -ENOTSUP,
                       "user '%.64s' uses basic authentication, which Kubernetes removed and "
                       "sizeup does not support",
                       user_name);
    if ((s = ymap_str(doc, user, "client-certificate-data")) != NULL && s[0])
        rc = load_pem_data(s, &cfg->cert, &cfg->cert_len, "client-certificate-data", err);
    else if ((s = ymap_str(doc, user, "client-certificate")) != NULL && s[0])
        rc = load_pem_file(base_dir, s, &cfg->cert, &cfg->cert_len, "client-certificate", err);
    if (rc)
        return rc;
    if ((s = ymap_str(doc, user, "client-key-data")) != NULL && s[0])
        rc = load_pem_data(s, &cfg->key, &cfg->key_len, "client-key-data", err);
    else if ((s = ymap_str(doc, user, "client-key")) != NULL && s[0])
        rc = load_pem_file(base_dir, s, &cfg->key, &cfg->key_len, "client-key", err);
    if (rc)
        return rc;
    if (!cfg->cert != !cfg->key)
        return err_set(err, -EINVAL,
                       "user '%.64s' has a client certificate without a key, or "
                       "a key without a certificate",
                       user_name);
    const char *tok = ymap_str(doc, user, "token");
    const char *tf = ymap_str(doc, user, "tokenFile");
    if (tok && tok[0]) {
        /* A static token: copied, validated, never reloaded. */
        size_t n = strlen(tok);
        cfg->token = strdup(tok);
        if (!cfg->token)
            return err_set(err, -ENOMEM, "out of memory");
        if (token_clean(cfg->token, &n) != 0)
            return err_set(err, -EINVAL, "user '%.64s' has an invalid token", user_name);
    } else if (tf && tf[0]) {
        cfg->token_file = resolve_path(base_dir, tf);
        if (!cfg->token_file)
            return err_set(err, -ENOMEM, "out of memory");
        rc = read_token(cfg->token_file, &cfg->token, err);
        if (rc)
            return rc;
        cfg->token_read_at = clock_mono_ts();
    }
    yaml_node_t *ex = ymap(doc, user, "exec");
    if (ex && ex->type != YAML_SCALAR_NODE) {
        /* A static token or certificate wins over the plugin, as in kubectl. */
        if (cfg->token || cfg->cert) {
            log_warn("kube.exec.ignored", "user=%.64s why=\"a static token or certificate is set\"",
                     user_name);
            return 0;
        }
        return kc_exec(cfg, doc, ex, user_name, base_dir, err);
    }
    return 0;
}

/* The host of cfg->server (without brackets or port) into buf. */
static void server_host(const char *server, char *buf, size_t len)
{
    const char *h = strstr(server, "://");
    h = h ? h + 3 : server;
    size_t n;
    if (*h == '[') {
        h++;
        n = strcspn(h, "]");
    } else {
        n = strcspn(h, ":/");
    }
    snprintf(buf, len, "%.*s", (int)n, h);
}

/* The cluster's proxy-url (handed to libcurl, which speaks every scheme kubectl accepts) and
 * tls-server-name: libcurl sends the URL's host as SNI and checks the certificate against it,
 * with no way to name another, so a tls-server-name other than the server's own host is
 * refused rather than silently not honoured. */
static int kc_proxy_sni(kube_config_t *cfg, yaml_document_t *doc, yaml_node_t *cluster,
                        const char *cluster_name, char *err)
{
    const char *s = ymap_str(doc, cluster, "proxy-url");
    if (s && s[0]) {
        if (strncmp(s, "http://", 7) != 0 && strncmp(s, "https://", 8) != 0 &&
            strncmp(s, "socks5://", 9) != 0)
            return err_set(err, -EINVAL,
                           "cluster '%.64s': proxy-url must be an http, https or socks5 URL",
                           cluster_name);
        for (const char *p = s; *p; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                return err_set(err, -EINVAL,
                               "cluster '%.64s': proxy-url holds a control character or space",
                               cluster_name);
        if (!(cfg->proxy = strdup(s)))
            return err_set(err, -ENOMEM, "out of memory");
    }
    s = ymap_str(doc, cluster, "tls-server-name");
    if (s && s[0]) {
        char host[256];
        server_host(cfg->server, host, sizeof(host));
        if (strcasecmp(host, s) != 0)
            return err_set(err, -ENOTSUP,
                           "cluster '%.64s' sets tls-server-name %.64s, which sizeup cannot honour "
                           "(libcurl checks the certificate against the server URL's host, %.64s): "
                           "use a server URL whose host the certificate names",
                           cluster_name, s, host);
    }
    return 0;
}

/* What the context names, found across the merged sources: the context itself, its cluster and
 * its user (NULL when it names none), each with the document it came from (index into src). */
struct kc_pick {
    yaml_node_t *ctx, *cluster, *user;
    size_t xi, ci, ui;
    const char *cluster_name, *user_name;
};

/* Resolves context (or, when empty, the first current-context the sources set) to its cluster
 * and user. Returns 0 or -EINVAL (err says what is missing). */
static int kc_pick(struct kc_source *src, size_t n, const char *context, struct kc_pick *k,
                   char *err)
{
    memset(k, 0, sizeof(*k));
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *root = yaml_document_get_root_node(&src[i].doc);
        if (!root || root->type != YAML_MAPPING_NODE)
            return err_set(err, -EINVAL, "kubeconfig is not a YAML mapping");
    }
    /* The first file that sets current-context decides it. */
    for (size_t i = 0; (!context || !context[0]) && i < n; i++)
        context =
            ymap_str(&src[i].doc, yaml_document_get_root_node(&src[i].doc), "current-context");
    if (!context || !context[0])
        return err_set(err, -EINVAL, "kubeconfig has no current-context");
    k->ctx = kc_find(src, n, "contexts", context, "context", &k->xi);
    if (!k->ctx || k->ctx->type != YAML_MAPPING_NODE)
        return err_set(err, -EINVAL, "kubeconfig has no context named '%.64s'", context);
    k->cluster_name = ymap_str(&src[k->xi].doc, k->ctx, "cluster");
    k->user_name = ymap_str(&src[k->xi].doc, k->ctx, "user");
    if (!k->cluster_name)
        return err_set(err, -EINVAL, "context '%.64s' names no cluster", context);
    k->cluster = kc_find(src, n, "clusters", k->cluster_name, "cluster", &k->ci);
    if (!k->cluster || k->cluster->type != YAML_MAPPING_NODE)
        return err_set(err, -EINVAL, "kubeconfig has no cluster named '%.64s'", k->cluster_name);
    if (k->user_name && k->user_name[0]) {
        k->user = kc_find(src, n, "users", k->user_name, "user", &k->ui);
        if (!k->user || k->user->type != YAML_MAPPING_NODE)
            return err_set(err, -EINVAL, "kubeconfig has no user named '%.64s'", k->user_name);
    }
    return 0;
}

/* Builds a config from the parsed sources src[0..n), merged as kubectl merges them. */
static int kc_build(struct kc_source *src, size_t n, const char *context, int token_reload_s,
                    kube_config_t **out, char *err)
{
    kube_config_t *cfg = NULL;
    struct kc_pick k;
    const char *s;
    int rc = kc_pick(src, n, context, &k, err);

    if (rc)
        return rc;
    yaml_document_t *xdoc = &src[k.xi].doc, *cdoc = &src[k.ci].doc;
    yaml_node_t *ctx = k.ctx, *cluster = k.cluster, *user = k.user;
    const char *cluster_name = k.cluster_name, *user_name = k.user_name;
    size_t ci = k.ci, ui = k.ui;

    rc = config_alloc(&cfg, token_reload_s);
    if (rc)
        return err_set(err, rc, "out of memory");
    s = ymap_str(cdoc, cluster, "server");
    if (!s || !s[0]) {
        rc = err_set(err, -EINVAL, "cluster '%.64s' has no server", cluster_name);
        goto out;
    }
    rc = check_server(s, err);
    if (rc)
        goto out;
    if ((rc = set_server(cfg, s)) != 0) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    s = ymap_str(xdoc, ctx, "namespace");
    if (s && s[0] && !(cfg->ns = strdup(s))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    s = ymap_str(cdoc, cluster, "insecure-skip-tls-verify");
    if (s && ybool(s, &cfg->insecure) != 0) {
        rc = err_set(err, -EINVAL, "insecure-skip-tls-verify: '%.16s' is not a boolean", s);
        goto out;
    }
    if ((s = ymap_str(cdoc, cluster, "certificate-authority-data")) != NULL && s[0])
        rc = load_pem_data(s, &cfg->ca, &cfg->ca_len, "certificate-authority-data", err);
    else if ((s = ymap_str(cdoc, cluster, "certificate-authority")) != NULL && s[0])
        rc = load_pem_file(src[ci].base_dir, s, &cfg->ca, &cfg->ca_len, "certificate-authority",
                           err);
    if (rc)
        goto out;
    rc = kc_proxy_sni(cfg, cdoc, cluster, cluster_name, err);
    if (rc)
        goto out;
    if (user)
        rc = kc_user(cfg, &src[ui].doc, user, user_name, src[ui].base_dir, err);
out:
    if (rc) {
        kube_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

int kube_config_parse_merged(const struct kube_config_text *texts, size_t n, const char *context,
                             int token_reload_s, kube_config_t **out, char *err)
{
    struct kc_source src[KUBE_KUBECONFIG_FILES_MAX];
    yaml_parser_t parser;
    size_t total = 0;
    int rc = 0;

    *out = NULL;
    memset(src, 0, sizeof(src));
    if (n == 0)
        return err_set(err, -EINVAL, "no kubeconfig given");
    if (n > KUBE_KUBECONFIG_FILES_MAX)
        return err_set(err, -E2BIG, "more than %d kubeconfig files", KUBE_KUBECONFIG_FILES_MAX);
    for (size_t i = 0; i < n; i++) {
        total += texts[i].len;
        if (texts[i].len > KUBE_KUBECONFIG_MAX || total > KUBE_KUBECONFIG_MAX)
            return err_set(err, -EFBIG, "kubeconfig larger than %u bytes", KUBE_KUBECONFIG_MAX);
    }
    for (size_t i = 0; i < n; i++) {
        if (!yaml_parser_initialize(&parser)) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *)texts[i].text, texts[i].len);
        if (!yaml_parser_load(&parser, &src[i].doc)) {
            rc = err_set(err, -EINVAL, "%s%s%skubeconfig is not valid YAML: %s at line %zu",
                         texts[i].name ? "kubeconfig " : "", texts[i].name ? texts[i].name : "",
                         texts[i].name ? ": " : "", parser.problem ? parser.problem : "parse error",
                         parser.problem_mark.line + 1);
            yaml_parser_delete(&parser);
            goto out;
        }
        yaml_parser_delete(&parser);
        src[i].loaded = 1;
        src[i].base_dir = texts[i].base_dir;
    }
    rc = kc_build(src, n, context, token_reload_s, out, err);
out:
    for (size_t i = 0; i < n; i++)
        if (src[i].loaded)
            yaml_document_delete(&src[i].doc);
    return rc;
}

int kube_config_parse(const char *text, size_t len, const char *base_dir, const char *context,
                      int token_reload_s, kube_config_t **out, char *err)
{
    struct kube_config_text t = {text, len, base_dir, NULL};
    return kube_config_parse_merged(&t, 1, context, token_reload_s, out, err);
}

int kube_config_in_cluster(const char *host, const char *port, const char *sa_dir,
                           int token_reload_s, kube_config_t **out, char *err)
{
    kube_config_t *cfg = NULL;
    char path[PATH_MAX], url[1100];
    char *ns = NULL;
    size_t n;
    int rc;

    *out = NULL;
    if (!sa_dir)
        sa_dir = DEFAULT_SA_DIR;
    if (!host || !host[0] || !port || !port[0])
        return err_set(err, -EINVAL, "in-cluster: KUBERNETES_SERVICE_HOST/_PORT not set");
    rc = config_alloc(&cfg, token_reload_s);
    if (rc)
        return err_set(err, rc, "out of memory");
    /* An IPv6 service address needs brackets in a URL. */
    if (strchr(host, ':'))
        snprintf(url, sizeof(url), "https://[%s]:%s", host, port);
    else
        snprintf(url, sizeof(url), "https://%s:%s", host, port);
    rc = check_server(url, err);
    if (rc)
        goto out;
    if ((rc = set_server(cfg, url)) != 0) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    snprintf(path, sizeof(path), "%s/token", sa_dir);
    if (!(cfg->token_file = strdup(path))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    rc = read_token(cfg->token_file, &cfg->token, err);
    if (rc) {
        err_wrap(err, rc, "in-cluster service-account token");
        goto out;
    }
    cfg->token_read_at = clock_mono_ts();
    snprintf(path, sizeof(path), "%s/ca.crt", sa_dir);
    rc = load_pem_file(NULL, path, &cfg->ca, &cfg->ca_len, "in-cluster CA", err);
    if (rc)
        goto out;
    snprintf(path, sizeof(path), "%s/namespace", sa_dir);
    if (kube__read_file(path, 256, &ns, &n, NULL) == 0) {
        while (n > 0 && (ns[n - 1] == '\n' || ns[n - 1] == ' ' || ns[n - 1] == '\r'))
            ns[--n] = '\0';
        if (n > 0) {
            cfg->ns = ns;
            ns = NULL;
        }
    }
out:
    free(ns);
    if (rc) {
        kube_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}
