/* What may be left out of the outputs for size (output_int.h): the parts, their ids for
 * results.json and their words for people. Below output_set.c, which chooses what to leave out,
 * and the renderers, which say so. */

#include <stdio.h>

#include "output/output.h"
#include "output/output_int.h"
#include "output/output_set.h"

/* The parts that may be left out for size. None holds a row: every row stays in results.md,
 * results.json and (unless the whole page must go) report.html. */
const struct output_part output_parts[] = {
    /* An older sweep's results are the first to go: this sweep's own detail matters more. */
    {OUTPUT_OMIT_PREVIOUS, "previous-results.json", "previous-results.json",
     "the previous sweep's results (previous-results.json)", 0},
    {OUTPUT_OMIT_HTML_CHARTS, "report.html", "report.html#charts", "report.html's charts", 1},
    {OUTPUT_OMIT_JSON_BY_NAME, "results.json", "results.json#by_name",
     "results.json's per-request-name detail (by_name)", 1},
    {OUTPUT_OMIT_JSON_BY_STAGE, "results.json", "results.json#by_stage",
     "results.json's per-stage detail (by_stage)", 1},
    {OUTPUT_OMIT_JSON_HIST, "results.json", "results.json#latency_hist",
     "results.json's encoded latency histograms (latency_hist)", 1},
    {OUTPUT_OMIT_HTML, "report.html", "report.html", "report.html as a whole", 2},
};

const size_t output_nparts = sizeof(output_parts) / sizeof(output_parts[0]);

const char *output_omit_id(unsigned bit)
{
    for (size_t i = 0; i < output_nparts; i++)
        if (output_parts[i].bit == bit)
            return output_parts[i].id;
    return "unknown";
}

const char *output_omit_note(unsigned omit, char *buf, size_t len)
{
    size_t used = 0, k = 0, total = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < output_nparts; i++)
        total += (omit & output_parts[i].bit) != 0;
    if (!total)
        return buf;
    int w = snprintf(buf, len, "a ConfigMap holds at most %d bytes, so ", OUTPUT_DATA_MAX);
    used = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
    for (size_t i = 0; i < output_nparts && used + 1 < len; i++) {
        if (!(omit & output_parts[i].bit))
            continue;
        k++;
        const char *sep = k == 1 ? "" : k == total ? " and " : ", ";
        w = snprintf(buf + used, len - used, "%s%s", sep, output_parts[i].words);
        used += w > 0 && (size_t)(w) < len - used ? (size_t)w : len - used - 1;
    }
    snprintf(buf + used, len - used, " %s left out of these outputs; every row is still here.",
             total == 1 ? "was" : "were");
    return buf;
}
