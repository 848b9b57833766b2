#ifndef SIZEUP_LOAD_STREAM_CLIENT_H
#define SIZEUP_LOAD_STREAM_CLIENT_H

/* Private to src/load: the stream threads. Each runs one libwebsockets context holding its
 * share of the streams, opens them over the ramp, reads their frames, and closes them when
 * told. The orchestration (streams.c) talks to them only through the atomics of struct
 * stream_setup and what each thread publishes. */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "load/plan.h"
#include "load/profile_streams.h"
#include "load/series.h"
#include "load/streams.h"
#include "load/url.h"

#define STREAM_PATH_MAX (URL_PATH_MAX + PROFILE_STREAM_URL_MAX)

/* What every stream thread reads; the fields above "control" are fixed before the threads
 * start, the control fields are written by the orchestrating thread only. Times are
 * CLOCK_MONOTONIC nanoseconds (stream_now_ns). */
struct stream_setup {
    char address[64]; /* the target's resolved address, numeric ("127.0.0.1", "::1") */
    int port;
    char path[STREAM_PATH_MAX];  /* path and query of the stream's request */
    char host[URL_HOST_MAX + 8]; /* Host (and Origin) header */
    char sni[URL_HOST_MAX];      /* the name TLS verifies */
    int tls;
    int insecure;
    enum profile_stream_proto proto;
    const char *subscribe; /* borrowed from the profile; NULL: none */
    size_t subscribe_len;
    const char *match; /* borrowed: the JSON field with the command number; NULL: no producers */
    size_t match_len;
    bool fanout_all;
    const struct plan *plan; /* borrowed: the producers' schedule; NULL without producers */
    uint64_t commands;       /* commands in the whole schedule */
    uint64_t win_lo, win_hi; /* command numbers due inside the measured window: [lo, hi) */
    int64_t ramp_ns;
    int64_t measure_ns, end_ns; /* without producers: the window, from the time zero */
    unsigned timeout_s;         /* connect and handshake */
    /* control */
    _Atomic int64_t start_ns; /* 0 until the ramp begins */
    _Atomic int64_t load0_ns; /* the producers' time zero; 0 until they are scheduled */
    atomic_int drain;         /* the producers are done: publish how many streams await frames */
    atomic_int quit;          /* close every stream and end */
};

/* What a thread published; callable while it runs. */
struct stream_progress {
    uint64_t opened, failed, dropped, open_now, frames;
    uint64_t pending; /* while draining: whole-window streams still short of window frames
                       * (1 until the thread has looked) */
    bool ready;       /* its context exists and it waits for start_ns */
    bool done;        /* its loop ended (stats final) */
    bool error;       /* it could not start: see stream_thread_error */
};

struct stream_thread;

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t stream_now_ns(void);

/* Allocates the thread for n streams (numbered from first) and starts it; it creates its
 * context and waits for su->start_ns. Borrows su, which must outlive it. Returns 0, -ENOMEM
 * or -errno (err says why); *out is freed with stream_thread_free. */
int stream_thread_start(struct stream_setup *su, unsigned first, unsigned n,
                        struct stream_thread **out /* OUT */, char *err);

void stream_thread_progress(struct stream_thread *t, struct stream_progress *out /* OUT */);

/* Why the thread could not start (valid when progress says error). */
const char *stream_thread_error(const struct stream_thread *t);

/* Waits for the thread (after su->quit) and frees it; NULL is a no-op. */
void stream_thread_free(struct stream_thread *t);

/* What the thread measured; valid once progress says done. Borrowed from t. */
const struct stream_stats *stream_thread_stats(const struct stream_thread *t,
                                               double *cpu_s /* OUT */);

/* The delivery latency per interval of the commands' due times (origin: the measured window's
 * start); valid once progress says done. Borrowed from t. */
const struct series_rec *stream_thread_series(const struct stream_thread *t);

#endif
