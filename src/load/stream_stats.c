/* Stream statistics: merging per-thread figures, the close and failure classes, and the
 * streams' verdict by the profile's thresholds. */

#include "load/streams.h"

#include <stdlib.h>
#include <string.h>

void stream_stats_init(struct stream_stats *s)
{
    memset(s, 0, sizeof(*s));
    hist_init(&s->handshake);
    hist_init(&s->delivery);
}

void stream_stats_merge(struct stream_stats *dst, const struct stream_stats *src)
{
    dst->opened += src->opened;
    dst->failed += src->failed;
    dst->dropped += src->dropped;
    dst->frames += src->frames;
    dst->window_frames += src->window_frames;
    dst->bytes_in += src->bytes_in;
    dst->unmatched += src->unmatched;
    dst->missing += src->missing;
    dst->out_of_order += src->out_of_order;
    dst->whole_window += src->whole_window;
    dst->deflate += src->deflate;
    for (size_t i = 0; i < STREAM_CLOSE_COUNT; i++)
        dst->by_close[i] += src->by_close[i];
    for (size_t i = 0; i < STREAM_FAIL_COUNT; i++)
        dst->by_fail[i] += src->by_fail[i];
    hist_merge(&dst->handshake, &src->handshake);
    hist_merge(&dst->delivery, &src->delivery);
}

enum stream_close_class stream_close_class_of(unsigned code)
{
    switch (code) {
    case 0:
    case 1005: /* "no status": the frame had no code */
    case 1006: /* "abnormal": reserved for a close without a frame */
        return STREAM_CLOSE_ABNORMAL;
    case 1000:
        return STREAM_CLOSE_NORMAL;
    case 1001:
        return STREAM_CLOSE_GOING_AWAY;
    case 1002:
    case 1003:
    case 1007:
    case 1008:
    case 1010:
        return STREAM_CLOSE_PROTOCOL;
    case 1009:
        return STREAM_CLOSE_TOO_BIG;
    case 1011:
    case 1012:
    case 1013:
    case 1014:
        return STREAM_CLOSE_SERVER_ERROR;
    default:
        return code >= 3000 && code <= 4999 ? STREAM_CLOSE_APP : STREAM_CLOSE_OTHER;
    }
}

const char *stream_close_class_name(enum stream_close_class c)
{
    static const char *const names[STREAM_CLOSE_COUNT] = {
        "normal", "going_away", "protocol_error", "too_big", "server_error",
        "app",    "ended",      "abnormal",       "other"};
    return c < STREAM_CLOSE_COUNT ? names[c] : "other";
}

const char *stream_fail_class_name(enum stream_fail_class c)
{
    static const char *const names[STREAM_FAIL_COUNT] = {"refused", "timeout", "handshake", "tls",
                                                         "other"};
    return c < STREAM_FAIL_COUNT ? names[c] : "other";
}

/* The request rule on n attempts of which failed failed, with latency h. */
static enum verdict rule(uint64_t n, uint64_t failed, const struct hist *h,
                         const struct profile_thresholds *t)
{
    struct load_stats *as = malloc(sizeof(*as));
    enum verdict v = VERDICT_OVERLOADED;
    if (!as)
        return v;
    load_stats_init(as);
    as->requests = n;
    as->failed = failed < n ? failed : n;
    if (h)
        as->latency = *h;
    v = verdict_classify(as, t);
    free(as);
    return v;
}

enum verdict stream_verdict(const struct stream_result *r, const struct profile_thresholds *t)
{
    /* Streams: one attempt each, a failure for each that did not open or did not stay open,
     * the delivery latency as the latency. Frames (fanout all): one expected per window
     * command and whole-window stream, a failure for each missing one. The worse of both. */
    const struct stream_stats *s = &r->s;
    enum verdict v = rule(s->opened + s->failed, s->failed + s->dropped, &s->delivery, t);
    uint64_t expected = r->commands * s->whole_window;
    if (r->matched && r->fanout_all && expected) {
        enum verdict f = rule(expected, s->missing, NULL, t);
        if (f > v)
            v = f;
    }
    return v;
}
