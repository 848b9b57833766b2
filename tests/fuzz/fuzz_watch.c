/* libFuzzer target: the watch stream. The first byte picks a chunk size; the rest is fed to the
 * line splitter in those chunks and, separately, in one piece: both must yield the same lines
 * (or the same over-long-line error), and each line goes through the event parser. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct acc {
    uint64_t hash;
    size_t lines;
};

static int on_line(void *ud, const char *line, size_t len)
{
    struct acc *a = ud;
    cJSON *root = NULL;
    struct kube_event ev;
    char err[ERR_LEN];

    if (len == 0 || memchr(line, '\n', len))
        abort();
    for (size_t i = 0; i < len; i++)
        a->hash = (a->hash ^ (unsigned char)line[i]) * 1099511628211ull;
    a->hash = (a->hash ^ 0xffu) * 1099511628211ull;
    a->lines++;
    int rc = kube_event_parse(line, len, &root, &ev, err);
    if ((rc == 0 || rc == KUBE_EGONE) && (!root || !ev.object))
        abort();
    if (rc != 0 && rc != KUBE_EGONE && root)
        abort();
    cJSON_Delete(root);
    return 0;
}

static int feed(const char *p, size_t n, size_t chunk, struct acc *a)
{
    struct kube_lines l;
    int rc = 0;
    if (kube_lines_init(&l, 512) != 0)
        return -1;
    for (size_t off = 0; off < n && rc == 0; off += chunk) {
        size_t k = n - off < chunk ? n - off : chunk;
        rc = kube_lines_feed(&l, p + off, k, on_line, a);
    }
    if (l.cap > 512)
        abort();
    kube_lines_free(&l);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t chunk = (size_t)data[0] % 37 + 1;
    struct acc a = {14695981039346656037ull, 0}, b = {14695981039346656037ull, 0};
    int ra = feed((const char *)data + 1, size - 1, chunk, &a);
    int rb = feed((const char *)data + 1, size - 1, size, &b);
    if (ra != rb)
        abort();
    if (ra == 0 && (a.hash != b.hash || a.lines != b.lines))
        abort();
    return 0;
}
