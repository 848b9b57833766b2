/* libFuzzer target: the CPU, memory, duration and percentage parsers on arbitrary tokens.
 * Whatever parses must format and parse back to the same value. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char tok[128], buf[QTY_LEN];
    int64_t v, back;
    double f;

    if (size >= sizeof(tok))
        return 0;
    memcpy(tok, data, size);
    tok[size] = '\0';
    if (qty_parse_cpu(tok, &v, NULL) == 0) {
        if (v < 0 || qty_parse_cpu(qty_format_cpu(v, buf), &back, NULL) != 0 || back != v)
            abort();
    }
    if (qty_parse_memory(tok, &v, NULL) == 0) {
        if (v < 0 || qty_parse_memory(qty_format_memory(v, buf), &back, NULL) != 0 || back != v)
            abort();
    }
    if (qty_parse_duration(tok, &v, NULL) == 0 && v < 0)
        abort();
    if (qty_parse_percent(tok, &f, NULL) == 0 && (f < 0 || f > 1))
        abort();
    return 0;
}
