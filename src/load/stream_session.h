#ifndef SIZEUP_LOAD_STREAM_SESSION_H
#define SIZEUP_LOAD_STREAM_SESSION_H

/* A stream session: streams that stay open while their number changes, measured window by
 * window. What a stream-capacity search needs (src/sweep/runner_streams.c): grow the open
 * streams step by step within one ramp instead of reopening them at every step, and judge each
 * step by what its own window measured.
 *
 *     stream_session_start   the stream threads (no stream open yet) and the producers, which
 *                            send their commands on one fixed schedule for the whole session
 *     stream_session_resize  open more streams over a ramp (or close the extra ones)
 *     stream_session_window  hold them: a warm-up, a measured window, a drain; the window's
 *                            figures (delivery for the commands due in it, missing frames,
 *                            drops since the last window)
 *     stream_session_free    close the streams, stop the producers
 *
 * One producers' schedule keeps every command number unique over the session, so a frame late
 * from one window is never taken for a command of the next. The request engine is not
 * involved beyond running the producers as an ordinary open-loop load. */

#include <signal.h>
#include <stdint.h>

#include "core/err.h"
#include "load/load.h"
#include "load/streams.h"

typedef struct stream_session stream_session_t;

struct stream_session_opts {
    const char *url;               /* borrowed: the target's base URL */
    const struct profile *profile; /* borrowed, with streams; its producers run for the session */
    unsigned max_streams;          /* the most streams open at once */
    int64_t length_us;             /* the producers' schedule: the session's longest life */
    unsigned threads;              /* the producers' load threads; 0: the engine's default */
    int insecure;
    volatile sig_atomic_t *stop; /* may be NULL: ends waits early */
};

/* What one window measured. */
struct stream_window {
    struct stream_result r; /* figures of the window (opened, failed, dropped and the classes
                             * since the previous window; handshakes over the session) */
    uint64_t open;          /* streams open at the window's end */
    double window_s;        /* the measured window's length */
    double stream_cores;    /* the busiest stream thread's CPU over the window, in cores */
    uint64_t producer_requests, producer_failed; /* the producers' commands so far */
};

/* Starts a session. Returns 0 or a negative errno (err says why); free *out with
 * stream_session_free either way (NULL-safe). */
int stream_session_start(const struct stream_session_opts *o, stream_session_t **out /* OUT */,
                         char *err);

/* Opens streams until n are asked for (evenly over ramp_us), or closes the ones above n.
 * Returns when they have opened or failed, or the ramp and a handshake timeout have passed,
 * or on a stop. Returns 0, or -EINVAL when n is above max_streams. */
int stream_session_resize(stream_session_t *s, unsigned n, int64_t ramp_us, char *err);

/* Holds the streams for warmup_us, then measures window_us, then waits for the window's frames
 * still on their way (at most drain_us), and fills *out. Returns 0 or -ECANCELED on a stop. */
int stream_session_window(stream_session_t *s, int64_t warmup_us, int64_t window_us,
                          int64_t drain_us, struct stream_window *out /* OUT */, char *err);

/* Streams open now. */
uint64_t stream_session_open(stream_session_t *s);

/* Closes every stream, stops the producers and frees s; NULL is a no-op. */
void stream_session_free(stream_session_t *s);

#endif
