/* libFuzzer target: the variant list parser on arbitrary bytes (annotation values feed it).
 * Whatever parses must be within the caps, and each variant's canonical spec must parse back to
 * the same numbers. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/variant.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct variant_list l;
    char *s;
    struct variant back;

    if (size > VARIANT_LIST_MAX + 16)
        return 0;
    s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (variant_parse_list(s, &l, NULL) == 0) {
        if (l.n == 0 || l.n > VARIANT_MAX)
            abort();
        for (size_t i = 0; i < l.n; i++) {
            const struct variant *v = &l.items[i];
            if (v->workers < 1 || v->cpu_millicores <= 0 || v->memory_bytes <= 0)
                abort();
            if (variant_parse(v->spec, &back, NULL) != 0 || back.workers != v->workers ||
                back.cpu_millicores != v->cpu_millicores || back.memory_bytes != v->memory_bytes)
                abort();
        }
    }
    free(s);
    return 0;
}
