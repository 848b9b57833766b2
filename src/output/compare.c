/* `sizeup compare`: reading two results.json files and comparing them variant by variant. The
 * rendering (text and JSON) is in compare_render.c. */

#include "output/compare.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jb.h"

/* No figure sizeup writes comes near this: a bigger one is a damaged or forged file, and
 * keeping below it keeps every sum of squares in the statistics finite. */
#define FIGURE_MAX 1e12

#define TOOL_PREFIX "sizeup "

/* ---- reading ------------------------------------------------------------------------------- */

/* Reads key of o as a number in [0, FIGURE_MAX]. Absent or null: *out = -1 and 0 (the figure is
 * not there); present with another type or out of range: -EINVAL naming where. */
static int opt_figure(const cJSON *o, const char *key, const char *where, double *out, char *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    *out = -1;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        v->valuedouble > FIGURE_MAX)
        return err_set(err, -EINVAL, "%s: %s is not a number between 0 and %g", where, key,
                       FIGURE_MAX);
    *out = v->valuedouble;
    return 0;
}

/* The tool field: "sizeup MAJOR.MINOR.PATCH" of COMPARE_TOOL_MAJOR. */
static int check_tool(const cJSON *root, struct compare_file *f, char *err)
{
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(root, "tool");
    const char *ver;
    char *end = NULL;

    if (!cJSON_IsString(tool) || strncmp(tool->valuestring, TOOL_PREFIX, strlen(TOOL_PREFIX)))
        return err_set(err, -EINVAL,
                       "not a sizeup results file (no \"tool\": \"sizeup ...\"; expected the "
                       "results.json a sweep writes)");
    snprintf(f->tool, sizeof(f->tool), "%s", tool->valuestring);
    ver = tool->valuestring + strlen(TOOL_PREFIX);
    errno = 0;
    unsigned long major = strtoul(ver, &end, 10);
    if (*ver < '0' || *ver > '9' || *end != '.' || errno)
        return err_set(err, -EINVAL, "not a sizeup results file: unreadable version in \"%s\"",
                       f->tool);
    if (major != COMPARE_TOOL_MAJOR)
        return err_set(err, -EINVAL,
                       "written by %s: this sizeup reads the results of sizeup %d.x only", f->tool,
                       COMPARE_TOOL_MAJOR);
    return 0;
}

/* The top of the search's final bracket: the lowest rate a search step offered above the
 * capacity and missed the SLO at (a step the generator could not deliver says nothing about the
 * app). The repeats measure the noise at the capacity; the bracket is the search's own
 * resolution, which they cannot see. Steps of a file without "kind" all count. */
static int parse_bracket(const cJSON *cap, const char *where, struct compare_variant *cv, char *err)
{
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(cap, "steps"), *st;
    char at[128];
    int rc;

    cv->bracket_rps = -1;
    if (!steps || cJSON_IsNull(steps))
        return 0;
    if (!cJSON_IsArray(steps))
        return err_set(err, -EINVAL, "%s: slo_capacity.steps is not an array", where);
    snprintf(at, sizeof(at), "%s: a step", where);
    cJSON_ArrayForEach(st, steps)
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(st, "kind");
        const cJSON *pass = cJSON_GetObjectItemCaseSensitive(st, "pass");
        const cJSON *gen = cJSON_GetObjectItemCaseSensitive(st, "generator_limited");
        double offered;
        if (!cJSON_IsObject(st))
            return err_set(err, -EINVAL, "%s: slo_capacity.steps holds a non-object", where);
        rc = opt_figure(st, "offered_rps", at, &offered, err);
        if (rc)
            return rc;
        if ((kind && !cJSON_IsString(kind)) || (pass && !cJSON_IsBool(pass)) ||
            (gen && !cJSON_IsBool(gen)))
            return err_set(err, -EINVAL, "%s: kind, pass or generator_limited of the wrong type",
                           at);
        if (cJSON_IsFalse(pass) && !cJSON_IsTrue(gen) &&
            (!kind || strcmp(kind->valuestring, "search") == 0) && offered > cv->capacity_rps &&
            (cv->bracket_rps < 0 || offered < cv->bracket_rps))
            cv->bracket_rps = offered;
    }
    return 0;
}

/* slo_capacity: null in fixed mode, an object after a capacity search. */
static int parse_capacity(const cJSON *o, const char *where, struct compare_variant *cv, char *err)
{
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(o, "slo_capacity");
    const cJSON *reps, *valid, *flags, *it;
    int rc;

    if (!cap || cJSON_IsNull(cap))
        return 0;
    if (!cJSON_IsObject(cap))
        return err_set(err, -EINVAL, "%s: slo_capacity is neither an object nor null", where);
    cv->searched = true;
    rc = opt_figure(cap, "rps", where, &cv->capacity_rps, err);
    if (rc)
        return rc;
    if (cv->capacity_rps < 0)
        return err_set(err, -EINVAL, "%s: slo_capacity has no rps", where);
    reps = cJSON_GetObjectItemCaseSensitive(cap, "repeat_rps");
    if (reps && !cJSON_IsNull(reps)) {
        if (!cJSON_IsArray(reps))
            return err_set(err, -EINVAL, "%s: slo_capacity.repeat_rps is not an array", where);
        cJSON_ArrayForEach(it, reps)
        {
            if (cv->nrepeats == CAPACITY_MAX_REPEATS)
                return err_set(err, -EINVAL, "%s: more than %d repeats", where,
                               CAPACITY_MAX_REPEATS);
            if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0 ||
                it->valuedouble > FIGURE_MAX)
                return err_set(err, -EINVAL,
                               "%s: slo_capacity.repeat_rps holds something other than a rate",
                               where);
            cv->repeat_rps[cv->nrepeats++] = it->valuedouble;
        }
    }
    valid = cJSON_GetObjectItemCaseSensitive(cap, "valid");
    if (valid && !cJSON_IsBool(valid))
        return err_set(err, -EINVAL, "%s: slo_capacity.valid is not a boolean", where);
    cv->valid = !valid || cJSON_IsTrue(valid);
    flags = cJSON_GetObjectItemCaseSensitive(cap, "flags");
    if (flags && !cJSON_IsNull(flags) && !cJSON_IsArray(flags))
        return err_set(err, -EINVAL, "%s: slo_capacity.flags is not an array", where);
    cJSON_ArrayForEach(it, flags)
    {
        if (!cJSON_IsString(it))
            return err_set(err, -EINVAL, "%s: slo_capacity.flags holds a non-string", where);
        /* Shown to people only: a long name or list is cut, not refused. */
        if (cv->nflags < COMPARE_MAX_FLAGS)
            snprintf(cv->flags[cv->nflags++], sizeof(cv->flags[0]), "%s", it->valuestring);
    }
    return parse_bracket(cap, where, cv, err);
}

static int parse_variant(const cJSON *o, size_t idx, struct compare_variant *cv, char *err)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(o, "spec");
    const cJSON *state = cJSON_GetObjectItemCaseSensitive(o, "state");
    const cJSON *lat;
    char where[96], sub[ERR_LEN] = "";
    int rc;

    memset(cv, 0, sizeof(*cv));
    if (!cJSON_IsObject(o))
        return err_set(err, -EINVAL, "variant %zu is not an object", idx + 1);
    if (!cJSON_IsString(spec))
        return err_set(err, -EINVAL, "variant %zu has no spec", idx + 1);
    if (variant_parse(spec->valuestring, &cv->v, sub) != 0)
        return err_set(err, -EINVAL, "variant %zu: %s", idx + 1, sub);
    snprintf(where, sizeof(where), "variant %s", cv->v.spec);
    if (!cJSON_IsString(state) ||
        (strcmp(state->valuestring, "measured") && strcmp(state->valuestring, "failed")))
        return err_set(err, -EINVAL, "%s: state is not \"measured\" or \"failed\"", where);
    cv->measured = strcmp(state->valuestring, "measured") == 0;
    rc = opt_figure(o, "throughput_rps", where, &cv->throughput_rps, err);
    if (rc)
        return rc;
    cv->p95_ms = cv->p99_ms = cv->bracket_rps = -1;
    lat = cJSON_GetObjectItemCaseSensitive(o, "latency_ms");
    if (lat && !cJSON_IsNull(lat)) {
        if (!cJSON_IsObject(lat))
            return err_set(err, -EINVAL, "%s: latency_ms is not an object", where);
        rc = opt_figure(lat, "p95", where, &cv->p95_ms, err);
        if (!rc)
            rc = opt_figure(lat, "p99", where, &cv->p99_ms, err);
        if (rc)
            return rc;
    }
    /* Capacity mode: the row's latencies are its repeats at capacity merged, when written. */
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(o, "slo_capacity");
    const cJSON *at =
        cJSON_IsObject(cap) ? cJSON_GetObjectItemCaseSensitive(cap, "at_capacity") : NULL;
    if (at && !cJSON_IsNull(at)) {
        if (!cJSON_IsObject(at))
            return err_set(err, -EINVAL, "%s: slo_capacity.at_capacity is not an object", where);
        rc = opt_figure(at, "p95_ms", where, &cv->p95_ms, err);
        if (!rc)
            rc = opt_figure(at, "p99_ms", where, &cv->p99_ms, err);
        if (rc)
            return rc;
    }
    return parse_capacity(o, where, cv, err);
}

/* Copies the keys of prof (those it has) into a new object under *out. */
static int copy_keys(const cJSON *prof, const char *const *keys, size_t n, cJSON **out, char *err)
{
    const cJSON *x;

    if (!(*out = cJSON_CreateObject()))
        return err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        if ((x = cJSON_GetObjectItemCaseSensitive(prof, keys[i])) &&
            !jb_attach(*out, keys[i], cJSON_Duplicate(x, 1)))
            return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

/* The inputs that decide how a sweep was measured and judged, copied out of profile: slo,
 * requests (with their headers' and bodies' digests), thresholds, the request timeout, the
 * search's window, warm-up and precision, and for a fixed load (search.mode "fixed") the load
 * itself: users or rate, duration, warm-up and the stages. Then the answer's inputs, which
 * change the recommendation but not one figure measured (docs/compare.md). */
static int parse_judged(const cJSON *root, struct compare_file *out, char *err)
{
    static const char *const whole[] = {"slo", "requests", "thresholds", "timeout_s"};
    static const char *const fixed[] = {"users", "rate", "duration_s", "warmup_s", "stage_list"};
    static const char *const search[] = {"window_s", "warmup_s", "precision"};
    static const char *const answer[] = {
        "target_users", "target_rps", "target_streams", "cost",      "planning",
        "availability", "nodes",      "autoscaling",    "scale_out", "generators"};
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(root, "profile"), *x;
    cJSON *se = NULL;
    int rc;

    if (!cJSON_IsObject(prof))
        return 0;
    rc = copy_keys(prof, whole, sizeof(whole) / sizeof(whole[0]), &out->judged, err);
    if (!rc)
        rc = copy_keys(prof, answer, sizeof(answer) / sizeof(answer[0]), &out->answer, err);
    if (rc)
        return rc;
    x = cJSON_GetObjectItemCaseSensitive(prof, "search");
    if (!cJSON_IsObject(x))
        return 0;
    rc = copy_keys(x, search, sizeof(search) / sizeof(search[0]), &se, err);
    if (rc) {
        cJSON_Delete(se);
        return rc;
    }
    if (!jb_attach(out->judged, "search", se)) /* deletes se */
        return err_set(err, -ENOMEM, "out of memory");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(x, "mode");
    for (size_t i = 0; cJSON_IsString(mode) && strcmp(mode->valuestring, "fixed") == 0 &&
                       i < sizeof(fixed) / sizeof(fixed[0]);
         i++)
        if ((x = cJSON_GetObjectItemCaseSensitive(prof, fixed[i])) &&
            !jb_attach(out->judged, fixed[i], cJSON_Duplicate(x, 1)))
            return err_set(err, -ENOMEM, "out of memory");
    return 0;
}

int compare_parse(const char *text, size_t len, const char *source, struct compare_file *out,
                  char *err)
{
    cJSON *root = NULL;
    const cJSON *arr, *started, *it;
    size_t i = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    snprintf(out->source, sizeof(out->source), "%s", source);
    if (len > COMPARE_MAX_BYTES)
        return err_set(err, -EINVAL, "larger than %u bytes", COMPARE_MAX_BYTES);
    root = cJSON_ParseWithLength(text, len);
    if (!root) {
        rc = err_set(err, -EINVAL, "not JSON (a sweep's results.json was expected)");
        goto out;
    }
    if (!cJSON_IsObject(root)) {
        rc = err_set(err, -EINVAL, "not a sizeup results file (not a JSON object)");
        goto out;
    }
    rc = check_tool(root, out, err);
    if (rc)
        goto out;
    arr = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (!cJSON_IsArray(arr)) {
        rc = err_set(err, -EINVAL, "not a sizeup results file (no \"variants\" array)");
        goto out;
    }
    int count = cJSON_GetArraySize(arr);
    if (count > VARIANT_MAX) {
        rc = err_set(err, -EINVAL, "more than %d variants", VARIANT_MAX);
        goto out;
    }
    rc = parse_judged(root, out, err);
    if (rc)
        goto out;
    started = cJSON_GetObjectItemCaseSensitive(root, "started_at");
    if (cJSON_IsString(started))
        snprintf(out->started_at, sizeof(out->started_at), "%s", started->valuestring);
    out->variants = calloc(count ? (size_t)count : 1, sizeof(*out->variants));
    if (!out->variants) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    cJSON_ArrayForEach(it, arr)
    {
        struct compare_variant *cv = &out->variants[i];
        rc = parse_variant(it, i, cv, err);
        if (rc)
            goto out;
        for (size_t k = 0; k < i; k++)
            if (strcmp(out->variants[k].v.spec, cv->v.spec) == 0) {
                rc = err_set(err, -EINVAL, "variant %s appears twice", cv->v.spec);
                goto out;
            }
        out->capacity_mode |= cv->searched;
        out->n = ++i;
    }
out:
    cJSON_Delete(root);
    if (rc) {
        err_wrap(err, rc, "%s", source);
        compare_file_free(out);
    }
    return rc;
}

/* Reads at most COMPARE_MAX_BYTES of fd (one more to tell a file that is too large). */
static int read_capped(int fd, const char *path, char **buf /* OUT */, size_t *len /* OUT */,
                       char *err)
{
    char ebuf[96];
    size_t used = 0;
    char *b = malloc(COMPARE_MAX_BYTES + 1);

    if (!b)
        return err_set(err, -ENOMEM, "%s: out of memory", path);
    while (used <= COMPARE_MAX_BYTES) {
        ssize_t n = read(fd, b + used, COMPARE_MAX_BYTES + 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(b);
            return err_set(err, -EIO, "%s: %s", path, err_str(e, ebuf, sizeof(ebuf)));
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    if (used > COMPARE_MAX_BYTES) {
        free(b);
        return err_set(err, -EFBIG, "%s: larger than %u bytes", path, COMPARE_MAX_BYTES);
    }
    *buf = b;
    *len = used;
    return 0;
}

int compare_load(const char *path, struct compare_file *out, char *err)
{
    char file[sizeof(out->source)], ebuf[96];
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int fd = -1, rc;

    memset(out, 0, sizeof(*out));
    if (stat(path, &st) != 0)
        return err_set(err, -ENOENT, "%s: %s", path, err_str(errno, ebuf, sizeof(ebuf)));
    if (S_ISDIR(st.st_mode)) {
        size_t pl = strlen(path);
        if (snprintf(file, sizeof(file), "%s%sresults.json", path,
                     pl && path[pl - 1] == '/' ? "" : "/") >= (int)sizeof(file))
            return err_set(err, -EINVAL, "%s: path too long", path);
        if (stat(file, &st) != 0)
            return err_set(err, -ENOENT,
                           "%s is a directory without results.json (expected a sweep's --out "
                           "directory)",
                           path);
    } else if (snprintf(file, sizeof(file), "%s", path) >= (int)sizeof(file)) {
        return err_set(err, -EINVAL, "%s: path too long", path);
    }
    if (!S_ISREG(st.st_mode))
        return err_set(err, -EINVAL, "%s is not a regular file", file);
    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, -ENOENT, "%s: %s", file, err_str(errno, ebuf, sizeof(ebuf)));
    rc = read_capped(fd, file, &buf, &len, err);
    close(fd);
    if (rc)
        return rc;
    rc = compare_parse(buf, len, file, out, err);
    free(buf);
    return rc;
}

void compare_file_free(struct compare_file *f)
{
    if (!f)
        return;
    free(f->variants);
    cJSON_Delete(f->judged);
    cJSON_Delete(f->answer);
    memset(f, 0, sizeof(*f));
}

/* ---- comparing ----------------------------------------------------------------------------- */

/* The figure of metric m for one side as samples: the repeats for capacity (the capacity itself
 * as one sample when the file has no repeats), else the single figure. Returns the count (0:
 * the side lacks it). */
static size_t samples(const struct compare_variant *v, enum compare_metric m, double *x)
{
    if (!v || !v->measured)
        return 0;
    switch (m) {
    case COMPARE_CAPACITY:
        if (!v->searched)
            return 0;
        if (v->nrepeats == 0) {
            x[0] = v->capacity_rps;
            return 1;
        }
        memcpy(x, v->repeat_rps, v->nrepeats * sizeof(*x));
        return v->nrepeats;
    case COMPARE_THROUGHPUT:
        x[0] = v->throughput_rps;
        break;
    case COMPARE_P95:
        x[0] = v->p95_ms;
        break;
    case COMPARE_P99:
        x[0] = v->p99_ms;
        break;
    default:
        return 0;
    }
    return x[0] >= 0 ? 1 : 0;
}

/* The shown figure: the file's own capacity (the repeats' mean as the search computed it) for
 * capacity, the single figure otherwise. */
static double figure(const struct compare_variant *v, enum compare_metric m,
                     const struct stats_summary *s)
{
    return m == COMPARE_CAPACITY ? v->capacity_rps : s->mean;
}

/* The smallest capacity difference two searches can tell apart: the wider of their final
 * brackets. When both brackets hold the true capacity, their lower ends differ by less than
 * that, however tight the repeats at each end are. 0 when neither file shows its bracket. */
static double resolution(const struct compare_variant *a, const struct compare_variant *b)
{
    double wa = a->bracket_rps > 0 ? a->bracket_rps - a->capacity_rps : 0;
    double wb = b->bracket_rps > 0 ? b->bracket_rps - b->capacity_rps : 0;
    return wa > wb ? wa : wb;
}

static void compare_cell(const struct compare_variant *a, const struct compare_variant *b,
                         enum compare_metric m, struct compare_cell *c)
{
    double xa[CAPACITY_MAX_REPEATS], xb[CAPACITY_MAX_REPEATS];
    size_t na = samples(a, m, xa), nb = samples(b, m, xb);

    memset(c, 0, sizeof(*c));
    c->change_pct = NAN;
    c->have_a = na > 0;
    c->have_b = nb > 0;
    /* Samples are range-checked finite numbers, so summarising cannot fail. */
    if (c->have_a)
        stats_summarize(xa, na, &c->a);
    if (c->have_b)
        stats_summarize(xb, nb, &c->b);
    if (!c->have_a || !c->have_b) {
        c->why = COMPARE_WHY_MISSING;
        return;
    }
    double fa = figure(a, m, &c->a), fb = figure(b, m, &c->b);
    if (fa > 0)
        c->change_pct = (fb - fa) / fa * 100.0;
    if (m == COMPARE_CAPACITY && (!a->valid || !b->valid))
        c->why = COMPARE_WHY_INVALID;
    else if (m != COMPARE_CAPACITY)
        c->why = COMPARE_WHY_ONE_MEASUREMENT;
    else if (na < STATS_MIN_REPEATS || nb < STATS_MIN_REPEATS)
        c->why = COMPARE_WHY_FEW_REPEATS;
    else if (stats_welch(&c->a, &c->b, &c->welch) != 0)
        c->why = COMPARE_WHY_FEW_REPEATS;
    else if (c->welch.significant && fabs(fb - fa) < resolution(a, b))
        c->why = COMPARE_WHY_RESOLUTION;
    else
        c->significant = c->welch.significant;
}

static const struct compare_variant *find(const struct compare_file *f, const char *spec)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->variants[i].v.spec, spec) == 0)
            return &f->variants[i];
    return NULL;
}

static void add_row(struct compare_report *r, const struct compare_variant *a,
                    const struct compare_variant *b)
{
    struct compare_row *row = &r->rows[r->n++];

    snprintf(row->spec, sizeof(row->spec), "%s", a ? a->v.spec : b->v.spec);
    row->a = a;
    row->b = b;
    for (int m = 0; m < COMPARE_NMETRICS; m++) {
        struct compare_cell *c = &row->cell[m];
        compare_cell(a, b, (enum compare_metric)m, c);
        /* A variant missing from one file is listed as such, not as a `~` per figure, and a
         * figure neither side has (capacity in fixed mode) is not shown at all. */
        if (a && b && c->why != COMPARE_WHY_TESTED && (c->have_a || c->have_b))
            r->whys |= 1u << c->why;
    }
    const struct compare_cell *cap = &row->cell[COMPARE_CAPACITY];
    if (cap->why == COMPARE_WHY_TESTED || cap->why == COMPARE_WHY_RESOLUTION) {
        r->ntestable++;
        if (cap->significant)
            r->significant[cap->change_pct > 0 ? 1 : 0]++;
    }
    row->regression = r->fail_set && cap->significant && cap->change_pct < -r->fail_pct;
    r->nregressions += row->regression;
}

/* Geometric means over the rows where both sides have a figure above zero: a ratio summary that
 * a single large variant cannot dominate, as benchstat's. */
static void geomeans(struct compare_report *r)
{
    for (int m = 0; m < COMPARE_NMETRICS; m++) {
        struct compare_geomean *g = &r->overall[m];
        double la = 0, lb = 0;
        for (size_t i = 0; i < r->n; i++) {
            const struct compare_row *row = &r->rows[i];
            const struct compare_cell *c = &row->cell[m];
            if (!c->have_a || !c->have_b)
                continue;
            double fa = figure(row->a, (enum compare_metric)m, &c->a);
            double fb = figure(row->b, (enum compare_metric)m, &c->b);
            if (fa <= 0 || fb <= 0)
                continue;
            la += log(fa);
            lb += log(fb);
            g->n++;
        }
        g->change_pct = NAN;
        if (g->n) {
            g->a = exp(la / (double)g->n);
            g->b = exp(lb / (double)g->n);
            g->change_pct = (g->b - g->a) / g->a * 100.0;
        }
    }
}

/* A JSON value for people: a number as %g, a string as is, null as "none", a section as "set". */
static const char *value_words(const cJSON *v, char *buf, size_t len)
{
    if (cJSON_IsNumber(v))
        snprintf(buf, len, "%g", v->valuedouble);
    else if (cJSON_IsString(v))
        snprintf(buf, len, "%s", v->valuestring);
    else if (cJSON_IsBool(v))
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNull(v))
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%s", cJSON_IsArray(v) ? "a list" : "set");
    return buf;
}

/* A list of differences being filled: r->differ or r->answer_differ. */
struct differ_list {
    char (*item)[COMPARE_DIFFER_LEN];
    size_t *n;
};

static bool is_digest(const char *path)
{
    size_t n = strlen(path), k = strlen("_sha256");
    return n >= k && strcmp(path + n - k, "_sha256") == 0;
}

static void add_differ(struct differ_list d, const char *path, const cJSON *va, const cJSON *vb)
{
    char wa[48], wb[48], *at;

    if (*d.n >= COMPARE_MAX_DIFFER)
        return;
    at = d.item[(*d.n)++];
    if (!va || !vb)
        snprintf(at, COMPARE_DIFFER_LEN, "%s: %s", path, va ? "set in A only" : "set in B only");
    else if (cJSON_IsArray(va) && cJSON_IsArray(vb))
        snprintf(at, COMPARE_DIFFER_LEN, "%s: %d entries in A, %d in B", path,
                 cJSON_GetArraySize(va), cJSON_GetArraySize(vb));
    else if (is_digest(path)) /* the value itself is never recorded, only its digest */
        snprintf(at, COMPARE_DIFFER_LEN, "%s: another value in B (recorded as a digest)", path);
    else
        snprintf(at, COMPARE_DIFFER_LEN, "%s: %s in A, %s in B", path,
                 value_words(va, wa, sizeof(wa)), value_words(vb, wb, sizeof(wb)));
}

static void diff_objects(struct differ_list d, const char *path, const cJSON *a, const cJSON *b);

/* x (A's) against y (B's) at path: objects key by key, lists of the same length entry by entry
 * ("requests[1].weight"), anything else as a whole. */
static void diff_values(struct differ_list d, const char *path, const cJSON *x, const cJSON *y)
{
    char p[COMPARE_DIFFER_LEN];

    if (cJSON_IsObject(x) && cJSON_IsObject(y)) {
        diff_objects(d, path, x, y);
    } else if (cJSON_IsArray(x) && cJSON_IsArray(y) &&
               cJSON_GetArraySize(x) == cJSON_GetArraySize(y)) {
        int i = 0;
        const cJSON *xi;
        cJSON_ArrayForEach(xi, x)
        {
            snprintf(p, sizeof(p), "%s[%d]", path, i);
            diff_values(d, p, xi, cJSON_GetArrayItem(y, i++));
        }
    } else if (!cJSON_Compare(x, y, 1)) {
        add_differ(d, path, x, y);
    }
}

/* The fields of a and b (objects at path) that differ, at any depth; a key in one object only
 * is a difference, a section one file lacks altogether is not (an older file). */
static void diff_objects(struct differ_list d, const char *path, const cJSON *a, const cJSON *b)
{
    const cJSON *x;
    char p[COMPARE_DIFFER_LEN];

    cJSON_ArrayForEach(x, a)
    {
        const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
        snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", x->string);
        if (!y && !path[0])
            continue;
        if (!y)
            add_differ(d, p, x, NULL);
        else
            diff_values(d, p, x, y);
    }
    cJSON_ArrayForEach(x, b)
    {
        snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", x->string);
        if (path[0] && !cJSON_GetObjectItemCaseSensitive(a, x->string))
            add_differ(d, p, NULL, x);
    }
}

int compare_run(const struct compare_file *a, const struct compare_file *b, double fail_pct,
                struct compare_report *out)
{
    memset(out, 0, sizeof(*out));
    out->a = a;
    out->b = b;
    out->fail_set = fail_pct >= 0;
    out->fail_pct = fail_pct;
    out->rows = calloc(a->n + b->n + 1, sizeof(*out->rows));
    if (!out->rows)
        return -ENOMEM;
    /* Judged against another SLO, window or mix, a change is not the app's: nothing is said.
     * Another cost, target or planning changes the answer, not a figure: said, and compared. */
    if (a->judged && b->judged)
        diff_objects((struct differ_list){out->differ, &out->ndiffer}, "", a->judged, b->judged);
    if (a->answer && b->answer)
        diff_objects((struct differ_list){out->answer_differ, &out->nanswer_differ}, "", a->answer,
                     b->answer);
    if (out->ndiffer)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        add_row(out, &a->variants[i], find(b, a->variants[i].v.spec));
    for (size_t i = 0; i < b->n; i++)
        if (!find(a, b->variants[i].v.spec))
            add_row(out, NULL, &b->variants[i]);
    geomeans(out);
    return 0;
}

void compare_report_free(struct compare_report *r)
{
    if (!r)
        return;
    free(r->rows);
    memset(r, 0, sizeof(*r));
}
