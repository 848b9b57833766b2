/* libFuzzer target: hist_decode on arbitrary bytes (histograms will arrive from other
 * machines). It must never crash, and anything it accepts must encode back to the very same
 * bytes: the format has one encoding per histogram. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hist h;
    static uint8_t out[HIST_ENCODED_MAX];
    char err[ERR_LEN];
    size_t len = 0;

    if (hist_decode(data, size, &h, err) != 0)
        return 0;
    if (hist_encode(&h, out, sizeof(out), &len) != 0 || len != size || memcmp(out, data, size))
        abort();
    uint64_t p50 = hist_percentile(&h, 50), p99 = hist_percentile(&h, 99);
    if (h.count && (p50 > p99 || p50 < h.min_us || p99 > h.max_us))
        abort();
    return 0;
}
