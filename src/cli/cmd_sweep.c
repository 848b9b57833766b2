/* sizeup sweep: rolls COMMAND through worker x CPU x memory variants on this machine, each in a
 * cgroup limited like a kubelet limits a container, loads each one, and writes the advisor's
 * files. Ctrl-C / SIGTERM stop it cleanly: no process or cgroup is left behind, and the files
 * hold every variant measured until then. */

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/log.h"
#include "core/quantity.h"
#include "load/profile.h"
#include "local/local.h"
#include "sweep/advisor.h"
#include "sweep/output.h"
#include "sweep/runner.h"
#include "sweep/variant.h"

#define EXIT_CANCELLED 130 /* 128 + SIGINT, as shells report it */
#define COMMAND_LEN    2048

static const char usage[] =
    "usage: sizeup sweep [--configs LIST] [--profile FILE] [--workers-env NAME] [--port P]\n"
    "                    [--ready-path PATH] [--ready-timeout D] [--users N | --rate R]\n"
    "                    [--duration D] [--warmup D] [--out DIR] [--values-paths MAP]\n"
    "                    [--load fixed|capacity] [--repeat N] [--max-rps R]\n"
    "                    -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND once per variant on this machine, inside a cgroup limited to the variant's CPU\n"
    "and memory (as a kubelet limits a container), with WORKERS (or --workers-env) and PORT in\n"
    "its environment and $WORKERS / $PORT in its arguments expanded; loads it; writes\n"
    "results.md, results.json, values.yaml, auto-sizing.yaml and report.html into --out.\n"
    "\n"
    "  --configs LIST       variants workers@cpu/memory, space-separated\n"
    "                       (default: \"" VARIANT_DEFAULT_LIST "\")\n"
    "  --profile FILE       load profile YAML (default: GET /, 50 users, 20s, 5s warm-up)\n"
    "  --workers-env NAME   env var that sets the worker count (default WORKERS)\n"
    "  --port P             the port COMMAND listens on, on 127.0.0.1 (default 8080)\n"
    "  --ready-path PATH    ready when GET PATH returns < 500 (default: when the port accepts)\n"
    "  --ready-timeout D    per variant (default 60s)\n"
    "  --users N            closed loop: concurrent users (overrides the profile)\n"
    "  --rate R             open loop: requests/s (overrides the profile)\n"
    "  --duration D         measured window per variant (overrides the profile)\n"
    "  --warmup D           warm-up per variant (overrides the profile)\n"
    "  --threads N          load generator threads (default: one per CPU it may use)\n"
    "  --load MODE          capacity: search each variant's highest rate within the SLO\n"
    "                       (the default); fixed: one load per variant (--users/--rate,\n"
    "                       --duration) (overrides the profile's search.mode)\n"
    "  --repeat N           capacity mode: measurements at the found capacity (default 3)\n"
    "  --max-rps R          capacity mode: never offer more than R requests/s\n"
    "  --out DIR            output directory (default sizing/)\n"
    "  --values-paths MAP   where values.yaml puts things\n"
    "                       (default workers=workers.count,resources=resources)\n"
    "  --no-cgroup          run without cgroups (results are marked limits not enforced)\n"
    "\n"
    "example:\n"
    "  sizeup sweep --configs \"1@0.5/256Mi 1@1/256Mi 2@1/512Mi 2@2/512Mi\" --port 8080 \\\n"
    "      -- gunicorn -w '$WORKERS' -b 127.0.0.1:8080 app:app\n"
    "\n"
    "Exit status: 0 done, 1 could not run, 2 bad flags, 130 cancelled (files hold what ran).\n";

/* The one mutable global the house rules allow: set by SIGINT / SIGTERM. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

struct sweep_cli {
    const char *out;
    const char *configs;
    char command[COMMAND_LEN];
    struct profile *profile;
    struct output_paths paths;
    bool tty;
    double last_draw;
    size_t last_index;
    enum sweep_phase last_phase;
    unsigned last_step;
    bool drew;
};

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The advisor's inputs from the first k attempted rows of s. Returns k. */
static size_t advise(const struct sweep *s, const struct profile *p, struct advisor_row *rows,
                     struct advice *a)
{
    struct advisor_opts o;
    char err[ERR_LEN];
    size_t k = 0;

    while (k < s->n && s->rows[k].state != SWEEP_ROW_PENDING)
        k++;
    for (size_t i = 0; i < k; i++)
        sweep_row_to_advisor(s, i, &rows[i]);
    memset(&o, 0, sizeof(o));
    o.thresholds = p->thresholds;
    o.per_user_rps = p->per_user_rps > 0 ? p->per_user_rps : 0.5;
    o.target_rps = p->target_rps > 0 ? p->target_rps : p->target_users * o.per_user_rps;
    o.host_cores = (double)s->facts.host_millicores / 1000.0;
    o.limits_note = s->facts.limits_note;
    if (advisor_run(rows, k, &o, a, err) != 0)
        log_error("sweep.advisor", "error=\"%s\"", err);
    return k;
}

static int write_files(struct sweep_cli *c, const struct sweep *s, char *err)
{
    static struct advisor_row rows[VARIANT_MAX];
    static struct advice a;
    struct output_doc d;

    memset(&d, 0, sizeof(d));
    d.n = advise(s, c->profile, rows, &a);
    d.rows = rows;
    d.advice = &a;
    d.sweep = s;
    d.profile = c->profile;
    d.facts = &s->facts;
    d.platform = s->platform;
    d.command = c->command;
    d.configs = c->configs;
    d.started = s->started;
    d.finished = s->finished ? s->finished : time(NULL);
    d.cancelled = s->cancelled;
    d.paths = c->paths;
    return output_write_all(c->out, &d, err);
}

static int on_row_done(void *ud, const struct sweep *s, size_t index, char *err)
{
    struct sweep_cli *c = ud;
    (void)index;
    return write_files(c, s, err);
}

static void on_progress(void *ud, const struct sweep_progress *p)
{
    struct sweep_cli *c = ud;
    char lat[32];
    double t = mono_s();
    bool change = p->index != c->last_index || p->phase != c->last_phase || !c->drew;

    char step[64] = "";
    if (p->step_what)
        snprintf(step, sizeof(step), " %s %u%s%.0f req/s", p->step_what, p->step,
                 p->offered_rps > 0 ? " @ " : "", p->offered_rps > 0 ? p->offered_rps : 0);
    if (p->step_what && p->offered_rps <= 0)
        snprintf(step, sizeof(step), " %s %u (closed loop)", p->step_what, p->step);
    change = change || p->step != c->last_step;
    if (!c->tty) {
        /* Not a terminal: one line per phase change, no live redraws. */
        if (change && p->phase != SWEEP_PHASE_DONE)
            fprintf(stderr, "sweep: variant %zu of %zu %s: %s%s, about %.0fs left\n", p->index + 1,
                    p->n, p->variant->label, sweep_phase_name(p->phase), step, p->eta_s);
    } else if (change || t - c->last_draw >= 0.25) {
        fprintf(stderr, "\r\033[K[%zu/%zu] %-20s %-8s%s %5.1fs  ~%.0fs left", p->index + 1, p->n,
                p->variant->label, sweep_phase_name(p->phase), step, p->elapsed_s, p->eta_s);
        if (p->phase == SWEEP_PHASE_WARMUP || p->phase == SWEEP_PHASE_MEASURE)
            fprintf(stderr, "  %5.1f/%.0fs  %7.0f req/s  p95 %s", p->phase_elapsed_s, p->phase_s,
                    p->rps, output_fmt_latency(p->p95_us, lat));
        c->last_draw = t;
    }
    c->last_index = p->index;
    c->last_phase = p->phase;
    c->last_step = p->step;
    c->drew = true;
}

static void print_table(const struct sweep *s, const struct profile *p)
{
    static struct advisor_row rows[VARIANT_MAX];
    static struct advice a;
    char l1[32], l2[32], l3[32], b1[QTY_LEN], b2[QTY_LEN];
    size_t k = advise(s, p, rows, &a);

    printf("\n  %-22s %7s %5s %7s %11s %7s %7s %7s %6s  %-12s %s\n", "Config", "Workers", "CPU",
           "Memory", "Throughput", "P50", "P95", "P99", "Errors", "State", "Est. users");
    for (size_t i = 0; i < k; i++) {
        const struct advisor_row *r = &rows[i];
        char label[40];
        snprintf(label, sizeof(label), "%s%s", (int)i == a.recommended ? "* " : "",
                 r->variant.label);
        printf("  %-22s %7u %5s %7s ", label, r->variant.workers,
               qty_format_cores(r->variant.cpu_millicores, b1),
               qty_format_memory(r->variant.memory_bytes, b2));
        if (!r->measured) {
            printf("%11s %7s %7s %7s %6s  FAILED: %s\n", "-", "-", "-", "-", "-", r->note);
            continue;
        }
        char marks[160] = "";
        unsigned f = r->flags;
        if (f & ADVISOR_ROW_UNENFORCED)
            snprintf(marks + strlen(marks), sizeof(marks) - strlen(marks),
                     " [limits not enforced]");
        if (f & ADVISOR_ROW_CPU_EXCEEDS_HOST)
            snprintf(marks + strlen(marks), sizeof(marks) - strlen(marks), " [exceeds host]");
        if (f & ADVISOR_ROW_CONTENDED)
            snprintf(marks + strlen(marks), sizeof(marks) - strlen(marks), " [contended]");
        if (f & ADVISOR_ROW_GEN_SATURATED)
            snprintf(marks + strlen(marks), sizeof(marks) - strlen(marks),
                     " [load generator saturated]");
        if (f & ADVISOR_ROW_INTERRUPTED)
            snprintf(marks + strlen(marks), sizeof(marks) - strlen(marks), " [interrupted]");
        char users[32];
        if (a.rows[i].capacity)
            snprintf(users, sizeof(users), "~%.0f", round(a.rows[i].est_users));
        else
            snprintf(users, sizeof(users), "-");
        printf("%5.0f req/s %7s %7s %7s %5.1f%%  %-12s %s%s\n", r->throughput_rps,
               output_fmt_latency(r->p50_us, l1), output_fmt_latency(r->p95_us, l2),
               output_fmt_latency(r->p99_us, l3), r->error_rate * 100,
               verdict_name(a.rows[i].verdict), users, marks);
    }
    if (a.recommended >= 0)
        printf("\n  * recommended: %s (%s)\n", rows[a.recommended].variant.label, a.why);
    else
        printf("\n  no recommendation: %s\n", a.why);
    if (!s->facts.limits_enforced)
        printf("\n  !! LIMITS NOT ENFORCED: %s\n", s->facts.limits_note);
    for (size_t i = 0; i < a.nfindings; i++)
        printf("\n  %zu. %s\n", i + 1, a.findings[i]);
}

/* The command line as run, for results.md; arguments with spaces quoted. */
static void join_command(int argc, char **argv, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < argc && o + 1 < len; i++) {
        bool q = strpbrk(argv[i], " \t'\"$") != NULL;
        int n = snprintf(out + o, len - o, "%s%s%s%s", i ? " " : "", q ? "'" : "", argv[i],
                         q ? "'" : "");
        if (n < 0 || (size_t)n >= len - o)
            break;
        o += (size_t)n;
    }
}

static int parse_unsigned(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > max || s[0] == '-')
        return -EINVAL;
    *out = v;
    return 0;
}

static int exec_sweep(int argc, char **argv)
{
    static const struct option opts[] = {
        {"configs", required_argument, NULL, 'c'},
        {"profile", required_argument, NULL, 'p'},
        {"workers-env", required_argument, NULL, 'w'},
        {"port", required_argument, NULL, 'P'},
        {"ready-path", required_argument, NULL, 'R'},
        {"ready-timeout", required_argument, NULL, 'T'},
        {"users", required_argument, NULL, 'u'},
        {"rate", required_argument, NULL, 'r'},
        {"duration", required_argument, NULL, 'd'},
        {"warmup", required_argument, NULL, 'W'},
        {"threads", required_argument, NULL, 't'},
        {"out", required_argument, NULL, 'o'},
        {"values-paths", required_argument, NULL, 'V'},
        {"no-cgroup", no_argument, NULL, 'N'},
        {"load", required_argument, NULL, 'L'},
        {"repeat", required_argument, NULL, 'n'},
        {"max-rps", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static struct variant_list variants;
    struct profile profile;
    struct sweep s;
    struct sweep_cli cli;
    struct platform pl = {0};
    struct local_config lc;
    const char *profile_path = NULL, *users_s = NULL, *rate_s = NULL, *dur_s = NULL, *warm_s = NULL,
               *paths_s = NULL, *load_s = NULL, *repeat_s = NULL, *max_rps_s = NULL;
    int64_t ready_timeout_us = 60000000;
    unsigned long port = 8080, threads = 0;
    char err[ERR_LEN] = "", logs[4096];
    int c, rc = EXIT_OK, have_profile = 0, ran = 0;
    struct sigaction sa, old_int, old_term;

    memset(&cli, 0, sizeof(cli));
    memset(&lc, 0, sizeof(lc));
    memset(&s, 0, sizeof(s));
    cli.out = "sizing";
    cli.configs = VARIANT_DEFAULT_LIST;
    lc.workers_env = "WORKERS";
    optind = 1;
    opterr = 0;
    /* "+": stop at the first non-flag, so COMMAND's own flags are never ours. */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            cli.configs = optarg;
            break;
        case 'p':
            profile_path = optarg;
            break;
        case 'w':
            lc.workers_env = optarg;
            break;
        case 'P':
            if (parse_unsigned(optarg, 65535, &port) || port == 0) {
                fprintf(stderr, "sizeup sweep: bad --port '%s': expected 1..65535\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'R':
            lc.ready_path = optarg;
            break;
        case 'T':
            if (qty_parse_duration(optarg, &ready_timeout_us, err) || ready_timeout_us <= 0) {
                fprintf(stderr, "sizeup sweep: --ready-timeout: %s\n",
                        err[0] ? err : "must be above zero");
                return EXIT_USAGE;
            }
            break;
        case 'u':
            users_s = optarg;
            break;
        case 'r':
            rate_s = optarg;
            break;
        case 'd':
            dur_s = optarg;
            break;
        case 'W':
            warm_s = optarg;
            break;
        case 't':
            if (parse_unsigned(optarg, 1024, &threads)) {
                fprintf(stderr, "sizeup sweep: bad --threads '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'o':
            cli.out = optarg;
            break;
        case 'V':
            paths_s = optarg;
            break;
        case 'N':
            lc.no_cgroup = true;
            break;
        case 'L':
            load_s = optarg;
            break;
        case 'n':
            repeat_s = optarg;
            break;
        case 'm':
            max_rps_s = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "sizeup sweep: unknown or incomplete flag '%s'\n\n%s", argv[optind - 1],
                    usage);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "sizeup sweep: no COMMAND: give the app's command after --\n\n%s", usage);
        return EXIT_USAGE;
    }
    if (users_s && rate_s) {
        fprintf(stderr, "sizeup sweep: --users and --rate exclude each other\n");
        return EXIT_USAGE;
    }
    if (variant_parse_list(cli.configs, &variants, err) != 0) {
        fprintf(stderr, "sizeup sweep: --configs: %s\n", err);
        return EXIT_USAGE;
    }
    if (output_paths_parse(paths_s, &cli.paths, err) != 0) {
        fprintf(stderr, "sizeup sweep: --values-paths: %s\n", err);
        return EXIT_USAGE;
    }
    if (profile_path ? profile_load_file(profile_path, &profile, err)
                     : profile_init_default(&profile)) {
        fprintf(stderr, "sizeup sweep: %s\n", err[0] ? err : "out of memory");
        return EXIT_USAGE;
    }
    have_profile = 1;
    cli.profile = &profile;
    if (users_s) {
        unsigned long u;
        if (parse_unsigned(users_s, 1000000, &u) || u == 0) {
            fprintf(stderr, "sizeup sweep: bad --users '%s'\n", users_s);
            rc = EXIT_USAGE;
            goto out;
        }
        profile.users = (unsigned)u;
        profile.rate = 0;
        profile.nstages = 0;
    }
    if (rate_s) {
        char *end;
        double r = strtod(rate_s, &end);
        if (end == rate_s || *end || !(r > 0) || r > 1e7) {
            fprintf(stderr, "sizeup sweep: bad --rate '%s'\n", rate_s);
            rc = EXIT_USAGE;
            goto out;
        }
        profile.rate = r;
        profile.users = 0;
        profile.nstages = 0;
    }
    if (dur_s) {
        if (qty_parse_duration(dur_s, &profile.duration_us, err) || profile.duration_us <= 0) {
            fprintf(stderr, "sizeup sweep: --duration: %s\n", err[0] ? err : "must be > 0");
            rc = EXIT_USAGE;
            goto out;
        }
        profile.nstages = 0;
    }
    if (warm_s && qty_parse_duration(warm_s, &profile.warmup_us, err)) {
        fprintf(stderr, "sizeup sweep: --warmup: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }
    if (load_s && strcmp(load_s, "fixed") && strcmp(load_s, "capacity")) {
        fprintf(stderr, "sizeup sweep: bad --load '%s': expected fixed or capacity\n", load_s);
        rc = EXIT_USAGE;
        goto out;
    }
    if (load_s)
        profile.search.mode =
            strcmp(load_s, "fixed") ? PROFILE_SEARCH_CAPACITY : PROFILE_SEARCH_FIXED;
    if (repeat_s) {
        unsigned long n;
        if (parse_unsigned(repeat_s, PROFILE_MAX_REPEATS, &n) || n == 0) {
            fprintf(stderr, "sizeup sweep: bad --repeat '%s': expected 1..%d\n", repeat_s,
                    PROFILE_MAX_REPEATS);
            rc = EXIT_USAGE;
            goto out;
        }
        profile.search.repeats = (unsigned)n;
    }
    if (max_rps_s) {
        char *end;
        double r = strtod(max_rps_s, &end);
        if (end == max_rps_s || *end || !(r > 0) || r > 1e7) {
            fprintf(stderr, "sizeup sweep: bad --max-rps '%s'\n", max_rps_s);
            rc = EXIT_USAGE;
            goto out;
        }
        profile.search.max_rps = r;
    }
    join_command(argc, argv, cli.command, sizeof(cli.command));
    {
        char full[COMMAND_LEN + 16];
        snprintf(full, sizeof(full), "sizeup %s", cli.command);
        snprintf(cli.command, sizeof(cli.command), "%s", full);
    }

    if (output_mkdir_p(cli.out, err) != 0) {
        fprintf(stderr, "sizeup sweep: --out: %s\n", err);
        rc = EXIT_RUNTIME;
        goto out;
    }
    snprintf(logs, sizeof(logs), "%s/logs", cli.out);
    if (output_mkdir_p(logs, err) != 0) {
        fprintf(stderr, "sizeup sweep: %s\n", err);
        rc = EXIT_RUNTIME;
        goto out;
    }
    lc.argv = argv + optind;
    lc.argc = argc - optind;
    lc.port = (unsigned)port;
    lc.log_dir = logs;
    if (local_platform_new(&lc, &pl, err) != 0) {
        fprintf(stderr, "sizeup sweep: %s\n", err);
        rc = EXIT_USAGE;
        goto out;
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    signal(SIGPIPE, SIG_IGN);
    stop_flag = 0;
    cli.tty = isatty(STDERR_FILENO);

    {
        struct platform_facts f;
        if (pl.ops->facts(pl.self, &f, err) == 0 && !f.limits_enforced)
            fprintf(stderr,
                    "\n!! sizeup sweep: LIMITS WILL NOT BE ENFORCED: %s.\n!! Every variant runs "
                    "with the whole machine; results are marked \"limits not enforced\".\n\n",
                    f.limits_note);
    }
    {
        char d1[QTY_LEN], d2[QTY_LEN];
        if (profile.search.mode == PROFILE_SEARCH_CAPACITY) {
            char d3[QTY_LEN];
            fprintf(stderr,
                    "sizeup sweep: %zu variants, capacity search (steps of %s after %s warm-up, "
                    "at most %u steps, %u repeats, time budget %s), results in %s/\n",
                    variants.n, qty_format_duration(profile.search.window_us, d1),
                    qty_format_duration(profile.search.warmup_us, d2), profile.search.max_steps,
                    profile.search.repeats, qty_format_duration(profile.search.budget_us, d3),
                    cli.out);
        } else {
            fprintf(stderr,
                    "sizeup sweep: %zu variants, %s each after %s warm-up, results in %s/\n",
                    variants.n, qty_format_duration(profile.duration_us, d1),
                    qty_format_duration(profile.warmup_us, d2), cli.out);
        }
    }

    struct sweep_opts so;
    memset(&so, 0, sizeof(so));
    so.platform = &pl;
    so.profile = &profile;
    so.variants = &variants;
    so.ready_timeout_us = ready_timeout_us;
    so.load_threads = (unsigned)threads;
    so.stop = &stop_flag;
    so.progress = on_progress;
    so.progress_ud = &cli;
    so.row_done = on_row_done;
    so.row_done_ud = &cli;
    int src = sweep_run(&so, &s, err);
    ran = 1;
    if (cli.tty)
        fputs("\r\033[K", stderr);
    if (src == -ECANCELED)
        fprintf(stderr, "sizeup sweep: cancelled; every process and cgroup stopped; writing "
                        "what was measured\n");
    else if (src)
        fprintf(stderr, "sizeup sweep: %s\n", err);
    char werr[ERR_LEN] = "";
    if (write_files(&cli, &s, werr) != 0) {
        fprintf(stderr, "sizeup sweep: writing results: %s\n", werr);
        if (!src)
            rc = EXIT_RUNTIME;
    }
    print_table(&s, &profile);
    {
        char vp[4200];
        snprintf(vp, sizeof(vp), "%s/values.yaml", cli.out);
        printf("\n  files: %s/results.md  results.json  %sauto-sizing.yaml  report.html"
               "\n  app logs: %s/logs/\n",
               cli.out, access(vp, F_OK) == 0 ? "values.yaml  " : "", cli.out);
    }
    if (src == -ECANCELED)
        rc = EXIT_CANCELLED;
    else if (src)
        rc = EXIT_RUNTIME;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
out:
    if (pl.ops)
        pl.ops->free(pl.self);
    if (ran)
        sweep_free(&s);
    if (have_profile)
        profile_free(&profile);
    return rc;
}

const struct cmd cmd_sweep = {"sweep",
                              "sweep worker x CPU x memory variants of an app on this "
                              "machine and write the sizing advice",
                              usage, exec_sweep};
