/* The answer first: what results.md, report.html and the terminal open with. The recommended
 * shape, the replicas and the autoscaler for the target, the exact bytes of values.yaml (from
 * output_values_yaml, the renderer of the values.yaml output, so --values-paths holds in all
 * three) and the commands that apply the files the sweep wrote. Only the markup differs between
 * the three; every sentence is formatted here once. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fmt.h"
#include "core/quantity.h"
#include "load/report_html.h"
#include "output/output.h"
#include "output/output_hpa.h"
#include "output/output_int.h"
#include "output/output_keda.h"
#include "output/output_set.h"

/* Writes s for the style: escaped in HTML, as is otherwise. */
static void put(FILE *f, enum output_answer_style st, const char *s)
{
    if (st == OUTPUT_ANSWER_HTML)
        report_html_esc(f, s);
    else
        fputs(s, f);
}

/* One labelled line of the answer: "- **Shape**: ..." / "<dt>Shape</dt><dd>...</dd>" /
 * "  shape: ...". */
static void item(FILE *f, enum output_answer_style st, const char *label, const char *text)
{
    switch (st) {
    case OUTPUT_ANSWER_MD:
        fprintf(f, "- **%s**: %s\n", label, text);
        break;
    case OUTPUT_ANSWER_HTML:
        fprintf(f, "<dt>%s</dt><dd>", label);
        report_html_esc(f, text);
        fputs("</dd>\n", f);
        break;
    case OUTPUT_ANSWER_TEXT:
        fprintf(f, "  %-11s %s\n", label, text);
        break;
    }
}

const char *output_answer_target(const struct sizing *s, char *buf, size_t len)
{
    if (s->target_streams > 0)
        snprintf(buf, len, "%.0f streams", s->target_streams);
    else if (s->target_users > 0)
        snprintf(buf, len, "%.0f users (%.0f req/s)", s->target_users, s->target_rps);
    else if (s->target_rps > 0)
        snprintf(buf, len, "%.0f req/s", s->target_rps);
    else
        snprintf(buf, len, "none");
    return buf;
}

/* "2w / 2.0c / 512Mi: 2 workers; limits cpu 2, memory 512Mi; requests cpu 1500m, memory 300Mi". */
static void shape_line(const struct output_doc *d, char *buf, size_t len)
{
    const struct advice *a = d->advice;
    char b1[QTY_LEN], b2[QTY_LEN], b3[QTY_LEN], b4[QTY_LEN];

    snprintf(buf, len, "%s: %u worker%s; limits cpu %s, memory %s; requests cpu %s, memory %s",
             d->rows[a->recommended].variant.label, a->workers, a->workers == 1 ? "" : "s",
             qty_format_cores(a->limit_cpu_m, b1), qty_format_memory(a->limit_memory, b2),
             qty_format_cores(a->request_cpu_m, b3), qty_format_memory(a->request_memory, b4));
}

/* The replicas: for the target, none when the target is out of reach, or why there are none. */
static void replicas_line(const struct sizing *s, char *buf, size_t len)
{
    char t[96];

    output_answer_target(s, t, sizeof(t));
    if (!s->by_target)
        snprintf(buf, len,
                 "no target was given, so no replica count (values.yaml leaves replicaCount "
                 "as it is); set target_rps, target_users or target_streams for one");
    else if (s->replicas == 0)
        snprintf(buf, len, "none for the target %s: %s", t,
                 s->unreachable && s->replicas_note[0] ? s->replicas_note : s->why);
    else
        snprintf(buf, len, "%u for the target %s%s", s->replicas, t,
                 s->from_curve ? " (read from the scale-out's measured curve)" : "");
}

/* The autoscaler: the HPA's bounds and target and the one file that carries it, or why there is
 * none. */
static void hpa_line(const struct output_doc *d, char *buf, size_t len)
{
    const struct sizing *s = &d->advice->sizing;
    char v[32];

    if (s->hpa.enabled && s->hpa.metric == SIZING_HPA_PODS) {
        output__average_value(s->hpa.target_average_value, v, sizeof(v));
        snprintf(
            buf, len,
            "on the request rate (CPU not shown to track load: see the Autoscaling finding), from "
            "%u to %u replicas at %s "
            "req/s per pod; apply ONE: hpa.yaml (needs a metrics adapter serving the Pods "
            "metric %s) or keda.yaml (needs KEDA installed), never both",
            s->hpa.min_replicas, s->hpa.max_replicas, v, s->hpa.metric_name);
    } else if (output_autoscaler(d) == OUTPUT_AUTOSCALER_VALUES)
        snprintf(buf, len,
                 "an HPA from %u to %u replicas at %u%% of requests.cpu (values.yaml's %s block, "
                 "applied by helm upgrade)",
                 s->hpa.min_replicas, s->hpa.max_replicas, s->hpa.target_cpu_utilization,
                 d->paths.autoscaling);
    else if (s->hpa.enabled)
        snprintf(buf, len, "an HPA from %u to %u replicas at %u%% of requests.cpu (hpa.yaml)",
                 s->hpa.min_replicas, s->hpa.max_replicas, s->hpa.target_cpu_utilization);
    else if (s->hpa.note[0])
        snprintf(buf, len, "none: %s", s->hpa.note);
    else
        snprintf(buf, len, "none: %s",
                 s->by_target ? "the sizing recommends none" : "an HPA needs a target");
}

/* values.yaml as its own renderer writes it, into an owned string. */
static int values_bytes(const struct output_doc *d, char **out, char *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc;

    *out = NULL;
    if (!m)
        return err_set(err, -ENOMEM, "out of memory");
    rc = output_values_yaml(m, d, err);
    if (fclose(m) != 0 && !rc)
        rc = err_set(err, -ENOMEM, "out of memory");
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    return 0;
}

/* The values block: fenced in markdown, <pre> in HTML, indented on the terminal. */
static void values_block(FILE *f, enum output_answer_style st, const char *yaml)
{
    switch (st) {
    case OUTPUT_ANSWER_MD:
        fprintf(f, "\n`values.yaml`:\n\n```yaml\n%s```\n", yaml);
        break;
    case OUTPUT_ANSWER_HTML:
        fputs("<p><code>values.yaml</code>:</p>\n<pre id=\"answer-values\">", f);
        report_html_esc(f, yaml);
        fputs("</pre>\n", f);
        break;
    case OUTPUT_ANSWER_TEXT:
        fputs("\n  values.yaml:\n", f);
        for (const char *p = yaml; *p;) {
            const char *nl = strchr(p, '\n');
            size_t n = nl ? (size_t)(nl - p) : strlen(p);
            fprintf(f, "    %.*s\n", (int)n, p);
            p += n + (nl ? 1 : 0);
        }
        break;
    }
}

/* The commands that apply what was written, one per file. */
static void apply_block(FILE *f, enum output_answer_style st, const struct output_doc *d)
{
    char cmds[8][256];
    size_t n = 0;
    const char *dep = d->workload.deployment;
    bool keda = output_keda_applies(&d->advice->sizing);
    bool hpa_file = output_autoscaler(d) == OUTPUT_AUTOSCALER_FILE;

    /* In a cluster the files are the results ConfigMap's keys: the plugin fetches each first. */
    if (dep && d->platform && strcmp(d->platform, "kube") == 0) {
        snprintf(cmds[n++], sizeof(cmds[0]),
                 "kubectl sizeup results deploy/%s -o values > values.yaml", dep);
        if (hpa_file)
            snprintf(cmds[n++], sizeof(cmds[0]),
                     "kubectl sizeup results deploy/%s -o hpa > hpa.yaml", dep);
        if (keda)
            snprintf(cmds[n++], sizeof(cmds[0]),
                     "kubectl sizeup results deploy/%s -o keda > keda.yaml", dep);
        snprintf(cmds[n++], sizeof(cmds[0]),
                 "kubectl sizeup results deploy/%s -o patch > deployment-patch.yaml", dep);
    }
    snprintf(cmds[n++], sizeof(cmds[0]),
             "helm upgrade RELEASE CHART --reuse-values -f values.yaml");
    if (keda)
        snprintf(cmds[n++], sizeof(cmds[0]),
                 "kubectl apply -f hpa.yaml  # or, with KEDA installed, kubectl apply -f "
                 "keda.yaml (never both)");
    else if (hpa_file)
        snprintf(cmds[n++], sizeof(cmds[0]), "kubectl apply -f hpa.yaml");
    if (d->workload.deployment)
        snprintf(cmds[n++], sizeof(cmds[0]),
                 "kubectl patch deployment %s --type strategic --patch-file "
                 "deployment-patch.yaml",
                 d->workload.deployment);
    const char *intro = "Apply it (RELEASE and CHART are yours; a chart that is not your own "
                        "takes deployment-patch.yaml instead of helm):";
    if (output_autoscaler(d) == OUTPUT_AUTOSCALER_VALUES)
        intro = "Apply it (RELEASE and CHART are yours; helm upgrade applies the autoscaler too. "
                "A chart that is not your own takes deployment-patch.yaml instead of helm, and "
                "its autoscaler a sweep with --values-paths autoscaling=):";
    if (!d->workload.deployment)
        intro = "Apply it (RELEASE and CHART are yours):";
    switch (st) {
    case OUTPUT_ANSWER_MD:
        fprintf(f, "\n%s\n\n```sh\n", intro);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s\n", cmds[i]);
        fputs("```\n", f);
        break;
    case OUTPUT_ANSWER_HTML:
        fputs("<p>", f);
        report_html_esc(f, intro);
        fputs("</p>\n<pre id=\"answer-apply\">", f);
        for (size_t i = 0; i < n; i++) {
            report_html_esc(f, cmds[i]);
            fputc('\n', f);
        }
        fputs("</pre>\n", f);
        break;
    case OUTPUT_ANSWER_TEXT:
        fprintf(f, "\n  %s\n", intro);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "    %s\n", cmds[i]);
        break;
    }
}

static void heading(FILE *f, enum output_answer_style st)
{
    if (st == OUTPUT_ANSWER_MD)
        fputs("## Answer\n\n", f);
    else if (st == OUTPUT_ANSWER_HTML)
        fputs("<section id=\"answer\">\n<h2>Answer</h2>\n", f);
    else
        fputs("\n  Answer\n", f);
}

static void list_open(FILE *f, enum output_answer_style st, bool open)
{
    if (st == OUTPUT_ANSWER_HTML)
        fputs(open ? "<dl class=\"setup\">\n" : "</dl>\n", f);
}

int output_answer(FILE *f, const struct output_doc *d, enum output_answer_style st, char *err)
{
    const struct advice *a = d->advice;
    char line[2048];
    char *yaml = NULL;
    int rc = 0;

    heading(f, st);
    if (a->recommended < 0 || (size_t)a->recommended >= d->n) {
        output_no_rec_sentence(d, line, sizeof(line));
        if (st == OUTPUT_ANSWER_HTML)
            fputs("<p id=\"answer-none\">", f);
        else if (st == OUTPUT_ANSWER_TEXT)
            fputs("  ", f);
        put(f, st, line);
        put(f, st, " No values.yaml was written: there is nothing to apply.");
        fputs(st == OUTPUT_ANSWER_HTML ? "</p>\n</section>\n" : "\n", f);
        goto out;
    }
    rc = values_bytes(d, &yaml, err);
    if (rc)
        goto out;
    list_open(f, st, true);
    shape_line(d, line, sizeof(line));
    item(f, st, "Shape", line);
    item(f, st, "Requests", a->requests_note);
    replicas_line(&a->sizing, line, sizeof(line));
    item(f, st, "Replicas", line);
    hpa_line(d, line, sizeof(line));
    item(f, st, "Autoscaler", line);
    item(f, st, "Why", a->why);
    list_open(f, st, false);
    values_block(f, st, yaml);
    apply_block(f, st, d);
    if (st == OUTPUT_ANSWER_HTML)
        fputs("</section>\n", f);
out:
    if (st == OUTPUT_ANSWER_MD)
        fputc('\n', f);
    free(yaml);
    if (!rc && ferror(f))
        rc = err_set(err, -EIO, "write error");
    return rc;
}
