/* libFuzzer target: loadjob_result_parse on arbitrary bytes (the document a generator pod serves
 * to the operator). It must never crash or leak; an accepted result is whole (not interrupted)
 * and a refused one says why and leaves nothing allocated. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operator/loadjob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct load_result r;
    char why[ERR_LEN] = "";

    if (size > (1u << 20))
        return 0;
    if (loadjob_result_parse((const char *)data, size, 1, 3, 1.0, &r, why) == 0) {
        if (r.interrupted)
            abort();
        load_result_free(&r);
    } else if (!why[0] || r.names || r.by_name || r.by_stage) {
        abort();
    }
    return 0;
}
