/* The request layer: one curl easy handle per client (connections reused across calls),
 * capped bodies, retries on 429 / 5xx / transport errors, token re-read on 401, and the JSON
 * verbs. A Status body and an HTTP code become an errno in status.c. */

#include <curl/curl.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "kube/kube_int.h"

struct kube_client {
    kube_config_t *cfg;
    CURL *h;
    struct kube_client_opts o;
    struct kube_status last;
    struct kube_backoff bo;
    char errbuf[CURL_ERROR_SIZE];
};

const struct kube_resource KUBE_DEPLOYMENTS = {"apps", "v1", "deployments", 1};
const struct kube_resource KUBE_PODS = {"", "v1", "pods", 1};
const struct kube_resource KUBE_CONFIGMAPS = {"", "v1", "configmaps", 1};
const struct kube_resource KUBE_SERVICES = {"", "v1", "services", 1};
const struct kube_resource KUBE_EVENTS = {"events.k8s.io", "v1", "events", 1};
const struct kube_resource KUBE_LEASES = {"coordination.k8s.io", "v1", "leases", 1};
const struct kube_resource KUBE_POD_METRICS = {"metrics.k8s.io", "v1beta1", "pods", 1};

uint64_t kube__seed(const void *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^
           (uint64_t)(uintptr_t)p;
}

int kube__stopped(kube_client_t *c)
{
    return c && c->o.stop && c->o.stop(c->o.stop_ctx);
}

int kube_sleep_ms(kube_client_t *c, unsigned ms)
{
    long long end = kube__now_ms() + ms;
    for (;;) {
        if (c && kube__stopped(c))
            return -ECANCELED;
        long long left = end - kube__now_ms();
        if (left <= 0)
            return 0;
        if (left > 100)
            left = 100;
        clock_sleep_us(left * 1000);
    }
}

kube_config_t *kube__cfg(kube_client_t *c)
{
    return c->cfg;
}

const struct kube_client_opts *kube__opts(const kube_client_t *c)
{
    return &c->o;
}

void kube__set_last(kube_client_t *c, const struct kube_status *st)
{
    c->last = *st;
}

const struct kube_status *kube_client_last_status(const kube_client_t *c)
{
    return &c->last;
}

int kube_global_init(char *err)
{
    CURLcode cc = curl_global_init(CURL_GLOBAL_DEFAULT);
    return cc == CURLE_OK ? 0 : err_set(err, -EIO, "curl_global_init: %s", curl_easy_strerror(cc));
}

int kube_client_new(kube_config_t *cfg, const struct kube_client_opts *opts, kube_client_t **out,
                    char *err)
{
    kube_client_t *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c)
        return err_set(err, -ENOMEM, "out of memory");
    if (opts)
        c->o = *opts;
    if (c->o.connect_timeout_ms <= 0)
        c->o.connect_timeout_ms = 5000;
    if (c->o.request_timeout_ms <= 0)
        c->o.request_timeout_ms = 30000;
    if (c->o.max_attempts <= 0)
        c->o.max_attempts = 5;
    if (!c->o.backoff_base_ms)
        c->o.backoff_base_ms = 200;
    if (!c->o.backoff_max_ms)
        c->o.backoff_max_ms = 10000;
    if (!c->o.retry_after_max_s)
        c->o.retry_after_max_s = 30;
    if (!c->o.user_agent)
        c->o.user_agent = "sizeup";
    c->cfg = cfg;
    int rc = kube_backoff_init(&c->bo, c->o.backoff_base_ms, c->o.backoff_max_ms, kube__seed(c));
    if (rc) {
        free(c);
        return err_set(err, rc, "bad backoff settings");
    }
    c->h = curl_easy_init();
    if (!c->h) {
        free(c);
        return err_set(err, -ENOMEM, "curl_easy_init failed");
    }
    *out = c;
    return 0;
}

void kube_client_free(kube_client_t *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->h);
    free(c);
}

/* ---- one exchange ------------------------------------------------------------------------- */

void kube__xfer_clear(struct kube__xfer *x)
{
    free(x->buf);
    x->buf = NULL;
    x->len = x->alloc = 0;
    x->too_big = 0;
    x->sink_rc = 0;
    x->retry_after_s = -1;
}

static int buf_append(struct kube__xfer *x, const char *data, size_t n)
{
    if (x->len + n > x->cap) {
        x->too_big = 1;
        return -1;
    }
    if (x->len + n + 1 > x->alloc) {
        size_t want = x->alloc ? x->alloc : 4096;
        while (want < x->len + n + 1)
            want *= 2;
        if (want > x->cap + 1)
            want = x->cap + 1;
        char *nb = realloc(x->buf, want);
        if (!nb)
            return -1;
        x->buf = nb;
        x->alloc = want;
    }
    memcpy(x->buf + x->len, data, n);
    x->len += n;
    x->buf[x->len] = '\0';
    return 0;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct kube__xfer *x = ud;
    size_t n = size * nmemb;
    long code = 0;

    if (x->sink) {
        curl_easy_getinfo(x->c->h, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 200 && code < 300) {
            int rc = x->sink(x->sink_ctx, data, n);
            if (rc) {
                x->sink_rc = rc;
                return 0;
            }
            return n;
        }
        /* An error body on a watch is a Status: small. */
        if (x->cap > 65536)
            x->cap = 65536;
    }
    return buf_append(x, data, n) ? 0 : n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct kube__xfer *x = ud;
    size_t n = size * nmemb;
    static const char ra[] = "retry-after:";

    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0)
        x->retry_after_s = -1;
    if (n > sizeof(ra) - 1 && strncasecmp(data, ra, sizeof(ra) - 1) == 0) {
        char tmp[32];
        size_t m = n - (sizeof(ra) - 1);
        if (m >= sizeof(tmp))
            m = sizeof(tmp) - 1;
        memcpy(tmp, data + sizeof(ra) - 1, m);
        tmp[m] = '\0';
        char *p = tmp, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        long v = strtol(p, &end, 10);
        /* HTTP-date forms are ignored: the caller falls back to its backoff. */
        if (end != p && v >= 0)
            x->retry_after_s = v;
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct kube__xfer *x = ud;
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return kube__stopped(x->c) ? 1 : 0;
}

static int map_curl(CURLcode cc, struct kube__xfer *x)
{
    switch (cc) {
    case CURLE_OK:
        return 0;
    case CURLE_ABORTED_BY_CALLBACK:
        return -ECANCELED;
    case CURLE_WRITE_ERROR:
        if (x->sink_rc)
            return x->sink_rc;
        return x->too_big ? -EFBIG : -ENOMEM;
    case CURLE_COULDNT_CONNECT:
        return -ECONNREFUSED;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return -EHOSTUNREACH;
    case CURLE_OPERATION_TIMEDOUT:
        return -ETIMEDOUT;
    case CURLE_OUT_OF_MEMORY:
        return -ENOMEM;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return -ECONNRESET;
    default:
        return -EPROTO; /* TLS verification and handshake failures land here */
    }
}

/* Retrying helps only with failures of the moment, never with TLS or configuration ones. */
static int retriable(int rc)
{
    return rc == -ECONNREFUSED || rc == -EHOSTUNREACH || rc == -ETIMEDOUT || rc == -ECONNRESET;
}

/* The transport options of one exchange on c's handle: URL, timeouts, HTTP version, TLS
 * verification against the cluster's CA only, the proxy. */
static void set_transport(kube_client_t *c, const char *url, long timeout_ms)
{
    kube_config_t *cfg = c->cfg;
    CURL *h = c->h;

    /* Reset keeps the connection cache, so connections are still reused. */
    curl_easy_reset(h);
    c->errbuf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->o.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    /* HTTP/2 when the server offers it by ALPN (a real API server does), HTTP/1.1 otherwise, as
     * client-go does. Watches are one long stream each on this handle, read incrementally like
     * any body; tests/integration/kube_http2.sh runs lists, patches, 429s, a long watch and 410s
     * over h2 through nginx. */
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(h, CURLOPT_USERAGENT, c->o.user_agent);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_VERBOSE, 0L);
    if (cfg->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    if (cfg->ca) {
        /* The cluster's CA only, as kubectl does: not the system store besides (the blob
         * replaces the CA file; the CA directory must be switched off explicitly). */
        struct curl_blob b = {cfg->ca, cfg->ca_len, CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
        curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
    }
    if (cfg->proxy)
        curl_easy_setopt(h, CURLOPT_PROXY, cfg->proxy);
}

/* The credentials of one exchange: the client certificate and the bearer token, the token copied
 * into tok (KUBE_TOKEN_MAX bytes; *have_tok set, and the caller wipes it after the exchange).
 * Returns 0, or an exec plugin's failure (err says why). */
static int set_credentials(kube_client_t *c, char *tok, int *have_tok, char *err)
{
    kube_config_t *cfg = c->cfg;
    CURL *h = c->h;

    /* An exec plugin's credential must be in place before the request; its failure is the
     * request's (without one the server would only answer 401). A token file's failed re-read
     * keeps the old token. */
    int rc = kube_config_reload_token(cfg, 0, NULL, cfg->exec ? err : NULL);
    if (rc && cfg->exec)
        return rc;
    /* The plugin may replace the certificate: curl copies the blobs under the lock. */
    pthread_mutex_lock(&cfg->mu);
    if (cfg->cert && cfg->key) {
        struct curl_blob bc = {cfg->cert, cfg->cert_len, CURL_BLOB_COPY};
        struct curl_blob bk = {cfg->key, cfg->key_len, CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &bc);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &bk);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    pthread_mutex_unlock(&cfg->mu);
    if (kube_config_token(cfg, tok, KUBE_TOKEN_MAX) == 0) {
        /* The token goes to curl's auth machinery, never into a header list we could print. */
        *have_tok = 1;
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, tok);
    }
    return 0;
}

/* The request itself: method, headers (into *hdrs, which the caller frees), body, and the
 * callbacks that fill x. Returns 0 or -ENOMEM. */
static int set_request(CURL *h, const char *method, const char *body, const char *ctype,
                       struct kube__xfer *x, struct curl_slist **hdrs)
{
    struct curl_slist *tmp;
    char ct[128];

    if (!(tmp = curl_slist_append(*hdrs, "Accept: application/json")))
        return -ENOMEM;
    *hdrs = tmp;
    /* No Expect: 100-continue round trip before bodies. */
    if (!(tmp = curl_slist_append(*hdrs, "Expect:")))
        return -ENOMEM;
    *hdrs = tmp;
    if (body) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", ctype ? ctype : "application/json");
        if (!(tmp = curl_slist_append(*hdrs, ct)))
            return -ENOMEM;
        *hdrs = tmp;
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hdrs);
    if (strcmp(method, "GET") == 0)
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    else if (strcmp(method, "POST") != 0 || !body)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    return 0;
}

int kube__perform(kube_client_t *c, const char *method, const char *verb, const char *path,
                  const char *body, const char *ctype, struct kube__xfer *x, long timeout_ms,
                  long *code, char *err)
{
    struct curl_slist *hdrs = NULL;
    char url[8192], tok[KUBE_TOKEN_MAX];
    CURLcode cc;
    int rc = 0, have_tok = 0;
    long long t0 = kube__now_ms();
    CURL *h = c->h;

    *code = 0;
    x->c = c;
    x->retry_after_s = -1;
    if (snprintf(url, sizeof(url), "%s%s", c->cfg->server, path) >= (int)sizeof(url))
        return err_set(err, -ENAMETOOLONG, "%s %.128s: URL too long", method, path);
    set_transport(c, url, timeout_ms);
    rc = set_credentials(c, tok, &have_tok, err);
    if (rc)
        goto out;
    rc = set_request(h, method, body, ctype, x, &hdrs);
    if (rc) {
        rc = err_set(err, rc, "out of memory");
        goto out;
    }
    cc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code);
    rc = map_curl(cc, x);
    if (rc && !x->sink_rc) {
        if (rc == -EFBIG)
            err_set(err, rc, "%s %.200s: response body larger than %zu bytes", method, path,
                    x->cap);
        else
            err_set(err, rc, "%s %.200s: %s%s%s", method, path, curl_easy_strerror(cc),
                    c->errbuf[0] ? ": " : "", c->errbuf);
    }
    if (c->o.on_request)
        c->o.on_request(c->o.on_request_ctx, verb, rc && !x->sink_rc ? 0 : *code,
                        (double)(kube__now_ms() - t0) / 1000.0);
out:
    /* Drop curl's copy of the token and our stack copy before returning. */
    if (have_tok) {
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, NULL);
        explicit_bzero(tok, sizeof(tok));
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    return rc;
}

/* ---- requests with retries ---------------------------------------------------------------- */

int kube_request(kube_client_t *c, const char *method, const char *path, const char *body,
                 const char *content_type, size_t cap, cJSON **out, char *err)
{
    return kube__request(c, method, method, path, body, content_type, cap, out, err);
}

int kube__request(kube_client_t *c, const char *method, const char *verb, const char *path,
                  const char *body, const char *ctype, size_t cap, cJSON **out, char *err)
{
    struct kube__xfer x = {0};
    struct kube_status st;
    long code = 0;
    int rc = 0, reauth = 0;

    if (out)
        *out = NULL;
    x.cap = cap ? cap : KUBE_BODY_MAX;
    kube_backoff_reset(&c->bo);
    for (int attempt = 1;; attempt++) {
        unsigned wait_ms = 0;
        if (kube__stopped(c)) {
            rc = err_set(err, -ECANCELED, "%s %.200s: stopped", method, path);
            goto out;
        }
        kube__xfer_clear(&x);
        x.cap = cap ? cap : KUBE_BODY_MAX;
        rc = kube__perform(c, method, verb, path, body, ctype, &x, c->o.request_timeout_ms, &code,
                           err);
        if (rc) {
            if (!retriable(rc) || attempt >= c->o.max_attempts)
                goto out;
            wait_ms = kube_backoff_next(&c->bo);
            log_debug("kube.retry", "method=%s path=%.200s attempt=%d error=\"%s\" wait_ms=%u",
                      method, path, attempt, err ? err : "", wait_ms);
        } else if (code >= 200 && code < 300) {
            if (out && x.len > 0) {
                *out = cJSON_ParseWithLength(x.buf, x.len);
                if (!*out) {
                    rc = err_set(err, -EBADMSG, "%s %.200s: response is not JSON", method, path);
                    goto out;
                }
            }
            goto out;
        } else {
            rc = kube_status_decode(x.buf, x.len, code, &st);
            st.retry_after_s = x.retry_after_s;
            c->last = st;
            int again = 0;
            if (code == 401 && !reauth) {
                int changed = 0;
                reauth = 1;
                /* A failed re-read is logged there and leaves changed 0: no retry. */
                int reload_rc = kube_config_reload_token(c->cfg, 1, &changed, NULL);
                (void)reload_rc;
                /* Only a new token can change the answer (an exec plugin counts as new each
                 * time it runs: it is asked once more, and the request retried once). */
                again = changed;
            } else if ((code == 429 || code >= 500) && attempt < c->o.max_attempts) {
                again = 1;
                if (x.retry_after_s >= 0) {
                    long s = x.retry_after_s;
                    if (s > (long)c->o.retry_after_max_s)
                        s = (long)c->o.retry_after_max_s;
                    wait_ms = (unsigned)s * 1000u;
                } else {
                    wait_ms = kube_backoff_next(&c->bo);
                }
            }
            if (!again) {
                err_set(err, rc, "%s %.200s: %ld %s%s%s", method, path, st.code, st.reason,
                        st.message[0] ? ": " : "", st.message);
                goto out;
            }
            log_debug("kube.retry", "method=%s path=%.200s attempt=%d code=%ld wait_ms=%u", method,
                      path, attempt, code, wait_ms);
        }
        if (wait_ms && (rc = kube_sleep_ms(c, wait_ms)) != 0) {
            err_set(err, rc, "%s %.200s: stopped", method, path);
            goto out;
        }
    }
out:
    kube__xfer_clear(&x);
    return rc;
}

/* ---- paths and verbs ---------------------------------------------------------------------- */

static int name_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!(isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == ':'))
            return 0;
    }
    return strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int kube_path(const struct kube_resource *res, const char *ns, const char *name, char *buf,
              size_t len)
{
    int n;
    char nsb[300] = "";

    if (ns && ns[0]) {
        if (!name_ok(ns))
            return -EINVAL;
        if (res->namespaced)
            snprintf(nsb, sizeof(nsb), "/namespaces/%s", ns);
    }
    if (name && !name_ok(name))
        return -EINVAL;
    if (res->group && res->group[0])
        n = snprintf(buf, len, "/apis/%s/%s%s/%s%s%s", res->group, res->version, nsb, res->plural,
                     name ? "/" : "", name ? name : "");
    else
        n = snprintf(buf, len, "/api/%s%s/%s%s%s", res->version, nsb, res->plural, name ? "/" : "",
                     name ? name : "");
    return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int kube__query_add(char *buf, size_t len, const char *key, const char *value)
{
    size_t used = strlen(buf);
    char *esc = curl_easy_escape(NULL, value, 0);
    int n;
    if (!esc)
        return -ENOMEM;
    n = snprintf(buf + used, len - used, "%c%s=%s", strchr(buf, '?') ? '&' : '?', key, esc);
    curl_free(esc);
    return n < 0 || (size_t)n >= len - used ? -ENOSPC : 0;
}

static int make_path(const struct kube_resource *res, const char *ns, const char *name, char *buf,
                     size_t len, char *err)
{
    int rc = kube_path(res, ns, name, buf, len);
    if (rc)
        return err_set(err, rc, "invalid %s name or namespace '%.64s/%.64s'", res->plural,
                       ns ? ns : "", name ? name : "");
    return 0;
}

int kube_get(kube_client_t *c, const struct kube_resource *res, const char *ns, const char *name,
             cJSON **out, char *err)
{
    char path[1024];
    int rc = make_path(res, ns, name, path, sizeof(path), err);
    if (rc)
        return rc;
    return kube__request(c, "GET", "GET", path, NULL, NULL, KUBE_BODY_MAX, out, err);
}

int kube_list(kube_client_t *c, const struct kube_resource *res, const char *ns,
              const struct kube_list_opts *o, cJSON **out, char *err)
{
    char path[4096], num[24];
    int rc = make_path(res, ns, NULL, path, sizeof(path), err);
    if (rc)
        return rc;
    if (o && o->limit > 0) {
        snprintf(num, sizeof(num), "%d", o->limit);
        rc = kube__query_add(path, sizeof(path), "limit", num);
    }
    if (!rc && o && o->continue_token && o->continue_token[0])
        rc = kube__query_add(path, sizeof(path), "continue", o->continue_token);
    if (!rc && o && o->label_selector && o->label_selector[0])
        rc = kube__query_add(path, sizeof(path), "labelSelector", o->label_selector);
    if (!rc && o && o->field_selector && o->field_selector[0])
        rc = kube__query_add(path, sizeof(path), "fieldSelector", o->field_selector);
    if (rc)
        return err_set(err, rc, "list %s: query too long", res->plural);
    return kube__request(c, "GET", "LIST", path, NULL, NULL, KUBE_BODY_MAX_LIST, out, err);
}

static int send_obj(kube_client_t *c, const char *method, const char *path, const cJSON *obj,
                    const char *ctype, cJSON **out, char *err)
{
    char *body = cJSON_PrintUnformatted(obj);
    int rc;
    if (!body)
        return err_set(err, -ENOMEM, "out of memory");
    rc = kube__request(c, method, method, path, body, ctype, KUBE_BODY_MAX, out, err);
    cJSON_free(body);
    return rc;
}

int kube_create(kube_client_t *c, const struct kube_resource *res, const char *ns, const cJSON *obj,
                cJSON **out, char *err)
{
    char path[1024];
    int rc = make_path(res, ns, NULL, path, sizeof(path), err);
    if (rc)
        return rc;
    return send_obj(c, "POST", path, obj, NULL, out, err);
}

int kube_update(kube_client_t *c, const struct kube_resource *res, const char *ns, const char *name,
                const cJSON *obj, cJSON **out, char *err)
{
    char path[1024];
    int rc = make_path(res, ns, name, path, sizeof(path), err);
    if (rc)
        return rc;
    return send_obj(c, "PUT", path, obj, NULL, out, err);
}

int kube_delete(kube_client_t *c, const struct kube_resource *res, const char *ns, const char *name,
                const char *propagation, char *err)
{
    char path[1024], body[160];
    int rc = make_path(res, ns, name, path, sizeof(path), err);
    if (rc)
        return rc;
    if (propagation) {
        snprintf(body, sizeof(body),
                 "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"%s\"}",
                 propagation);
        return kube__request(c, "DELETE", "DELETE", path, body, NULL, KUBE_BODY_MAX, NULL, err);
    }
    return kube__request(c, "DELETE", "DELETE", path, NULL, NULL, KUBE_BODY_MAX, NULL, err);
}

int kube_patch(kube_client_t *c, const struct kube_resource *res, const char *ns, const char *name,
               enum kube_patch_type type, const char *patch, cJSON **out, char *err)
{
    static const char *const ctypes[] = {"application/strategic-merge-patch+json",
                                         "application/merge-patch+json",
                                         "application/json-patch+json"};
    char path[1024];
    int rc = make_path(res, ns, name, path, sizeof(path), err);
    if (rc)
        return rc;
    if ((unsigned)type > KUBE_PATCH_JSON)
        return err_set(err, -EINVAL, "unknown patch type %d", (int)type);
    return kube__request(c, "PATCH", "PATCH", path, patch, ctypes[type], KUBE_BODY_MAX, out, err);
}

int kube_update_retry(kube_client_t *c, const struct kube_resource *res, const char *ns,
                      const char *name, int max_attempts, kube_mutate_fn fn, void *ctx, cJSON **out,
                      char *err)
{
    cJSON *obj = NULL;
    int rc = 0;

    if (out)
        *out = NULL;
    if (max_attempts <= 0)
        max_attempts = 5;
    for (int i = 0; i < max_attempts; i++) {
        cJSON_Delete(obj);
        obj = NULL;
        rc = kube_get(c, res, ns, name, &obj, err);
        if (rc)
            goto out;
        if (!obj) {
            rc = err_set(err, -EBADMSG, "GET %s %s: empty response", res->plural, name);
            goto out;
        }
        rc = fn(ctx, obj, err);
        if (rc < 0)
            goto out;
        if (rc == KUBE_MUTATE_SKIP) {
            rc = 0;
            if (out) {
                *out = obj;
                obj = NULL;
            }
            goto out;
        }
        rc = kube_update(c, res, ns, name, obj, out, err);
        if (rc != KUBE_ECONFLICT)
            goto out;
        log_debug("kube.conflict", "resource=%s namespace=%s name=%s attempt=%d", res->plural,
                  ns ? ns : "", name, i + 1);
    }
    err_wrap(err, rc, "gave up after %d conflicting updates", max_attempts);
out:
    cJSON_Delete(obj);
    return rc;
}
