/* libFuzzer target: the text/event-stream parser (stream_frame.h) on arbitrary bytes. The first
 * byte picks where the stream is split and the event size cap; any split must give the same
 * events (count, match results, sizes) and the same outcome as one whole feed, every event's
 * size must respect the cap, and nothing is read outside what was given (ASan). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/stream_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct trace {
    uint64_t n, hash, max_bytes;
};

static void on_event(void *ud, int matched, uint64_t seq, uint64_t bytes)
{
    struct trace *t = ud;
    t->n++;
    t->hash = t->hash * 1000003u + (uint64_t)matched * 31u + seq * 7u + bytes;
    if (bytes > t->max_bytes)
        t->max_bytes = bytes;
}

static int run(const char *d, size_t n, size_t step, uint64_t cap, struct trace *t)
{
    struct sse_parser p;
    int rc = SSE_OK;
    memset(t, 0, sizeof(*t));
    sse_parser_init(&p);
    for (size_t pos = 0; pos < n && rc == SSE_OK; pos += step) {
        size_t len = n - pos < step ? n - pos : step;
        char *piece = malloc(len ? len : 1);
        if (!piece)
            abort();
        memcpy(piece, d + pos, len);
        rc = sse_parser_feed(&p, "seq", 3, cap, piece, len, on_event, t);
        free(piece);
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = 1 + (data[0] & 15);
    uint64_t cap = data[0] & 0x80 ? 64 : 1 << 20;
    const char *d = (const char *)data + 1;
    size_t n = size - 1;
    struct trace a, b;
    int ra = run(d, n, n ? n : 1, cap, &a);
    int rb = run(d, n, step, cap, &b);
    if (ra != rb || a.n != b.n || a.hash != b.hash || a.max_bytes > cap)
        abort();
    return 0;
}
