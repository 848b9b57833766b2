#include "fakelib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kube_int.h"
#include "kube/objects.h"

int fk_slurp(const char *dir, const char *name, char *buf, size_t len, char *err)
{
    char path[700];
    char *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = kube__read_file(path, 65536, &text, &n, err);
    if (rc)
        return rc;
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
        text[--n] = '\0';
    snprintf(buf, len, "%s", text);
    free(text);
    return 0;
}

int fk_open(struct fk *f, const char *var, char *err)
{
    const char *dir = getenv(var);
    char port[32];
    if (!dir || !dir[0])
        return err_set(err, -ENOENT,
                       "%s is not set: run this through the integration script that starts the "
                       "fake API server",
                       var);
    snprintf(f->dir, sizeof(f->dir), "%s", dir);
    int rc = fk_slurp(dir, "ready", port, sizeof(port), err);
    if (rc)
        return err_wrap(err, rc, "the fake in %s is not ready", dir);
    snprintf(f->server, sizeof(f->server), "https://127.0.0.1:%s", port);
    return 0;
}

kube_client_t *fk_client(const char *srv, const char *ca, const char *token, const char *token_file,
                         const struct kube_client_opts *o, kube_config_t **cfg, char *err)
{
    char y[2048];
    kube_client_t *c = NULL;
    *cfg = NULL;
    snprintf(y, sizeof(y),
             "current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n"
             "clusters: [{name: c, cluster: {server: '%s', certificate-authority: '%s'}}]\n"
             "users: [{name: u, user: {%s: '%s'}}]\n",
             srv, ca, token ? "token" : "tokenFile", token ? token : token_file);
    if (kube_config_parse(y, strlen(y), NULL, NULL, 3600, cfg, err))
        return NULL;
    if (kube_client_new(*cfg, o, &c, err)) {
        kube_config_free(*cfg);
        *cfg = NULL;
        return NULL;
    }
    return c;
}

kube_client_t *fk_admin(const struct fk *f, const struct kube_client_opts *o, kube_config_t **cfg,
                        char *err)
{
    char tok[256], ca[600];
    if (fk_slurp(f->dir, "token", tok, sizeof(tok), err))
        return NULL;
    snprintf(ca, sizeof(ca), "%s/ca.crt", f->dir);
    return fk_client(f->server, ca, tok, NULL, o, cfg, err);
}

int fk_control(const struct fk *f, const char *method, const char *path, const char *body,
               cJSON **out, char *err)
{
    char tok[128], ca[600];
    kube_config_t *cfg;
    int rc = fk_slurp(f->dir, "control-token", tok, sizeof(tok), err);
    if (rc)
        return rc;
    snprintf(ca, sizeof(ca), "%s/ca.crt", f->dir);
    kube_client_t *c = fk_client(f->server, ca, tok, NULL, NULL, &cfg, err);
    if (!c)
        return -EINVAL;
    rc = kube_request(c, method, path, body, NULL, 64u << 20, out, err);
    kube_client_free(c);
    kube_config_free(cfg);
    return rc;
}

int fk_fault(const struct fk *f, const char *rule, char *err)
{
    return fk_control(f, "POST", "/fake/faults", rule, NULL, err);
}

int fk_faults_clear(const struct fk *f, char *err)
{
    return fk_control(f, "DELETE", "/fake/faults", NULL, NULL, err);
}

cJSON *fk_log_since(const struct fk *f, long since, char *err)
{
    char path[64];
    cJSON *out = NULL;
    snprintf(path, sizeof(path), "/fake/log?since=%ld", since);
    if (fk_control(f, "GET", path, NULL, &out, err))
        return NULL;
    cJSON *e = cJSON_DetachItemFromObject(out, "entries");
    cJSON_Delete(out);
    return e ? e : cJSON_CreateArray();
}

long fk_log_last_seq(const struct fk *f, char *err)
{
    cJSON *e = fk_log_since(f, 0, err);
    long seq = 0;
    const cJSON *it;
    if (!e)
        return -1;
    cJSON_ArrayForEach(it, e)
    {
        const cJSON *s = cJSON_GetObjectItem(it, "seq");
        if (cJSON_IsNumber(s) && (long)s->valuedouble > seq)
            seq = (long)s->valuedouble;
    }
    cJSON_Delete(e);
    return seq;
}

int fk_wait_for(atomic_int *v, int want, int ms)
{
    for (int t = 0; t < ms && atomic_load(v) < want; t += 20)
        usleep(20000);
    return atomic_load(v) >= want;
}

/* ---- informer ----------------------------------------------------------------------------- */

static int inf_stop_requested(void *ud)
{
    return atomic_load(&((struct fk_inf *)ud)->stop);
}

static void inf_note_added(struct fk_inf *s, const cJSON *obj)
{
    const cJSON *n = kube_path_get(obj, "metadata.name");
    pthread_mutex_lock(&s->mu);
    if (cJSON_IsString(n) && s->nnames < FK_INF_NAMES)
        snprintf(s->names[s->nnames++], sizeof(s->names[0]), "%s", n->valuestring);
    pthread_mutex_unlock(&s->mu);
}

static int inf_event(void *ud, const struct kube_event *ev)
{
    struct fk_inf *s = ud;
    switch (ev->type) {
    case KUBE_EV_LIST_BEGIN:
        atomic_fetch_add(&s->lists, 1);
        break;
    case KUBE_EV_LIST_END:
        atomic_fetch_add(&s->list_ends, 1);
        break;
    case KUBE_EV_RESTART:
        atomic_fetch_add(&s->restarts, 1);
        break;
    case KUBE_EV_ADDED:
        if (ev->from_list) {
            atomic_fetch_add(&s->listed, 1);
        } else {
            inf_note_added(s, ev->object);
            atomic_fetch_add(&s->added, 1);
        }
        break;
    case KUBE_EV_MODIFIED:
        atomic_fetch_add(&s->modified, 1);
        break;
    case KUBE_EV_DELETED:
        atomic_fetch_add(&s->deleted, 1);
        break;
    default:
        break;
    }
    return 0;
}

static void *inf_main(void *ud)
{
    struct fk_inf *s = ud;
    s->rc = kube_informer_run(s->c, &s->opts, s->err);
    return NULL;
}

int fk_inf_start(struct fk_inf *s, const struct fk *f, const struct kube_informer_opts *opts,
                 char *err)
{
    struct kube_client_opts o = {.stop = inf_stop_requested, .stop_ctx = s};
    s->opts = *opts;
    s->opts.on_event = inf_event;
    s->opts.ctx = s;
    s->c = fk_admin(f, &o, &s->cfg, err);
    if (!s->c)
        return -EINVAL;
    pthread_mutex_init(&s->mu, NULL);
    if (pthread_create(&s->th, NULL, inf_main, s) != 0) {
        pthread_mutex_destroy(&s->mu);
        kube_client_free(s->c);
        kube_config_free(s->cfg);
        return err_set(err, -EAGAIN, "pthread_create failed");
    }
    return 0;
}

void fk_inf_stop(struct fk_inf *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->th, NULL);
    kube_client_free(s->c);
    kube_config_free(s->cfg);
    pthread_mutex_destroy(&s->mu);
}
