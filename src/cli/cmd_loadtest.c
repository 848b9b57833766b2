/* sizeup loadtest: one load test against a URL, from a profile and/or flags, reported as text
 * or JSON. Flags override the profile; --users or --rate replace its stages. */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "cli/cli.h"
#include "cli/loadtest_worker.h"
#include "core/quantity.h"
#include "load/load.h"
#include "load/profile.h"
#include "load/report.h"
#include "load/result.h"

#define USAGE                                                                                      \
    "usage: sizeup loadtest --url URL [--profile FILE] [--users N | --rate R]\n"                   \
    "                       [--duration D] [--warmup D] [--threads T] [--timeout D]\n"             \
    "                       [--max-connections N] [--insecure] [--seed N] [--json] [--out FILE]\n" \
    "\n"                                                                                           \
    "Runs one load test against URL (http:// or https://; the profile's paths are appended).\n"    \
    "\n"                                                                                           \
    "  --url URL              base URL of the target\n"                                            \
    "  --profile FILE         load profile (YAML); default: GET /, 50 users, 20s, 5s warm-up\n"    \
    "  --users N              closed loop: N concurrent users (replaces the profile's stages)\n"   \
    "  --rate R               open loop: R requests/s on a fixed schedule (replaces stages)\n"     \
    "  --duration D           measured window, e.g. 20s, 1m30s\n"                                  \
    "  --warmup D             load applied before measuring, not recorded (0 for none)\n"          \
    "  --threads T            load threads (default: one per online core)\n"                       \
    "  --timeout D            per-request timeout (0 for none)\n"                                  \
    "  --max-connections N    open loop: connection cap (default 10000)\n"                         \
    "  --insecure             do not verify the server's TLS certificate\n"                        \
    "  --seed N               request-mix random seed (same seed, same mix)\n"                     \
    "  --json                 print the JSON report instead of the text one\n"                     \
    "  --out FILE             write the report to FILE instead of stdout\n"                        \
    "\n"                                                                                           \
    "As one of N generator pods (docs/operator.md):\n"                                            \
    "  --share K/N            send share K (0-based) of N of the users or rate\n"                  \
    "  --start-at T           start at wall-clock time T (Unix seconds)\n"                         \
    "  --serve-result ADDR    serve the result once on [HOST]:PORT at /result, then exit 0\n"      \
    "  --profile-env NAME     read the profile from environment variable NAME\n"                   \
    "\n"                                                                                           \
    "Exit status: 0 within the profile's thresholds (HEALTHY), 99 when the verdict is not\n"       \
    "HEALTHY, 2 for usage errors, 1 when the run could not start. SIGINT or SIGTERM end the run\n" \
    "early; what ran is still reported. TLS trusts the system CAs, or the file in "                \
    "SSL_CERT_FILE.\n"

/* The one mutable global the house rules allow: set by the signal handler, read by the run. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

struct lt_args {
    const char *url, *profile, *out;
    int json, insecure;
    int have_users, have_rate, have_duration, have_warmup, have_timeout;
    unsigned users;
    double rate;
    int64_t duration_us, warmup_us, timeout_us;
    unsigned threads, max_connections;
    uint64_t seed;
    struct lt_worker worker;
};

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "sizeup loadtest: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n\n%s", USAGE);
    return EXIT_USAGE;
}

static int parse_uint(const char *flag, const char *v, unsigned long long max,
                      unsigned long long *out)
{
    char *end = NULL;
    if (!v || !*v || *v == '-' || *v == '+')
        return usage_error("%s: '%s' is not a positive whole number", flag, v ? v : "");
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x > max)
        return usage_error("%s: '%s' is not a whole number in range", flag, v);
    *out = x;
    return 0;
}

static int parse_duration_flag(const char *flag, const char *v, int64_t *out)
{
    char err[ERR_LEN] = "";
    if (qty_parse_duration(v, out, err) != 0) {
        fprintf(stderr, "sizeup loadtest: %s: %s\n\n%s", flag, err, USAGE);
        return EXIT_USAGE;
    }
    return 0;
}

/* Parses argv into *a; returns 0, EXIT_USAGE, or -1 for --help (usage printed to stdout). */
static int parse_args(int argc, char **argv, struct lt_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        char flag[64];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        unsigned long long u;
        int rc;

        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(USAGE, stdout);
            return -1;
        }
        if (strncmp(arg, "--", 2) != 0)
            return usage_error("unexpected argument '%s'%s", arg, "");
        if (eq) {
            size_t n = (size_t)(eq - arg);
            if (n >= sizeof(flag))
                return usage_error("unknown flag '%s'%s", arg, "");
            memcpy(flag, arg, n);
            flag[n] = '\0';
            val = eq + 1;
        } else {
            snprintf(flag, sizeof(flag), "%s", arg);
        }
        if (strcmp(flag, "--json") == 0 || strcmp(flag, "--insecure") == 0) {
            if (val)
                return usage_error("%s takes no value (got '%s')", flag, val);
            if (strcmp(flag, "--json") == 0)
                a->json = 1;
            else
                a->insecure = 1;
            continue;
        }
        static const char *const valued[] = {
            "--url",     "--profile", "--users",           "--rate", "--duration", "--warmup",
            "--threads", "--timeout", "--max-connections", "--seed", "--out",
        };
        int known = 0;
        for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
            known |= strcmp(flag, valued[k]) == 0;
        known |= lt_worker_is_flag(flag);
        if (!known)
            return usage_error("unknown flag '%s'%s", flag, "");
        if (!val) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value%s", flag, "");
            val = argv[++i];
        }
        if (strcmp(flag, "--url") == 0) {
            a->url = val;
        } else if (strcmp(flag, "--profile") == 0) {
            a->profile = val;
        } else if (strcmp(flag, "--out") == 0) {
            if (!*val)
                return usage_error("--out: empty file name%s%s", "", "");
            a->out = val;
        } else if (strcmp(flag, "--users") == 0) {
            if ((rc = parse_uint(flag, val, 1000000, &u)) != 0)
                return rc;
            if (u == 0)
                return usage_error("--users: '%s' must be at least 1%s", val, "");
            a->users = (unsigned)u;
            a->have_users = 1;
        } else if (strcmp(flag, "--rate") == 0) {
            char *end = NULL;
            errno = 0;
            double r = strtod(val, &end);
            if (errno || end == val || *end || !(r > 0) || r > 1e8)
                return usage_error("--rate: '%s' is not a positive number of requests/s%s", val,
                                   "");
            a->rate = r;
            a->have_rate = 1;
        } else if (strcmp(flag, "--duration") == 0) {
            if ((rc = parse_duration_flag(flag, val, &a->duration_us)) != 0)
                return rc;
            if (a->duration_us <= 0)
                return usage_error("--duration: '%s' must be longer than 0%s", val, "");
            a->have_duration = 1;
        } else if (strcmp(flag, "--warmup") == 0) {
            if ((rc = parse_duration_flag(flag, val, &a->warmup_us)) != 0)
                return rc;
            a->have_warmup = 1;
        } else if (strcmp(flag, "--timeout") == 0) {
            if ((rc = parse_duration_flag(flag, val, &a->timeout_us)) != 0)
                return rc;
            a->have_timeout = 1;
        } else if (strcmp(flag, "--threads") == 0) {
            if ((rc = parse_uint(flag, val, 1024, &u)) != 0)
                return rc;
            if (u == 0)
                return usage_error("--threads: '%s' must be at least 1%s", val, "");
            a->threads = (unsigned)u;
        } else if (strcmp(flag, "--max-connections") == 0) {
            if ((rc = parse_uint(flag, val, 1000000, &u)) != 0)
                return rc;
            if (u == 0)
                return usage_error("--max-connections: '%s' must be at least 1%s", val, "");
            a->max_connections = (unsigned)u;
        } else if (strcmp(flag, "--seed") == 0) {
            if ((rc = parse_uint(flag, val, UINT64_MAX, &u)) != 0)
                return rc;
            a->seed = u;
        } else {
            char e[ERR_LEN] = "";
            if (lt_worker_flag(&a->worker, flag, val, e) < 0)
                return usage_error("%s%s", e, "");
        }
    }
    if (!a->url)
        return usage_error("--url is required%s%s", "", "");
    if (a->have_users && a->have_rate)
        return usage_error("give --users or --rate, not both%s%s", "", "");
    return 0;
}

/* Applies the flags over the profile. Returns 0 or EXIT_USAGE. */
static int apply_overrides(const struct lt_args *a, struct profile *p)
{
    if (a->have_users || a->have_rate) {
        free(p->stages);
        p->stages = NULL;
        p->nstages = 0;
        p->users = a->have_users ? a->users : 0;
        p->rate = a->have_rate ? a->rate : 0;
    }
    if (a->have_duration) {
        if (p->nstages > 0) {
            fprintf(stderr,
                    "sizeup loadtest: --duration conflicts with the stages in %s; give --users "
                    "or --rate to replace them\n",
                    p->source ? p->source : "the profile");
            return EXIT_USAGE;
        }
        p->duration_us = a->duration_us;
    }
    if (a->have_warmup)
        p->warmup_us = a->warmup_us;
    if (a->have_timeout)
        p->timeout_us = a->timeout_us;
    return 0;
}

struct progress_ctx {
    int tty;
};

static void on_progress(void *ud, const struct load_progress *pr)
{
    const struct progress_ctx *pc = ud;
    char p95[QTY_LEN], el[QTY_LEN], tot[QTY_LEN];

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
    fprintf(stderr, "\r\033[K%s %s/%s  %.0f req/s  p95 %s  requests %" PRIu64 "  errors %" PRIu64,
            pr->phase == LOAD_PHASE_WARMUP ? "warm-up" : "measure", el, tot, pr->rps, p95,
            pr->requests, pr->failed);
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

static int exec_loadtest(int argc, char **argv)
{
    struct lt_args a;
    struct profile prof;
    struct load_result res;
    struct load_opts o;
    struct progress_ctx pc;
    struct sigaction sa, old_int, old_term;
    char err[ERR_LEN] = "";
    int status = EXIT_OK, rc, have_prof = 0, have_res = 0;

    memset(&prof, 0, sizeof(prof));
    memset(&res, 0, sizeof(res));
    rc = parse_args(argc, argv, &a);
    if (rc < 0)
        return EXIT_OK;
    if (rc)
        return rc;
    if (a.profile && a.worker.profile_env)
        return usage_error("give --profile or --profile-env, not both%s%s", "", "");
    if (a.worker.profile_env)
        rc = lt_worker_profile(&a.worker, &prof, err);
    else if (a.profile)
        rc = profile_load_file(a.profile, &prof, err);
    else
        rc = profile_init_default(&prof);
    if (rc) {
        fprintf(stderr, "sizeup loadtest: %s\n", err[0] ? err : "out of memory");
        return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
    }
    have_prof = 1;
    status = apply_overrides(&a, &prof);
    if (status)
        goto out;

    memset(&o, 0, sizeof(o));
    o.url = a.url;
    o.profile = &prof;
    o.threads = a.threads;
    o.max_connections = a.max_connections;
    o.insecure = a.insecure;
    o.seed = a.seed;
    pc.tty = isatty(STDERR_FILENO);
    o.progress = on_progress;
    o.progress_ud = &pc;
    o.stop = &stop_flag;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* A second Ctrl-C kills at once, as people expect when the first did not seem to work. */
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    rc = lt_worker_apply(&a.worker, &prof, &o, err);
    if (rc == 0)
        rc = lt_worker_wait_start(&a.worker, &stop_flag, err);
    if (rc == 0)
        rc = load_run(&o, &res, err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (pc.tty) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    if (rc) {
        fprintf(stderr, "sizeup loadtest: %s\n", err);
        /* A bad URL or a profile the engine cannot run is the user's input; the rest is the
         * environment (name resolution, descriptors, memory, threads). */
        status = rc == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
        goto out;
    }
    have_res = 1;
    if (a.worker.serve) {
        /* A worker's verdict is the operator's to give, on the merge of every share. */
        rc = lt_worker_serve(&a.worker, &res, &stop_flag, err);
        if (rc)
            fprintf(stderr, "sizeup loadtest: %s\n", err);
        status = rc ? EXIT_RUNTIME : EXIT_OK;
        goto out;
    }
    if (res.interrupted)
        fprintf(stderr, "sizeup loadtest: interrupted; the report covers the %.1fs that ran\n",
                res.duration_s);
    if (write_report(&a, &res, &prof) != 0) {
        status = EXIT_RUNTIME;
        goto out;
    }
    status = res.verdict == VERDICT_HEALTHY ? EXIT_OK : EXIT_THRESHOLD;
out:
    if (have_res)
        load_result_free(&res);
    if (have_prof)
        profile_free(&prof);
    return status;
}

const struct cmd cmd_loadtest = {"loadtest", "one load test against a URL (closed or open loop)",
                                 USAGE, exec_loadtest};
