/* libFuzzer target: the HTTP response parser on arbitrary bytes. The first byte picks HEAD or
 * not and where the input is split; every split must give the same outcome as one whole feed,
 * and the parser must never read outside what it is given (ASan) nor take more than it got. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct outcome {
    int rc;
    size_t used_total;
    uint16_t status;
    uint8_t keep;
    uint64_t body;
};

static struct outcome run(const uint8_t *d, size_t n, int head, size_t step)
{
    struct http_parser p;
    struct outcome o = {HTTP_MORE, 0, 0, 0, 0};
    size_t pos = 0;

    http_parser_init(&p, head);
    while (pos < n) {
        size_t len = n - pos < step ? n - pos : step;
        size_t used = 0;
        /* A heap copy per piece so ASan sees reads past its end. */
        uint8_t *piece = malloc(len);
        if (!piece)
            abort();
        memcpy(piece, d + pos, len);
        o.rc = http_parse(&p, (const char *)piece, len, &used);
        free(piece);
        if (used > len)
            abort();
        o.used_total += used;
        if (o.rc != HTTP_MORE)
            break;
        if (used != len)
            abort();
        pos += len;
    }
    if (o.rc == HTTP_MORE)
        o.rc = http_parse_eof(&p);
    if (o.rc == HTTP_ERROR && !p.error)
        abort();
    if (o.rc == HTTP_DONE) {
        o.status = p.status;
        o.keep = p.keep_alive;
        o.body = p.body_bytes;
        if (p.status < 200 || p.status > 999)
            abort();
    }
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int head = data[0] & 1;
    size_t step = (size_t)(data[0] >> 1) + 1;
    data++;
    size--;
    struct outcome whole = run(data, size, head, size ? size : 1);
    struct outcome split = run(data, size, head, step);
    struct outcome bytes = run(data, size < 4096 ? size : 0, head, 1);
    /* Where an error is detected may depend on the split; that it is detected may not. */
    if (whole.rc != split.rc)
        abort();
    if (whole.rc == HTTP_DONE &&
        (whole.used_total != split.used_total || whole.status != split.status ||
         whole.keep != split.keep || whole.body != split.body))
        abort();
    if (size < 4096 &&
        (whole.rc != bytes.rc || (whole.rc == HTTP_DONE && (whole.used_total != bytes.used_total ||
                                                            whole.body != bytes.body))))
        abort();
    return 0;
}
