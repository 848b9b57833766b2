/* libFuzzer target: the frame scanner (stream_frame.h) on arbitrary bytes. The first byte picks
 * the match key's length and where the frame is split; the outcome of any split must equal one
 * whole feed and one byte at a time (the scanner keeps no copy, so it cannot depend on how a
 * frame arrives), and a found number is one the frame really spells. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/stream_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int scan(const char *key, size_t keylen, const char *d, size_t n, size_t step, uint64_t *seq)
{
    struct frame_match m;
    frame_match_init(&m);
    for (size_t pos = 0; pos < n; pos += step) {
        size_t len = n - pos < step ? n - pos : step;
        char *piece = malloc(len ? len : 1); /* a heap copy: ASan sees reads past its end */
        if (!piece)
            abort();
        memcpy(piece, d + pos, len);
        frame_match_feed(&m, key, keylen, piece, len);
        free(piece);
    }
    return frame_match_result(&m, seq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char keys[] = "seq";
    if (size < 1)
        return 0;
    size_t keylen = 1 + data[0] % 3, step = 1 + (data[0] >> 2);
    const char *d = (const char *)data + 1;
    size_t n = size - 1;
    uint64_t a = 0, b = 0, c = 0;
    int fa = scan(keys, keylen, d, n, n ? n : 1, &a);
    int fb = scan(keys, keylen, d, n, step, &b);
    int fc = scan(keys, keylen, d, n, 1, &c);
    if (fa != fb || fa != fc || (fa && (a != b || a != c)))
        abort();
    if (fa) {
        char digits[24];
        int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)a);
        if (len <= 0 || !memmem(d, n, digits, (size_t)len))
            abort();
    }
    return 0;
}
