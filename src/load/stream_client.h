#ifndef SIZEUP_LOAD_STREAM_CLIENT_H
#define SIZEUP_LOAD_STREAM_CLIENT_H

/* Private to src/load: the stream threads. Each runs one libwebsockets context holding its
 * share of the streams, opens them over the ramp, reads their frames, and closes them when
 * told. The orchestration (streams.c) talks to them only through the atomics of struct
 * stream_setup and what each thread publishes. */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "load/plan.h"
#include "profile/profile_streams.h"
#include "load/series.h"
#include "load/streams.h"
#include "profile/url.h"

#define STREAM_PATH_MAX (URL_PATH_MAX + PROFILE_STREAM_URL_MAX)

/* What the orchestrating thread asks of the stream threads, under stream_setup.ctl_lock; a new
 * ctl_gen tells the threads to read it again. Stream numbers are global: thread i of k holds
 * the streams i, i + k, i + 2k ..., so a ramp spreads evenly over the threads. */
struct stream_ctl {
    /* The ramp: streams [0, ramp_to) should be open; [ramp_from, ramp_to) open evenly over
     * ramp_ns from ramp_start_ns (stream g at start + (g - from) x ramp / (to - from)), those
     * below ramp_from that are not open (dropped, failed) at its start; open streams at
     * ramp_to and above are closed (not counted as drops). ramp_start_ns 0: none. */
    int64_t ramp_start_ns, ramp_ns;
    unsigned ramp_from, ramp_to;
    unsigned ramp_id; /* a new value is a new ramp */
    /* The measured window: frames count from measure_ns until the window is collected (or the
     * streams close); delivery and missing frames cover the commands numbered [win_lo, win_hi).
     * A new win_id empties the window's figures; 0: no window yet. Absolute times. */
    unsigned win_id;
    int64_t measure_ns, end_ns;
    uint64_t win_lo, win_hi;
    /* A new collect_id asks every thread to end the window (missing frames counted) and to
     * publish its figures (stream_thread_window). */
    unsigned collect_id;
};

/* What every stream thread reads; the fields above "control" are fixed before the threads
 * start, the control fields are written by the orchestrating thread only. Times are
 * monotonic nanoseconds (clock_mono_ns, core/clock.h). */
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
    unsigned timeout_s;      /* connect and handshake */
    /* control */
    pthread_mutex_t ctl_lock; /* guards ctl */
    struct stream_ctl ctl;
    atomic_uint ctl_gen;      /* bumped after each change of ctl */
    _Atomic int64_t load0_ns; /* the producers' time zero; 0 until they are scheduled */
    atomic_uint drain;        /* a window id: publish how many streams await its frames */
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

/* Initializes su's control (nothing asked yet) / releases it. */
int stream_setup_init(struct stream_setup *su, char *err);
void stream_setup_destroy(struct stream_setup *su);

/* Replaces su's control with *ctl (copied) and tells the threads. Orchestrating thread only. */
void stream_setup_control(struct stream_setup *su, const struct stream_ctl *ctl);

/* Allocates thread idx of nthreads, which holds n streams (the global numbers idx, idx +
 * nthreads, ...), and starts it; it creates its context and waits for a ramp. Borrows su,
 * which must outlive it. Returns 0, -ENOMEM or -errno (err says why); *out is freed with
 * stream_thread_free. */
int stream_thread_start(struct stream_setup *su, unsigned idx, unsigned nthreads, unsigned n,
                        struct stream_thread **out /* OUT */, char *err);

void stream_thread_progress(struct stream_thread *t, struct stream_progress *out /* OUT */);

/* Why the thread could not start (valid when progress says error). */
const char *stream_thread_error(const struct stream_thread *t);

/* Waits for the thread (after su->quit) and frees it; NULL is a no-op. */
void stream_thread_free(struct stream_thread *t);

/* What the thread measured; valid once progress says done. Borrowed from t. */
const struct stream_stats *stream_thread_stats(const struct stream_thread *t,
                                               double *cpu_s /* OUT */);

/* The figures of the window last collected (ctl.collect_id), or NULL while the thread has not
 * published them yet. Borrowed from t, valid until the next collect. */
const struct stream_stats *stream_thread_window(struct stream_thread *t, unsigned collect_id,
                                                double *cpu_s /* OUT */);

/* The delivery latency per interval of the commands' due times (origin: the measured window's
 * start); valid once progress says done. Borrowed from t. */
const struct series_rec *stream_thread_series(const struct stream_thread *t);

#endif
