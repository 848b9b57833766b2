#ifndef SIZEUP_LOAD_STREAMS_H
#define SIZEUP_LOAD_STREAMS_H

/* Stream load (docs/streams.md): streams held open (WebSocket on libwebsockets, or server-sent
 * events), producers that send commands on a fixed schedule as ordinary requests, and what the
 * streams received: frames, bytes, drops, and the delivery latency from when each command was
 * due to when each stream got the frame it caused. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cJSON.h>

#include "core/err.h"
#include "load/hist.h"
#include "load/load.h"
#include "profile/profile.h"
#include "load/result.h"

#define STREAM_MAX_FRAME (4u << 20) /* a larger frame (or event) closes its stream: too_big */

struct stream_result;

/* Why an open stream ended before the run closed it (by_close_class in the JSON). */
enum stream_close_class {
    STREAM_CLOSE_NORMAL = 0,   /* WebSocket 1000 */
    STREAM_CLOSE_GOING_AWAY,   /* 1001: the server is shutting down or restarting */
    STREAM_CLOSE_PROTOCOL,     /* 1002, 1003, 1007, 1008, 1010: the server refused something */
    STREAM_CLOSE_TOO_BIG,      /* 1009, or a frame over STREAM_MAX_FRAME */
    STREAM_CLOSE_SERVER_ERROR, /* 1011 - 1014 */
    STREAM_CLOSE_APP,          /* 3000 - 4999: the application's own codes */
    STREAM_CLOSE_ENDED,        /* an event stream's response ended */
    STREAM_CLOSE_ABNORMAL,     /* no close frame: reset, EOF, ping timeout (1005, 1006) */
    STREAM_CLOSE_OTHER,
    STREAM_CLOSE_COUNT
};

/* Why a stream could not be opened (by_failure in the JSON). */
enum stream_fail_class {
    STREAM_FAIL_REFUSED = 0, /* connect refused */
    STREAM_FAIL_TIMEOUT,     /* connect or handshake not done within the profile's timeout */
    STREAM_FAIL_HANDSHAKE,   /* not a WebSocket (no 101) or not a text/event-stream */
    STREAM_FAIL_TLS,
    STREAM_FAIL_OTHER,
    STREAM_FAIL_COUNT
};

/* What the streams measured. Frames and bytes count from the measured window's start until
 * the streams close; delivery latency and missing frames cover the commands due inside the
 * window. Merges exactly (sums and histograms), one per stream thread. */
struct stream_stats {
    uint64_t opened;        /* handshakes completed */
    uint64_t failed;        /* handshakes that did not */
    uint64_t dropped;       /* open streams the server or the network ended */
    uint64_t frames;        /* WebSocket messages or events */
    uint64_t window_frames; /* of which received inside the measured window */
    uint64_t bytes_in;      /* their payload bytes (after decompression) */
    uint64_t unmatched;     /* frames without the match field, or with a number no command had */
    uint64_t missing;       /* fanout all: window commands a whole-window stream never got */
    uint64_t out_of_order;  /* frames whose command number was not above the stream's last */
    uint64_t whole_window;  /* streams open through the whole measured window */
    uint64_t deflate;       /* streams that negotiated permessage-deflate */
    uint64_t by_close[STREAM_CLOSE_COUNT];
    uint64_t by_fail[STREAM_FAIL_COUNT];
    struct hist handshake; /* connect to open, us */
    struct hist delivery;  /* command due to frame received, us */
};

/* A run's stream figures: the stats plus what describes them. */
struct stream_result {
    struct stream_stats s;
    const char *protocol; /* "ws" or "sse" (static) */
    unsigned count;       /* streams asked for */
    unsigned threads;     /* stream threads */
    bool fanout_all;
    bool matched;                  /* producers and a match field: delivery is measured */
    uint64_t commands;             /* commands due in the measured window */
    double tool_cpu_s;             /* the stream threads' CPU over the measured window */
    int64_t mem_idle_per_stream;   /* RSS growth per open stream after the ramp, bytes; -1: n/a */
    int64_t mem_active_per_stream; /* the same at the window's end (frames have flowed) */
};

/* Empties s. */
void stream_stats_init(struct stream_stats *s);

/* Adds src into dst. */
void stream_stats_merge(struct stream_stats *dst, const struct stream_stats *src);

/* The close class of a WebSocket close code (0: none received). */
enum stream_close_class stream_close_class_of(unsigned code);

/* Stable snake_case names for JSON and text. */
const char *stream_close_class_name(enum stream_close_class c);
const char *stream_fail_class_name(enum stream_fail_class c);

/* The streams' verdict by the profile's thresholds: delivery p95 for the latency, failed plus
 * dropped streams over those attempted, and (fanout all) missing frames over those expected,
 * for the errors. */
enum verdict stream_verdict(const struct stream_result *r, const struct profile_thresholds *t);

/* Runs o's profile, which has streams (o->profile->streams != NULL): opens the streams over
 * the ramp, then runs the producers (and any request load beside them) with load_run on one
 * shared schedule, drains the frames still due, closes the streams and fills *out, whose
 * streams member it sets (owned by out). Same contract as load_run. */
int streams_run(const struct load_opts *o, struct load_result *out /* OUT */, char *err);

/* The text block of r (after the request figures). Returns 0 or -EIO. */
int stream_report_text(FILE *f, const struct stream_result *r);

/* Adds "streams": {...} to the report object o. Returns false when out of memory. */
bool stream_report_json(cJSON *o, const struct stream_result *r);

#endif
