/* Allocation failure as a test, after curl's torture tests and SQLite's malloc tests: each run
 * arms a counter, lets the Nth allocation fail (counting from arming), and checks that the call
 * either fails cleanly (an error, nothing written or updated) or gives exactly what the run
 * without a failure gave; for every N from 1 until a run completes without reaching the failure.
 * No crash and no leak: the binary runs under ASan/LSan in make test.
 *
 * What is covered: every malloc, calloc, realloc, strdup, strndup, aligned_alloc and
 * open_memstream call made by sizeup's own code (the objects of libsizeup.a and this file are
 * linked with -Wl,--wrap=..., see the Makefile's rule for this binary) and every allocation of
 * cJSON (routed here through cJSON_InitHooks). What is not covered: the allocations libyaml,
 * libcurl, OpenSSL and libc make inside themselves (the emitter's and parser's buffers, the FILE
 * of fdopen, open_memstream's growing buffer), which a link-time wrapper cannot reach.
 *
 * Runs: the outputs (output_set_render and output_write_all over a three-variant sweep with
 * real load results and a capacity search: results.md, results.json, values.yaml,
 * auto-sizing.yaml, hpa.yaml, report.html, deployment-patch.yaml, previous-results.json), the
 * annotation parser, the state.json parser and writer, the profile reader, the kubeconfig reader,
 * the load generators' profile document, Job object and result parser (loadjob), and sizeup
 * compare (two results.json parsed, compared, rendered as JSON and text), and the watch event
 * parser.
 *
 * ALLOC_FAIL_MAX (environment) bounds N per run (default: until a run completes),
 * ALLOC_FAIL_STRIDE=k checks the directory sink at every k-th N (default 10: each of its runs
 * fsyncs every file; the render itself is checked at every N), and
 * ALLOC_FAIL_DUMP=dir writes the fixture's outputs into dir and exits (for comparing bytes
 * across builds); tests/reliability/p_alloc.sh uses both. */

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>
#include <cmocka.h>

#include "advise/advise.h"
#include "kube/client.h"
#include "kube/objects.h"
#include "load/report.h"
#include "operator/annotations.h"
#include "operator/job_int.h"
#include "operator/loadjob.h"
#include "output/compare.h"
#include "output/output.h"
#include "output/output_int.h"
#include "output/output_set.h"
#include "profile/profile.h"
#include "sweep/runner.h"
#include "sweep_fixture.h"

/* ---- the failing allocator ------------------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
FILE *__real_open_memstream(char **buf, size_t *len);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
FILE *__wrap_open_memstream(char **buf, size_t *len);

/* The test is single-threaded: plain statics are the allocator's state. */
static long fail_at; /* the allocation that fails, counted from arming; 0: disarmed */
static long seen;    /* allocations since arming */
static bool hit;     /* the armed allocation was reached (and failed) */

static void arm(long n)
{
    fail_at = n;
    seen = 0;
    hit = false;
}

static void disarm(void)
{
    fail_at = 0;
}

static bool fails(void)
{
    if (fail_at <= 0)
        return false;
    if (++seen != fail_at)
        return false;
    hit = true;
    errno = ENOMEM;
    return true;
}

void *__wrap_malloc(size_t n)
{
    return fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fails() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return fails() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return fails() ? NULL : __real_strndup(s, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return fails() ? NULL : __real_aligned_alloc(align, n);
}

FILE *__wrap_open_memstream(char **buf, size_t *len)
{
    return fails() ? NULL : __real_open_memstream(buf, len);
}

static long atol_env(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : 0;
}

/* The largest N tried per run; 0: until a run completes. */
static long max_n(void)
{
    return atol_env("ALLOC_FAIL_MAX");
}

/* Counts per run, printed at the end of each test: runs that failed cleanly, runs that gave
 * identical results despite the failure (a fallback), and the N at which a run completed. */
struct tally {
    long clean, identical, completed_at;
    long written; /* runs of the directory sink (outputs only) */
};

static void tally_print(const char *what, const struct tally *t)
{
    printf("alloc_fail: %s: N=1..%ld: %ld failed cleanly, %ld identical despite the failure, "
           "completed at N=%ld",
           what, t->completed_at, t->clean, t->identical, t->completed_at);
    if (t->written)
        printf("; directory sink checked at %ld of them", t->written);
    printf("\n");
}

/* ---- the sweep fixture ---------------------------------------------------------------------- */

/* Rows of the fixture: NV in make test; ALLOC_FAIL_ROWS (up to NV_MAX) for the fuller run of
 * tests/reliability/p_alloc.sh, whose last row is a variant that failed (OOM-killed). */
#define NV     3
#define NV_MAX 8

struct fixture {
    struct profile profile;
    struct sweep sweep;
    struct advisor_row rows[NV_MAX];
    size_t n;
    struct advice advice;
    struct output_doc doc;
};

/* A measured row (sweep_fixture.h) with a capacity search of two repeats and three steps: the
 * slo_capacity object and the report's capacity charts. */
static void fill_row(struct sweep_row *r, struct advisor_row *a, const char *spec, double rps,
                     uint64_t lat_us, const struct profile *p)
{
    sweep_fixture_row(r, a, spec, rps, lat_us, p);
    a->cap.searched = true;
    a->cap.rps = rps;
    a->cap.per_core = rps / ((double)r->variant.cpu_millicores / 1000.0);
    a->cap.repeat_rps[0] = rps * 0.98;
    a->cap.repeat_rps[1] = rps * 1.02;
    assert_int_equal(capacity_set_interval(&a->cap, 2), 0);
    a->cap.valid = true;
    a->cap.cpu_cores = a->cpu_cores_used;
    a->cap.peak_memory_bytes = a->peak_memory_bytes;
    a->cap.nsteps = 3;
    for (size_t k = 0; k < 3; k++) {
        struct capacity_step *st = &a->cap.steps[k];
        st->kind = k == 0 ? CAPACITY_STEP_PROBE : CAPACITY_STEP_REPEAT;
        st->offered_rps = st->achieved_rps = st->sustained_rps = a->cap.repeat_rps[k % 2];
        st->p50_us = a->p50_us;
        st->p95_us = a->p95_us;
        st->p99_us = a->p99_us;
        st->cpu_cores = a->cpu_cores_used;
        st->peak_memory_bytes = a->peak_memory_bytes;
        st->gen_cores = 0.1;
        st->pass = true;
    }
}

/* A variant that did not run to the end: the failure branch of every output. */
static void fail_row(struct sweep_row *r, struct advisor_row *a, const char *spec)
{
    char err[ERR_LEN];

    assert_int_equal(variant_parse(spec, &r->variant, err), 0);
    r->state = SWEEP_ROW_FAILED;
    r->failure.kind = PLATFORM_FAIL_OOM;
    snprintf(r->failure.reason, sizeof(r->failure.reason), "OOM-killed after 2.1 s");
    a->variant = r->variant;
    a->measured = false;
    a->fail = PLATFORM_FAIL_OOM;
    snprintf(a->note, sizeof(a->note), "OOM-killed after 2.1 s");
    a->cpu_cores_used = a->gen_cores = a->host_other_cores = -1;
    a->peak_memory_bytes = -1;
}

static void fixture_init(struct fixture *f)
{
    static const char *specs[NV_MAX] = {"1@0.5/256Mi", "1@1/256Mi", "2@2/512Mi", "2@1/512Mi",
                                        "4@2/1Gi",     "4@4/1Gi",   "8@4/2Gi",   "8@8/256Mi"};
    static const double rps[NV_MAX] = {200, 420, 800, 400, 790, 1500, 1550, 0};
    static const uint64_t lat_us[NV_MAX] = {150000, 60000, 30000, 70000, 32000, 18000, 17000, 0};
    char err[ERR_LEN];
    long rows = atol_env("ALLOC_FAIL_ROWS");

    memset(f, 0, sizeof(*f));
    f->n = rows >= 1 && rows <= NV_MAX ? (size_t)rows : NV;
    assert_int_equal(profile_init_default(&f->profile), 0);
    f->profile.target_rps = 1500; /* a target: replicas, hpa.yaml */
    f->sweep.n = f->n;
    f->sweep.rows = calloc(f->n, sizeof(*f->sweep.rows));
    assert_non_null(f->sweep.rows);
    for (size_t i = 0; i < f->n; i++)
        if (f->n > NV && i == f->n - 1)
            fail_row(&f->sweep.rows[i], &f->rows[i], specs[i]);
        else
            fill_row(&f->sweep.rows[i], &f->rows[i], specs[i], rps[i], lat_us[i], &f->profile);
    struct sweep *s = &f->sweep;
    s->facts.host_millicores = 4000;
    s->facts.limits_enforced = true;
    s->facts.load_shares_host = true;
    snprintf(s->facts.machine, sizeof(s->facts.machine), "test machine");
    snprintf(s->platform, sizeof(s->platform), "kube");
    assert_int_equal(advise_rows(f->rows, f->n, &f->profile, &s->facts, &f->advice, err), 0);
    /* An autoscaler recommended: hpa.yaml, values.yaml's autoscaling, recommendation.hpa. */
    assert_true(f->advice.recommended >= 0);
    f->advice.sizing.hpa.enabled = true;
    f->advice.sizing.hpa.min_replicas = 2;
    f->advice.sizing.hpa.max_replicas = 4;
    f->advice.sizing.hpa.target_cpu_utilization = 69;
    /* On the request rate: keda.yaml too, so every output of the table is rendered. */
    f->advice.sizing.hpa.metric = SIZING_HPA_PODS;
    f->advice.sizing.hpa.target_average_value = 123.456;
    snprintf(f->advice.sizing.hpa.metric_name, sizeof(f->advice.sizing.hpa.metric_name), "rps");
    snprintf(f->advice.sizing.hpa.keda_server, sizeof(f->advice.sizing.hpa.keda_server),
             "http://prometheus:9090");
    struct output_doc *d = &f->doc;
    d->rows = f->rows;
    d->n = f->n;
    d->advice = &f->advice;
    d->sweep = s;
    d->profile = &f->profile;
    d->facts = &s->facts;
    d->platform = "kube";
    d->command = "sizeup sweep -- ./app";
    d->configs = "1@0.5/256Mi 1@1/256Mi 2@2/512Mi";
    d->started = 1764446400;
    d->finished = 1764446500;
    d->workload = (struct output_workload){"app", "app", "WORKERS", "app=example:1", NULL};
    d->previous_results = "{\"tool\":\"sizeup 0.1.0\"}\n";
    d->comparison = "capacity unchanged";
    output_paths_default(&d->paths);
}

static void fixture_free(struct fixture *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->sweep.rows[i].have_load)
            load_result_free(&f->sweep.rows[i].load);
    free(f->sweep.rows);
    profile_free(&f->profile);
}

/* ---- files ---------------------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = __real_malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
            buf[n] = '\0';
            *len = (size_t)n;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

static void put_file(const char *dir, const char *name, const char *text)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* Number of entries in dir (without . and ..). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[4096];

    if (!d)
        return;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

/* The set and s hold the same names with the same bytes. */
static bool same_set(const struct output_set *a, const struct output_set *b)
{
    if (a->n != b->n || a->omitted != b->omitted)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->items[i].name, b->items[i].name) || a->items[i].len != b->items[i].len ||
            memcmp(a->items[i].data, b->items[i].data, a->items[i].len))
            return false;
    return true;
}

#define EARLIER "an earlier sweep's file\n"

/* dir holds exactly the files of s: with earlier NULL each with its item's bytes, else each
 * holding the text earlier. */
static bool dir_holds(const char *dir, const struct output_set *s, const char *earlier)
{
    char p[4096];
    size_t len;

    if (entries(dir) != (int)s->n)
        return false;
    for (size_t i = 0; i < s->n; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, s->items[i].name);
        char *text = slurp(p, &len);
        bool ok =
            text && (earlier ? strcmp(text, earlier) == 0
                             : len == s->items[i].len && !memcmp(text, s->items[i].data, len));
        free(text);
        if (!ok)
            return false;
    }
    return true;
}

/* ---- the runs ------------------------------------------------------------------------------- */

/* output_set_render, then output_write_all into a directory holding an earlier sweep's files:
 * under a failure, either an error with the set empty and every earlier file as it was, or the
 * same bytes as without the failure. */
static void test_outputs(void **state)
{
    (void)state;
    struct fixture f;
    struct output_set want = {0};
    struct tally t = {0};
    char err[ERR_LEN], dir[] = "/tmp/sizeup-alloc-XXXXXX";
    long max = max_n(),
         stride = atol_env("ALLOC_FAIL_STRIDE") > 0 ? atol_env("ALLOC_FAIL_STRIDE") : 10;

    fixture_init(&f);
    assert_int_equal(output_set_render(&f.doc, NULL, 0, &want, err), 0);
    assert_int_equal(want.n, 9); /* every output of the table */
    assert_non_null(mkdtemp(dir));
    for (long n = 1; max == 0 || n <= max; n++) {
        struct output_set got = {0};
        arm(n);
        int rc = output_set_render(&f.doc, NULL, 0, &got, err);
        disarm();
        if (rc) {
            assert_int_equal(got.n, 0);
            assert_true(err[0] != '\0');
        } else {
            assert_true(same_set(&got, &want));
        }
        output_set_free(&got);
        if (rc)
            t.clean++;
        else if (hit)
            t.identical++;
        t.completed_at = n;
        bool render_hit = hit;

        /* The directory sink: every stride-th N (each run fsyncs every file). */
        if (render_hit && n % stride != 0)
            continue;
        for (size_t i = 0; i < want.n; i++)
            put_file(dir, want.items[i].name, EARLIER);
        arm(n);
        rc = output_write_all(dir, &f.doc, err);
        disarm();
        t.written++;
        if (rc) {
            assert_true(hit);
            assert_true(dir_holds(dir, &want, EARLIER));
        } else {
            assert_true(dir_holds(dir, &want, NULL));
        }
        if (!hit && !render_hit)
            break;
    }
    tally_print("outputs (render + write_all)", &t);
    output_set_free(&want);
    rm_dir(dir);
    fixture_free(&f);
}

/* A parser run: parse() fills a fingerprint (an owned string, or NULL on failure) and returns
 * its code; the fingerprint under a failure is either absent (an error) or the baseline's. */
typedef int (*parse_fn)(char **print /* OUT */);

static void sweep_parser(const char *what, parse_fn parse)
{
    char *want = NULL;
    struct tally t = {0};
    long max = max_n();

    assert_int_equal(parse(&want), 0);
    assert_non_null(want);
    for (long n = 1; max == 0 || n <= max; n++) {
        char *got = NULL;
        arm(n);
        int rc = parse(&got);
        disarm();
        t.completed_at = n;
        if (rc) {
            assert_null(got);
            t.clean++;
        } else {
            assert_non_null(got);
            assert_string_equal(got, want);
            if (hit)
                t.identical++;
        }
        free(got);
        if (!hit)
            break;
    }
    tally_print(what, &t);
    free(want);
}

/* A fingerprint: the formatted text, owned (allocated outside the armed count's reach: the
 * real malloc). */
static char *print_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *print_of(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(n >= 0);
    char *s = __real_malloc((size_t)n + 1);
    assert_non_null(s);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static int parse_annotations(char **print)
{
    static const struct annot_kv kv[] = {
        {ANNOT_PREFIX "sweep", "2026-11-29"},
        {ANNOT_PREFIX "configs", "1@0.5/256Mi 2@1/512Mi"},
        {ANNOT_PREFIX "workers-env", "WEB_WORKERS"},
        {ANNOT_PREFIX "container", "app"},
        {ANNOT_PREFIX "port", "8080"},
        {ANNOT_PREFIX "mode", "in-place"},
        {ANNOT_PREFIX "target", "http://127.0.0.1:8080/"},
        {ANNOT_PREFIX "values-paths", "workers=app.workers,resources=resources"},
    };
    struct annot_request r;
    char err[ERR_LEN], warn[ERR_LEN] = "";
    int rc = annot_parse(kv, sizeof(kv) / sizeof(kv[0]), &r, warn, err);
    if (rc)
        return rc;
    *print = print_of("%s|%s|%zu|%s|%s|%s|%d", r.sweep, r.configs, r.nvariants, r.target_url,
                      r.workers_env, r.values_paths.workers, r.port);
    annot_request_free(&r);
    return 0;
}

static const char STATE[] =
    "{\"version\":1,\"sweep\":\"s\",\"uid\":\"u\",\"configs\":\"1@0.5/256Mi 2@1/512Mi\","
    "\"total\":2,\"done\":1,\"phase\":\"running\",\"rows\":[{\"spec\":\"1@0.5/256Mi\","
    "\"measured\":true,\"note\":\"\",\"fail\":\"none\",\"throughput_rps\":100.4,\"p50_us\":1300,"
    "\"p95_us\":45000,\"p99_us\":80000,\"error_rate\":0,\"requests\":500,\"cpu_cores_used\":0.43,"
    "\"peak_memory_bytes\":104857600,\"gen_cores\":0.12,\"host_other_cores\":-1,\"flags\":0,"
    "\"capacity\":{\"rps\":101.5,\"per_core\":203,\"limited_by\":\"slo-p95\",\"flags\":0,"
    "\"cpu_cores\":0.43,\"peak_memory_bytes\":104857600,\"repeat_rps\":[100.5,102.25],"
    "\"throttling\":[3000,750,4.5],\"steps\":[[0,80.1,80.1,80.5,1200,4000,8000,0,-1,-1,0.1,1,0,"
    "0,0],[2,100.5,100.4,100.5,1300,45000,80000,0,0.43,104857600,0.12,5,1000,250,1.5]]}}]}";

static int parse_state(char **print)
{
    static struct variant_list all;
    struct advisor_row *prior = NULL;
    size_t n = 0;

    if (all.n == 0) {
        disarm();
        assert_int_equal(variant_parse_list("1@0.5/256Mi 2@1/512Mi", &all, NULL), 0);
    }
    int rc = job_progress_parse(STATE, "s", "u", "1@0.5/256Mi 2@1/512Mi", &all, &prior, &n);
    if (rc) {
        assert_null(prior);
        return rc;
    }
    assert_int_equal(n, 1);
    *print = print_of("%s|%g|%llu|%g|%g|%g|%zu|%g", prior[0].variant.spec, prior[0].throughput_rps,
                      (unsigned long long)prior[0].p95_us, prior[0].cap.rps,
                      prior[0].cap.interval.low, prior[0].cap.interval.high, prior[0].cap.nsteps,
                      prior[0].cap.steps[1].sustained_rps);
    free(prior);
    return 0;
}

static const char PROFILE[] =
    "users: 50\nduration: 20s\nwarmup: 5s\ntimeout: 5s\nper_user_rps: 0.5\n"
    "thresholds:\n  healthy: { p95: 100ms, errors: 1% }\n  overloaded: { p95: 500ms, errors: 1% }\n"
    "target: { users: 2000 }\nrequests:\n"
    "  - { name: list, method: GET, path: /api/list, weight: 36 }\n"
    "  - { name: me, method: GET, path: /api/me, weight: 7, headers: { Authorization: \"B x\" } }\n"
    "  - { name: vote, method: POST, path: /api/votes, weight: 1, body: '{\"id\":1}' }\n";

static int parse_profile(char **print)
{
    struct profile p;
    char err[ERR_LEN], line[1024];
    int rc = profile_load_buffer(PROFILE, sizeof(PROFILE) - 1, "p.yaml", &p, err);
    if (rc) {
        profile_free(&p);
        return rc;
    }
    output_fmt_profile(&p, line, sizeof(line));
    *print = print_of("%s|%u|%g|%zu|%s|%s", line, p.users, p.target_users, p.nrequests,
                      p.requests[1].headers[0].value, p.requests[2].body);
    profile_free(&p);
    return 0;
}

static const char KUBECONFIG[] =
    "apiVersion: v1\ncurrent-context: dev\ncontexts:\n- name: dev\n"
    "  context: {cluster: c1, user: u1, namespace: team-a}\nclusters:\n- name: c1\n"
    "  cluster:\n    server: https://127.0.0.1:6443\n"
    "    certificate-authority-data: aGVsbG8gQ0E=\nusers:\n- name: u1\n  user:\n"
    "    token: abc.def-123\n";

static int parse_kubeconfig(char **print)
{
    kube_config_t *cfg = NULL;
    char err[ERR_LEN], tok[KUBE_TOKEN_MAX];
    int rc =
        kube_config_parse(KUBECONFIG, sizeof(KUBECONFIG) - 1, "/nonexistent", NULL, 0, &cfg, err);
    if (rc) {
        assert_null(cfg);
        return rc;
    }
    rc = kube_config_token(cfg, tok, sizeof(tok));
    if (rc == 0)
        *print = print_of("%s|%s|%s", kube_config_server(cfg), kube_config_namespace(cfg), tok);
    kube_config_free(cfg);
    return rc;
}

/* The worker's profile document (loadjob_profile_json) of PROFILE, loaded once unarmed. */
static int render_loadjob(char **print)
{
    static struct profile p;
    static bool loaded;
    char err[ERR_LEN];

    if (!loaded) {
        long saved = fail_at;
        disarm();
        assert_int_equal(profile_load_buffer(PROFILE, sizeof(PROFILE) - 1, "p.yaml", &p, err), 0);
        loaded = true;
        fail_at = saved;
    }
    char *doc = loadjob_profile_json(&p);
    if (!doc)
        return -ENOMEM;
    *print = print_of("%s", doc);
    free(doc);
    return 0;
}

/* sizeup compare of the fixture's results.json with itself: both files parsed, compared, and
 * the report as JSON and as text. */
static int render_compare(char **print)
{
    static char *results;
    static size_t len;
    struct compare_file a = {0}, b = {0};
    struct compare_report r = {0};
    char err[ERR_LEN], *json = NULL, *text = NULL;
    size_t text_len = 0;
    FILE *f = NULL;
    cJSON *j = NULL;
    int rc;

    if (!results) {
        long saved = fail_at;
        struct fixture fx;
        disarm();
        fixture_init(&fx);
        f = __real_open_memstream(&results, &len);
        assert_non_null(f);
        assert_int_equal(output_results_json_print(f, &fx.doc, err), 0);
        assert_int_equal(fclose(f), 0);
        f = NULL;
        fixture_free(&fx);
        fail_at = saved;
    }
    if ((rc = compare_parse(results, len, "a", &a, err)) != 0 ||
        (rc = compare_parse(results, len, "b", &b, err)) != 0 ||
        (rc = compare_run(&a, &b, 5, &r)) != 0)
        goto out;
    rc = -ENOMEM;
    if (!(j = compare_json(&r)) || !(json = cJSON_PrintUnformatted(j)) ||
        !(f = open_memstream(&text, &text_len)))
        goto out;
    rc = compare_write_text(f, &r);
    if (fclose(f) != 0 && rc == 0)
        rc = -ENOMEM;
    f = NULL;
    if (rc == 0)
        *print = print_of("%s\n%s", json, text);
out:
    if (f)
        fclose(f);
    free(text);
    free(json);
    cJSON_Delete(j);
    compare_report_free(&r);
    compare_file_free(&a);
    compare_file_free(&b);
    return rc;
}

/* state.json as the operator writes it (job_state_json) for the outputs' rows, with their
 * capacity searches; its "updated" time blanked (it is the wall clock). */
static int render_state(char **print)
{
    static struct fixture fx;
    static struct job j;
    static struct jctx x;
    static struct sweep_job sj;
    static bool ready;

    if (!ready) {
        long saved = fail_at;
        disarm();
        fixture_init(&fx);
        snprintf(j.ns, sizeof(j.ns), "shop");
        snprintf(j.name, sizeof(j.name), "web");
        snprintf(j.uid, sizeof(j.uid), "uid-1");
        snprintf(j.handled, sizeof(j.handled), "sweep-7");
        x.j = &j;
        x.req.mode = ANNOT_MODE_IN_PLACE;
        sj.x = &x;
        snprintf(sj.configs, sizeof(sj.configs), "%s", fx.doc.configs);
        sj.all.n = fx.n;
        ready = true;
        fail_at = saved;
    }
    char *text = job_state_json(&sj, fx.rows, fx.n, "running");
    if (!text)
        return -ENOMEM;
    char *t = strstr(text, "\"updated\":\"");
    for (t = t ? t + 11 : NULL; t && *t && *t != '"'; t++)
        *t = '-';
    *print = print_of("%s", text);
    free(text);
    return 0;
}

/* The Job object of a generator run (loadjob_job_object) for PROFILE. */
static int render_job(char **print)
{
    static struct profile p;
    static bool loaded;
    char err[ERR_LEN];

    if (!loaded) {
        long saved = fail_at;
        disarm();
        assert_int_equal(profile_load_buffer(PROFILE, sizeof(PROFILE) - 1, "p.yaml", &p, err), 0);
        loaded = true;
        fail_at = saved;
    }
    struct loadjob_config c = {.ns = "sizeup",
                               .image = "registry.example/sizeup:1.2",
                               .pull_secrets = "regcred, other",
                               .service_account = "sizeup-generator",
                               .owner_pod = "sizeup-abc",
                               .owner_uid = "uid-1",
                               .cpu = "250m",
                               .memory = "128Mi",
                               .for_label = "web",
                               .generators = 3};
    struct load_opts o = {.url = "http://10.1.2.3:8080", .profile = &p};
    cJSON *j = loadjob_job_object(&c, &o, 1764559200.5);
    if (!j)
        return -ENOMEM;
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!text)
        return -ENOMEM;
    *print = print_of("%s", text);
    free(text);
    return 0;
}

/* A generator pod's result document (outside input) read back: worker 1 of 3 with the first
 * fixture row's load result. */
static int parse_worker_result(char **print)
{
    static char *body;
    struct load_result got;
    char why[ERR_LEN];

    if (!body) {
        long saved = fail_at;
        struct fixture fx;
        disarm();
        fixture_init(&fx);
        cJSON *doc = cJSON_CreateObject();
        assert_non_null(doc);
        assert_non_null(cJSON_AddNumberToObject(doc, "worker", 1));
        assert_non_null(cJSON_AddNumberToObject(doc, "workers", 3));
        assert_non_null(cJSON_AddNumberToObject(doc, "late_s", 0.2));
        cJSON *res = report_json(&fx.sweep.rows[0].load);
        assert_non_null(res);
        assert_true(cJSON_AddItemToObject(doc, "result", res));
        body = cJSON_PrintUnformatted(doc);
        assert_non_null(body);
        cJSON_Delete(doc);
        fixture_free(&fx);
        fail_at = saved;
    }
    int rc = loadjob_result_parse(body, strlen(body), 1, 3, 1.0, &got, why);
    if (rc)
        return rc;
    *print = print_of("%llu|%llu|%zu|%g", (unsigned long long)got.total.requests,
                      (unsigned long long)hist_percentile(&got.total.latency, 95), got.nnames,
                      got.duration_s);
    load_result_free(&got);
    return 0;
}

/* One watch line (outside input: the API server's stream) parsed into an event. */
static int parse_watch_event(char **print)
{
    static const char line[] =
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Deployment\",\"metadata\":{\"name\":"
        "\"web\",\"namespace\":\"shop\",\"resourceVersion\":\"42\",\"annotations\":{"
        "\"sizeup.dev/sweep\":\"2026-11-29\"}},\"spec\":{\"replicas\":2}}}";
    cJSON *root = NULL;
    struct kube_event ev;
    char err[ERR_LEN];
    int rc = kube_event_parse(line, sizeof(line) - 1, &root, &ev, err);
    if (rc == 0)
        *print = print_of("%d|%s|%s|%s", (int)ev.type, ev.resource_version,
                          kube_annotation(ev.object, "sizeup.dev/sweep"),
                          kube_path_string(ev.object, "metadata.name"));
    cJSON_Delete(root);
    return rc;
}

/* The runs of sweep_parser, one cmocka test each (named by its run). */
struct parser_run {
    const char *what;
    parse_fn fn;
};

static const struct parser_run parser_runs[] = {
    {"annotation parser", parse_annotations},
    {"state.json parser", parse_state},
    {"profile reader", parse_profile},
    {"kubeconfig reader", parse_kubeconfig},
    {"worker profile document", render_loadjob},
    {"compare (parse, run, JSON and text)", render_compare},
    {"state.json writer", render_state},
    {"generator Job object", render_job},
    {"worker result parser", parse_worker_result},
    {"watch event parser", parse_watch_event},
};

#define NRUNS (sizeof(parser_runs) / sizeof(parser_runs[0]))

static void test_parser_run(void **state)
{
    const struct parser_run *r = *state;
    sweep_parser(r->what, r->fn);
}

/* ALLOC_FAIL_DUMP=dir: the fixture's outputs, for comparing bytes across builds. */
static int dump(const char *dir)
{
    struct fixture f;
    char err[ERR_LEN];

    fixture_init(&f);
    int rc = output_write_all(dir, &f.doc, err);
    if (rc)
        fprintf(stderr, "alloc_fail: %s\n", err);
    fixture_free(&f);
    return rc ? 1 : 0;
}

int main(void)
{
    cJSON_Hooks hooks = {__wrap_malloc, free};
    cJSON_InitHooks(&hooks);
    if (getenv("ALLOC_FAIL_DUMP"))
        return dump(getenv("ALLOC_FAIL_DUMP"));
    struct CMUnitTest tests[1 + NRUNS] = {cmocka_unit_test(test_outputs)};
    for (size_t i = 0; i < NRUNS; i++)
        tests[1 + i] = (struct CMUnitTest){parser_runs[i].what, test_parser_run, NULL, NULL,
                                           (void *)&parser_runs[i]};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
