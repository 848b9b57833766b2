/* The Kubernetes client (src/kube) against the fake API server's injected faults, measured.
 * tests/reliability/p_kube_faults.sh starts the fake and runs one scenario per invocation (the
 * Makefile builds it as BUILD/tests/kube/kube_faults, with the helpers of tests/kube/fakelib.c):
 *
 *   kube_faults SCENARIO        (environment: FAKEAPI_DIR, FAKEAPI_BADHOST_DIR for "tls")
 *
 * Each scenario prints "FIGURE <text>" lines (what was injected and what was measured, taken
 * from the fake's own request log where possible, so the client cannot grade itself) and exits
 * 0 when the promise held, 1 when it did not, 2 when the test could not run. The client's log
 * goes to stderr, which the caller keeps for the credential scan. */

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "fakelib.h"
#include "kube/client.h"
#include "kube/kube_int.h"
#include "kube/objects.h"

static struct fk fake;
static int failed;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("CHECK FAILED (%s:%d): ", __FILE__, __LINE__);                                  \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failed = 1;                                                                            \
        }                                                                                          \
    } while (0)

static void die(const char *what, const char *err)
{
    printf("ERROR %s: %s\n", what, err);
    exit(2);
}

static void slurp(const char *dir, const char *name, char *buf, size_t len)
{
    char err[ERR_LEN] = "";
    if (fk_slurp(dir, name, buf, len, err))
        die(name, err);
}

/* A client for srv trusting ca, with a static token or a token file. */
static kube_client_t *client_for(const char *srv, const char *ca, const char *token,
                                 const char *token_file, const struct kube_client_opts *o,
                                 kube_config_t **cfg_out)
{
    char err[ERR_LEN] = "";
    kube_client_t *c = fk_client(srv, ca, token, token_file, o, cfg_out, err);
    if (!c)
        die("client", err);
    return c;
}

/* The fake's control endpoints (never faulted, never logged). */
static cJSON *ctl(const char *method, const char *path, const char *body)
{
    char err[ERR_LEN] = "";
    cJSON *out = NULL;
    if (fk_control(&fake, method, path, body, &out, err))
        die(path, err);
    return out;
}

static void fault(const char *rule)
{
    cJSON_Delete(ctl("POST", "/fake/faults", rule));
}

static void faults_clear(void)
{
    cJSON_Delete(ctl("DELETE", "/fake/faults", NULL));
}

/* The fake's request log after sequence number since, as an owned array of entries. */
static cJSON *log_since(long since)
{
    char err[ERR_LEN] = "";
    cJSON *e = fk_log_since(&fake, since, err);
    if (!e)
        die("/fake/log", err);
    return e;
}

/* How many times faults of this kind ("watch-close", "error:409"...) fired since start. */
static int fired(const char *kind)
{
    cJSON *f = ctl("GET", "/fake/faults", NULL);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(f, "fired"), kind);
    int n = cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
    cJSON_Delete(f);
    return n;
}

static long log_last_seq(void)
{
    char err[ERR_LEN] = "";
    long seq = fk_log_last_seq(&fake, err);
    if (seq < 0)
        die("/fake/log", err);
    return seq;
}

static const char *path_str(const cJSON *o, const char *dotted)
{
    const cJSON *v = kube_path_get(o, dotted);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Start time (s) of a logged request: it is logged when it ends, with its duration. */
static double started(const cJSON *e)
{
    return num_of(e, "time") - num_of(e, "ms") / 1000.0;
}

/* The resourceVersion= of a logged query, or -1. */
static long query_rv(const cJSON *e)
{
    const char *q = strstr(str_of(e, "query"), "resourceVersion=");
    return q ? strtol(q + 16, NULL, 10) : -1;
}

static kube_client_t *admin(kube_config_t **cfg, const struct kube_client_opts *o)
{
    char err[ERR_LEN] = "";
    kube_client_t *c = fk_admin(&fake, o, cfg, err);
    if (!c)
        die("admin client", err);
    return c;
}

static void cm_create(kube_client_t *c, const char *name, const char *label)
{
    char body[256], err[ERR_LEN] = "";
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"t\":\"%s\"}},\"data\":{\"n\":\"0\"}}",
             name, label);
    cJSON *o = cJSON_Parse(body);
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", name, NULL, err));
    if (kube_create(c, &KUBE_CONFIGMAPS, "default", o, NULL, err))
        die("create", err);
    cJSON_Delete(o);
}

/* ---- the informer under faults ------------------------------------------------------------ */

/* The informer of a scenario: configmaps labelled t=LABEL in default, watches the server ends
 * after watch_timeout_s. */
static void inf_start(struct fk_inf *s, const char *label, int watch_timeout_s)
{
    static char sel[64];
    char err[ERR_LEN] = "";
    snprintf(sel, sizeof(sel), "t=%s", label);
    struct kube_informer_opts o = {.res = &KUBE_CONFIGMAPS,
                                   .ns = "default",
                                   .label_selector = sel,
                                   .watch_timeout_s = watch_timeout_s};
    if (fk_inf_start(s, &fake, &o, err))
        die("informer", err);
}

/* Every name in names[0..n) seen exactly once as a watch ADDED, once the informer has stopped.
 * Returns lost + duplicates. */
static int seen_once(const struct fk_inf *s, char names[][32], int n, int *lost, int *dups)
{
    *lost = *dups = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < s->nnames; j++)
            k += strcmp(s->names[j], names[i]) == 0;
        if (k == 0)
            (*lost)++;
        if (k > 1)
            (*dups) += k - 1;
    }
    return *lost + *dups;
}

/* Counts in the log since seq: LIST and WATCH requests of configmaps (label-selected by us). */
static void count_lw(long since, const char *label, int *lists, int *watches, int *rv_regress,
                     int *rv_zero)
{
    cJSON *e = log_since(since);
    const cJSON *it;
    long last = -1;
    char sel[64];
    snprintf(sel, sizeof(sel), "t%%3D%s", label);
    *lists = *watches = *rv_regress = *rv_zero = 0;
    cJSON_ArrayForEach(it, e)
    {
        if (strcmp(str_of(it, "resource"), "configmaps") != 0)
            continue;
        const char *q = str_of(it, "query");
        if (!strstr(q, sel))
            continue;
        if (strcmp(str_of(it, "verb"), "list") == 0)
            (*lists)++;
        if (strcmp(str_of(it, "verb"), "watch") == 0) {
            (*watches)++;
            long rv = query_rv(it);
            if (rv <= 0)
                (*rv_zero)++;
            if (rv < last)
                (*rv_regress)++;
            last = rv;
        }
    }
    cJSON_Delete(e);
}

static int sc_gone(void)
{
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg, NULL);
    static struct fk_inf s;
    memset(&s, 0, sizeof(s));
    char names[8][32];
    int n = 0, lost, dups;
    long seq0 = log_last_seq();
    int exp0 = fired("watch-expire");
    inf_start(&s, "gone", 2);
    CHECK(fk_wait_for(&s.lists, 1, 8000), "no first list");
    usleep(300000);
    /* 410 as HTTP on the next two watches, then as an ERROR event in a 200 stream. After each,
     * a new object must still arrive exactly once. */
    const char *rules[] = {
        "{\"type\":\"watch-expire\",\"mode\":\"http\",\"count\":2,\"match\":{\"resource\":"
        "\"configmaps\"}}",
        "{\"type\":\"watch-expire\",\"mode\":\"event\",\"afterEvents\":0,\"count\":1,\"match\":{"
        "\"resource\":\"configmaps\"}}",
    };
    int want_lists = 1;
    for (int r = 0; r < 2; r++) {
        fault(rules[r]);
        want_lists += r == 0 ? 2 : 1;
        CHECK(fk_wait_for(&s.list_ends, want_lists, 15000), "re-lists %d, want %d",
              atomic_load(&s.list_ends), want_lists);
        snprintf(names[n], 32, "gone-%d", n);
        cm_create(c, names[n], "gone");
        n++;
        CHECK(fk_wait_for(&s.added, n, 8000), "object %s not seen after the 410", names[n - 1]);
    }
    usleep(500000);
    fk_inf_stop(&s);
    seen_once(&s, names, n, &lost, &dups);
    cJSON *e = log_since(seq0);
    faults_clear();
    int h410 = 0, ev410;
    const cJSON *it;
    cJSON_ArrayForEach(it, e)
    {
        if (strcmp(str_of(it, "verb"), "watch") == 0 && num_of(it, "code") == 410)
            h410++;
    }
    cJSON_Delete(e);
    ev410 = fired("watch-expire") - exp0 - h410;
    int lists, watches, regress, zero;
    count_lw(seq0, "gone", &lists, &watches, &regress, &zero);
    printf("FIGURE %d injected (HTTP 410 x%d, ERROR event x%d), %d re-lists after the first, "
           "%d objects created after them: %d lost, %d delivered twice\n",
           h410 + ev410, h410, ev410, lists - 1, n, lost, dups);
    CHECK(h410 == 2 && ev410 == 1, "injected %d/%d", h410, ev410);
    CHECK(lists - 1 == 3, "re-lists %d, want 3", lists - 1);
    CHECK(lost == 0 && dups == 0, "lost %d dup %d", lost, dups);
    kube_client_free(c);
    kube_config_free(cfg);
    return failed;
}

/* Watches dropped at random, ended by timeoutSeconds, or carrying only bookmarks: no re-list,
 * every resumed watch starts from the last resourceVersion, nothing lost or repeated. */
static int sc_resume(void)
{
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg, NULL);
    static struct fk_inf s;
    memset(&s, 0, sizeof(s));
    char names[64][32];
    int n = 0, lost, dups;
    char err[ERR_LEN] = "";
    long seq0 = log_last_seq();
    int drops0 = fired("watch-close");
    inf_start(&s, "res", 1); /* timeoutSeconds=1: the server ends every watch after 1 s */
    CHECK(fk_wait_for(&s.lists, 1, 8000), "no first list");
    usleep(300000);
    /* Phase 1: drops at random (half the watches, after 0.3 s) while objects are created. */
    fault("{\"type\":\"watch-close\",\"afterSeconds\":0.3,\"probability\":0.5,\"match\":{"
          "\"resource\":\"configmaps\",\"verb\":\"watch\"}}");
    for (int i = 0; i < 30; i++) {
        snprintf(names[n], 32, "res-%d", n);
        cm_create(c, names[n], "res");
        n++;
        usleep(250000);
    }
    int drops = fired("watch-close") - drops0;
    faults_clear();
    CHECK(fk_wait_for(&s.added, n, 10000), "added %d of %d", atomic_load(&s.added), n);
    int restarts1 = atomic_load(&s.restarts);
    /* Phase 2: only bookmarks. Our objects do not change, others do: the bookmark must carry
     * the newer resourceVersion and the next watch must start from it. */
    cJSON_Delete(ctl("POST", "/fake/config", "{\"bookmarkInterval\":0.2}"));
    cJSON *other = NULL;
    cm_create(c, "res-other", "other");
    if (kube_get(c, &KUBE_CONFIGMAPS, "default", "res-other", &other, err))
        die("get", err);
    long other_rv = strtol(path_str(other, "metadata.resourceVersion"), NULL, 10);
    cJSON_Delete(other);
    long seq_bm = log_last_seq();
    /* At least two watches must start in this phase: the first may still be in the backoff
     * that the random drops caused (up to a few seconds), so wait for them, up to 20 s. */
    cJSON *e = NULL;
    long max_rv = -1;
    const cJSON *it;
    for (int waited = 0; waited < 20000; waited += 500) {
        usleep(500000);
        int nw = 0;
        max_rv = -1;
        cJSON_Delete(e);
        e = log_since(seq_bm);
        cJSON_ArrayForEach(it, e)
        {
            if (strcmp(str_of(it, "verb"), "watch") != 0)
                continue;
            nw++;
            if (query_rv(it) > max_rv)
                max_rv = query_rv(it);
        }
        if (nw >= 2 && waited >= 2000)
            break;
    }
    cJSON_Delete(e);
    cJSON_Delete(ctl("POST", "/fake/config", "{\"bookmarkInterval\":5}"));
    fk_inf_stop(&s);
    seen_once(&s, names, n, &lost, &dups);
    int lists, watches, regress, zero;
    count_lw(seq0, "res", &lists, &watches, &regress, &zero);
    printf("FIGURE %d watches (%d dropped at random, the rest ended by timeoutSeconds=1), %d "
           "re-lists, %d watches from resourceVersion 0, %d going backwards; %d objects: %d lost, "
           "%d twice; after bookmarks only, the watch resumed from rv %ld (an unrelated write was "
           "rv %ld)\n",
           watches, drops, lists - 1, zero, regress, n, lost, dups, max_rv, other_rv);
    CHECK(lists == 1, "re-listed %d times", lists - 1);
    CHECK(drops >= 2 && restarts1 >= 4, "drops %d restarts %d", drops, restarts1);
    CHECK(zero == 0 && regress == 0, "watches from rv 0: %d, backwards: %d", zero, regress);
    CHECK(lost == 0 && dups == 0, "lost %d dup %d", lost, dups);
    CHECK(max_rv >= other_rv, "bookmark rv %ld < %ld", max_rv, other_rv);
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", "res-other", NULL, err));
    kube_client_free(c);
    kube_config_free(cfg);
    return failed;
}

/* Watches that close at once: the informer must back off (the operator's defaults). */
static int sc_hot(void)
{
    static struct fk_inf s;
    memset(&s, 0, sizeof(s));
    long seq0 = log_last_seq();
    /* The operator's backoff (the informer's defaults); watches of 1 s so that the fault, which
     * acts when a watch starts, applies soon. */
    int close0 = fired("watch-close");
    inf_start(&s, "hot", 1);
    CHECK(fk_wait_for(&s.lists, 1, 8000), "no first list");
    usleep(300000);
    long seq1 = log_last_seq();
    fault("{\"type\":\"watch-close\",\"afterEvents\":0,\"match\":{\"resource\":\"configmaps\","
          "\"verb\":\"watch\"}}");
    const int secs = 12;
    sleep(secs);
    int closes = fired("watch-close") - close0;
    faults_clear();
    fk_inf_stop(&s);
    cJSON *e = log_since(seq1);
    const cJSON *it;
    int w = 0;
    double prev = -1, min_gap = 1e9, max_gap = 0;
    cJSON_ArrayForEach(it, e)
    {
        if (strcmp(str_of(it, "verb"), "watch") != 0 || num_of(it, "ms") >= 500)
            continue;
        double t = started(it);
        if (prev >= 0) {
            double g = t - prev;
            min_gap = g < min_gap ? g : min_gap;
            max_gap = g > max_gap ? g : max_gap;
        }
        prev = t;
        w++;
    }
    cJSON_Delete(e);
    (void)seq0;
    CHECK(closes == w, "fake closed %d watches, log shows %d short ones", closes, w);
    printf("FIGURE %d watches closed at once in %d s = %.2f reconnects/s (gaps %.2f .. %.2f s, "
           "doubling to the 30 s cap)\n",
           w, secs, (double)w / secs, w > 1 ? min_gap : 0, max_gap);
    CHECK(w >= 2, "only %d reconnects", w);
    CHECK((double)w / secs <= 1.0, "%.2f reconnects/s: a hot loop", (double)w / secs);
    CHECK(w < 3 || max_gap > 2 * min_gap, "gaps do not grow: %.2f .. %.2f", min_gap, max_gap);
    return failed;
}

static int set_n(void *ud, cJSON *obj, char *err)
{
    int *calls = ud;
    (void)err;
    (*calls)++;
    cJSON *d = cJSON_GetObjectItem(obj, "data");
    cJSON_DeleteItemFromObject(d, "n");
    cJSON_AddStringToObject(d, "n", "written");
    return 0;
}

/* 409 k times on an update, k = 0..budget: succeeds within the budget; past it, fails with
 * KUBE_ECONFLICT and the object is exactly as before (no partial state). The budget is the
 * one src/kube/platform.c uses for its own writes (5). */
static int sc_conflict(void)
{
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg, NULL);
    char err[ERR_LEN] = "", rule[256];
    const int budget = 5;
    int ok_within = 0, injected = 0;
    for (int k = 0; k <= budget; k++) {
        cm_create(c, "conflict", "conflict");
        cJSON *before = NULL, *after = NULL;
        if (kube_get(c, &KUBE_CONFIGMAPS, "default", "conflict", &before, err) != 0)
            die("kube_get", err);
        snprintf(rule, sizeof(rule),
                 "{\"type\":\"error\",\"code\":409,\"count\":%d,\"match\":{\"resource\":"
                 "\"configmaps\",\"verb\":\"update\",\"name\":\"conflict\"}}",
                 k);
        if (k)
            fault(rule);
        injected += k;
        int calls = 0;
        int rc = kube_update_retry(c, &KUBE_CONFIGMAPS, "default", "conflict", budget, set_n,
                                   &calls, NULL, err);
        if (kube_get(c, &KUBE_CONFIGMAPS, "default", "conflict", &after, err) != 0)
            die("kube_get", err);
        const char *n = path_str(after, "data.n");
        if (k < budget) {
            CHECK(rc == 0 && calls == k + 1 && n && strcmp(n, "written") == 0,
                  "k=%d: rc %d calls %d n %s", k, rc, calls, n ? n : "-");
            ok_within += rc == 0;
        } else {
            char *a = cJSON_PrintUnformatted(before), *b = cJSON_PrintUnformatted(after);
            CHECK(rc == KUBE_ECONFLICT && calls == budget, "k=%d: rc %d calls %d", k, rc, calls);
            CHECK(a && b && strcmp(a, b) == 0, "object changed after a failed write");
            printf("FIGURE 409 x%d injected over %d writes: %d/%d succeeded within the budget of "
                   "%d attempts; 409 x%d (past the budget) failed cleanly (%s) after %d attempts, "
                   "object unchanged: %s\n",
                   injected, budget + 1, ok_within, budget, budget, k,
                   rc == KUBE_ECONFLICT ? "Conflict" : "unexpected", calls,
                   a && b && strcmp(a, b) == 0 ? "yes" : "NO");
            free(a);
            free(b);
        }
        faults_clear();
        cJSON_Delete(before);
        cJSON_Delete(after);
    }
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", "conflict", NULL, err));
    kube_client_free(c);
    kube_config_free(cfg);
    return failed;
}

/* Gaps (s) between successive logged attempts of the requests since seq that match name. */
static int gaps(long seq, const char *name, double *g, int max)
{
    cJSON *e = log_since(seq);
    const cJSON *it;
    double prev = -1;
    int n = 0;
    cJSON_ArrayForEach(it, e)
    {
        if (strcmp(str_of(it, "name"), name) != 0)
            continue;
        double t = started(it);
        if (prev >= 0 && n < max)
            g[n++] = t - prev;
        prev = t;
    }
    cJSON_Delete(e);
    return n;
}

/* 429 with Retry-After: 2 waits at least 2 s; 503 and 500 back off exponentially, bounded, with
 * the client's defaults (base 200 ms doubling with jitter in [d/2, d], 5 attempts). */
static int sc_backoff(void)
{
    kube_config_t *cfg;
    kube_client_t *c = admin(&cfg, NULL);
    char err[ERR_LEN] = "";
    double g[16];
    cm_create(c, "backoff", "backoff");

    long seq = log_last_seq();
    fault("{\"type\":\"error\",\"code\":429,\"retryAfter\":2,\"count\":1,\"match\":{\"name\":"
          "\"backoff\",\"verb\":\"get\"}}");
    long long t0 = kube__now_ms();
    int rc = kube_get(c, &KUBE_CONFIGMAPS, "default", "backoff", NULL, err);
    long long took = kube__now_ms() - t0;
    int n = gaps(seq, "backoff", g, 16);
    printf("FIGURE 429 Retry-After: 2 -> retried after %.2f s (fake's log), call took %lld ms, "
           "rc %d\n",
           n ? g[0] : -1, took, rc);
    CHECK(rc == 0 && n == 1 && g[0] >= 2.0 && g[0] < 4.0, "429: rc %d gaps %d first %.2f", rc, n,
          n ? g[0] : -1);
    faults_clear();

    seq = log_last_seq();
    fault("{\"type\":\"error\",\"code\":503,\"count\":4,\"match\":{\"name\":\"backoff\","
          "\"verb\":\"get\"}}");
    rc = kube_get(c, &KUBE_CONFIGMAPS, "default", "backoff", NULL, err);
    n = gaps(seq, "backoff", g, 16);
    char line[256] = "";
    size_t off = 0;
    int grow_ok = n == 4;
    for (int i = 0; i < n; i++) {
        double d = 0.2 * (1 << i); /* d for attempt i: 200 ms doubling */
        if (g[i] < d / 2 - 0.02 || g[i] > d + 0.25)
            grow_ok = 0;
        off += (size_t)snprintf(line + off, sizeof(line) - off, "%s%.2f", i ? ", " : "", g[i]);
    }
    printf("FIGURE 503 x4 then success: rc %d, delays %s s (want each in [d/2, d], d = 0.2, 0.4, "
           "0.8, 1.6)\n",
           rc, line);
    CHECK(rc == 0 && grow_ok, "503 backoff out of bounds");
    faults_clear();

    seq = log_last_seq();
    fault("{\"type\":\"error\",\"code\":500,\"count\":20,\"match\":{\"name\":\"backoff\","
          "\"verb\":\"get\"}}");
    t0 = kube__now_ms();
    rc = kube_get(c, &KUBE_CONFIGMAPS, "default", "backoff", NULL, err);
    took = kube__now_ms() - t0;
    n = gaps(seq, "backoff", g, 16);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += g[i];
    printf("FIGURE 500 past the budget: %d attempts over %.2f s, then %s (call %lld ms, bound "
           "3.0 s of backoff)\n",
           n + 1, sum, rc == -EIO ? "-EIO" : "unexpected", took);
    CHECK(rc == -EIO && n + 1 == 5 && sum <= 3.1, "500: rc %d attempts %d sum %.2f", rc, n + 1,
          sum);
    faults_clear();
    CLEANUP(kube_delete(c, &KUBE_CONFIGMAPS, "default", "backoff", NULL, err));
    kube_client_free(c);
    kube_config_free(cfg);
    return failed;
}

/* Token rotation with a token file: the fake rejects the old token (401), the client re-reads
 * the file and carries on; an empty or a missing file keeps the old token and logs the error
 * (the caller checks the token's value is in no log). */
static int sc_token(void)
{
    char err[ERR_LEN] = "", tokfile[512], ca[512], body[700], t1[256], t2[256], tmpdir[256];
    kube_config_t *cfg;
    snprintf(tmpdir, sizeof(tmpdir), "%s/rot", fake.dir);
    mkdir(tmpdir, 0700);
    snprintf(tokfile, sizeof(tokfile), "%s/token", tmpdir);
    snprintf(body, sizeof(body),
             "{\"user\":\"rel-rot\",\"groups\":[\"system:masters\"],\"file\":\"%s\"}", tokfile);
    cJSON_Delete(ctl("POST", "/fake/tokens", body));
    slurp(tmpdir, "token", t1, sizeof(t1));
    snprintf(ca, sizeof(ca), "%s/ca.crt", fake.dir);
    kube_client_t *c = client_for(fake.server, ca, NULL, tokfile, NULL, &cfg);
    int ok = 0, calls = 0, changed = 0;
    long seq = log_last_seq();

    calls++, ok += kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err) == -ENOENT;
    /* Empty file: keep the old token. */
    FILE *f = fopen(tokfile, "w");
    fclose(f);
    int e1 = kube_config_reload_token(cfg, 1, &changed, err);
    calls++, ok += kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err) == -ENOENT;
    /* Missing file: keep the old token. */
    unlink(tokfile);
    int e2 = kube_config_reload_token(cfg, 1, &changed, err);
    calls++, ok += kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err) == -ENOENT;
    /* Rotation: the fake writes the new token and revokes the old one. */
    snprintf(body, sizeof(body), "{\"user\":\"rel-rot\",\"file\":\"%s\"}", tokfile);
    cJSON_Delete(ctl("POST", "/fake/tokens/rotate", body));
    slurp(tmpdir, "token", t2, sizeof(t2));
    for (int i = 0; i < 3; i++)
        calls++, ok += kube_get(c, &KUBE_LEASES, "default", "nope", NULL, err) == -ENOENT;
    cJSON *e = log_since(seq);
    int n401 = 0, n404 = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, e)
    {
        n401 += num_of(it, "code") == 401;
        n404 += num_of(it, "code") == 404;
    }
    cJSON_Delete(e);
    printf("FIGURE %d calls, %d answered: empty file -> %s, missing file -> %s (old token kept); "
           "after rotation %d x 401 then the new token (%d requests answered 404 as expected)\n",
           calls, ok, e1 ? "error logged" : "accepted?!", e2 ? "error logged" : "accepted?!", n401,
           n404);
    CHECK(ok == calls, "%d of %d calls failed", calls - ok, calls);
    CHECK(e1 < 0 && e2 < 0, "empty/missing file not reported: %d %d", e1, e2);
    CHECK(n401 == 1, "%d 401s, want exactly 1", n401);
    CHECK(strcmp(t1, t2) != 0, "token did not rotate");
    /* The tokens go to the caller for the log scan, never to stdout or stderr. */
    char sp[600];
    snprintf(sp, sizeof(sp), "%s/rot/seen", fake.dir);
    f = fopen(sp, "w");
    if (f) {
        fprintf(f, "%s\n%s\n", t1, t2);
        fclose(f);
    }
    kube_client_free(c);
    kube_config_free(cfg);
    return failed;
}

/* A wrong CA, and a certificate for another host name: no connection, no request logged. */
static int sc_tls(void)
{
    const char *bad = getenv("FAKEAPI_BADHOST_DIR");
    if (!bad)
        die("tls", "FAKEAPI_BADHOST_DIR is not set");
    char err1[ERR_LEN] = "", err2[ERR_LEN] = "", tok[256], bad_ca[512], bad_srv[128], port[32];
    kube_config_t *cfg;
    cJSON *st0 = ctl("GET", "/fake/state", NULL);
    long seq = log_last_seq();
    slurp(fake.dir, "token", tok, sizeof(tok));
    snprintf(bad_ca, sizeof(bad_ca), "%s/ca.crt", bad);
    kube_client_t *c = client_for(fake.server, bad_ca, tok, NULL, NULL, &cfg);
    int r1 = kube_get(c, &KUBE_CONFIGMAPS, "default", "x", NULL, err1);
    kube_client_free(c);
    kube_config_free(cfg);
    slurp(bad, "ready", port, sizeof(port));
    snprintf(bad_srv, sizeof(bad_srv), "https://127.0.0.1:%s", port);
    slurp(bad, "token", tok, sizeof(tok));
    c = client_for(bad_srv, bad_ca, tok, NULL, NULL, &cfg);
    int r2 = kube_get(c, &KUBE_CONFIGMAPS, "default", "x", NULL, err2);
    kube_client_free(c);
    kube_config_free(cfg);
    cJSON *st1 = ctl("GET", "/fake/state", NULL);
    cJSON *e = log_since(seq);
    int logged = cJSON_GetArraySize(e);
    cJSON_Delete(e);
    double hf = num_of(st1, "handshakeFailures") - num_of(st0, "handshakeFailures");
    printf("FIGURE wrong CA -> %s; host-name mismatch -> %s; %d requests logged by the fake, %.0f "
           "handshakes refused by the first fake\n",
           r1 == -EPROTO ? "refused (-EPROTO)" : "CONNECTED",
           r2 == -EPROTO ? "refused (-EPROTO)" : "CONNECTED", logged, hf);
    printf("client errors: [%s] [%s]\n", err1, err2);
    CHECK(r1 == -EPROTO && r2 == -EPROTO, "rc %d %d", r1, r2);
    CHECK(logged == 0, "%d requests logged", logged);
    cJSON_Delete(st0);
    cJSON_Delete(st1);
    return failed;
}

int main(int argc, char **argv)
{
    char err[ERR_LEN] = "";
    if (argc != 2)
        die("usage", "FAKEAPI_DIR=DIR kube_faults gone|resume|hot|conflict|backoff|token|tls");
    if (fk_open(&fake, "FAKEAPI_DIR", err))
        die("fake", err);
    log_set_level(LOG_DEBUG);
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = argv[1];
    if (!strcmp(s, "gone"))
        return sc_gone();
    if (!strcmp(s, "resume"))
        return sc_resume();
    if (!strcmp(s, "hot"))
        return sc_hot();
    if (!strcmp(s, "conflict"))
        return sc_conflict();
    if (!strcmp(s, "backoff"))
        return sc_backoff();
    if (!strcmp(s, "token"))
        return sc_token();
    if (!strcmp(s, "tls"))
        return sc_tls();
    die("scenario", s);
    return 2;
}
