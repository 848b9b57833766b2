/* libFuzzer target: compare_parse on arbitrary bytes (a results.json is a file or a ConfigMap
 * key a user copied: outside input). It must never crash or leak, a refused file must be left
 * empty, and a file it accepts must compare with itself as all `~` (no significant change, no
 * regression even at a 0% threshold) and render as text and JSON. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "output/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct compare_file f;
    struct compare_report r;
    char err[ERR_LEN];

    if (compare_parse((const char *)data, size, "fuzz.json", &f, err) != 0) {
        if (f.variants || f.n)
            abort();
        return 0;
    }
    if (compare_run(&f, &f, 0, &r) == 0) {
        if (r.nregressions || r.significant[0] || r.significant[1] || r.n != f.n)
            abort();
        for (size_t i = 0; i < r.n; i++)
            for (int m = 0; m < COMPARE_NMETRICS; m++)
                if (r.rows[i].cell[m].significant)
                    abort();
        FILE *out = fopen("/dev/null", "w");
        if (out) {
            /* Only that it returns: the text's own error is the stream's. */
            int wrc = compare_write_text(out, &r);
            (void)wrc;
            fclose(out);
        }
        cJSON_Delete(compare_json(&r));
        compare_report_free(&r);
    }
    compare_file_free(&f);
    return 0;
}
