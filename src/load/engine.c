/* (Size: about 900 lines: a request's whole path, from connect through the timers to the response,
 * is one state machine and the loop that drives it; split, it would be read across files.)
 *
 * The load engine: one epoll loop per thread, non-blocking keep-alive HTTP/1.1 connections,
 * closed loop (users) or open loop (rate) on the schedule of a plan. This file is the state
 * machine of a connection and the per-thread loop; load_requests.c sets up the run, starts the
 * threads and merges what they measured.
 *
 * Why hand-written instead of libcurl: libcurl's multi interface costs several times the CPU per
 * request (easy-handle bookkeeping, header callbacks, timers, allocations), and on loopback a
 * load generator's own CPU decides how much load it can offer. Here a request is one write and
 * (usually) one read: the bytes are serialized once before the run, the response is parsed in
 * place from one per-thread buffer, epoll interest changes only when a write would block, and
 * nothing on the per-request path allocates.
 *
 * Threads share only read-only state (the engine) and publish progress through relaxed atomics
 * that only their owner writes; statistics stay per thread until load__requests_run merges them. */

#include "load/engine.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "load/hist.h"
#include "load/http.h"
#include "load/series.h"

#define RBUF_SIZE      65536
#define EVENTS_MAX     256
#define MAX_WAIT_NS    (50 * 1000000LL)  /* longest sleep: bounds reaction to a stop */
#define USERS_CHECK_NS (1000000LL)       /* closed loop: re-read the ramp every 1 ms */
#define BACKOFF_MIN_NS (1000000LL)       /* reconnect delay after a failed connect ... */
#define BACKOFF_MAX_NS (100 * 1000000LL) /* ... doubling up to this */
#define DEFAULT_SEED   0x5eed5eed5eedULL

enum cstate {
    C_FREE = 0,   /* no socket */
    C_BACKOFF,    /* closed loop: waiting before reconnecting */
    C_CONNECTING, /* TCP connect in progress */
    C_HANDSHAKE,  /* TLS handshake in progress */
    C_IDLE,       /* connected, no request */
    C_WRITING,    /* sending the request */
    C_READING     /* awaiting / reading the response */
};

enum { L_NONE = 0, L_FIFO, L_BACKOFF };

struct conn {
    struct sock s;
    uint8_t state;
    uint8_t has_req;  /* a request is bound to this connection */
    uint8_t measured; /* the bound request falls in the measured window */
    uint8_t list;     /* which timer list holds it */
    uint32_t events;  /* current epoll interest; 0 when not registered */
    uint32_t idx;     /* slot index (closed loop: the user number in this thread) */
    int32_t stage;    /* the bound request's stage, -1 for none */
    uint32_t req;     /* the bound request's index in the profile */
    uint32_t fails;   /* consecutive failed connects (backoff) */
    uint32_t idle_pos;
    size_t written;
    uint64_t seq;     /* the bound request's number in the run, {{seq}} in a template */
    const char *wbuf; /* the bytes of the bound request (its own, or rendered into send) */
    size_t wlen;
    struct http_send send;
    uint64_t bytes_in;
    int64_t origin_ns;   /* latency origin: due time (open loop) or send time (closed loop) */
    int64_t deadline_ns; /* connect or request deadline, or the end of a backoff */
    struct conn *prev, *next;
    struct http_parser parser;
};

struct clist {
    struct conn *head, *tail;
};

struct worker {
    struct engine *e;
    unsigned idx;
    int epfd;
    struct conn *conns;
    unsigned cap;         /* slots */
    unsigned *free_slots; /* open loop: unused slot indices */
    unsigned nfree;
    struct conn **idle; /* open loop: connected, unused connections */
    unsigned nidle;
    unsigned open; /* sockets open */
    unsigned busy, peak_busy;
    unsigned target_users;
    struct clist fifo, backoff;
    uint64_t rng;
    size_t seg_hint, due_hint;
    uint64_t next_j;     /* open loop: this thread's next request number */
    uint64_t nbound;     /* requests bound so far: the run-wide number is nbound * nthreads + idx */
    int64_t next_due_ns; /* ... and when it is due */
    int measuring;
    int no_pwait2; /* epoll_pwait2 answered ENOSYS once: use epoll_wait from then on */
    struct load_stats *by_name;
    struct load_stats *by_stage;
    struct hist phase_hist;
    struct series_rec series; /* the measured window, one slot per interval */
    uint64_t phase_requests, phase_failed;
    uint64_t sent_measured;
    struct rusage ru0;
    double cpu_s;
    int64_t last_publish_ns, last_users_ns;
    /* Published for the progress display; written by this thread only. */
    _Alignas(64) _Atomic uint64_t pub_requests;
    _Atomic uint64_t pub_failed;
    _Atomic uint64_t pub_p95;
    _Atomic uint64_t pub_count;
    _Atomic int pub_phase;
    _Atomic int done;
    char rbuf[RBUF_SIZE];
};

int64_t engine_now_ns(const struct engine *e)
{
    return clock_mono_ns() - clock_ts_ns(&e->t0);
}

/* splitmix64: tiny, fast, and good enough to pick a request by weight. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t pick_req(struct worker *w)
{
    const struct engine *e = w->e;
    if (e->nreqs == 1)
        return 0;
    uint64_t r = rng_next(&w->rng) % e->totalw;
    size_t lo = 0, hi = e->nreqs - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->cumw[mid] > r)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (uint32_t)lo;
}

/* ---- intrusive lists: the request/connect deadline FIFO and the backoff list ---- */

static void list_push(struct clist *l, struct conn *c, uint8_t which)
{
    c->list = which;
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

static void list_remove(struct worker *w, struct conn *c)
{
    struct clist *l;
    if (c->list == L_NONE)
        return;
    l = c->list == L_FIFO ? &w->fifo : &w->backoff;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->prev = c->next = NULL;
    c->list = L_NONE;
}

/* Every deadline is "entered + timeout" with one timeout, so appending keeps the FIFO sorted
 * and expiry only ever looks at its head: O(1) per request, no heap, no timer wheel. */
static void arm_deadline(struct worker *w, struct conn *c, int64_t now)
{
    list_remove(w, c);
    if (w->e->timeout_ns <= 0)
        return;
    c->deadline_ns = now + w->e->timeout_ns;
    list_push(&w->fifo, c, L_FIFO);
}

/* ---- idle stack (open loop) ---- */

static void idle_push(struct worker *w, struct conn *c)
{
    c->idle_pos = w->nidle;
    w->idle[w->nidle++] = c;
}

static void idle_remove(struct worker *w, struct conn *c)
{
    struct conn *last = w->idle[--w->nidle];
    w->idle[c->idle_pos] = last;
    last->idle_pos = c->idle_pos;
}

static struct conn *idle_pop(struct worker *w)
{
    return w->nidle ? w->idle[--w->nidle] : NULL;
}

/* ---- statistics ---- */

static void stats_add(struct load_stats *s, int status, int errclass, int failed, uint64_t lat_us,
                      int with_lat, uint64_t bin, uint64_t bout)
{
    s->requests++;
    if (status) {
        s->responses++;
        s->status[status]++;
    }
    s->failed += (uint64_t)failed;
    if (errclass >= 0)
        s->errors[errclass]++;
    s->bytes_in += bin;
    s->bytes_out += bout;
    if (with_lat)
        hist_record(&s->latency, lat_us);
}

static void start_measuring(struct worker *w)
{
    w->measuring = 1;
    getrusage(RUSAGE_THREAD, &w->ru0);
    w->phase_requests = w->phase_failed = 0;
    hist_init(&w->phase_hist);
    atomic_store_explicit(&w->pub_requests, 0, memory_order_relaxed);
    atomic_store_explicit(&w->pub_failed, 0, memory_order_relaxed);
    atomic_store_explicit(&w->pub_p95, 0, memory_order_relaxed);
    atomic_store_explicit(&w->pub_count, 0, memory_order_relaxed);
    atomic_store_explicit(&w->pub_phase, LOAD_PHASE_MEASURE, memory_order_relaxed);
}

/* Records the end of the request bound to c: a response (status > 0) or an error class. */
static void record(struct worker *w, struct conn *c, int64_t now, int status, int errclass,
                   int with_lat)
{
    const struct engine *e = w->e;
    uint64_t lat = 0;
    uint64_t bout = 0;

    if (!c->has_req)
        return;
    c->has_req = 0;
    w->busy--;
    /* What ends after the measured window (or after a stop) was in flight at its end: not
     * counted (like wrk), so the counts match the reported duration. */
    if (now >= e->plan.end_ns || now >= atomic_load_explicit(&e->stop_ns, memory_order_relaxed))
        return;
    if (status >= LOAD_STATUS_MAX) {
        status = 0;
        errclass = LOAD_ERR_BAD_RESPONSE;
    }
    int failed = errclass >= 0 || status < 200 || status > 399;
    if (with_lat)
        lat = now > c->origin_ns ? (uint64_t)(now - c->origin_ns) / 1000 : 0;
    if (c->written)
        bout = c->written;
    if (c->measured) {
        if (!w->measuring)
            start_measuring(w);
        stats_add(&w->by_name[c->req], status, errclass, failed, lat, with_lat, c->bytes_in, bout);
        /* The slot of this second, by the loop's clock: one range test, then one histogram. */
        struct series_slot *sl = series_slot(&w->series, now);
        if (sl) {
            sl->count++;
            sl->failed += (uint64_t)failed;
            if (with_lat)
                hist_record(&sl->h, lat);
        }
        if (c->stage >= 0)
            stats_add(&w->by_stage[c->stage], status, errclass, failed, lat, with_lat, c->bytes_in,
                      bout);
    } else if (w->measuring) {
        return; /* a warm-up request that ended inside the window: neither phase's */
    }
    if (with_lat)
        hist_record(&w->phase_hist, lat);
    w->phase_requests++;
    w->phase_failed += (uint64_t)failed;
    atomic_store_explicit(&w->pub_requests, w->phase_requests, memory_order_relaxed);
    atomic_store_explicit(&w->pub_failed, w->phase_failed, memory_order_relaxed);
}

/* ---- connections ---- */

/* Sets c's epoll interest. Returns 0, or -errno when epoll_ctl refuses (ENOMEM, or ENOSPC past
 * fs.epoll.max_user_watches); the caller must then fail the connection (see want). */
static int set_interest(struct worker *w, struct conn *c, uint32_t ev)
{
    struct epoll_event ee;
    if (c->events == ev)
        return 0;
    ee.events = ev;
    ee.data.ptr = c;
    if (epoll_ctl(w->epfd, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->s.fd, &ee) != 0) {
        c->s.sys_errno = errno;
        return -errno;
    }
    c->events = ev;
    return 0;
}

static void conn_error(struct worker *w, struct conn *c, int errclass, int64_t now, int with_lat);

/* set_interest, failing the connection with a counted error when epoll refuses: a socket whose
 * interest was not registered would never be woken, and its user would stall unseen until the
 * end of the run. Returns 0 when c goes on, non-zero when it was failed (c is then reused). */
static int want(struct worker *w, struct conn *c, uint32_t ev, int64_t now)
{
    int rc = set_interest(w, c, ev);
    if (rc)
        conn_error(w, c, sock_errclass(-rc), now, 0);
    return rc;
}

static void bind_req(struct worker *w, struct conn *c, int64_t at_ns)
{
    const struct plan_seg *seg = plan_seg_at(&w->e->plan, at_ns, &w->seg_hint);
    c->req = pick_req(w);
    /* Open loop binds in schedule order, so this is the request's place in the run's
     * schedule (its due time is plan_due_ns(number + 0.5), what stream delivery measures). */
    c->seq = w->nbound++ * w->e->nthreads + w->idx;
    c->has_req = 1;
    c->measured = (uint8_t)(seg && seg->measured);
    c->stage = seg ? seg->stage : -1;
    c->origin_ns = at_ns;
    c->written = 0;
    c->bytes_in = 0;
    w->busy++;
    if (w->measuring && w->busy > w->peak_busy)
        w->peak_busy = w->busy;
}

static void close_conn(struct worker *w, struct conn *c)
{
    if (c->state == C_FREE)
        return;
    list_remove(w, c);
    if (c->state == C_IDLE && w->e->plan.open_loop)
        idle_remove(w, c);
    if (c->state != C_BACKOFF) {
        /* Closing the fd also drops it from the epoll set. */
        c->s.ops->close(&c->s);
        w->open--;
    }
    c->events = 0;
    c->state = C_FREE;
    if (w->e->plan.open_loop)
        w->free_slots[w->nfree++] = c->idx;
}

static void conn_open(struct worker *w, struct conn *c, int64_t now);
static void start_send(struct worker *w, struct conn *c, int64_t now);

static int user_active(const struct worker *w, const struct conn *c)
{
    return c->idx < w->target_users;
}

/* Closed loop: the user behind c goes on (its next request) or parks. */
static void user_next(struct worker *w, struct conn *c, int64_t now)
{
    if (!user_active(w, c) || now >= w->e->plan.end_ns)
        return;
    bind_req(w, c, now);
    if (c->state == C_IDLE)
        start_send(w, c, now);
    else
        conn_open(w, c, now);
}

/* Closed loop: a refused or failing connect retries after a growing pause, so a dead target
 * costs little CPU while every attempt is still counted. */
static void backoff(struct worker *w, struct conn *c, int64_t now)
{
    int64_t d = BACKOFF_MIN_NS << (c->fails < 7 ? c->fails : 7);
    c->fails++;
    c->state = C_BACKOFF;
    c->deadline_ns = now + (d < BACKOFF_MAX_NS ? d : BACKOFF_MAX_NS);
    list_push(&w->backoff, c, L_BACKOFF);
}

/* A failure: counts the bound request (if any), closes, and lets the user retry. */
static void conn_error(struct worker *w, struct conn *c, int errclass, int64_t now, int with_lat)
{
    int at_connect = c->state == C_CONNECTING || c->state == C_HANDSHAKE;

    record(w, c, now, 0, errclass, with_lat);
    close_conn(w, c);
    if (w->e->plan.open_loop)
        return;
    if (at_connect)
        backoff(w, c, now);
    else
        user_next(w, c, now);
}

static void conn_ready(struct worker *w, struct conn *c, int64_t now)
{
    if (want(w, c, EPOLLIN, now))
        return;
    c->fails = 0;
    list_remove(w, c);
    if (c->has_req) {
        start_send(w, c, now);
        return;
    }
    c->state = C_IDLE;
    if (w->e->plan.open_loop)
        idle_push(w, c);
}

static void handshake_step(struct worker *w, struct conn *c, int64_t now)
{
    int rc = c->s.ops->handshake(&c->s);
    switch (rc) {
    case SOCK_OK:
        conn_ready(w, c, now);
        break;
    case SOCK_WANT_READ:
        want(w, c, EPOLLIN, now);
        break;
    case SOCK_WANT_WRITE:
        want(w, c, EPOLLIN | EPOLLOUT, now);
        break;
    default:
        conn_error(w, c, c->s.errclass, now, 0);
        break;
    }
}

static void conn_connected(struct worker *w, struct conn *c, int64_t now)
{
    if (w->e->tlsp) {
        c->state = C_HANDSHAKE;
        handshake_step(w, c, now);
        return;
    }
    conn_ready(w, c, now);
}

static void conn_open(struct worker *w, struct conn *c, int64_t now)
{
    const struct engine *e = w->e;
    int rc = sock_connect(&c->s, &e->addr, e->tlsp);

    c->events = 0;
    if (rc == SOCK_ERROR) {
        /* Failed before any socket was kept (refused at once, EMFILE): the slot stays free. */
        c->state = C_FREE;
        record(w, c, now, 0, c->s.errclass, 0);
        if (w->e->plan.open_loop)
            w->free_slots[w->nfree++] = c->idx;
        else
            backoff(w, c, now);
        return;
    }
    w->open++;
    c->state = C_CONNECTING;
    arm_deadline(w, c, now);
    if (rc == SOCK_OK) {
        if (want(w, c, EPOLLIN, now) == 0)
            conn_connected(w, c, now);
        return;
    }
    want(w, c, EPOLLOUT, now);
}

static void do_read(struct worker *w, struct conn *c, int64_t now);

static void do_write(struct worker *w, struct conn *c, int64_t now)
{
    for (;;) {
        size_t n = 0;
        int rc = c->s.ops->write(&c->s, c->wbuf + c->written, c->wlen - c->written, &n);
        if (rc == SOCK_OK) {
            c->written += n;
            if (c->written < c->wlen)
                continue;
            c->state = C_READING;
            want(w, c, EPOLLIN, now);
            return;
        }
        if (rc == SOCK_WANT_WRITE) {
            want(w, c, EPOLLIN | EPOLLOUT, now);
            return;
        }
        if (rc == SOCK_WANT_READ) {
            want(w, c, EPOLLIN, now);
            return;
        }
        conn_error(w, c, c->s.errclass ? c->s.errclass : LOAD_ERR_RESET, now, 0);
        return;
    }
}

static void start_send(struct worker *w, struct conn *c, int64_t now)
{
    const struct http_request *r = &w->e->reqs[c->req];
    if (!w->e->plan.open_loop)
        c->origin_ns = now;
    c->written = 0;
    c->bytes_in = 0;
    http_parser_init(&c->parser, r->head);
    c->state = C_WRITING;
    arm_deadline(w, c, now);
    if (http_request_bytes(r, c->seq, &c->send, &c->wbuf, &c->wlen) != 0) {
        conn_error(w, c, LOAD_ERR_OTHER, now, 0); /* out of memory for a rendered body */
        return;
    }
    do_write(w, c, now);
}

/* The response to c's request is complete. */
static void complete(struct worker *w, struct conn *c, int64_t now, int reuse)
{
    int status = c->parser.status;
    list_remove(w, c);
    record(w, c, now, status, -1, 1);
    if (!reuse) {
        close_conn(w, c);
        if (!w->e->plan.open_loop)
            user_next(w, c, now);
        return;
    }
    c->state = C_IDLE;
    if (w->e->plan.open_loop)
        idle_push(w, c);
    else
        user_next(w, c, now);
}

/* Feeds n received bytes to c's parser. Returns 1 when the response is still incomplete. */
static int on_bytes(struct worker *w, struct conn *c, const char *buf, size_t n, int64_t now)
{
    size_t used = 0;
    c->bytes_in += n;
    int pr = http_parse(&c->parser, buf, n, &used);
    if (pr == HTTP_DONE) {
        complete(w, c, now, c->parser.keep_alive && used == n);
        return 0;
    }
    if (pr == HTTP_ERROR) {
        conn_error(w, c, LOAD_ERR_BAD_RESPONSE, now, 1);
        return 0;
    }
    return 1;
}

static void on_eof(struct worker *w, struct conn *c, int64_t now)
{
    if (http_parse_eof(&c->parser) == HTTP_DONE)
        complete(w, c, now, 0);
    else
        conn_error(w, c, LOAD_ERR_RESET, now, 0);
}

static void do_read(struct worker *w, struct conn *c, int64_t now)
{
    for (;;) {
        size_t n = 0;
        int rc = c->s.ops->read(&c->s, w->rbuf, RBUF_SIZE, &n);
        if (rc == SOCK_OK) {
            if (!on_bytes(w, c, w->rbuf, n, engine_now_ns(w->e)))
                return;
            if (n < RBUF_SIZE && c->s.ops->short_read_drains)
                return;
            continue;
        }
        if (rc == SOCK_WANT_READ) {
            want(w, c, EPOLLIN, now); /* drops a write interest a TLS read once needed */
            return;
        }
        if (rc == SOCK_WANT_WRITE) {
            want(w, c, EPOLLIN | EPOLLOUT, now);
            return;
        }
        if (rc == SOCK_EOF) {
            on_eof(w, c, engine_now_ns(w->e));
            return;
        }
        conn_error(w, c, c->s.errclass, now, 0);
        return;
    }
}

static void on_event(struct worker *w, struct conn *c, uint32_t ev, int64_t now)
{
    switch (c->state) {
    case C_CONNECTING:
        if (sock_connect_finish(&c->s) == SOCK_OK)
            conn_connected(w, c, now);
        else
            conn_error(w, c, c->s.errclass, now, 0);
        break;
    case C_HANDSHAKE:
        handshake_step(w, c, now);
        break;
    case C_WRITING:
        do_write(w, c, now);
        if (c->state == C_READING && (ev & EPOLLIN))
            do_read(w, c, now);
        break;
    case C_READING:
        do_read(w, c, now);
        break;
    case C_IDLE: {
        /* An idle keep-alive connection became readable: the server closed it (or sent bytes
         * no request asked for). Either way it cannot carry a request any more. */
        close_conn(w, c);
        break;
    }
    default:
        break;
    }
}

/* ---- schedule ---- */

static void advance_due(struct worker *w)
{
    const struct engine *e = w->e;
    /* Request k is due when k - 0.5 requests are due: a window of D seconds at R/s holds
     * exactly D*R of them, none on its edges. */
    double k = (double)w->next_j * e->nthreads + w->idx + 0.5;
    w->next_due_ns = plan_due_ns(&e->plan, k, &w->due_hint);
    w->next_j++;
}

/* Open loop: hands every request now due to an idle connection, or to a new connection while
 * under the cap; the rest wait (their wait counts, their latency runs from the due time). */
static void dispatch(struct worker *w, int64_t now)
{
    const struct engine *e = w->e;
    while (w->next_due_ns <= now) {
        struct conn *c = idle_pop(w);
        int64_t due = w->next_due_ns;
        if (!c) {
            if (w->nfree == 0)
                return;
            c = &w->conns[w->free_slots[--w->nfree]];
            bind_req(w, c, due);
            if (due >= e->plan.measure_start_ns)
                w->sent_measured++;
            advance_due(w);
            conn_open(w, c, now);
            continue;
        }
        bind_req(w, c, due);
        if (due >= e->plan.measure_start_ns)
            w->sent_measured++;
        advance_due(w);
        start_send(w, c, now);
    }
}

static void update_users(struct worker *w, int64_t now)
{
    const struct engine *e = w->e;
    double u = plan_target_at(&e->plan, now, &w->seg_hint);
    unsigned total = (unsigned)llround(u);
    unsigned share = total / e->nthreads + (w->idx < total % e->nthreads ? 1u : 0u);
    unsigned old = w->target_users;

    if (share > w->cap)
        share = w->cap;
    w->target_users = share;
    for (unsigned i = old; i < share; i++) {
        struct conn *c = &w->conns[i];
        if (c->state == C_IDLE || c->state == C_FREE)
            user_next(w, c, now);
    }
}

static void expire(struct worker *w, int64_t now)
{
    while (w->fifo.head && w->fifo.head->deadline_ns <= now) {
        struct conn *c = w->fifo.head;
        if (c->state == C_CONNECTING || c->state == C_HANDSHAKE)
            conn_error(w, c, LOAD_ERR_CONNECT_TIMEOUT, now, 0);
        else
            conn_error(w, c, LOAD_ERR_TIMEOUT, now, 1);
    }
    struct conn *c = w->backoff.head;
    while (c) {
        struct conn *next = c->next;
        if (c->deadline_ns <= now) {
            list_remove(w, c);
            c->state = C_FREE;
            user_next(w, c, now);
        }
        c = next;
    }
}

static int64_t next_wakeup(struct worker *w, int64_t now)
{
    int64_t t = now + MAX_WAIT_NS;
    if (w->e->plan.open_loop && w->next_due_ns < t && (w->nidle || w->nfree))
        t = w->next_due_ns;
    if (w->fifo.head && w->fifo.head->deadline_ns < t)
        t = w->fifo.head->deadline_ns;
    for (struct conn *c = w->backoff.head; c; c = c->next)
        if (c->deadline_ns < t)
            t = c->deadline_ns;
    if (!w->e->plan.open_loop && w->last_users_ns + USERS_CHECK_NS < t && w->e->p->nstages > 0)
        t = w->last_users_ns + USERS_CHECK_NS;
    if (w->e->plan.end_ns < t)
        t = w->e->plan.end_ns;
    if (w->last_publish_ns + ENGINE_PUBLISH_NS < t)
        t = w->last_publish_ns + ENGINE_PUBLISH_NS;
    return t;
}

static void publish(struct worker *w, int64_t now)
{
    w->last_publish_ns = now;
    atomic_store_explicit(&w->pub_p95, hist_percentile(&w->phase_hist, 95), memory_order_relaxed);
    atomic_store_explicit(&w->pub_count, w->phase_hist.count, memory_order_relaxed);
}

void *engine_worker_main(void *arg)
{
    struct worker *w = arg;
    struct engine *e = w->e;
    struct epoll_event evs[EVENTS_MAX];

    int64_t now = engine_now_ns(e);
    w->last_users_ns = now;
    w->last_publish_ns = now;
    if (e->plan.measure_start_ns == 0)
        start_measuring(w);
    if (e->plan.open_loop)
        advance_due(w);
    else
        update_users(w, now);

    while (!atomic_load_explicit(&e->quit, memory_order_relaxed)) {
        now = engine_now_ns(e);
        if (now >= e->plan.end_ns)
            break;
        if (!w->measuring && now >= e->plan.measure_start_ns)
            start_measuring(w);
        if (e->plan.open_loop)
            dispatch(w, now);
        else if (e->p->nstages > 0 && now - w->last_users_ns >= USERS_CHECK_NS) {
            w->last_users_ns = now;
            update_users(w, now);
        }
        expire(w, now);
        if (now - w->last_publish_ns >= ENGINE_PUBLISH_NS)
            publish(w, now);

        int64_t wake = next_wakeup(w, now);
        int64_t d = wake > now ? wake - now : 0;
        struct timespec ts = {(time_t)(d / 1000000000LL), (long)(d % 1000000000LL)};
        int n = -1;
        if (!w->no_pwait2) {
            n = epoll_pwait2(w->epfd, evs, EVENTS_MAX, &ts, NULL);
            if (n < 0 && errno == ENOSYS)
                w->no_pwait2 = 1; /* remembered: one failed system call per run, not per pass */
        }
        if (w->no_pwait2) {
            /* Kernels before 5.11: millisecond timeouts, rounded up so we never spin. */
            n = epoll_wait(w->epfd, evs, EVENTS_MAX, (int)((d + 999999) / 1000000));
        }
        if (n <= 0)
            continue;
        now = engine_now_ns(e);
        for (int i = 0; i < n; i++)
            on_event(w, evs[i].data.ptr, evs[i].events, now);
    }

    if (w->measuring) {
        struct rusage ru;
        getrusage(RUSAGE_THREAD, &ru);
        w->cpu_s = (double)(ru.ru_utime.tv_sec - w->ru0.ru_utime.tv_sec) +
                   (double)(ru.ru_utime.tv_usec - w->ru0.ru_utime.tv_usec) / 1e6 +
                   (double)(ru.ru_stime.tv_sec - w->ru0.ru_stime.tv_sec) +
                   (double)(ru.ru_stime.tv_usec - w->ru0.ru_stime.tv_usec) / 1e6;
    }
    publish(w, engine_now_ns(e));
    for (unsigned i = 0; i < w->cap; i++) {
        struct conn *c = &w->conns[i];
        if (c->state != C_FREE && c->state != C_BACKOFF)
            c->s.ops->close(&c->s);
        c->state = C_FREE;
    }
    atomic_store_explicit(&w->done, 1, memory_order_release);
    return NULL;
}

/* ---- set-up and tear-down ---- */

void engine_worker_free(struct worker *w)
{
    if (!w)
        return;
    if (w->epfd >= 0)
        close(w->epfd);
    for (unsigned i = 0; w->conns && i < w->cap; i++)
        http_send_free(&w->conns[i].send);
    free(w->conns);
    free(w->free_slots);
    free(w->idle);
    free(w->by_name);
    free(w->by_stage);
    series_rec_free(&w->series);
    free(w);
}

int engine_worker_new(struct engine *e, unsigned idx, unsigned cap, struct worker **out, char *err)
{
    struct worker *w = aligned_alloc(64, (sizeof(*w) + 63) / 64 * 64);
    int rc = 0;

    *out = NULL;
    if (!w)
        return err_set(err, -ENOMEM, "out of memory");
    memset(w, 0, sizeof(*w));
    w->e = e;
    w->idx = idx;
    w->cap = cap;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->conns = calloc(cap ? cap : 1, sizeof(*w->conns));
    w->by_name = calloc(e->nreqs, sizeof(*w->by_name));
    w->by_stage = calloc(e->p->nstages ? e->p->nstages : 1, sizeof(*w->by_stage));
    if (e->plan.open_loop) {
        w->free_slots = calloc(cap ? cap : 1, sizeof(*w->free_slots));
        w->idle = calloc(cap ? cap : 1, sizeof(*w->idle));
    }
    if (series_rec_init(&w->series, e->plan.measure_start_ns) != 0) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (w->epfd < 0) {
        char eb[64];
        rc = err_set(err, -errno, "epoll_create1: %s", err_str(errno, eb, sizeof(eb)));
        goto out;
    }
    if (!w->conns || !w->by_name || !w->by_stage ||
        (e->plan.open_loop && (!w->free_slots || !w->idle))) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < cap; i++) {
        w->conns[i].idx = i;
        w->conns[i].s.fd = -1;
        w->conns[i].stage = -1;
    }
    if (e->plan.open_loop)
        for (unsigned i = 0; i < cap; i++)
            w->free_slots[w->nfree++] = cap - 1 - i;
    for (size_t i = 0; i < e->nreqs; i++)
        load_stats_init(&w->by_name[i]);
    for (size_t i = 0; i < e->p->nstages; i++)
        load_stats_init(&w->by_stage[i]);
    hist_init(&w->phase_hist);
    uint64_t seed = e->o->seed ? e->o->seed : DEFAULT_SEED;
    w->rng = seed + idx;
    rng_next(&w->rng);
    atomic_store(&w->pub_phase, LOAD_PHASE_WARMUP);
out:
    if (rc) {
        engine_worker_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

bool engine_worker_done(struct worker *w)
{
    return atomic_load_explicit(&w->done, memory_order_acquire) != 0;
}

void engine_worker_progress(struct worker *w, struct engine_progress *out)
{
    out->phase = atomic_load_explicit(&w->pub_phase, memory_order_relaxed);
    out->requests = atomic_load_explicit(&w->pub_requests, memory_order_relaxed);
    out->failed = atomic_load_explicit(&w->pub_failed, memory_order_relaxed);
    out->p95_us = atomic_load_explicit(&w->pub_p95, memory_order_relaxed);
    out->count = atomic_load_explicit(&w->pub_count, memory_order_relaxed);
}

void engine_worker_totals(const struct worker *w, struct engine_totals *out)
{
    out->by_name = w->by_name;
    out->by_stage = w->by_stage;
    out->cpu_s = w->cpu_s;
    out->peak_busy = w->peak_busy;
    out->sent_measured = w->sent_measured;
    out->series = &w->series;
}
