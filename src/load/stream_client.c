/* (Size: libwebsockets drives every stream of a thread through one callback, and
 * that callback, the per-stream state it moves (open, frames, close, failure) and the thread's
 * tick (the ramp, the measured windows, the quit) all work on the same private stream and
 * thread structs; split, those structs would become a header every part reaches into.)
 *
 * The stream threads: one libwebsockets context each, holding up to 10,000 streams on one
 * thread. libwebsockets does the WebSocket protocol (handshake, masking, fragments, ping/pong,
 * the close handshake, permessage-deflate when the server accepts it, TLS verified against the
 * system CAs or SSL_CERT_FILE) and, for server-sent events, the HTTP client (status, headers,
 * chunked bodies).
 *
 * Why event streams are read here and not by the request engine: the engine is built around a
 * response that completes (its parser counts and discards the body), and a stream's response
 * never does; here the body goes through sse_parser, which keeps a few bytes per stream, on
 * the same loop and with the same accounting as WebSocket frames.
 *
 * The two protocols differ only in their transport table (struct transport): how a stream is
 * connected, what its handshake must show, and how its bytes become frames. Per stream this
 * file keeps about a hundred bytes; a frame is scanned as it arrives and never stored. */

#include "load/stream_client.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include <libwebsockets.h>

#include "core/clock.h"
#include "load/stream_frame.h"

/* The tick paces the ramp and notices phase changes. libwebsockets 4.1 waits in poll(), whose
 * cost grows with the number of streams, so the tick is fast only while streams open. */
#define TICK_RAMP_US   5000           /* while opening streams */
#define TICK_US        50000          /* afterwards */
#define CLOSE_GRACE_NS (2000000000LL) /* the close handshakes get this long at the end */
#define RX_BUFFER      2048           /* per stream: a larger frame arrives in pieces */
#define PROTO_NAME     "sizeup-stream"
#define SSE_READ       4096

enum sstate {
    S_IDLE = 0,   /* not opened yet */
    S_CONNECTING, /* connect or handshake in progress */
    S_OPEN,
    S_CLOSING, /* we are closing it */
    S_FAILED,  /* never opened */
    S_ENDED    /* closed (by us or by the server) */
};

struct stream {
    struct lws *wsi;
    int64_t connect_ns;
    uint64_t last_seq; /* highest command number received; valid when has_last */
    uint64_t win_frames;
    uint64_t frame_bytes; /* of the WebSocket message being received */
    uint8_t state;
    uint8_t has_last;
    uint8_t whole;       /* open when the measured window began, not dropped since */
    uint8_t in_msg;      /* inside a WebSocket message */
    uint8_t subscribed;  /* its first message is sent (or there is none) */
    uint8_t too_big;     /* we closed it over STREAM_MAX_FRAME */
    uint16_t close_code; /* from the server's close frame */
    union {
        struct frame_match fm; /* WebSocket: the message being received */
        struct sse_parser sse; /* event stream */
    } u;
};

struct stream_thread;

/* One protocol's part: everything else is shared. */
struct transport {
    const char *method; /* NULL: a WebSocket upgrade; else the HTTP method of the request */
    /* The handshake's response is acceptable (the HTTP client's; WebSocket checks its own). */
    int (*accept)(struct lws *wsi);
    /* Bytes of the stream's payload arrived. Returns 0 (a stream to close is marked). */
    int (*rx)(struct stream_thread *t, struct stream *s, struct lws *wsi, const char *in,
              size_t len);
};

struct stream_thread {
    struct stream_setup *su;
    const struct transport *tr;
    unsigned idx, nthreads, n; /* local stream j is the global stream j x nthreads + idx */
    struct stream *streams;
    struct lws_context *ctx;
    lws_sorted_usec_list_t tick;
    pthread_t tid;
    int started;
    unsigned next_open; /* the next local stream of the ramp */
    uint64_t open_now;
    int measuring, window_done, quitting, destroying, exit_loop;
    int64_t quit_ns;
    int64_t load0_ns;      /* once the producers are scheduled */
    struct stream_ctl ctl; /* the last control read, and the ids acted on */
    unsigned ctl_seen, ramp_seen, win_seen, collect_seen;
    size_t due_hint;
    uint64_t cached_seq; /* the last command looked up, and when it was due */
    int64_t cached_due;
    int has_cached;
    unsigned char *txbuf; /* LWS_PRE + the subscribe message: lws_write masks in place */
    struct stream_stats st;
    struct series_rec dseries; /* delivery latency by the command's due time */
    struct rusage ru0;
    double cpu_s;
    struct stream_stats win_out; /* the collected window's figures (win_cpu_s its CPU) */
    double win_cpu_s;
    char err[ERR_LEN];
    _Atomic uint64_t pub_opened, pub_failed, pub_dropped, pub_open, pub_frames, pub_pending;
    atomic_int pub_ready, pub_done, pub_error;
    atomic_uint pub_drain_seen, pub_collected;
};

static double thread_cpu(const struct rusage *a, const struct rusage *b)
{
    return (double)(b->ru_utime.tv_sec - a->ru_utime.tv_sec) +
           (double)(b->ru_utime.tv_usec - a->ru_utime.tv_usec) / 1e6 +
           (double)(b->ru_stime.tv_sec - a->ru_stime.tv_sec) +
           (double)(b->ru_stime.tv_usec - a->ru_stime.tv_usec) / 1e6;
}

/* ---- what a stream receives ------------------------------------------------------------- */

/* When command seq was due (absolute ns), or -1 when no command of this run had that number.
 * Frames of one command reach every stream at about the same time: one lookup serves them. */
static int64_t due_of(struct stream_thread *t, uint64_t seq)
{
    if (!t->load0_ns || seq >= t->su->commands)
        return -1;
    if (t->has_cached && t->cached_seq == seq)
        return t->cached_due;
    int64_t rel = plan_due_ns(t->su->plan, (double)seq + 0.5, &t->due_hint);
    if (rel == INT64_MAX)
        return -1;
    t->cached_seq = seq;
    t->cached_due = t->load0_ns + rel;
    t->has_cached = 1;
    return t->cached_due;
}

/* One whole frame (a WebSocket message or an event) of bytes payload bytes arrived. */
static void window_begin(struct stream_thread *t, int64_t now);

static void on_frame(struct stream_thread *t, struct stream *s, int matched, uint64_t seq)
{
    /* The window may have begun since the last tick: a frame must not wait for it. */
    if (!t->measuring && t->ctl.measure_ns && !t->window_done && !t->quitting)
        window_begin(t, clock_mono_ns());
    if (!t->measuring)
        return;
    t->st.frames++;
    if (!t->su->match)
        return;
    int64_t due = matched ? due_of(t, seq) : -1;
    if (due < 0) {
        t->st.unmatched++;
        return;
    }
    if (s->has_last && seq <= s->last_seq) {
        t->st.out_of_order++;
    } else {
        s->last_seq = seq;
        s->has_last = 1;
    }
    if (seq < t->ctl.win_lo || seq >= t->ctl.win_hi)
        return;
    s->win_frames++;
    int64_t now = clock_mono_ns();
    uint64_t lat = now > due ? (uint64_t)(now - due) / 1000 : 0;
    hist_record(&t->st.delivery, lat);
    /* By due time, not arrival: a command due in second s counts in s even when its frame
     * arrives in the drain, so the series adds up to the totals. */
    struct series_slot *sl = series_slot(&t->dseries, due);
    if (sl) {
        sl->count++;
        hist_record(&sl->h, lat);
    }
}

/* A frame over STREAM_MAX_FRAME: the stream is closed from its next writable callback (with
 * 1009 on a WebSocket). Closing from inside the receive callback, in the middle of a frame,
 * crashes libwebsockets 4.1; the rest of the frame is read and ignored meanwhile. */
static int too_big(struct stream *s, struct lws *wsi)
{
    if (!s->too_big) {
        s->too_big = 1;
        lws_callback_on_writable(wsi);
    }
    return 0;
}

static int ws_rx(struct stream_thread *t, struct stream *s, struct lws *wsi, const char *in,
                 size_t len)
{
    if (s->too_big)
        return 0;
    if (!s->in_msg) {
        s->in_msg = 1;
        s->frame_bytes = 0;
        frame_match_init(&s->u.fm);
    }
    s->frame_bytes += len;
    if (t->measuring)
        t->st.bytes_in += len;
    if (s->frame_bytes > STREAM_MAX_FRAME)
        return too_big(s, wsi);
    if (t->su->match)
        frame_match_feed(&s->u.fm, t->su->match, t->su->match_len, in, len);
    if (lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0) {
        uint64_t seq = 0;
        int matched = frame_match_result(&s->u.fm, &seq);
        s->in_msg = 0;
        on_frame(t, s, matched, seq);
    }
    return 0;
}

struct sse_ctx {
    struct stream_thread *t;
    struct stream *s;
};

static void sse_event(void *ud, int matched, uint64_t seq, uint64_t bytes)
{
    struct sse_ctx *c = ud;
    (void)bytes;
    on_frame(c->t, c->s, matched, seq);
}

static int sse_rx(struct stream_thread *t, struct stream *s, struct lws *wsi, const char *in,
                  size_t len)
{
    struct sse_ctx c = {t, s};
    if (s->too_big)
        return 0;
    if (t->measuring)
        t->st.bytes_in += len;
    static const char none[] = "";
    const char *key = t->su->match ? t->su->match : none;
    if (sse_parser_feed(&s->u.sse, key, t->su->match ? t->su->match_len : 0, STREAM_MAX_FRAME, in,
                        len, sse_event, &c) != SSE_OK)
        return too_big(s, wsi);
    return 0;
}

static int ws_accept(struct lws *wsi)
{
    (void)wsi;
    return 0; /* libwebsockets refuses anything but a valid 101 itself */
}

/* An event stream must answer 200 with Content-Type text/event-stream. */
static int sse_accept(struct lws *wsi)
{
    char ct[128];
    if (lws_http_client_http_response(wsi) != 200)
        return -1;
    if (lws_hdr_copy(wsi, ct, sizeof(ct), WSI_TOKEN_HTTP_CONTENT_TYPE) <= 0)
        return -1;
    return strncasecmp(ct, "text/event-stream", 17) == 0 ? 0 : -1;
}

static const struct transport ws_transport = {NULL, ws_accept, ws_rx};
static const struct transport sse_transport = {"GET", sse_accept, sse_rx};

/* ---- a stream's life -------------------------------------------------------------------- */

static void close_stream(struct stream *s)
{
    if (s->state == S_OPEN) {
        s->state = S_CLOSING;
        lws_callback_on_writable(s->wsi);
    }
}

static void on_open(struct stream_thread *t, struct stream *s)
{
    int64_t now = clock_mono_ns();
    if (s->state != S_CONNECTING)
        return;
    s->state = S_OPEN;
    hist_record(&t->st.handshake, now > s->connect_ns ? (uint64_t)(now - s->connect_ns) / 1000 : 0);
    t->st.opened++;
    t->open_now++;
    if (t->su->proto == PROFILE_STREAM_SSE)
        sse_parser_init(&s->u.sse);
    /* A smaller ramp came while it connected: it is not wanted any more. */
    if ((unsigned)(s - t->streams) * t->nthreads + t->idx >= t->ctl.ramp_to)
        close_stream(s);
}

/* libwebsockets' reason for a failed connection, as a class. Its texts are not a contract, so
 * anything unrecognised is "other" rather than a guess. */
static enum stream_fail_class fail_class(const char *why)
{
    if (!why)
        return STREAM_FAIL_OTHER;
    if (strcasestr(why, "refused"))
        return STREAM_FAIL_REFUSED;
    if (strcasestr(why, "timeout") || strcasestr(why, "timed out"))
        return STREAM_FAIL_TIMEOUT;
    if (strcasestr(why, "tls") || strcasestr(why, "ssl") || strcasestr(why, "cert"))
        return STREAM_FAIL_TLS;
    if (strcasestr(why, "HS:") || strcasestr(why, "upgrade") || strcasestr(why, "101") ||
        strcasestr(why, "response") || strcasestr(why, "accept"))
        return STREAM_FAIL_HANDSHAKE;
    if (strcasestr(why, "connect"))
        return STREAM_FAIL_REFUSED;
    return STREAM_FAIL_OTHER;
}

static void on_fail(struct stream_thread *t, struct stream *s, enum stream_fail_class c)
{
    if (s->state != S_CONNECTING)
        return;
    s->state = S_FAILED;
    s->wsi = NULL;
    t->st.failed++;
    t->st.by_fail[c]++;
}

static void on_closed(struct stream_thread *t, struct stream *s, int ended)
{
    if (s->state == S_CONNECTING) {
        /* Closed without an error text: libwebsockets' own timeout when the handshake took
         * as long as it allows (the profile's timeout), else the server hung up on it. */
        int64_t took = clock_mono_ns() - s->connect_ns;
        on_fail(t, s,
                took >= (int64_t)t->su->timeout_s * 900000000LL ? STREAM_FAIL_TIMEOUT
                                                                : STREAM_FAIL_HANDSHAKE);
        return;
    }
    if (s->state != S_OPEN && s->state != S_CLOSING)
        return;
    t->open_now--;
    if (s->state == S_OPEN && !t->quitting) {
        enum stream_close_class c = stream_close_class_of(s->close_code);
        if (s->too_big)
            c = STREAM_CLOSE_TOO_BIG;
        else if (ended && !s->close_code)
            c = STREAM_CLOSE_ENDED;
        t->st.dropped++;
        t->st.by_close[c]++;
        s->whole = 0; /* a dropped stream's missing frames are its drop, not losses */
    }
    s->state = S_ENDED;
    s->wsi = NULL;
}

static int on_writable(struct stream_thread *t, struct stream *s, struct lws *wsi)
{
    if (s->too_big) {
        static const char why[] = "message too big";
        if (t->su->proto == PROFILE_STREAM_WS)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, (unsigned char *)why,
                             sizeof(why) - 1);
        return -1;
    }
    if (s->state == S_CLOSING) {
        static const char why[] = "load test done";
        if (t->su->proto == PROFILE_STREAM_WS)
            lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, (unsigned char *)why, sizeof(why) - 1);
        return -1;
    }
    if (!s->subscribed && t->txbuf) {
        /* lws_write masks the payload in place: write a fresh copy each time. */
        memcpy(t->txbuf + LWS_PRE, t->su->subscribe, t->su->subscribe_len);
        if (lws_write(wsi, t->txbuf + LWS_PRE, t->su->subscribe_len, LWS_WRITE_TEXT) <
            (int)t->su->subscribe_len)
            return -1;
        s->subscribed = 1;
    }
    return 0;
}

/* An SSE request's own headers, appended at *in (len bytes of room): it accepts an event
 * stream, uncached. Returns 0, or -1 when they do not fit. */
static int sse_headers(struct lws *wsi, void *in, size_t len)
{
    unsigned char **p = (unsigned char **)in, *end = *p + len;
    static const char accept[] = "text/event-stream", nc[] = "no-cache";

    if (lws_add_http_header_by_name(wsi, (const unsigned char *)"accept:",
                                    (const unsigned char *)accept, sizeof(accept) - 1, p, end) ||
        lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                    (const unsigned char *)nc, sizeof(nc) - 1, p, end))
        return -1;
    return 0;
}

/* The server's answer to our permessage-deflate offer, read while its headers are here. */
static void count_deflate(struct stream_thread *t, struct lws *wsi)
{
    char ext[128];

    if (lws_hdr_copy(wsi, ext, sizeof(ext), WSI_TOKEN_EXTENSIONS) > 0 &&
        strstr(ext, "permessage-deflate"))
        t->st.deflate++;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    struct lws_context *ctx = lws_get_context(wsi);
    struct stream_thread *t = ctx ? lws_context_user(ctx) : NULL;
    struct stream *s = user;

    if (!t || !s || t->destroying)
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    switch (reason) {
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        if (t->su->proto == PROFILE_STREAM_SSE && sse_headers(wsi, in, len) != 0)
            return -1;
        break;
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
        count_deflate(t, wsi);
        break;
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        on_open(t, s);
        if (!s->subscribed)
            lws_callback_on_writable(wsi);
        break;
    case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
        /* Also seen on a WebSocket's 101, which CLIENT_ESTABLISHED reports. */
        if (!t->tr->method)
            break;
        if (t->tr->accept(wsi) != 0) {
            on_fail(t, s, STREAM_FAIL_HANDSHAKE);
            return -1;
        }
        on_open(t, s);
        break;
    case LWS_CALLBACK_CLIENT_RECEIVE:
    case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ:
        if (s->state == S_OPEN || s->state == S_CLOSING)
            return t->tr->rx(t, s, wsi, in, len);
        break;
    case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
        char buf[LWS_PRE + SSE_READ];
        char *px = buf + LWS_PRE;
        int lenx = SSE_READ;
        if (lws_http_client_read(wsi, &px, &lenx) < 0)
            return -1;
        break;
    }
    case LWS_CALLBACK_CLIENT_WRITEABLE:
    case LWS_CALLBACK_CLIENT_HTTP_WRITEABLE:
        return on_writable(t, s, wsi);
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        if (len >= 2)
            s->close_code =
                (uint16_t)(((const unsigned char *)in)[0] << 8 | ((const unsigned char *)in)[1]);
        break;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        on_fail(t, s, fail_class(in));
        break;
    case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
        on_closed(t, s, 1);
        break;
    case LWS_CALLBACK_CLIENT_CLOSED:
    case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
        on_closed(t, s, 0);
        break;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
    {PROTO_NAME, callback, 0, RX_BUFFER, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static const struct lws_extension extensions[] = {
    {"permessage-deflate", lws_extension_callback_pm_deflate,
     "permessage-deflate; client_max_window_bits"},
    {NULL, NULL, NULL},
};

static void open_stream(struct stream_thread *t, struct stream *s)
{
    const struct stream_setup *su = t->su;
    struct lws_client_connect_info ci;

    memset(&ci, 0, sizeof(ci));
    ci.context = t->ctx;
    ci.address = su->address;
    ci.port = su->port;
    ci.path = su->path;
    ci.host = su->host;
    ci.origin = su->host;
    ci.method = t->tr->method;
    ci.local_protocol_name = PROTO_NAME;
    ci.ietf_version_or_minus_one = -1;
    ci.userdata = s;
    ci.pwsi = &s->wsi;
    if (su->tls) {
        ci.ssl_connection = LCCSCF_USE_SSL;
        if (su->insecure)
            ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                                 LCCSCF_ALLOW_EXPIRED | LCCSCF_ALLOW_INSECURE;
        ci.alpn = "http/1.1"; /* an event stream over HTTP/2 is another test */
    }
    memset(s, 0, sizeof(*s)); /* a stream closed by a smaller ramp may be opened again */
    s->state = S_CONNECTING;
    s->subscribed = su->subscribe == NULL || su->proto != PROFILE_STREAM_WS;
    s->connect_ns = clock_mono_ns();
    if (!lws_client_connect_via_info(&ci))
        on_fail(t, s, STREAM_FAIL_OTHER); /* no-op when its error callback already counted it */
}

/* ---- the loop ----------------------------------------------------------------------------- */

static void publish(struct stream_thread *t)
{
    atomic_store_explicit(&t->pub_opened, t->st.opened, memory_order_relaxed);
    atomic_store_explicit(&t->pub_failed, t->st.failed, memory_order_relaxed);
    atomic_store_explicit(&t->pub_dropped, t->st.dropped, memory_order_relaxed);
    atomic_store_explicit(&t->pub_open, t->open_now, memory_order_relaxed);
    atomic_store_explicit(&t->pub_frames, t->st.frames, memory_order_relaxed);
}

static uint64_t window_commands(const struct stream_thread *t)
{
    return t->ctl.win_hi > t->ctl.win_lo ? t->ctl.win_hi - t->ctl.win_lo : 0;
}

/* While draining: the whole-window streams that still lack some window command's frame. */
static uint64_t pending(const struct stream_thread *t)
{
    uint64_t n = 0, want = window_commands(t);
    for (unsigned i = 0; i < t->n; i++) {
        const struct stream *s = &t->streams[i];
        n += s->whole && s->state == S_OPEN && s->win_frames < want;
    }
    return n;
}

/* The measured window is over: the CPU and frames per CPU-second cover it alone (the drain
 * and the close handshakes are not the streams' steady cost). */
static void window_end(struct stream_thread *t)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    t->cpu_s = thread_cpu(&t->ru0, &ru);
    t->st.window_frames = t->st.frames;
    t->window_done = 1;
}

/* The window's last figures: the streams open through all of it, and (fanout all) the window
 * commands each of them never got a frame for. */
static void window_final(struct stream_thread *t)
{
    uint64_t want = window_commands(t);
    for (unsigned i = 0; i < t->n; i++) {
        const struct stream *s = &t->streams[i];
        if (!s->whole || s->state != S_OPEN)
            continue;
        t->st.whole_window++;
        if (t->su->fanout_all && t->su->match && s->win_frames < want)
            t->st.missing += want - s->win_frames;
    }
    if (t->measuring && !t->window_done)
        window_end(t);
    t->measuring = 0;
}

static void begin_quit(struct stream_thread *t, int64_t now)
{
    t->quitting = 1;
    t->quit_ns = now;
    if (t->measuring)
        window_final(t);
    for (unsigned i = 0; i < t->n; i++)
        close_stream(&t->streams[i]);
}

/* The first local stream whose global number is at least g. */
static unsigned local_at(const struct stream_thread *t, unsigned g)
{
    return g <= t->idx ? 0 : (g - t->idx + t->nthreads - 1) / t->nthreads;
}

/* The measured window begins when its time has come: the streams open now are the ones that
 * should get every window command's frame. */
static void window_begin(struct stream_thread *t, int64_t now)
{
    if (now < t->ctl.measure_ns)
        return;
    t->measuring = 1;
    getrusage(RUSAGE_THREAD, &t->ru0);
    for (unsigned i = 0; i < t->n; i++)
        t->streams[i].whole = t->streams[i].state == S_OPEN;
}

/* A new window: its figures start empty (the opens, failures and drops of the run are kept). */
static void new_window(struct stream_thread *t)
{
    t->measuring = 0;
    t->window_done = 0;
    t->st.frames = t->st.window_frames = t->st.bytes_in = 0;
    t->st.unmatched = t->st.missing = t->st.out_of_order = t->st.whole_window = 0;
    hist_init(&t->st.delivery);
    for (unsigned i = 0; i < t->n; i++) {
        t->streams[i].win_frames = 0;
        t->streams[i].whole = 0;
    }
}

/* Reads what the orchestrating thread asked for, when it changed. */
static void take_control(struct stream_thread *t)
{
    struct stream_setup *su = t->su;
    unsigned gen = atomic_load_explicit(&su->ctl_gen, memory_order_acquire);

    if (gen == t->ctl_seen)
        return;
    pthread_mutex_lock(&su->ctl_lock);
    t->ctl = su->ctl;
    pthread_mutex_unlock(&su->ctl_lock);
    t->ctl_seen = gen;
    if (t->ctl.ramp_id != t->ramp_seen) {
        t->ramp_seen = t->ctl.ramp_id;
        t->next_open = 0;
        for (unsigned j = local_at(t, t->ctl.ramp_to); j < t->n; j++)
            close_stream(&t->streams[j]);
    }
    if (t->ctl.win_id != t->win_seen) {
        t->win_seen = t->ctl.win_id;
        new_window(t);
        series_rec_reset(&t->dseries, t->ctl.measure_ns);
    }
    if (t->ctl.collect_id != t->collect_seen) {
        t->collect_seen = t->ctl.collect_id;
        window_final(t);
        t->win_out = t->st;
        t->win_cpu_s = t->cpu_s;
        t->window_done = 1; /* nothing more counts until the next window */
        atomic_store_explicit(&t->pub_collected, t->collect_seen, memory_order_release);
    }
}

/* Opens the ramp's streams that are due by now: the new ones [from, to) evenly over the ramp,
 * and at its start any below `from` that a previous ramp opened and the server dropped (or
 * that failed to open), so that `to` streams are asked for again. A slot still closing from a
 * smaller ramp is waited for. */
static void ramp_open(struct stream_thread *t, int64_t now)
{
    const struct stream_ctl *c = &t->ctl;
    if (!c->ramp_start_ns)
        return;
    double span = c->ramp_to > c->ramp_from ? (double)(c->ramp_to - c->ramp_from) : 1;
    while (t->next_open < t->n) {
        unsigned g = t->next_open * t->nthreads + t->idx;
        struct stream *s = &t->streams[t->next_open];
        if (g >= c->ramp_to)
            break;
        if (g >= c->ramp_from &&
            c->ramp_start_ns + (int64_t)((double)c->ramp_ns * (g - c->ramp_from) / span) > now)
            break;
        if (s->state == S_CLOSING)
            break;
        if (s->state != S_OPEN && s->state != S_CONNECTING)
            open_stream(t, s);
        t->next_open++;
    }
}

static bool ramping(const struct stream_thread *t)
{
    return t->ctl.ramp_start_ns && t->next_open < t->n &&
           t->next_open * t->nthreads + t->idx < t->ctl.ramp_to;
}

static void tick(lws_sorted_usec_list_t *sul)
{
    struct stream_thread *t = lws_container_of(sul, struct stream_thread, tick);
    struct stream_setup *su = t->su;
    int64_t now = clock_mono_ns();

    if (!t->quitting)
        take_control(t);
    if (!t->quitting)
        ramp_open(t, now);
    if (!t->load0_ns)
        t->load0_ns = atomic_load_explicit(&su->load0_ns, memory_order_acquire);
    if (t->measuring && !t->window_done && now >= t->ctl.end_ns)
        window_end(t);
    if (t->ctl.measure_ns && !t->measuring && !t->window_done && !t->quitting)
        window_begin(t, now);
    unsigned drain = atomic_load_explicit(&su->drain, memory_order_acquire);
    if (drain && drain == t->win_seen) {
        atomic_store_explicit(&t->pub_pending, pending(t), memory_order_relaxed);
        atomic_store_explicit(&t->pub_drain_seen, drain, memory_order_release);
    }
    if (!t->quitting && atomic_load_explicit(&su->quit, memory_order_acquire))
        begin_quit(t, now);
    publish(t);
    if (t->quitting && (t->open_now == 0 || now - t->quit_ns > CLOSE_GRACE_NS)) {
        t->exit_loop = 1;
        lws_cancel_service(t->ctx);
        return;
    }
    lws_sul_schedule(t->ctx, 0, &t->tick, tick,
                     ramping(t) && !t->quitting ? TICK_RAMP_US : TICK_US);
}

static void *thread_main(void *arg)
{
    struct stream_thread *t = arg;
    struct lws_context_creation_info info;

    memset(&info, 0, sizeof(info));
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.extensions = t->su->proto == PROFILE_STREAM_WS ? extensions : NULL;
    info.gid = -1;
    info.uid = -1;
    info.user = t;
    info.fd_limit_per_thread = t->n + 64;
    /* Event-stream responses may keep their header table while they last. */
    info.max_http_header_pool = (unsigned short)(t->n < 60000 ? t->n + 16 : 65535);
    info.timeout_secs = t->su->timeout_s;
    info.connect_timeout_secs = t->su->timeout_s;
    if (t->su->tls) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.client_ssl_ca_filepath = getenv("SSL_CERT_FILE");
    }
    t->ctx = lws_create_context(&info);
    if (!t->ctx) {
        err_set(t->err, -EIO, "libwebsockets: cannot create a client context");
        atomic_store_explicit(&t->pub_error, 1, memory_order_release);
        atomic_store_explicit(&t->pub_done, 1, memory_order_release);
        return NULL;
    }
    lws_sul_schedule(t->ctx, 0, &t->tick, tick, TICK_RAMP_US);
    atomic_store_explicit(&t->pub_ready, 1, memory_order_release);
    while (!t->exit_loop)
        if (lws_service(t->ctx, 0) < 0)
            break;
    if (!t->quitting)
        begin_quit(t, clock_mono_ns());
    /* Destroying closes what is left (a close handshake that did not finish in the grace
     * time, a connect still pending): not drops, and not counted. */
    t->destroying = 1;
    lws_context_destroy(t->ctx);
    t->ctx = NULL;
    publish(t);
    atomic_store_explicit(&t->pub_done, 1, memory_order_release);
    return NULL;
}

int stream_setup_init(struct stream_setup *su, char *err)
{
    int rc = pthread_mutex_init(&su->ctl_lock, NULL);
    if (rc)
        return err_set(err, -rc, "cannot create a lock");
    memset(&su->ctl, 0, sizeof(su->ctl));
    atomic_init(&su->ctl_gen, 0);
    atomic_init(&su->load0_ns, 0);
    atomic_init(&su->drain, 0);
    atomic_init(&su->quit, 0);
    return 0;
}

void stream_setup_destroy(struct stream_setup *su)
{
    pthread_mutex_destroy(&su->ctl_lock);
}

void stream_setup_control(struct stream_setup *su, const struct stream_ctl *ctl)
{
    pthread_mutex_lock(&su->ctl_lock);
    su->ctl = *ctl;
    pthread_mutex_unlock(&su->ctl_lock);
    atomic_fetch_add_explicit(&su->ctl_gen, 1, memory_order_acq_rel);
}

int stream_thread_start(struct stream_setup *su, unsigned idx, unsigned nthreads, unsigned n,
                        struct stream_thread **out, char *err)
{
    struct stream_thread *t = calloc(1, sizeof(*t));
    int rc = 0;

    *out = NULL;
    if (!t)
        return err_set(err, -ENOMEM, "out of memory");
    t->su = su;
    t->idx = idx;
    t->nthreads = nthreads ? nthreads : 1;
    t->n = n;
    t->tr = su->proto == PROFILE_STREAM_SSE ? &sse_transport : &ws_transport;
    stream_stats_init(&t->st);
    if (series_rec_init(&t->dseries, 0) != 0) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    t->streams = calloc(n ? n : 1, sizeof(*t->streams));
    if (su->subscribe && su->proto == PROFILE_STREAM_WS)
        t->txbuf = malloc(LWS_PRE + su->subscribe_len + 1);
    if (!t->streams || (su->subscribe && su->proto == PROFILE_STREAM_WS && !t->txbuf)) {
        rc = err_set(err, -ENOMEM, "out of memory for %u streams", n);
        goto out;
    }
    int prc = pthread_create(&t->tid, NULL, thread_main, t);
    if (prc) {
        char eb[64];
        rc = err_set(err, -prc, "cannot start a stream thread: %s", err_str(prc, eb, sizeof(eb)));
        goto out;
    }
    t->started = 1;
out:
    if (rc) {
        stream_thread_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void stream_thread_progress(struct stream_thread *t, struct stream_progress *out)
{
    out->opened = atomic_load_explicit(&t->pub_opened, memory_order_relaxed);
    out->failed = atomic_load_explicit(&t->pub_failed, memory_order_relaxed);
    out->dropped = atomic_load_explicit(&t->pub_dropped, memory_order_relaxed);
    out->open_now = atomic_load_explicit(&t->pub_open, memory_order_relaxed);
    out->frames = atomic_load_explicit(&t->pub_frames, memory_order_relaxed);
    /* Until the thread has looked at the drain, its pending count is unknown: not zero. */
    unsigned drain = atomic_load_explicit(&t->su->drain, memory_order_acquire);
    out->pending = drain && atomic_load_explicit(&t->pub_drain_seen, memory_order_acquire) == drain
                       ? atomic_load_explicit(&t->pub_pending, memory_order_relaxed)
                       : 1;
    out->ready = atomic_load_explicit(&t->pub_ready, memory_order_acquire) != 0;
    out->done = atomic_load_explicit(&t->pub_done, memory_order_acquire) != 0;
    out->error = atomic_load_explicit(&t->pub_error, memory_order_acquire) != 0;
}

const char *stream_thread_error(const struct stream_thread *t)
{
    return t->err;
}

void stream_thread_free(struct stream_thread *t)
{
    if (!t)
        return;
    if (t->started)
        pthread_join(t->tid, NULL);
    free(t->streams);
    free(t->txbuf);
    series_rec_free(&t->dseries);
    free(t);
}

const struct stream_stats *stream_thread_stats(const struct stream_thread *t, double *cpu_s)
{
    *cpu_s = t->cpu_s;
    return &t->st;
}

const struct stream_stats *stream_thread_window(struct stream_thread *t, unsigned collect_id,
                                                double *cpu_s)
{
    if (atomic_load_explicit(&t->pub_collected, memory_order_acquire) != collect_id)
        return NULL;
    *cpu_s = t->win_cpu_s;
    return &t->win_out;
}

const struct series_rec *stream_thread_series(const struct stream_thread *t)
{
    return &t->dseries;
}
