/* libFuzzer target: series_json_parse on arbitrary bytes parsed as JSON (the "series" a
 * generator pod serves, each point with its interval's latency_hist). It must never crash or
 * leak; an accepted series with histograms has a recorder that agrees with its points (a slot
 * per point, the point's requests and errors, no more samples than requests, the point's
 * percentiles), and a refused one says why and leaves nothing allocated. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct load_series s;
    struct series_rec *rec = NULL;
    char err[ERR_LEN] = "";

    if (size > (1u << 20))
        return 0;
    cJSON *o = cJSON_ParseWithLength((const char *)data, size);
    if (!o)
        return 0;
    if (series_json_parse(o, &s, &rec, err) == 0) {
        if (rec) {
            if (rec->n != s.n)
                abort();
            for (size_t i = 0; i < s.n; i++) {
                const struct series_slot *sl = &rec->slots[i];
                const struct series_point *p = &s.pts[i];
                if (sl->count != p->requests || sl->failed != p->failed ||
                    sl->h.count > p->requests || hist_percentile(&sl->h, 95) != p->p95_us)
                    abort();
            }
            series_rec_free(rec);
            free(rec);
        }
        load_series_free(&s);
    } else if (!err[0] || rec || s.pts || s.n) {
        abort();
    }
    cJSON_Delete(o);
    return 0;
}
