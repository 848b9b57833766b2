/* sizeup loadtest: one load test against a URL, from a profile and/or flags, reported as text
 * or JSON. Flags override the profile (profile_override_apply: one meaning for every command). */

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "cli/cli.h"
#include "cli/loadtest_worker.h"
#include "core/fmt.h"
#include "core/quantity.h"
#include "load/load.h"
#include "profile/profile.h"
#include "profile/profile_override.h"
#include "load/report.h"
#include "load/report_html.h"
#include "load/result.h"
#include "load/spread.h"

/* --url, once or up to LOAD_MAX_URLS times. */
struct lt_urls {
    const char *v[LOAD_MAX_URLS];
    size_t n;
};

struct lt_args {
    struct lt_urls url;
    const char *profile, *out, *html;
    int json, insecure;
    struct profile_override ov;
    unsigned threads, max_connections;
    uint64_t seed;
    struct lt_worker worker;
};

#define ARG(m) offsetof(struct lt_args, m)

/* Each --url adds a target; the load is spread over them (load/spread.h). */
static int add_url(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    struct lt_urls *u = dst;
    if (!*val)
        return err_set(err, -EINVAL, "--%s: empty", f->name);
    if (u->n == LOAD_MAX_URLS)
        return err_set(err, -EINVAL, "--%s: at most %d targets", f->name, LOAD_MAX_URLS);
    u->v[u->n++] = val;
    return 0;
}

static const struct cli_flag flags[] = {
    {"url", "URL", CLI_REQUIRED,
     "base URL of the target; the profile's paths are appended (repeat it to spread the load "
     "over several)",
     add_url, ARG(url), 1, 0},
    CLI_PROFILE_FILE_FLAG(struct lt_args, profile),
    CLI_PROFILE_FLAGS(struct lt_args, ov),
    CLI_THREADS_FLAG(struct lt_args, threads),
    {"max-connections", "N", "10000", "open loop: the most connections open at once", cli_set_uint,
     ARG(max_connections), 1, 1000000},
    {"insecure", NULL, NULL, "do not verify the server's TLS certificate", cli_set_switch,
     ARG(insecure), 0, 0},
    {"seed", "N", "a fixed seed", "request-mix random seed (same seed, same mix)", cli_set_u64,
     ARG(seed), 0, (double)UINT64_MAX},
    {"json", NULL, NULL, "print the JSON report instead of the text one", cli_set_switch, ARG(json),
     0, 0},
    {"out", "FILE", "standard output", "write the report to FILE", cli_set_string, ARG(out), 1, 0},
    {"html", "FILE", NULL, "also write a self-contained page with the numbers over time to FILE",
     cli_set_string, ARG(html), 1, 0},
    LT_WORKER_FLAGS(struct lt_args, worker),
    CLI_FLAGS_END,
};

struct progress_ctx {
    int tty;
};

static void on_progress(void *ud, const struct load_progress *pr)
{
    const struct progress_ctx *pc = ud;
    char p95[QTY_LEN], el[QTY_LEN], tot[QTY_LEN], rate[FMT_LEN];

    if (!pc->tty)
        return;
    qty_format_duration((int64_t)(pr->elapsed_s * 1e6), el);
    qty_format_duration((int64_t)(pr->phase_s * 1e6), tot);
    /* The threads publish their p95 four times a second: "-" until the first one has. */
    if (pr->p95_us)
        qty_format_duration((int64_t)pr->p95_us, p95);
    else
        snprintf(p95, sizeof(p95), "-");
    /* \r and "erase to end of line": one line that rewrites itself. */
    fprintf(stderr, "\r\033[K%s %s/%s  %s req/s  p95 %s  requests %" PRIu64 "  errors %" PRIu64,
            pr->phase == LOAD_PHASE_WARMUP ? "warm-up" : "measure", el, tot,
            fmt_rate(pr->rps, rate), p95, pr->requests, pr->failed);
    fflush(stderr);
}

static int write_report(const struct lt_args *a, const struct load_result *r,
                        const struct profile *p)
{
    FILE *f = stdout;
    int rc = 0;

    if (a->out) {
        f = fopen(a->out, "w");
        if (!f) {
            char eb[128];
            fprintf(stderr, "sizeup loadtest: cannot write %s: %s\n", a->out,
                    err_str(errno, eb, sizeof(eb)));
            return -EIO;
        }
    }
    if (a->json) {
        cJSON *j = report_json(r);
        char *s = j ? cJSON_Print(j) : NULL;
        if (!s || fputs(s, f) < 0 || fputc('\n', f) < 0)
            rc = -EIO;
        free(s);
        cJSON_Delete(j);
    } else {
        rc = report_text(f, r, p);
    }
    if (fflush(f) != 0)
        rc = -EIO;
    if (a->out && fclose(f) != 0)
        rc = -EIO;
    if (rc)
        fprintf(stderr, "sizeup loadtest: cannot write the report to %s\n",
                a->out ? a->out : "stdout");
    return rc;
}

/* The page of --html: written beside the report, never instead of it. */
static int write_html(const char *path, const struct load_result *r, const struct profile *p)
{
    char err[ERR_LEN] = "", eb[128];
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "sizeup loadtest: cannot write %s: %s\n", path,
                err_str(errno, eb, sizeof(eb)));
        return -EIO;
    }
    int rc = report_html(f, r, p, err);
    if (fclose(f) != 0 && !rc)
        rc = err_set(err, -EIO, "write error");
    if (rc)
        fprintf(stderr, "sizeup loadtest: cannot write %s: %s\n", path, err);
    return rc;
}

/* Loads the profile (or the default) and applies the flags over it. Returns an exit status. */
static int load_profile(const struct lt_args *a, struct profile *prof /* OUT */)
{
    char err[ERR_LEN] = "";
    int rc;
    if (a->profile && a->worker.profile_env)
        return cli_usage_error(&cmd_loadtest, "give --profile or --profile-env, not both");
    rc = a->worker.profile_env ? lt_worker_profile(&a->worker, prof, err)
         : a->profile          ? profile_load_file(a->profile, prof, err)
                               : profile_init_default(prof);
    if (rc) {
        fprintf(stderr, "sizeup loadtest: %s\n", err[0] ? err : "out of memory");
        return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
    }
    /* A generator worker's profile is the operator's, generators: included: no note there. */
    char note[ERR_LEN];
    if (a->profile && profile_local_note(prof, "loadtest", note, sizeof(note)))
        fprintf(stderr, "sizeup loadtest: note: %s\n", note);
    if (profile_override_apply(&a->ov, prof, err) != 0) {
        profile_free(prof);
        return cli_usage_error(&cmd_loadtest, err);
    }
    return EXIT_OK;
}

/* Runs the load with a progress line on a terminal; SIGINT / SIGTERM end it early. Returns an
 * exit status; *res is filled (free it) only on EXIT_OK. */
static int run_load(struct lt_args *a, struct profile *prof, struct load_result *res /* OUT */)
{
    struct load_opts o;
    struct progress_ctx pc = {.tty = isatty(STDERR_FILENO)};
    struct cli_signals sigs;
    char err[ERR_LEN] = "";

    memset(&o, 0, sizeof(o));
    o.url = a->url.v[0];
    o.profile = prof;
    o.threads = a->threads;
    o.max_connections = a->max_connections;
    o.insecure = a->insecure;
    o.seed = a->seed;
    o.progress = on_progress;
    o.progress_ud = &pc;
    o.stop = cli_trap_signals(&sigs, 1);
    /* A worker's share and shared start; without worker flags both are no-ops. */
    int rc = lt_worker_apply(&a->worker, prof, &o, err);
    if (rc == 0)
        rc = lt_worker_wait_start(&a->worker, o.stop, err);
    if (rc == 0)
        rc = a->url.n > 1 ? load_run_spread(&o, a->url.v, a->url.n, res, err)
                          : load_run(&o, res, err);
    if (rc == 0 && a->worker.serve) {
        /* A worker's verdict is the operator's to give, on the merge of every share. */
        rc = lt_worker_serve(&a->worker, res, o.stop, err);
        if (rc)
            load_result_free(res);
    }
    cli_restore_signals(&sigs);
    if (pc.tty) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    if (rc) {
        fprintf(stderr, "sizeup loadtest: %s\n", err);
        /* A bad URL or a profile the engine cannot run is the user's input; the rest is the
         * environment (name resolution, descriptors, memory, threads). */
        return rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
    }
    if (res->interrupted)
        fprintf(stderr, "sizeup loadtest: interrupted; the report covers the %.1fs that ran\n",
                res->duration_s);
    return EXIT_OK;
}

static int exec_loadtest(int argc, char **argv)
{
    struct lt_args a = {.ov = PROFILE_OVERRIDE_NONE};
    struct profile prof;
    struct load_result res;
    int operand, status;

    status = cli_parse(&cmd_loadtest, argc, argv, &a, &operand);
    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    if (!a.url.n)
        return cli_usage_error(&cmd_loadtest, "--url is required");
    status = load_profile(&a, &prof);
    if (status)
        return status;
    status = run_load(&a, &prof, &res);
    if (status)
        goto out;
    if (a.worker.serve) {
        load_result_free(&res);
        goto out;
    }
    if (write_report(&a, &res, &prof) != 0 || (a.html && write_html(a.html, &res, &prof) != 0))
        status = EXIT_RUNTIME;
    else
        status = res.verdict == VERDICT_HEALTHY ? EXIT_OK : EXIT_THRESHOLD;
    load_result_free(&res);
out:
    profile_free(&prof);
    return status;
}

const struct cmd cmd_loadtest = {
    .name = "loadtest",
    .summary = "one load test against a URL (closed or open loop)",
    .synopsis = "--url URL [--profile FILE] [FLAGS]",
    .intro = "Runs one load test against URL (http:// or https://). Flags override the profile's\n"
             "fields of the same name, and are refused where the profile sets something they\n"
             "conflict with (stages, or the other loop).\n",
    .flags = flags,
    .epilog =
        "Exit status: 0 within the profile's thresholds (HEALTHY), 99 when the verdict is not\n"
        "HEALTHY, 2 for usage errors, 1 when the run could not start. SIGINT or SIGTERM end\n"
        "the run early; what ran is still reported. TLS trusts the system CAs, or the file\n"
        "in SSL_CERT_FILE.\n",
    .exec = exec_loadtest,
};
