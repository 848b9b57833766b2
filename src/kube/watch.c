/* Watches: the incremental newline splitter, watch-event parsing, one watch request, and the
 * list-then-watch loop (informer). A watch body is never held whole: bytes go through the
 * splitter as they arrive, each event is parsed once, delivered, and freed. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "kube/kube_int.h"

/* ---- line splitter ------------------------------------------------------------------------ */

int kube_lines_init(struct kube_lines *l, size_t max)
{
    memset(l, 0, sizeof(*l));
    l->max = max ? max : KUBE_WATCH_LINE_MAX;
    return 0;
}

void kube_lines_reset(struct kube_lines *l)
{
    l->len = 0;
}

void kube_lines_free(struct kube_lines *l)
{
    free(l->buf);
    l->buf = NULL;
    l->len = l->cap = 0;
}

static int emit_line(const char *line, size_t n, kube_line_fn fn, void *ctx)
{
    if (n > 0 && line[n - 1] == '\r')
        n--;
    if (n == 0)
        return 0;
    return fn(ctx, line, n);
}

static int tail_append(struct kube_lines *l, const char *data, size_t n)
{
    if (l->len + n > l->max)
        return -EMSGSIZE;
    if (l->len + n > l->cap) {
        size_t want = l->cap ? l->cap : 4096;
        while (want < l->len + n)
            want *= 2;
        if (want > l->max)
            want = l->max;
        char *nb = realloc(l->buf, want);
        if (!nb)
            return -ENOMEM;
        l->buf = nb;
        l->cap = want;
    }
    memcpy(l->buf + l->len, data, n);
    l->len += n;
    return 0;
}

int kube_lines_feed(struct kube_lines *l, const char *data, size_t n, kube_line_fn fn, void *ctx)
{
    int rc;
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        if (!nl)
            return tail_append(l, data, n);
        size_t m = (size_t)(nl - data);
        if (l->len == 0) {
            /* Common case: a whole line inside this chunk, delivered without copying. */
            if (m > l->max)
                return -EMSGSIZE;
            rc = emit_line(data, m, fn, ctx);
        } else {
            rc = tail_append(l, data, m);
            if (rc)
                return rc;
            size_t total = l->len;
            l->len = 0;
            rc = emit_line(l->buf, total, fn, ctx);
        }
        if (rc)
            return rc;
        data = nl + 1;
        n -= m + 1;
    }
    return 0;
}

/* ---- event parsing ------------------------------------------------------------------------ */

static const char *obj_rv(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    return cJSON_IsString(rv) ? rv->valuestring : NULL;
}

int kube_event_parse(const char *line, size_t len, cJSON **root, struct kube_event *ev, char *err)
{
    static const struct {
        const char *name;
        enum kube_event_type type;
    } types[] = {{"ADDED", KUBE_EV_ADDED},
                 {"MODIFIED", KUBE_EV_MODIFIED},
                 {"DELETED", KUBE_EV_DELETED},
                 {"BOOKMARK", KUBE_EV_BOOKMARK},
                 {"ERROR", KUBE_EV_ERROR}};
    cJSON *r;
    const cJSON *t, *o;

    *root = NULL;
    memset(ev, 0, sizeof(*ev));
    r = cJSON_ParseWithLength(line, len);
    if (!r)
        return err_set(err, -EBADMSG, "watch event is not JSON");
    t = cJSON_GetObjectItemCaseSensitive(r, "type");
    o = cJSON_GetObjectItemCaseSensitive(r, "object");
    if (!cJSON_IsString(t) || !cJSON_IsObject(o)) {
        cJSON_Delete(r);
        return err_set(err, -EBADMSG, "watch event without type or object");
    }
    size_t i;
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(t->valuestring, types[i].name) == 0)
            break;
    if (i == sizeof(types) / sizeof(types[0])) {
        err_set(err, -EBADMSG, "unknown watch event type '%.32s'", t->valuestring);
        cJSON_Delete(r);
        return -EBADMSG;
    }
    ev->type = types[i].type;
    ev->object = o;
    ev->resource_version = obj_rv(o);
    *root = r;
    if (ev->type == KUBE_EV_ERROR) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "code");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(o, "message");
        if (cJSON_IsNumber(code) && code->valuedouble == 410)
            return err_set(err, KUBE_EGONE, "watch: 410 Gone: %.160s",
                           cJSON_IsString(msg) ? msg->valuestring : "resource version expired");
    }
    return 0;
}

/* ---- one watch ---------------------------------------------------------------------------- */

struct watch_state {
    kube_client_t *c;
    const struct kube_informer_opts *o;
    struct kube_lines lines;
    char *last_rv;
    size_t rv_len;
    int events;
    char *err;
    int stop_rc; /* the callback's non-zero value */
};

static int on_line(void *ud, const char *line, size_t len)
{
    struct watch_state *w = ud;
    cJSON *root = NULL;
    struct kube_event ev;
    int rc = kube_event_parse(line, len, &root, &ev, w->err);

    if (rc)
        goto out;
    w->events++;
    if (ev.resource_version && ev.type != KUBE_EV_ERROR && strlen(ev.resource_version) < w->rv_len)
        snprintf(w->last_rv, w->rv_len, "%s", ev.resource_version);
    switch (ev.type) {
    case KUBE_EV_BOOKMARK:
        break; /* only its resourceVersion matters */
    case KUBE_EV_ERROR: {
        struct kube_status st;
        char *body = cJSON_PrintUnformatted(ev.object);
        rc = kube_status_decode(body, body ? strlen(body) : 0, 0, &st);
        cJSON_free(body);
        kube__set_last(w->c, &st);
        if (rc == 0)
            rc = -EIO;
        err_set(w->err, rc, "watch ERROR event: %ld %s: %s", st.code, st.reason, st.message);
        break;
    }
    default:
        rc = w->o->on_event(w->o->ctx, &ev);
        if (rc)
            w->stop_rc = rc;
        break;
    }
out:
    cJSON_Delete(root);
    return rc;
}

static int sink(void *ud, const char *data, size_t n)
{
    struct watch_state *w = ud;
    int rc = kube_lines_feed(&w->lines, data, n, on_line, w);
    if (rc == -EMSGSIZE)
        err_set(w->err, rc, "watch event longer than %zu bytes", w->lines.max);
    else if (rc == -ENOMEM)
        err_set(w->err, rc, "out of memory");
    return rc;
}

int kube_watch_once(kube_client_t *c, const struct kube_informer_opts *o,
                    const char *resource_version, int timeout_s, char *last_rv, size_t rv_len,
                    char *err)
{
    struct watch_state w = {0};
    struct kube__xfer x = {0};
    char path[4096], num[24];
    long code = 0;
    int rc;

    if (timeout_s <= 0)
        timeout_s = 300;
    w.c = c;
    w.o = o;
    w.last_rv = last_rv;
    w.rv_len = rv_len;
    w.err = err;
    rc = kube_lines_init(&w.lines, 0);
    if (rc) {
        err_set(err, rc, "watch %s: no line buffer", o->res->plural);
        goto out;
    }
    rc = kube_path(o->res, o->ns, NULL, path, sizeof(path));
    if (rc) {
        err_set(err, rc, "watch %s: invalid namespace", o->res->plural);
        goto out;
    }
    snprintf(num, sizeof(num), "%d", timeout_s);
    rc = kube__query_add(path, sizeof(path), "watch", "1");
    if (!rc && resource_version && resource_version[0])
        rc = kube__query_add(path, sizeof(path), "resourceVersion", resource_version);
    if (!rc)
        rc = kube__query_add(path, sizeof(path), "allowWatchBookmarks", "true");
    if (!rc)
        rc = kube__query_add(path, sizeof(path), "timeoutSeconds", num);
    if (!rc && o->label_selector && o->label_selector[0])
        rc = kube__query_add(path, sizeof(path), "labelSelector", o->label_selector);
    if (!rc && o->field_selector && o->field_selector[0])
        rc = kube__query_add(path, sizeof(path), "fieldSelector", o->field_selector);
    if (rc) {
        err_set(err, rc, "watch %s: query too long", o->res->plural);
        goto out;
    }
    x.cap = 65536;
    x.sink = sink;
    x.sink_ctx = &w;
    /* The server ends the watch at timeoutSeconds; the client-side limit only catches a
     * server that never does. */
    rc = kube__perform(c, "GET", "WATCH", path, NULL, NULL, &x, (long)(timeout_s + 30) * 1000L,
                       &code, err);
    if (w.stop_rc) {
        rc = w.stop_rc;
        goto out;
    }
    if (rc)
        goto out; /* err was filled by the sink or the transport */
    if (code < 200 || code >= 300) {
        struct kube_status st;
        rc = kube_status_decode(x.buf, x.len, code, &st);
        st.retry_after_s = x.retry_after_s;
        kube__set_last(c, &st);
        /* A credential the server refuses is renewed now (token file re-read, exec plugin run
         * again), so the informer's next watch carries the new one. */
        if (code == 401) {
            /* A renewal that fails is logged there; this watch reports its own 401. */
            int reload_rc = kube_config_reload_token(kube__cfg(c), 1, NULL, NULL);
            (void)reload_rc;
        }
        err_set(err, rc, "watch %s: %ld %s%s%s", o->res->plural, st.code, st.reason,
                st.message[0] ? ": " : "", st.message);
        goto out;
    }
    /* A partial last line at a clean close is dropped: the resume point is the last complete
     * event. */
out:
    kube__xfer_clear(&x);
    kube_lines_free(&w.lines);
    return rc;
}

/* ---- informer ----------------------------------------------------------------------------- */

static int deliver(const struct kube_informer_opts *o, enum kube_event_type type, const cJSON *obj,
                   int from_list)
{
    struct kube_event ev = {type, obj, obj ? obj_rv(obj) : NULL, from_list};
    return o->on_event(o->ctx, &ev);
}

/* Lists every page and delivers items. On success rv holds the list's resourceVersion. */
static int relist(kube_client_t *c, const struct kube_informer_opts *o, char *rv, size_t rv_len,
                  char *err)
{
    struct kube_list_opts lo = {o->label_selector, o->field_selector,
                                o->list_limit > 0 ? o->list_limit : 250, NULL};
    cJSON *page = NULL;
    char *cont = NULL;
    int rc;

    rc = deliver(o, KUBE_EV_LIST_BEGIN, NULL, 0);
    if (rc)
        return rc;
    rv[0] = '\0';
    for (;;) {
        lo.continue_token = cont;
        rc = kube_list(c, o->res, o->ns, &lo, &page, err);
        if (rc)
            goto out;
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(page, "metadata");
        const cJSON *prv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
        const cJSON *pc = cJSON_GetObjectItemCaseSensitive(md, "continue");
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(page, "items");
        if (!cJSON_IsString(prv) || strlen(prv->valuestring) >= rv_len ||
            (items && !cJSON_IsArray(items) && !cJSON_IsNull(items))) {
            rc = err_set(err, -EBADMSG, "list %s: no resourceVersion or items", o->res->plural);
            goto out;
        }
        /* Every page of one list shares the first page's snapshot. */
        if (!rv[0])
            snprintf(rv, rv_len, "%s", prv->valuestring);
        const cJSON *it;
        cJSON_ArrayForEach(it, items)
        {
            rc = deliver(o, KUBE_EV_ADDED, it, 1);
            if (rc)
                goto out;
        }
        free(cont);
        cont = NULL;
        if (cJSON_IsString(pc) && pc->valuestring[0]) {
            cont = strdup(pc->valuestring);
            if (!cont) {
                rc = err_set(err, -ENOMEM, "out of memory");
                goto out;
            }
        }
        cJSON_Delete(page);
        page = NULL;
        if (!cont)
            break;
    }
    rc = deliver(o, KUBE_EV_LIST_END, NULL, 0);
out:
    cJSON_Delete(page);
    free(cont);
    return rc;
}

int kube_informer_run(kube_client_t *c, const struct kube_informer_opts *o, char *err)
{
    struct kube_backoff bo;
    char rv[128] = "";
    int rc = 0, need_list = 1;
    char eb[ERR_LEN];

    rc = kube_backoff_init(&bo, o->backoff_base_ms ? o->backoff_base_ms : 500,
                           o->backoff_max_ms ? o->backoff_max_ms : 30000, kube__seed(o));
    if (rc)
        return err_set(err, rc, "watch %s: bad backoff", o->res->plural);
    for (;;) {
        unsigned wait = 0;
        if (kube__stopped(c))
            return err_set(err, -ECANCELED, "watch %s: stopped", o->res->plural);
        eb[0] = '\0';
        if (need_list) {
            rc = relist(c, o, rv, sizeof(rv), eb);
            if (rc > 0 || rc == -ECANCELED) {
                if (rc < 0)
                    err_set(err, rc, "%s", eb);
                return rc;
            }
            if (rc) {
                wait = kube_backoff_next(&bo);
                log_warn("kube.list.failed", "resource=%s error=\"%s\" retry_ms=%u", o->res->plural,
                         eb, wait);
            } else {
                need_list = 0;
                log_debug("kube.list.done", "resource=%s resource_version=%s", o->res->plural, rv);
            }
        } else {
            long long t0 = kube__now_ms();
            rc = kube_watch_once(c, o, rv, o->watch_timeout_s > 0 ? o->watch_timeout_s : 300, rv,
                                 sizeof(rv), eb);
            long long took = kube__now_ms() - t0;
            if (rc > 0 || rc == -ECANCELED) {
                if (rc < 0)
                    err_set(err, rc, "%s", eb);
                return rc;
            }
            if (rc == KUBE_EGONE) {
                /* Our resourceVersion fell out of the server's history: start over. */
                need_list = 1;
                /* A server answering every fresh watch with 410 must not make us spin. */
                if (took < 1000)
                    wait = kube_backoff_next(&bo);
                log_info("kube.watch.expired", "resource=%s action=relist retry_ms=%u",
                         o->res->plural, wait);
            } else if (rc) {
                wait = kube_backoff_next(&bo);
                /* A throttled watch waits at least as long as the server asked. */
                long ra = kube_client_last_status(c)->retry_after_s;
                if (rc == -EBUSY && ra > 0 && (unsigned long)ra * 1000u > wait)
                    wait = (unsigned)(ra > 300 ? 300000 : ra * 1000);
                log_warn("kube.watch.failed", "resource=%s error=\"%s\" retry_ms=%u",
                         o->res->plural, eb, wait);
            } else if (took < 1000) {
                /* Closed at once: a server or proxy in trouble. Back off, do not spin. */
                wait = kube_backoff_next(&bo);
                log_info("kube.watch.short", "resource=%s duration_ms=%lld retry_ms=%u",
                         o->res->plural, took, wait);
            } else {
                kube_backoff_reset(&bo);
            }
            rc = deliver(o, KUBE_EV_RESTART, NULL, 0);
            if (rc)
                return rc;
        }
        if (wait && (rc = kube_sleep_ms(c, wait)) != 0)
            return err_set(err, rc, "watch %s: stopped", o->res->plural);
    }
}
