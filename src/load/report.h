#ifndef SIZEUP_LOAD_REPORT_H
#define SIZEUP_LOAD_REPORT_H

/* The two renderings of a load result, from the same data: text for people, JSON for
 * machines. The JSON field names are a contract (docs/report.md). */

#include <stdio.h>

#include <cJSON.h>

#include "core/err.h"

#include "profile/profile.h"
#include "load/result.h"

/* Writes the text report: overall block, per-request-name table, per-stage table (when there
 * are stages), status codes and errors. Returns 0 or -EIO. */
int report_text(FILE *f, const struct load_result *r, const struct profile *p);

/* Builds the JSON object (requests, duration_s, throughput_rps, latency_ms{mean,p50,p90,p95,
 * p99,p999,max}, status_codes, errors, bytes_in, bytes_out, tool_cpu_s, verdict, by_name,
 * and for open loop target_rate_rps / achieved_rate_rps). Returns an owned object (free with
 * cJSON_Delete), or NULL when out of memory. */
cJSON *report_json(const struct load_result *r);

/* report_json plus, on every series point, its interval's latency_hist (series_json_add with
 * r's recorder): what a generator serves (`loadtest --serve-result`), so that the operator
 * merges the generators' series exactly (load/merge.h). Larger: results.json and --json leave
 * it out. Same ownership as report_json. */
cJSON *report_json_mergeable(const struct load_result *r);

/* Rebuilds a load_result from what report_json produced (the sweep's resume path). Borrows j,
 * which is outside input: every field is type- and range-checked, histograms come back exactly
 * from latency_hist (and a series whose points carry theirs comes back with its recorder, in
 * r->series_rec), names and stages are capped like a profile's. Returns 0, -EINVAL with err
 * naming the bad field, or -ENOMEM; on failure r is left freed. */
int report_json_parse(const cJSON *j, struct load_result *r /* OUT */, char *err);

#endif
