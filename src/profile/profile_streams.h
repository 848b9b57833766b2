#ifndef SIZEUP_PROFILE_PROFILE_STREAMS_H
#define SIZEUP_PROFILE_PROFILE_STREAMS_H

/* The stream part of a load profile (docs/streams.md): streams held open (WebSocket or
 * server-sent events) and the producers whose commands fan out to them as frames.
 *
 *   streams:   { url, protocol: ws | sse, count, ramp, subscribe }
 *   producers: { count, rate, request: { method, path, body, headers }, match, fanout: all | none }
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

#define PROFILE_STREAMS_MAX      1000000 /* streams: count */
#define PROFILE_PRODUCERS_MAX    10000   /* producers: count (their connections) */
#define PROFILE_SUBSCRIBE_MAX    65536   /* bytes of the first WebSocket message */
#define PROFILE_STREAM_URL_MAX   4096
#define PROFILE_MATCH_MAX        64
#define PROFILE_STREAM_SEQ       "{{seq}}" /* in a producer's body: the command's number */
#define PROFILE_RAMP_PER_1000_US 1000000LL /* default ramp: 1 s per 1,000 streams ... */
#define PROFILE_RAMP_MIN_US      1000000LL /* ... and at least 1 s */

enum profile_stream_proto { PROFILE_STREAM_WS = 0, PROFILE_STREAM_SSE };

struct profile_streams {
    char *url; /* owned: ws://, wss://, http://, https:// or a path ('/...') against the target */
    enum profile_stream_proto protocol;
    unsigned count;
    int64_t ramp_us; /* the streams are opened evenly over this time, before the load */
    char *subscribe; /* owned, may be NULL: sent as the first WebSocket message */
    size_t subscribe_len;
    bool load_given; /* the profile also sets users, rate, stages or requests */
    /* producers: (producers == 0 when absent: the streams are only held open) */
    unsigned producers;             /* their connections */
    double rate;                    /* commands/s among them, on a fixed schedule */
    struct profile_request request; /* the command; its body may hold {{seq}} */
    char *match;                    /* owned: the JSON field that carries the command number */
    bool fanout_all;                /* every open stream should receive every command */
};

/* Frees what s owns and s itself; NULL is a no-op. */
void profile_streams_free(struct profile_streams *s);

/* "ws" or "sse". */
const char *profile_stream_proto_name(enum profile_stream_proto p);

#endif
