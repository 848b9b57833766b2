/* libFuzzer target: report_json_parse on arbitrary JSON text (results read back from disk or a
 * ConfigMap). It must never crash or leak, and what it accepts must survive a second trip:
 * report_json of the parsed result parses again to the same counts and histograms. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct load_result a, b;
    char err[ERR_LEN];

    if (size > (1u << 20))
        return 0;
    cJSON *j = cJSON_ParseWithLength((const char *)data, size);
    if (!j)
        return 0;
    if (report_json_parse(j, &a, err) == 0) {
        cJSON *again = report_json(&a);
        if (!again || report_json_parse(again, &b, err) != 0)
            abort();
        if (memcmp(&a.total, &b.total, sizeof(a.total)) || a.nnames != b.nnames ||
            a.nstages != b.nstages || a.verdict != b.verdict)
            abort();
        for (size_t i = 0; i < a.nnames; i++) {
            if (strcmp(a.names[i], b.names[i]) ||
                memcmp(&a.by_name[i], &b.by_name[i], sizeof(a.by_name[i])))
                abort();
        }
        load_result_free(&b);
        load_result_free(&a);
        cJSON_Delete(again);
    } else if (a.names || a.by_name || a.by_stage) {
        abort(); /* a failed parse leaves the result freed */
    }
    cJSON_Delete(j);
    return 0;
}
