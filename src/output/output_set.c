/* The one output path: the table of outputs, the size budget and what is left out to meet it,
 * the directory and ConfigMap sinks. */

#include "output/output_set.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/fmt.h"
#include "output/output_hpa.h"
#include "output/output_keda.h"
#include "output/output_int.h"
#include "sweep/runner.h"

typedef int (*render_fn)(FILE *f, const struct output_doc *d, char *err);

#define NEEDS_WORKLOAD (1u << 0) /* the Deployment's name (d->workload.deployment) */
#define NEEDS_PREVIOUS (1u << 1) /* an earlier sweep's results (d->previous_results) */
#define NEEDS_HPA      (1u << 2) /* an HPA that values.yaml does not carry (output_autoscaler) */
#define NEEDS_PDB      (1u << 3) /* an availability plan (d->advice->availability) */
#define NEEDS_KEDA     (1u << 4) /* a request-rate HPA (output_keda_applies) */

/* The outputs, in the order they are listed and written. */
static const struct output_def {
    const char *name;
    render_fn render;
    bool needs_recommendation; /* no recommendation: not written, and an old one is removed */
    unsigned omit_whole;       /* the OUTPUT_OMIT_* bit that leaves it out entirely, or 0 */
    unsigned needs;            /* NEEDS_*: what else the document must hold */
} outputs[] = {
    {"results.md", output_results_md, false, 0, 0},
    {"results.json", output_results_json_print, false, 0, 0},
    {"values.yaml", output_values_yaml, true, 0, 0},
    {"auto-sizing.yaml", output_rule_yaml, false, 0, 0},
    {"hpa.yaml", output_hpa_doc, true, 0, NEEDS_HPA},
    {"keda.yaml", output_keda_doc, true, 0, NEEDS_KEDA},
    {"pdb.yaml", output_pdb_doc, true, 0, NEEDS_PDB},
    {"report.html", output_report_html, false, OUTPUT_OMIT_HTML, 0},
    {"deployment-patch.yaml", output_deployment_patch, true, 0, NEEDS_WORKLOAD},
    {"previous-results.json", output_previous_results, false, OUTPUT_OMIT_PREVIOUS, NEEDS_PREVIOUS},
};
#define NOUTPUTS (sizeof(outputs) / sizeof(outputs[0]))

#define NTIERS 3

const char *output_name(size_t i)
{
    return i < sizeof(outputs) / sizeof(outputs[0]) ? outputs[i].name : NULL;
}
/* ---- rendering to fit ----------------------------------------------------------------------- */

static void item_clear(struct output_item *it)
{
    free(it->data);
    memset(it, 0, sizeof(*it));
}

/* Renders one output into it (its previous bytes freed). */
static int render_one(const struct output_def *def, const struct output_doc *d,
                      struct output_item *it, char *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;

    if (!f)
        return err_set(err, -ENOMEM, "out of memory rendering %s", def->name);
    rc = def->render(f, d, err);
    if (fclose(f) != 0 && !rc)
        rc = err_set(err, -ENOMEM, "out of memory rendering %s", def->name);
    if (rc) {
        free(buf);
        return rc == -ENOMEM ? rc : err_wrap(err, rc, "%s", def->name);
    }
    item_clear(it);
    snprintf(it->name, sizeof(it->name), "%s", def->name);
    it->data = buf;
    it->len = len;
    return 0;
}

static bool applies(const struct output_def *def, const struct output_doc *d)
{
    if (def->needs_recommendation && d->advice->recommended < 0)
        return false;
    if (((def->needs & NEEDS_WORKLOAD) && !d->workload.deployment) ||
        ((def->needs & NEEDS_PREVIOUS) && !d->previous_results) ||
        ((def->needs & NEEDS_HPA) && output_autoscaler(d) != OUTPUT_AUTOSCALER_FILE) ||
        ((def->needs & NEEDS_PDB) && !d->advice->availability.applied) ||
        ((def->needs & NEEDS_KEDA) && !output_keda_applies(&d->advice->sizing)))
        return false;
    return !(def->omit_whole && (d->omit & def->omit_whole));
}

/* Renders every output that applies to d into items[0..NOUTPUTS) (empty where none). */
static int render_all(const struct output_doc *d, struct output_item *items, char *err)
{
    for (size_t i = 0; i < NOUTPUTS; i++) {
        if (!applies(&outputs[i], d)) {
            item_clear(&items[i]);
            continue;
        }
        int rc = render_one(&outputs[i], d, &items[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

static const struct output_def *def_of(const char *name, size_t *index)
{
    for (size_t i = 0; i < NOUTPUTS; i++) {
        if (strcmp(outputs[i].name, name) == 0) {
            *index = i;
            return &outputs[i];
        }
    }
    return NULL;
}

/* Bytes leaving part p out of d would save in its output, measured by rendering it that way
 * (0 when the output is not there). */
static int part_saving(const struct output_part *p, const struct output_doc *d,
                       const struct output_item *items, size_t *saving, char *err)
{
    struct output_item trial = {0};
    struct output_doc t = *d;
    size_t i = 0;
    const struct output_def *def = def_of(p->output, &i);
    int rc;

    *saving = 0;
    if (!def || !items[i].data)
        return 0;
    t.omit |= p->bit;
    if (!applies(def, &t)) {
        *saving = items[i].len;
        return 0;
    }
    rc = render_one(def, &t, &trial, err);
    if (rc)
        return rc;
    *saving = trial.len < items[i].len ? items[i].len - trial.len : 0;
    item_clear(&trial);
    return 0;
}

/* The part to leave out next: the one of the lowest tier that saves anything, and within that
 * tier the one saving the most bytes. *bit is 0 when nothing is left to leave out. */
static int next_part(const struct output_doc *d, const struct output_item *items, unsigned *bit,
                     char *err)
{
    size_t best = 0;

    *bit = 0;
    for (int tier = 0; tier < NTIERS && !*bit; tier++) {
        for (size_t i = 0; i < output_nparts; i++) {
            size_t saving = 0;
            if ((d->omit & output_parts[i].bit) || output_parts[i].tier != tier)
                continue;
            int rc = part_saving(&output_parts[i], d, items, &saving, err);
            if (rc)
                return rc;
            if (saving > best) {
                best = saving;
                *bit = output_parts[i].bit;
            }
        }
    }
    return 0;
}

static size_t sum_len(const struct output_item *items, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += items[i].len;
    return total;
}

int output_set_render(const struct output_doc *d, const struct output_extra *extra, size_t nextra,
                      struct output_set *out, char *err)
{
    struct output_item items[NOUTPUTS];
    struct output_doc doc = *d;
    size_t extra_len = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(items, 0, sizeof(items));
    if (nextra > OUTPUT_SET_MAX - NOUTPUTS)
        return err_set(err, -EINVAL, "too many extra outputs (%zu)", nextra);
    for (size_t i = 0; i < nextra; i++)
        extra_len += strlen(extra[i].data);
    doc.omit = 0;
    rc = render_all(&doc, items, err);
    for (;;) {
        if (rc)
            goto out;
        size_t total = sum_len(items, NOUTPUTS);
        if (total <= OUTPUT_BUDGET && total + extra_len <= OUTPUT_DATA_MAX)
            break;
        unsigned bit = 0;
        rc = next_part(&doc, items, &bit, err);
        if (rc)
            goto out;
        if (!bit) {
            rc = err_set(err, -EFBIG,
                         "the outputs take %zu bytes with every optional part left out (and %zu "
                         "bytes of other keys); a ConfigMap holds at most %d",
                         total, extra_len, OUTPUT_DATA_MAX);
            goto out;
        }
        /* Every output says what was left out, so all are rendered again. */
        doc.omit |= bit;
        rc = render_all(&doc, items, err);
    }
    for (size_t i = 0; i < NOUTPUTS; i++) {
        if (!items[i].data)
            continue;
        out->items[out->n++] = items[i];
        memset(&items[i], 0, sizeof(items[i]));
    }
    for (size_t i = 0; i < nextra; i++) {
        struct output_item *it = &out->items[out->n];
        it->data = strdup(extra[i].data);
        if (!it->data) {
            rc = err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        snprintf(it->name, sizeof(it->name), "%s", extra[i].name);
        it->len = strlen(it->data);
        out->n++;
    }
    out->omitted = doc.omit;
    out->bytes = sum_len(out->items, out->n);
out:
    for (size_t i = 0; i < NOUTPUTS; i++)
        item_clear(&items[i]);
    if (rc)
        output_set_free(out);
    return rc;
}

void output_set_free(struct output_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        item_clear(&s->items[i]);
    memset(s, 0, sizeof(*s));
}

/* ---- the two sinks ------------------------------------------------------------------------- */

size_t output_set_keys(const struct output_set *s, const char **keys, const char **values,
                       size_t max)
{
    size_t n = 0;
    for (; n < s->n && n < max; n++) {
        keys[n] = s->items[n].name;
        values[n] = s->items[n].data;
    }
    return n;
}

/* Writes dir/name atomically: a temporary file in the same directory, flushed and synced, then
 * renamed over the old one, so a reader (or a crash) never sees half a file. */
static int write_atomic(const char *dir, const struct output_item *it, char *err)
{
    char tmp[4096], final[4096], ebuf[64];
    FILE *f = NULL;
    int fd = -1, rc = 0;

    if ((size_t)snprintf(final, sizeof(final), "%s/%s", dir, it->name) >= sizeof(final) ||
        (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, it->name) >= sizeof(tmp))
        return err_set(err, -ENAMETOOLONG, "output path too long");
    fd = mkstemp(tmp);
    if (fd < 0)
        return err_set(err, -errno, "%s: %s", tmp, err_str(errno, ebuf, sizeof(ebuf)));
    f = fdopen(fd, "w");
    if (!f) {
        rc = err_set(err, -errno, "%s: %s", tmp, err_str(errno, ebuf, sizeof(ebuf)));
        close(fd);
        goto out;
    }
    fchmod(fd, 0644);
    if (fwrite(it->data, 1, it->len, f) != it->len || fflush(f) != 0 || fsync(fd) != 0) {
        rc = err_set(err, -EIO, "%s: %s", tmp, err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    if (fclose(f) != 0) {
        f = NULL;
        rc = err_set(err, -EIO, "%s: %s", tmp, err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    f = NULL;
    if (rename(tmp, final) != 0) {
        rc = err_set(err, -errno, "%s: %s", final, err_str(errno, ebuf, sizeof(ebuf)));
        goto out;
    }
    return 0;
out:
    if (f)
        fclose(f);
    unlink(tmp);
    return rc;
}

int output_mkdir_p(const char *dir, char *err)
{
    char buf[4096], ebuf[64];
    size_t len = strlen(dir);

    if (len == 0 || len >= sizeof(buf))
        return err_set(err, -EINVAL, "bad output directory '%s'", dir);
    memcpy(buf, dir, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return err_set(err, -errno, "%s: %s", buf, err_str(errno, ebuf, sizeof(ebuf)));
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return err_set(err, -errno, "%s: %s", buf, err_str(errno, ebuf, sizeof(ebuf)));
    return 0;
}

static bool holds(const struct output_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return true;
    return false;
}

int output_set_write_dir(const char *dir, const struct output_set *s, char *err)
{
    char e[ERR_LEN] = "", p[4096], ebuf[64];
    int first = output_mkdir_p(dir, err);

    if (first)
        return first;
    for (size_t i = 0; i < s->n; i++) {
        int rc = write_atomic(dir, &s->items[i], e);
        if (rc && !first)
            first = err_set(err, rc, "%s", e);
    }
    /* An output this set does not hold must not pass for this sweep's: an old values.yaml would
     * be applied as if it were this sweep's recommendation. */
    for (size_t i = 0; i < NOUTPUTS; i++) {
        if (holds(s, outputs[i].name) ||
            (size_t)snprintf(p, sizeof(p), "%s/%s", dir, outputs[i].name) >= sizeof(p))
            continue;
        if (unlink(p) != 0 && errno != ENOENT && !first)
            first = err_set(err, -errno, "%s: %s", p, err_str(errno, ebuf, sizeof(ebuf)));
    }
    return first;
}

int output_write_all(const char *dir, const struct output_doc *d, char *err)
{
    struct output_set s;
    int rc = output_set_render(d, NULL, 0, &s, err);

    if (rc)
        return rc;
    rc = output_set_write_dir(dir, &s, err);
    output_set_free(&s);
    return rc;
}
