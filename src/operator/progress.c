/* The live-progress page and its WebSocket feed. Everything runs on the serving lws thread: a
 * timer renders the feed once per period into one shared message, and each client is asked to
 * write it when its socket can take it. A client keeps no queue of its own: one that is still
 * busy with an older message simply skips to the newest, and one that has taken nothing for
 * PROGRESS_SLOW_S is closed, so a stalled reader costs one message of memory and never holds
 * back the sweeps or the other readers. */

#include "operator/progress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libwebsockets.h>

#include "core/clock.h"
#include "core/log.h"

struct session {
    struct lws *wsi;
    uint64_t sent_id;   /* the message id last written */
    int64_t waiting_ms; /* since when a newer message waits for this client; 0: none */
};

struct progress_srv {
    struct progress_srv_opts o;
    struct lws_context *ctx; /* set by the protocol's init */
    struct lws_vhost *vh;
    const struct lws_protocols *proto;
    lws_sorted_usec_list_t sul;
    bool timer;
    unsigned char *msg; /* owned: LWS_PRE headroom, then the JSON */
    size_t len;
    uint64_t msg_id, seq_rendered;
    struct session *sessions[PROGRESS_MAX_CLIENTS];
};

/* ---- who may read ------------------------------------------------------------------------ */

/* The connection arrived on 127.0.0.1 or ::1 (its local address, whatever the peer claims). */
static bool on_loopback(struct lws *wsi)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    int fd = lws_get_socket_fd(lws_get_network_wsi(wsi));
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return false;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        return a->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
    }
    if (ss.ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)&ss)->sin6_addr;
        static const unsigned char v4l[16] = {0, 0, 0,    0,    0,   0, 0, 0,
                                              0, 0, 0xff, 0xff, 127, 0, 0, 1};
        return IN6_IS_ADDR_LOOPBACK(a) || memcmp(a->s6_addr, v4l, 16) == 0;
    }
    return false;
}

/* 0 when the request may read the page or the feed, else the HTTP status to refuse it with
 * (401 no or bad token, 403 not allowed, 503 the check itself failed). */
static int access_status(progress_srv_t *ps, struct lws *wsi)
{
    char hdr[4096], err[ERR_LEN] = "";
    if (!ps->o.loopback_only || on_loopback(wsi))
        return 0;
    if (!ps->o.public_) {
        log_info("progress.refused", "reason=\"not on loopback\"");
        return 403;
    }
    int n = lws_hdr_copy(wsi, hdr, sizeof(hdr), WSI_TOKEN_HTTP_AUTHORIZATION);
    if (n <= 7 || strncasecmp(hdr, "Bearer ", 7) != 0) {
        log_info("progress.refused", "reason=\"no Authorization: Bearer header\"");
        return 401;
    }
    const char *tok = hdr + 7;
    while (*tok == ' ')
        tok++;
    int rc = ps->o.auth(ps->o.auth_ud, tok, err);
    explicit_bzero(hdr, sizeof(hdr));
    if (rc == 0)
        return 0;
    /* err never holds the token: the callback's contract. */
    log_info("progress.refused", "reason=\"%s\"", err[0] ? err : "token not accepted");
    return rc == -EACCES ? 403 : rc == -EPERM ? 401 : 503;
}

/* ---- the page ---------------------------------------------------------------------------- */

static const char page[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>sizeup: live progress</title>\n<style>\n"
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;"
    "max-width:1000px;padding:0 1em;color:#212121}\n"
    "h1{font-size:1.5em}#status{color:#616161}.sweep{border:1px solid #ddd;border-radius:6px;"
    "padding:.6em 1em;margin:1em 0}\n.sweep h2{font-size:1.1em;margin:.2em 0}"
    "dl{display:grid;grid-template-columns:repeat(3,max-content auto);gap:.2em .8em}"
    "dt{font-weight:600}dd{margin:0;font-variant-numeric:tabular-nums}\n"
    "svg{width:100%;height:90px}.rps{stroke:#1e88e5}.p95{stroke:#c62828}"
    "polyline{fill:none;stroke-width:1.5}\n</style></head><body>\n"
    "<h1>Sweeps running now</h1>\n<p id=\"status\">connecting...</p>\n"
    "<div id=\"sweeps\"></div>\n<script>\n"
    "'use strict';\n"
    "function el(t,c,x){const e=document.createElement(t);if(c)e.className=c;"
    "if(x!==undefined)e.textContent=x;return e;}\n"
    "function line(h,k,cls){if(!h.length)return '';const m=Math.max(1e-9,...h.map(p=>p[k]));"
    "const t0=h[0].t,t1=Math.max(t0+1,h[h.length-1].t);return '<polyline class=\"'+cls+'\" "
    "points=\"'+h.map(p=>((p.t-t0)/(t1-t0)*600).toFixed(1)+','+(85-p[k]/m*80).toFixed(1))"
    ".join(' ')+'\"/>';}\n"
    "function show(d){const root=document.getElementById('sweeps');root.textContent='';\n"
    " if(!d.sweeps.length){root.appendChild(el('p','', 'No sweep is running.'));}\n"
    " for(const s of d.sweeps){const b=el('div','sweep');b.dataset.name=s.name;"
    "b.appendChild(el('h2','',s.name));const dl=el('dl');\n"
    "  const f=[['phase',s.phase],['variant',s.variant+' ('+s.index+'/'+s.n+')'],"
    "['step',s.step?s.step+' '+s.step_what+(s.offered_rps?' at '+s.offered_rps+'/s':''):'-'],"
    "['rate',s.rps.toFixed(1)+' req/s'],['p95',s.p95_ms.toFixed(1)+' ms'],['requests',s.requests],"
    "['errors',s.errors+' ('+(s.error_rate*100).toFixed(2)+'%)'],['streams',s.streams],"
    "['left','~'+Math.round(s.eta_s)+' s']];\n"
    "  for(const [k,v] of f){dl.appendChild(el('dt','',k));dl.appendChild(el('dd',k,String(v)));}\n"
    "  b.appendChild(dl);const g=document.createElementNS('http://www.w3.org/2000/svg','svg');"
    "g.setAttribute('viewBox','0 0 600 90');g.setAttribute('preserveAspectRatio','none');"
    "g.innerHTML=line(s.history,'rps','rps')+line(s.history,'p95_ms','p95');b.appendChild(g);"
    "b.appendChild(el('small','','last minute: rate (blue), p95 (red)'));root.appendChild(b);}}\n"
    "let tries=0;function connect(){const ws=new WebSocket((location.protocol==='https:'?'wss://'"
    ":'ws://')+location.host+'" PROGRESS_PATH "');\n"
    " ws.onopen=()=>{tries=0;document.getElementById('status').textContent='live';};\n"
    " ws.onmessage=e=>{const d=JSON.parse(e.data);show(d);document.getElementById('status')"
    ".textContent='live, updated '+new Date().toLocaleTimeString();};\n"
    " ws.onclose=()=>{document.getElementById('status').textContent='disconnected; retrying';"
    "setTimeout(connect,Math.min(10000,1000*++tries));};}\nconnect();\n"
    "</script></body></html>\n";

int progress_srv_http(progress_srv_t *ps, struct lws *wsi, const char *path, int *code,
                      const char **ctype, const char **body, size_t *len, int *owned)
{
    static const char refused[] = "the progress page answers only on loopback (kubectl "
                                  "port-forward), or with a bearer token where that is enabled\n";
    if (!ps || strcmp(path, "/") != 0)
        return 0;
    *owned = 0;
    int st = access_status(ps, wsi);
    if (st) {
        *code = st;
        *ctype = "text/plain; charset=utf-8";
        *body = refused;
        *len = sizeof(refused) - 1;
        return 1;
    }
    *code = 200;
    *ctype = "text/html; charset=utf-8";
    *body = page;
    *len = sizeof(page) - 1;
    return 1;
}

/* ---- the feed ---------------------------------------------------------------------------- */

static void drop_session(progress_srv_t *ps, struct session *s)
{
    for (int i = 0; i < PROGRESS_MAX_CLIENTS; i++)
        if (ps->sessions[i] == s)
            ps->sessions[i] = NULL;
}

static void tick(lws_sorted_usec_list_t *sul)
{
    progress_srv_t *ps = lws_container_of(sul, progress_srv_t, sul);
    char *json = NULL;
    size_t len = 0;
    int64_t now = clock_mono_ms();
    int clients = 0;

    for (int i = 0; i < PROGRESS_MAX_CLIENTS; i++)
        clients += ps->sessions[i] != NULL;
    /* Rendered only for someone: an operator nobody watches pays nothing. */
    if (clients && progress_feed_json(ps->o.feed, &json, &len) == 0) {
        unsigned char *m = malloc(LWS_PRE + len);
        if (m) {
            memcpy(m + LWS_PRE, json, len);
            free(ps->msg);
            ps->msg = m;
            ps->len = len;
            ps->msg_id++;
        }
        free(json);
    }
    for (int i = 0; i < PROGRESS_MAX_CLIENTS; i++) {
        struct session *s = ps->sessions[i];
        if (!s)
            continue;
        if (s->sent_id == ps->msg_id)
            continue;
        if (!s->waiting_ms)
            s->waiting_ms = now;
        if (now - s->waiting_ms > PROGRESS_SLOW_S * 1000) {
            /* Not a message taken in PROGRESS_SLOW_S: the client is gone or too slow. */
            log_info("progress.drop", "reason=\"slow client\" waited_ms=%lld",
                     (long long)(now - s->waiting_ms));
            lws_set_timeout(s->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
            drop_session(ps, s);
            continue;
        }
        lws_callback_on_writable(s->wsi);
    }
    lws_sul_schedule(ps->ctx, 0, &ps->sul, tick, PROGRESS_PERIOD_MS * LWS_US_PER_MS);
}

static int callback_progress(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                             void *in, size_t len)
{
    const struct lws_protocols *pr = lws_get_protocol(wsi);
    progress_srv_t *ps = pr ? pr->user : NULL;
    struct session *s = user;
    (void)in;
    (void)len;

    switch (reason) {
    case LWS_CALLBACK_PROTOCOL_INIT:
        if (!ps || ps->timer)
            break;
        ps->ctx = lws_get_context(wsi);
        ps->timer = true;
        lws_sul_schedule(ps->ctx, 0, &ps->sul, tick, 1);
        break;
    case LWS_CALLBACK_PROTOCOL_DESTROY:
        if (ps && ps->timer) {
            lws_sul_schedule(ps->ctx, 0, &ps->sul, NULL, LWS_SET_TIMER_USEC_CANCEL);
            ps->timer = false;
        }
        break;
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        char uri[64];
        if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0 ||
            strcmp(uri, PROGRESS_PATH) != 0)
            return 1;
        if (access_status(ps, wsi))
            return 1;
        int free_slots = 0;
        for (int i = 0; i < PROGRESS_MAX_CLIENTS; i++)
            free_slots += ps->sessions[i] == NULL;
        if (!free_slots) {
            log_info("progress.refused", "reason=\"too many clients\" max=%d",
                     PROGRESS_MAX_CLIENTS);
            return 1;
        }
        break;
    }
    case LWS_CALLBACK_ESTABLISHED: {
        /* A fixed, small kernel buffer: with lws's one pending message, all a stalled reader
         * can make the server hold, and it fills within seconds, so the reader is seen. */
        int sndbuf = PROGRESS_SNDBUF;
        setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        memset(s, 0, sizeof(*s));
        s->wsi = wsi;
        for (int i = 0; i < PROGRESS_MAX_CLIENTS; i++)
            if (!ps->sessions[i]) {
                ps->sessions[i] = s;
                break;
            }
        lws_callback_on_writable(wsi);
        break;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE:
        if (!ps->msg || s->sent_id == ps->msg_id)
            break;
        if (lws_write(wsi, ps->msg + LWS_PRE, ps->len, LWS_WRITE_TEXT) < (int)ps->len)
            return -1;
        s->sent_id = ps->msg_id;
        s->waiting_ms = 0;
        break;
    case LWS_CALLBACK_RECEIVE:
        break; /* read-only: what a client sends is ignored */
    case LWS_CALLBACK_CLOSED:
        drop_session(ps, s);
        break;
    default:
        break;
    }
    return 0;
}

void progress_srv_protocol(progress_srv_t *ps, struct lws_protocols *out)
{
    memset(out, 0, sizeof(*out));
    out->name = PROGRESS_PROTOCOL;
    out->callback = callback_progress;
    out->per_session_data_size = sizeof(struct session);
    /* Clients send nothing but control frames: a small receive buffer bounds what one can make
     * the server hold. */
    out->rx_buffer_size = 256;
    out->user = ps;
}

int progress_srv_new(const struct progress_srv_opts *o, progress_srv_t **out, char *err)
{
    *out = NULL;
    if (!o->feed)
        return err_set(err, -EINVAL, "progress: no feed");
    if (o->public_ && !o->auth)
        return err_set(err, -EINVAL, "progress: serving off loopback needs a token check");
    progress_srv_t *ps = calloc(1, sizeof(*ps));
    if (!ps)
        return err_set(err, -ENOMEM, "out of memory");
    ps->o = *o;
    *out = ps;
    return 0;
}

void progress_srv_free(progress_srv_t *ps)
{
    if (!ps)
        return;
    free(ps->msg);
    free(ps);
}
