#ifndef SIZEUP_OUTPUT_OUTPUT_INT_H
#define SIZEUP_OUTPUT_OUTPUT_INT_H

#include "core/err.h"

/* Helpers shared by the output renderers (output_md.c, output_json.c, output_yaml.c,
 * output_html*.c, output_patch.c, output_pdb.c); not part of the output layer's interface. They
 * live below every renderer that calls them, so no call goes back up: output.c (the row's
 * words), output_omit.c (what is left out for size), output_names.c (names and labels),
 * output_html_svg.c (the SVG helpers). */

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "output/output.h"
#include "sweep/runner.h"

/* "2026-11-29 20:10 UTC" / "2026-11-29T20:10:00Z". Return buf. */
const char *output_fmt_time(time_t t, char buf[40]);
const char *output_fmt_time_iso(time_t t, char buf[40]);

/* The row's marks as words ("exceeds host CPU, contended"), "" when none. Returns buf. */
const char *output_marks(unsigned flags, char *buf, size_t len);

/* The State column: "HEALTHY", "STRESSED (contended)", "FAILED (OOM-killed)". Returns buf. */
const char *output_state(const struct output_doc *d, size_t i, char *buf, size_t len);

/* libyaml's write handler for a FILE * (data). Returns 1 when every byte was written. */
int output_yaml_write(void *data, unsigned char *buf, size_t size);

/* The workload's container ("" or absent: the Deployment's name) and its workers env var
 * ("WORKERS" when absent) (output_names.c). */
const char *output_workload_container(const struct output_workload *w);
const char *output_workload_env(const struct output_workload *w);

/* The matchLabels of sel ("k=v,k2=v2", checked by output_selector_check) at indent, one
 * "key": "value" a line (output_names.c). */
void output_match_labels(FILE *f, const char *sel, int indent);

/* report.html's bar charts: width, label column, row height (output_html.c and
 * output_html_capacity.c draw rows that line up). */
#define OUTPUT_HTML_W       760
#define OUTPUT_HTML_LABEL_W 190
#define OUTPUT_HTML_ROW_H   26

/* Opens an inline <svg> w x h with its id, class and aria-label (escaped). */
void output_html_svg_open(FILE *f, const char *id, const char *cls, int w, int h,
                          const char *label);

/* A bar chart row's label at row top y: the variant, "* " before the recommended one. */
void output_html_row_label(FILE *f, const struct output_doc *d, size_t i, int y);

/* report.html's capacity charts (output_html_capacity.c): the capacity per variant with its
 * interval as a whisker, and per variant p95 and p99 against the offered rate with the SLO line
 * and the found capacity. Nothing when no row was searched. */
void output_html_capacity(FILE *f, const struct output_doc *d);

/* report.html's scale-out chart (output_html_scale_out.c): the points with their intervals, the
 * fitted curve, the linear line, the target and the peak, and a sentence for what the curve
 * means; when no scale-out ran, only a sentence saying why. */
void output_html_scale_out(FILE *f, const struct output_doc *d);

/* One line describing the profile: source, load, duration, mix. */
void output_fmt_profile(const struct profile *p, char *buf, size_t len);

/* results.json printed, with a final newline (the renderer of the results.json output). */
SIZEUP_MUST_USE int output_results_json_print(FILE *f, const struct output_doc *d, char *err);

/* The parts that may be left out for size (output_omit.c). None holds a row: every row stays in
 * results.md, results.json and (unless the whole page must go) report.html. */
struct output_part {
    unsigned bit;
    const char *output; /* the output it is part of */
    const char *id;     /* results.json's `omitted` */
    const char *words;  /* for people, in results.md and report.html */
    int tier;           /* a tier is considered only when no part of a lower one saves anything */
};
extern const struct output_part output_parts[];
extern const size_t output_nparts;

/* The id of one OUTPUT_OMIT_* bit for results.json's `omitted` ("results.json#by_name"). */
const char *output_omit_id(unsigned bit);

/* What was left out for size and why, as sentences for people ("A ConfigMap holds at most ...
 * bytes, so report.html's charts were left out ..."), "" when omit is 0. Returns buf. */
const char *output_omit_note(unsigned omit, char *buf, size_t len);

/* The scale-out (output_scale_out.c): results.json's `scale_out` put into root through the
 * builder b (JSON null when not run), the table for results.md (markdown) or the terminal, and
 * what limited the curve (the fit is advise_scale_out_fit's, advise/advise.h). */
struct usl_fit;
struct jb;
void output_scale_out_json(struct jb *b, cJSON *root, const struct sweep *s,
                           const struct advice *a);
const char *output_scale_out_limited_by(const struct sweep_scale_out *so, const struct usl_fit *f,
                                        bool have_fit);

/* Availability (output_pdb.c): results.json's recommendation.availability ({ zones, drain,
 * needed, zone_replicas, drain_replicas, replicas, min_available, text } or null) into rec, and
 * the profile's availability: ({ zones, drain }, only when given) into the profile object. */
void output_availability_json(struct jb *b, cJSON *rec, const struct advice *a);
void output_profile_availability_json(struct jb *b, cJSON *prof, const struct profile *p);
/* The profile's nodes: (name, cpu, memory, price, reserved, as quantities), only when given. */
void output_profile_nodes_json(struct jb *b, cJSON *prof, const struct profile *p);

#endif
