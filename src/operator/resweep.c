/* Re-sweeps after an image change: the decision, the patch that starts one, and the comparison
 * of the new results with the previous ones. */

#include "operator/resweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fmt.h"
#include "kube/objects.h"
#include "operator/annotations.h"
#include "output/compare.h"
#include "output/output.h"

void resweep_images(const cJSON *deploy, char *out, size_t len)
{
    const cJSON *ctrs = kube_path_get(deploy, "spec.template.spec.containers");
    const cJSON *c;
    size_t used = 0;

    if (len)
        out[0] = '\0';
    cJSON_ArrayForEach(c, ctrs)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "name");
        const cJSON *img = cJSON_GetObjectItemCaseSensitive(c, "image");
        if (!cJSON_IsString(n) || !cJSON_IsString(img))
            continue;
        int w = snprintf(out + used, len - used, "%s%s=%s", used ? " " : "", n->valuestring,
                         img->valuestring);
        if (w < 0 || (size_t)w >= len - used) {
            out[used] = '\0'; /* cut at the last whole word */
            break;
        }
        used += (size_t)w;
    }
}

static int is_busy(const char *status)
{
    return status && (strncmp(status, "running", 7) == 0 || strncmp(status, "pending:", 8) == 0);
}

int resweep_decide(const cJSON *deploy, time_t now, struct resweep_decision *out, char *err)
{
    const char *swept = kube_annotation(deploy, RESWEEP_ANNOT_IMAGES);
    const char *last = kube_annotation(deploy, RESWEEP_ANNOT_LAST);
    const char *sweep = kube_annotation(deploy, ANNOT_SWEEP);
    const char *handled = kube_annotation(deploy, ANNOT_LAST_SWEEP);
    enum kube_rollout ro = KUBE_ROLLOUT_WAITING;
    long long interval_s = 0;
    struct timespec last_ts;
    int on = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    rc =
        annot_parse_resweep(kube_annotation(deploy, ANNOT_RESWEEP),
                            kube_annotation(deploy, ANNOT_RESWEEP_INTERVAL), &on, &interval_s, err);
    if (rc)
        return rc;
    resweep_images(deploy, out->images, sizeof(out->images));
    if (!on) {
        snprintf(out->why, sizeof(out->why), "re-sweeps off");
        return 0;
    }
    if (!swept) {
        out->action = RESWEEP_BASELINE;
        snprintf(out->why, sizeof(out->why), "no images recorded yet");
        return 0;
    }
    if (strcmp(swept, out->images) == 0) {
        snprintf(out->why, sizeof(out->why), "images unchanged");
        return 0;
    }
    /* The new image is measured once it runs everywhere: mid-rollout the clone would copy a
     * template whose pods may yet fail. The rollout's last event brings us back here. */
    if (kube_deploy_rollout(deploy, &ro, NULL) != 0 || ro != KUBE_ROLLOUT_DONE) {
        snprintf(out->why, sizeof(out->why), "rollout not complete");
        return 0;
    }
    /* A sweep running or requested takes its turn first; its status change brings us back. */
    if (is_busy(kube_annotation(deploy, ANNOT_STATUS)) ||
        (sweep && *sweep && (!handled || strcmp(sweep, handled) != 0))) {
        snprintf(out->why, sizeof(out->why), "a sweep is running or requested");
        return 0;
    }
    if (last && kube_time_parse(last, &last_ts) == 0 && now < last_ts.tv_sec + (time_t)interval_s) {
        out->action = RESWEEP_LATER;
        out->due = last_ts.tv_sec + (time_t)interval_s;
        snprintf(out->why, sizeof(out->why), "images changed inside the interval (%llds)",
                 interval_s);
        return 0;
    }
    out->action = RESWEEP_START;
    snprintf(out->why, sizeof(out->why), "images changed and rolled out");
    return 0;
}

char *resweep_patch(const cJSON *deploy, const struct resweep_decision *d, time_t now)
{
    const cJSON *rv = kube_path_get(deploy, "metadata.resourceVersion");
    cJSON *patch = NULL, *meta, *ann;
    char ts[40], value[64], *text = NULL;
    struct timespec t = {now, 0};

    if (d->action != RESWEEP_BASELINE && d->action != RESWEEP_START)
        return NULL;
    patch = cJSON_CreateObject();
    meta = patch ? cJSON_AddObjectToObject(patch, "metadata") : NULL;
    ann = meta ? cJSON_AddObjectToObject(meta, "annotations") : NULL;
    if (!ann || !cJSON_AddStringToObject(ann, RESWEEP_ANNOT_IMAGES, d->images))
        goto out;
    if (cJSON_IsString(rv) && !cJSON_AddStringToObject(meta, "resourceVersion", rv->valuestring))
        goto out;
    if (d->action == RESWEEP_START) {
        if (kube_time_format(&t, 0, ts, sizeof(ts)) != 0)
            goto out;
        /* A value no person would write, unique per second: "resweep-20261201T032500Z". */
        size_t k = 0;
        for (const char *p = ts; *p && k < sizeof(value) - 1; p++)
            if (*p != '-' && *p != ':')
                value[k++] = *p;
        value[k] = '\0';
        char sweep[96];
        snprintf(sweep, sizeof(sweep), "%s%s", RESWEEP_SWEEP_PREFIX, value);
        if (!cJSON_AddStringToObject(ann, ANNOT_SWEEP, sweep) ||
            !cJSON_AddStringToObject(ann, RESWEEP_ANNOT_LAST, ts))
            goto out;
    }
    text = cJSON_PrintUnformatted(patch);
out:
    cJSON_Delete(patch);
    return text;
}

/* ---- comparison ---------------------------------------------------------------------------- */

/* Relative change from a to b, or 0 when a is not positive. */
static double rel(double a, double b)
{
    return a > 0 ? (b - a) / a : 0;
}

int resweep_compare(const char *previous, const struct advisor_row *rows, size_t n, char *out,
                    size_t len, int *significant)
{
    cJSON *prev = previous ? cJSON_Parse(previous) : NULL;
    const cJSON *vars = prev ? cJSON_GetObjectItemCaseSensitive(prev, "variants") : NULL;
    const cJSON *images = prev ? cJSON_GetObjectItemCaseSensitive(prev, "images") : NULL;
    const cJSON *v;
    size_t compared = 0;
    int best = -1, rc = 0, any_sig = 0;
    double best_dt = 0, best_dp = 0, old_rps = 0, old_p95 = 0;
    char since[RESWEEP_IMAGES_MAX + 16], l1[FMT_LEN], l2[FMT_LEN], r1[FMT_LEN], r2[FMT_LEN];

    if (significant)
        *significant = 0;
    if (!cJSON_IsArray(vars)) {
        snprintf(out, len, "the previous results could not be read; nothing compared.");
        rc = -ENOENT;
        goto out;
    }
    cJSON_ArrayForEach(v, vars)
    {
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(v, "spec");
        const cJSON *state = cJSON_GetObjectItemCaseSensitive(v, "state");
        if (!cJSON_IsString(spec) || !cJSON_IsString(state) ||
            strcmp(state->valuestring, "measured") != 0)
            continue;
        double rps = kube_path_number(v, "throughput_rps", -1),
               p95 = kube_path_number(v, "latency_ms.p95", -1);
        for (size_t i = 0; i < n; i++) {
            if (!rows[i].measured || strcmp(rows[i].variant.spec, spec->valuestring) != 0 ||
                rps <= 0 || p95 < 0)
                continue;
            double dt = rel(rps, rows[i].throughput_rps);
            double dp = rel(p95, (double)rows[i].p95_us / 1e3);
            compared++;
            /* The variant that moved most, by throughput or p95, is the one named. */
            double score = fmax(fabs(dt), fabs(dp));
            any_sig |= score > RESWEEP_NOISE;
            if (best < 0 || score > fmax(fabs(best_dt), fabs(best_dp))) {
                best = (int)i;
                best_dt = dt;
                best_dp = dp;
                old_rps = rps;
                old_p95 = p95;
            }
        }
    }
    if (cJSON_IsString(images) && images->valuestring[0])
        snprintf(since, sizeof(since), "since image %s", images->valuestring);
    else
        snprintf(since, sizeof(since), "since the previous sweep");
    if (best < 0) {
        snprintf(out, len, "%s: no variant measured in both sweeps; nothing compared.", since);
        rc = -ENOENT;
        goto out;
    }
    const struct advisor_row *r = &rows[best];
    int sig = any_sig;
    snprintf(out, len,
             "%s, %zu variant%s compared; the largest change: throughput of %s %s %.0f%% "
             "(%s -> %s req/s), p95 %s -> %s (%+.0f%%): %s (the rule: a change of more "
             "than %.0f%% in throughput or p95 of any variant is significant).",
             since, compared, compared == 1 ? "" : "s", r->variant.spec,
             best_dt < 0 ? "fell" : "rose", fabs(best_dt) * 100, fmt_rate(old_rps, r1),
             fmt_rate(r->throughput_rps, r2), fmt_latency((uint64_t)llround(old_p95 * 1e3), l1),
             fmt_latency(r->p95_us, l2), best_dp * 100, sig ? "significant" : "within noise",
             RESWEEP_NOISE * 100);
    if (significant)
        *significant = sig;
out:
    cJSON_Delete(prev);
    return rc;
}

/* "since image web=app:1" or "since the previous sweep", from the previous results' images. */
static void since_words(const char *previous, char *out, size_t len)
{
    cJSON *prev = cJSON_Parse(previous);
    const cJSON *images = prev ? cJSON_GetObjectItemCaseSensitive(prev, "images") : NULL;
    if (cJSON_IsString(images) && images->valuestring[0])
        snprintf(out, len, "since image %s", images->valuestring);
    else
        snprintf(out, len, "since the previous sweep");
    cJSON_Delete(prev);
}

int resweep_compare_capacity(const char *previous, const char *current, char *out, size_t len,
                             int *significant)
{
    struct compare_file a = {0}, b = {0};
    struct compare_report r = {0};
    char err[ERR_LEN], since[RESWEEP_IMAGES_MAX + 16], r1[FMT_LEN], r2[FMT_LEN];
    int rc;

    if (significant)
        *significant = 0;
    if (!previous || !current)
        return -ENOENT;
    rc = compare_parse(previous, strlen(previous), "previous-results.json", &a, err);
    if (rc == 0)
        rc = compare_parse(current, strlen(current), "results.json", &b, err);
    if (rc == 0)
        rc = compare_run(&a, &b, -1, &r);
    if (rc)
        goto out;
    /* The variant whose capacity moved most, among those with a capacity on both sides. */
    const struct compare_row *best = NULL;
    size_t compared = 0, sig = 0;
    for (size_t i = 0; i < r.n; i++) {
        const struct compare_cell *c = &r.rows[i].cell[COMPARE_CAPACITY];
        if (!c->have_a || !c->have_b || isnan(c->change_pct))
            continue;
        compared++;
        sig += c->significant;
        const struct compare_cell *bc = best ? &best->cell[COMPARE_CAPACITY] : NULL;
        /* A significant change outranks a larger one the test could not confirm. */
        if (!bc || (c->significant && !bc->significant) ||
            (c->significant == bc->significant && fabs(c->change_pct) > fabs(bc->change_pct)))
            best = &r.rows[i];
    }
    if (!best) {
        rc = -ENOENT;
        goto out;
    }
    const struct compare_cell *c = &best->cell[COMPARE_CAPACITY];
    since_words(previous, since, sizeof(since));
    char test[96];
    if (c->why == COMPARE_WHY_TESTED || c->why == COMPARE_WHY_RESOLUTION)
        snprintf(test, sizeof(test), "Welch's t-test p = %.3g%s", c->welch.p,
                 c->why == COMPARE_WHY_RESOLUTION ? ", within the searches' resolution" : "");
    else
        snprintf(test, sizeof(test), "not testable: %s",
                 c->why == COMPARE_WHY_FEW_REPEATS ? "too few repeats"
                 : c->why == COMPARE_WHY_INVALID   ? "a capacity marked not valid"
                                                   : "one measurement");
    snprintf(
        out, len,
        "%s, %zu variant%s compared by capacity; the largest change: capacity of %s %s "
        "%.0f%% (%s -> %s req/s, %s): %s.",
        since, compared, compared == 1 ? "" : "s", best->spec, c->change_pct < 0 ? "fell" : "rose",
        fabs(c->change_pct), fmt_rate(c->a.mean, r1), fmt_rate(c->b.mean, r2), test,
        c->significant
            ? "significant"
            : (sig ? "not significant (another variant's change is)" : "no significant change"));
    if (significant)
        *significant = sig > 0;
out:
    compare_report_free(&r);
    compare_file_free(&a);
    compare_file_free(&b);
    return rc ? -ENOENT : 0;
}
