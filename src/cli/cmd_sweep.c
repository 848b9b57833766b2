/* sizeup sweep: rolls COMMAND through worker x CPU x memory variants on this machine, each in a
 * cgroup limited like a kubelet limits a container, loads each one, and writes the advisor's
 * files. Ctrl-C / SIGTERM stop it cleanly: no process or cgroup is left behind, and the files
 * hold every variant measured until then. */

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fmt.h"
#include "core/clock.h"
#include "advise/advise.h"
#include "cli/cli.h"
#include "core/log.h"
#include "core/quantity.h"
#include "profile/profile.h"
#include "profile/profile_override.h"
#include "local/local.h"
#include "advise/advisor.h"
#include "output/output.h"
#include "operator/admin.h"
#include "operator/progress.h"
#include "output/output_set.h"
#include "sweep/progress_feed.h"
#include "sweep/runner.h"
#include "sweep/variant.h"

#define EXIT_CANCELLED  130 /* 128 + SIGINT, as shells report it */
#define SCALE_OUT_UNSET UINT32_MAX
#define COMMAND_LEN     2048

struct sweep_cli {
    /* The flags. */
    const char *out;
    const char *configs;
    const char *profile_path;
    const char *values_paths;
    struct output_workload workload; /* --deployment, --container; workers_env set below */
    struct profile_override ov;
    const char *load_mode; /* --load: "fixed" or "capacity"; NULL: the profile's */
    unsigned repeats;      /* --repeat; 0: the profile's */
    double max_rps;        /* --max-rps; 0: the profile's */
    unsigned scale_out;    /* --scale-out; SCALE_OUT_UNSET: the profile's (or the default) */
    const char *scale_out_variant; /* --scale-out-variant; NULL: the profile's */
    int64_t ready_timeout_us;
    unsigned threads;
    int no_cgroup;
    const char *progress_addr; /* --progress-addr; NULL: no live page */
    struct local_config lc;    /* workers_env, port, ready_path from the flags; the rest below */
    /* What the run builds from them. */
    char command[COMMAND_LEN];
    char logs[4096];
    struct variant_list variants;
    struct profile *profile;
    struct profile profile_buf;
    struct output_paths paths;
    struct platform pl;
    struct sweep s;
    bool ran;
    /* The live progress page's feed and this sweep's slot in it (--progress-addr); < 0: none. */
    progress_feed_t *feed;
    int feed_slot;
    /* The progress display. */
    bool tty;
    double last_draw;
    size_t last_index;
    enum sweep_phase last_phase;
    unsigned last_step;
    bool drew;
};

#define ARG(m) offsetof(struct sweep_cli, m)

/* --load: the word is checked here, applied over the profile in load_inputs. */
static int set_load_mode(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    if (strcmp(val, "fixed") != 0 && strcmp(val, "capacity") != 0)
        return err_set(err, -EINVAL, "--%s: '%s': expected fixed or capacity", f->name, val);
    *(const char **)dst = val;
    return 0;
}

static const struct cli_flag flags[] = {
    {"configs", "LIST", VARIANT_DEFAULT_LIST, "variants workers@cpu/memory, space-separated",
     cli_set_string, ARG(configs), 1, 0},
    CLI_PROFILE_FILE_FLAG(struct sweep_cli, profile_path),
    {"workers-env", "NAME", "WORKERS", "env var that sets the worker count", cli_set_string,
     ARG(lc.workers_env), 1, 0},
    {"port", "P", "8080", "the port COMMAND listens on, on 127.0.0.1 (also exported as PORT)",
     cli_set_uint, ARG(lc.port), 1, 65535},
    {"ready-path", "PATH", "when the port accepts", "ready when GET PATH answers below 500",
     cli_set_string, ARG(lc.ready_path), 1, 0},
    {"ready-timeout", "D", "60s", "how long a variant may take to become ready", cli_set_duration,
     ARG(ready_timeout_us), 1, PROFILE_MAX_RUN_US},
    CLI_PROFILE_FLAGS(struct sweep_cli, ov),
    CLI_THREADS_FLAG(struct sweep_cli, threads),
    {"load", "MODE", "capacity",
     "capacity: search each variant's highest rate within the SLO; fixed: one load per variant",
     set_load_mode, ARG(load_mode), 0, 0},
    {"repeat", "N", "3", "capacity mode: measurements at the found capacity, for its interval",
     cli_set_uint, ARG(repeats), 1, PROFILE_MAX_REPEATS},
    {"max-rps", "R", "none", "capacity mode: never offer more than R requests/s", cli_set_number,
     ARG(max_rps), 0, PROFILE_MAX_RATE},
    {"scale-out", "N", "with a target, up to 4 where the host's cores fit them",
     "after the shape search, measure one variant at 1..N replicas (0 or 1: off)", cli_set_uint,
     ARG(scale_out), 0, PROFILE_MAX_SCALE_OUT},
    {"scale-out-variant", "SPEC", "the recommendation",
     "the variant the scale-out measures, one of --configs", cli_set_string, ARG(scale_out_variant),
     1, 0},
    {"out", "DIR", "sizing", "output directory (the app's output goes to DIR/logs/)",
     cli_set_string, ARG(out), 1, 0},
    {"values-paths", "MAP",
     "workers=workers.count,resources=resources,replicas=replicaCount,autoscaling=autoscaling",
     "where values.yaml puts the worker count, the resources block and, with a target load, the "
     "replica count and the autoscaling block (any key may be left out)",
     cli_set_string, ARG(values_paths), 1, 0},
    {"target-rps", "R", "the profile's target", "the load the recommendation must hold, in req/s",
     cli_set_number, ARG(ov.target_rps), 0.001, PROFILE_MAX_RATE},
    {"target-users", "N", "the profile's target",
     "the same in active users (x the profile's per_user_rps)", cli_set_number,
     ARG(ov.target_users), 0.001, PROFILE_MAX_USERS},
    {"target-streams", "N", "the profile's target",
     "the same in open streams, for a profile with streams: (replicas and memory per pod)",
     cli_set_number, ARG(ov.target_streams), 1, 1e9},
    {"deployment", "NAME", NULL, "the Deployment deployment-patch.yaml patches (none: no patch)",
     cli_set_string, ARG(workload.deployment), 1, 0},
    {"container", "NAME", "the Deployment's name", "its container that runs COMMAND",
     cli_set_string, ARG(workload.container), 1, 0},
    {"selector", "KEY=VALUE", NULL,
     "the pods' labels (the Deployment's spec.selector.matchLabels, comma-separated) for "
     "pdb.yaml and the zone spread in deployment-patch.yaml",
     cli_set_string, ARG(workload.selector), 1, 0},
    {"no-cgroup", NULL, NULL, "run without cgroups (every row is marked limits not enforced)",
     cli_set_switch, ARG(no_cgroup), 0, 0},
    {"progress-addr", "ADDR", NULL,
     "serve the live progress page / and its WebSocket /progress on HOST:PORT (no "
     "authentication: keep it on 127.0.0.1 unless you mean to share it)",
     cli_set_string, ARG(progress_addr), 1, 0},
    CLI_FLAGS_END,
};

/* One local sweep's answer: the rows, the advice composed over them once (advise_sweep, which
 * is advise_compose over the sweep) and the one document every output, the terminal's answer
 * and its table render. */
struct sweep_answer {
    struct advisor_row rows[VARIANT_MAX];
    struct advice advice;
    struct output_doc doc;
};

/* The local sweep's document over s into *ans. The rows are rendered whatever the advisor says:
 * its error (it has none for a sweep's own rows) only makes the advice say less. */
static void sweep_doc(const struct sweep_cli *c, const struct sweep *s, struct sweep_answer *ans)
{
    struct output_doc *d = &ans->doc;
    char aerr[ERR_LEN] = "";

    memset(d, 0, sizeof(*d));
    if (advise_sweep(s, c->profile, ans->rows, &d->n, &ans->advice, aerr) != 0)
        log_error("sweep.advisor", "error=\"%s\"", aerr);
    d->rows = ans->rows;
    d->advice = &ans->advice;
    d->sweep = s;
    d->profile = c->profile;
    d->facts = &s->facts;
    d->platform = s->platform;
    d->command = c->command;
    d->configs = c->configs;
    d->started = s->started;
    d->finished = s->finished ? s->finished : time(NULL);
    d->cancelled = s->cancelled;
    d->paths = c->paths;
    d->workload = c->workload;
}

/* The outputs of s written into the output directory, from one composed answer. */
static int write_files(struct sweep_cli *c, const struct sweep *s, char *err)
{
    struct sweep_answer *ans = calloc(1, sizeof(*ans));
    int rc;

    if (!ans)
        return err_set(err, -ENOMEM, "out of memory");
    sweep_doc(c, s, ans);
    rc = output_write_all(c->out, &ans->doc, err);
    free(ans);
    return rc;
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
    double t = clock_mono_s();

    if (c->feed_slot >= 0)
        progress_feed_update(c->feed, c->feed_slot, p);
    bool change = p->index != c->last_index || p->phase != c->last_phase || !c->drew ||
                  p->step != c->last_step;
    char step[64] = "";

    /* In a capacity search: which step, at what offered rate (the probe is closed loop); in a
     * stream search, how many streams the step holds. */
    if (p->stream_step)
        snprintf(step, sizeof(step), " step %u: streams %u", p->step, p->step_streams);
    else if (p->step_what && p->offered_rps > 0)
        snprintf(step, sizeof(step), " %s %u @ %.0f req/s", p->step_what, p->step, p->offered_rps);
    else if (p->step_what)
        snprintf(step, sizeof(step), " %s %u (closed loop)", p->step_what, p->step);
    if (!c->tty) {
        /* Not a terminal: one line per phase change, no live redraws. */
        if (change && p->phase != SWEEP_PHASE_DONE)
            fprintf(stderr, "sweep: variant %zu of %zu %s: %s%s, about %.0fs left\n", p->index + 1,
                    p->n, p->variant->label, sweep_phase_name(p->phase), step, p->eta_s);
    } else if (change || t - c->last_draw >= 0.25) {
        fprintf(stderr, "\r\033[K[%zu/%zu] %-20s %-8s%s %5.1fs  ~%.0fs left", p->index + 1, p->n,
                p->variant->label, sweep_phase_name(p->phase), step, p->elapsed_s, p->eta_s);
        if (p->stream_step && p->phase == SWEEP_PHASE_MEASURE)
            fprintf(stderr, "  %5.1f/%.0fs  %" PRIu64 " open", p->phase_elapsed_s, p->phase_s,
                    p->streams_open);
        else if (p->phase == SWEEP_PHASE_WARMUP || p->phase == SWEEP_PHASE_MEASURE)
            fprintf(stderr, "  %5.1f/%.0fs  %7.0f req/s  p95 %s", p->phase_elapsed_s, p->phase_s,
                    p->rps, fmt_latency(p->p95_us, lat));
        c->last_draw = t;
    }
    c->last_index = p->index;
    c->last_phase = p->phase;
    c->last_step = p->step;
    c->drew = true;
}

/* The table's marks after a row: " [limits not enforced] [contended]", "" when none. */
static void row_marks(unsigned f, char *buf, size_t len)
{
    static const struct {
        unsigned flag;
        const char *words;
    } marks[] = {
        {SWEEP_FLAG_UNENFORCED, " [limits not enforced]"},
        {SWEEP_FLAG_CPU_EXCEEDS_HOST, " [exceeds host]"},
        {SWEEP_FLAG_CONTENDED, " [contended]"},
        {SWEEP_FLAG_GEN_SATURATED, " [load generator saturated]"},
        {SWEEP_FLAG_INTERRUPTED, " [interrupted]"},
    };

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
        if (f & marks[i].flag)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s", marks[i].words);
}

/* The evidence under the answer: the document's rows with the advice's verdicts, the scale-out,
 * the recommendation's reason and the findings. Renders d; runs no advisor. */
static void print_table(const struct output_doc *d)
{
    const struct sweep *s = d->sweep;
    const struct profile *p = d->profile;
    const struct advisor_row *rows = d->rows;
    const struct advice *a = d->advice;
    char l1[32], l2[32], l3[32], b1[QTY_LEN], b2[QTY_LEN];
    size_t k = d->n;
    /* A capacity search adds its two columns after the reference table's. */
    bool cap = false, streams = false;
    for (size_t i = 0; i < k; i++) {
        cap = cap || rows[i].cap.searched;
        streams = streams || rows[i].scap.searched;
    }

    /* The capacity column as wide as its widest cell: a figure's marks never shift the rest. */
    int capw = 26;
    for (size_t i = 0; cap && i < k; i++) {
        char c1[OUTPUT_CAPACITY_LEN];
        int w = (int)strlen(output_fmt_capacity(&rows[i].cap, c1));
        capw = w > capw ? w : capw;
    }
    printf("\n  %-22s %7s %5s %7s %11s %7s %7s %7s %6s  %-12s %-10s", "Config", "Workers", "CPU",
           "Memory", "Throughput", "P50", "P95", "P99", "Errors", "State", "Est. users");
    if (cap)
        printf(" %-*s %8s", capw, "Capacity @SLO", "per core");
    if (streams)
        printf(" %-30s %13s", "Streams @SLO", "Memory/stream");
    putchar('\n');
    for (size_t i = 0; i < k; i++) {
        const struct advisor_row *r = &rows[i];
        char label[40];
        snprintf(label, sizeof(label), "%s%s", (int)i == a->recommended ? "* " : "",
                 r->variant.label);
        printf("  %-22s %7u %5s %7s ", label, r->variant.workers,
               qty_format_cores(r->variant.cpu_millicores, b1),
               qty_format_memory(r->variant.memory_bytes, b2));
        if (!r->measured) {
            printf("%11s %7s %7s %7s %6s  FAILED: %s\n", "-", "-", "-", "-", "-", r->note);
            continue;
        }
        char marks[160];
        row_marks(r->flags, marks, sizeof(marks));
        char users[32];
        if (a->rows[i].capacity)
            snprintf(users, sizeof(users), "~%.0f", round(a->rows[i].est_users));
        else
            snprintf(users, sizeof(users), "-");
        printf("%5.0f req/s %7s %7s %7s %5.1f%%  %-12s %-10s", r->throughput_rps,
               fmt_latency(r->p50_us, l1), fmt_latency(r->p95_us, l2), fmt_latency(r->p99_us, l3),
               r->error_rate * 100, verdict_name(a->rows[i].verdict), users);
        if (cap) {
            char c1[OUTPUT_CAPACITY_LEN], c2[32];
            printf(" %-*s %8s", capw, output_fmt_capacity(&r->cap, c1),
                   output_fmt_per_core(&r->cap, c2, sizeof(c2)));
        }
        if (streams) {
            char c1[96], c2[32];
            printf(" %-30s %13s", output_fmt_streams(&r->scap, c1, sizeof(c1)),
                   output_fmt_memory_per_stream(&r->scap, c2, sizeof(c2)));
        }
        printf("%s\n", marks);
    }
    char note[1024];
    if (output_fmt_capacity_note(p, note, sizeof(note))[0])
        printf("\n  %s\n", note);
    output_scale_out_table(stdout, s, false);
    if (a->recommended >= 0)
        printf("\n  * recommended: %s (%s)\n", rows[a->recommended].variant.label, a->why);
    else
        printf("\n  no recommendation: %s\n", a->why);
    if (!s->facts.limits_enforced)
        printf("\n  !! LIMITS NOT ENFORCED: %s\n", s->facts.limits_note);
    for (size_t i = 0; i < a->nfindings; i++)
        printf("\n  %zu. %s\n", i + 1, a->findings[i]);
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

/* Parses the flags and COMMAND into *c. Returns 0, CLI_HELP or an exit status. */
static int parse_flags(struct sweep_cli *c, int argc, char **argv)
{
    int operand, rc;

    memset(c, 0, sizeof(*c));
    c->out = "sizing";
    c->configs = VARIANT_DEFAULT_LIST;
    c->ov = (struct profile_override)PROFILE_OVERRIDE_NONE;
    c->ready_timeout_us = 60000000;
    c->lc.workers_env = "WORKERS";
    c->lc.port = 8080;
    c->scale_out = SCALE_OUT_UNSET;
    rc = cli_parse(&cmd_sweep, argc, argv, c, &operand);
    if (rc)
        return rc;
    if (operand >= argc)
        return cli_usage_error(&cmd_sweep, "no COMMAND: give the app's command after --");
    c->lc.argv = argv + operand;
    c->lc.argc = argc - operand;
    c->lc.no_cgroup = c->no_cgroup;
    join_command(argc, argv, c->command + 7, sizeof(c->command) - 7);
    memcpy(c->command, "sizeup ", 7);
    return 0;
}

/* In capacity mode the search chooses each step's rate and holds it for search.window after
 * search.warmup: --rate, --duration and --warmup would change only the probe and then be reported
 * as if they were the load, so they are refused with what to use instead. A profile's rate,
 * duration and warmup stay allowed (they serve --load fixed and the probe). Returns non-zero with
 * the message in err when one was given. */
static int capacity_flag_refused(const struct sweep_cli *c, char *err)
{
    if (c->profile->search.mode != PROFILE_SEARCH_CAPACITY)
        return 0;
    if (c->ov.rate > 0)
        return err_set(err, -EINVAL,
                       "--rate: a capacity search (the default --load) chooses the rate itself; "
                       "cap it with --max-rps, or give --load fixed to run this rate"),
               1;
    if (c->ov.duration_us >= 0)
        return err_set(err, -EINVAL,
                       "--duration: a capacity search measures each step for search.window in "
                       "the profile; set that, or give --load fixed to run one load this long"),
               1;
    if (c->ov.warmup_us >= 0)
        return err_set(err, -EINVAL,
                       "--warmup: a capacity search warms each step up for search.warmup in the "
                       "profile; set that, or give --load fixed"),
               1;
    return 0;
}

/* --scale-out and --scale-out-variant over the profile's scale_out:, and the variant checked
 * against the sweep's list (the profile's or the flag's: a spec the sweep does not measure has no
 * shape-search point to start from). Returns an exit status. */
static int apply_scale_out(struct sweep_cli *c)
{
    struct profile_scale_out *so = &c->profile->scale_out;
    char err[ERR_LEN] = "";
    struct variant v;

    if (c->scale_out != SCALE_OUT_UNSET && profile_scale_out_set_max(so, c->scale_out, err) != 0)
        return cli_usage_error(&cmd_sweep, err);
    if (c->scale_out_variant) {
        if (strlen(c->scale_out_variant) >= sizeof(so->variant))
            return cli_usage_error(&cmd_sweep, "--scale-out-variant: not a variant (too long)");
        memcpy(so->variant, c->scale_out_variant, strlen(c->scale_out_variant) + 1);
    }
    if (!so->variant[0])
        return EXIT_OK;
    const char *from = c->scale_out_variant ? "--scale-out-variant" : "scale_out.variant";
    if (variant_parse(so->variant, &v, err) != 0) {
        fprintf(stderr, "sizeup sweep: %s: %s\n", from, err);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < c->variants.n; i++) {
        const struct variant *w = &c->variants.items[i];
        if (w->workers == v.workers && w->cpu_millicores == v.cpu_millicores &&
            w->memory_bytes == v.memory_bytes) {
            snprintf(so->variant, sizeof(so->variant), "%s", w->spec); /* canonical */
            return EXIT_OK;
        }
    }
    fprintf(stderr, "sizeup sweep: %s: %s is not one of the variants swept (%s)\n", from, v.spec,
            c->configs);
    return EXIT_USAGE;
}

/* The variants, the values paths and the profile with the flags applied. Returns an exit
 * status. */
static int load_inputs(struct sweep_cli *c)
{
    char err[ERR_LEN] = "";

    if (variant_parse_list(c->configs, &c->variants, err) != 0)
        return fprintf(stderr, "sizeup sweep: --configs: %s\n", err), EXIT_USAGE;
    if (output_paths_parse(c->values_paths, &c->paths, err) != 0)
        return fprintf(stderr, "sizeup sweep: --values-paths: %s\n", err), EXIT_USAGE;
    c->workload.workers_env = c->lc.workers_env;
    if (output_workload_check(&c->workload, err) != 0)
        return fprintf(stderr, "sizeup sweep: --deployment/--container/--selector: %s\n", err),
               EXIT_USAGE;
    if (c->profile_path ? profile_load_file(c->profile_path, &c->profile_buf, err)
                        : profile_init_default(&c->profile_buf))
        return fprintf(stderr, "sizeup sweep: %s\n", err[0] ? err : "out of memory"), EXIT_USAGE;
    c->profile = &c->profile_buf;
    char note[ERR_LEN];
    if (profile_local_note(c->profile, "sweep", note, sizeof(note)))
        fprintf(stderr, "sizeup sweep: note: %s\n", note);
    if (profile_override_apply(&c->ov, c->profile, err) != 0)
        return cli_usage_error(&cmd_sweep, err);
    if (c->load_mode)
        c->profile->search.mode =
            strcmp(c->load_mode, "fixed") == 0 ? PROFILE_SEARCH_FIXED : PROFILE_SEARCH_CAPACITY;
    if (capacity_flag_refused(c, err))
        return cli_usage_error(&cmd_sweep, err);
    if (c->repeats)
        c->profile->search.repeats = c->repeats;
    if (c->max_rps > 0)
        c->profile->search.max_rps = c->max_rps;
    return apply_scale_out(c);
}

/* The output directory and its logs/, then the local platform that logs into it. */
static int start_platform(struct sweep_cli *c)
{
    char err[ERR_LEN] = "";

    snprintf(c->logs, sizeof(c->logs), "%s/logs", c->out);
    if (output_mkdir_p(c->out, err) != 0 || output_mkdir_p(c->logs, err) != 0) {
        fprintf(stderr, "sizeup sweep: --out: %s\n", err);
        return EXIT_RUNTIME;
    }
    c->lc.log_dir = c->logs;
    if (local_platform_new(&c->lc, &c->pl, err) != 0) {
        fprintf(stderr, "sizeup sweep: %s\n", err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* Says up front what will run, and loudly when the limits cannot be enforced. */
static void announce(struct sweep_cli *c)
{
    struct platform_facts f;
    char err[ERR_LEN], d1[QTY_LEN], d2[QTY_LEN];

    if (c->pl.ops->facts(c->pl.self, &f, err) == 0 && !f.limits_enforced)
        fprintf(stderr,
                "\n!! sizeup sweep: LIMITS WILL NOT BE ENFORCED: %s.\n!! Every variant runs "
                "with the whole machine; results are marked \"limits not enforced\".\n\n",
                f.limits_note);
    const struct profile_search *ps = &c->profile->search;
    if (ps->mode == PROFILE_SEARCH_CAPACITY) {
        char d3[QTY_LEN];
        fprintf(stderr,
                "sizeup sweep: %zu variants, capacity search (steps of %s after %s warm-up, at "
                "most %u steps, %u repeats, time budget %s), results in %s/\n",
                c->variants.n, qty_format_duration(ps->window_us, d1),
                qty_format_duration(ps->warmup_us, d2), ps->max_steps, ps->repeats,
                qty_format_duration(ps->budget_us, d3), c->out);
        return;
    }
    fprintf(stderr, "sizeup sweep: %zu variants, %s each after %s warm-up, results in %s/\n",
            c->variants.n, qty_format_duration(c->profile->duration_us, d1),
            qty_format_duration(c->profile->warmup_us, d2), c->out);
}

/* The live page of --progress-addr: the operator's admin server with the progress page alone,
 * open to whoever reaches the address the user chose. Returns 0 or a negative errno (err). */
struct live {
    progress_feed_t *feed;
    progress_srv_t *srv;
    admin_t *admin;
};

static int live_start(const char *addr, struct live *lv, char *err)
{
    struct progress_srv_opts po = {0};
    int rc;

    memset(lv, 0, sizeof(*lv));
    if ((rc = progress_feed_new(&lv->feed)))
        return err_set(err, rc, "out of memory");
    po.feed = lv->feed;
    if ((rc = progress_srv_new(&po, &lv->srv, err)) ||
        (rc = admin_start(addr, NULL, lv->srv, &lv->admin, err)))
        return rc;
    fprintf(stderr, "sizeup sweep: live progress on port %d (%s), page / and WebSocket %s\n",
            admin_port(lv->admin), addr, PROGRESS_PATH);
    return 0;
}

static void live_stop(struct live *lv)
{
    admin_stop(lv->admin);
    progress_srv_free(lv->srv);
    progress_feed_free(lv->feed);
    memset(lv, 0, sizeof(*lv));
}

/* Runs every variant (files rewritten after each), then writes the files a last time. Returns
 * an exit status: 130 when cancelled, the files holding what ran. */
static int run_variants(struct sweep_cli *c)
{
    struct sweep_opts so;
    struct cli_signals sigs;
    struct live lv = {0};
    char err[ERR_LEN] = "", werr[ERR_LEN] = "";
    int status = EXIT_OK;

    if (c->progress_addr && live_start(c->progress_addr, &lv, err) != 0) {
        fprintf(stderr, "sizeup sweep: --progress-addr: %s\n", err);
        live_stop(&lv);
        return EXIT_USAGE;
    }
    memset(&so, 0, sizeof(so));
    so.platform = &c->pl;
    so.profile = c->profile;
    so.variants = &c->variants;
    so.ready_timeout_us = c->ready_timeout_us;
    so.load_threads = c->threads;
    so.progress = on_progress;
    so.progress_ud = c;
    so.row_done = on_row_done;
    so.row_done_ud = c;
    advise_runner_hooks(c->profile, &so);
    c->feed = lv.feed;
    c->feed_slot = lv.feed ? progress_feed_open(lv.feed, "local") : -1;
    signal(SIGPIPE, SIG_IGN);
    c->tty = isatty(STDERR_FILENO);
    so.stop = cli_trap_signals(&sigs, 0);
    int rc = sweep_run(&so, &c->s, err);
    cli_restore_signals(&sigs);
    if (c->feed_slot >= 0)
        progress_feed_close(c->feed, c->feed_slot);
    c->feed_slot = -1;
    live_stop(&lv);
    c->ran = true;
    if (c->tty)
        fputs("\r\033[K", stderr);
    if (rc == -ECANCELED) {
        fprintf(stderr, "sizeup sweep: cancelled; every process and cgroup stopped; writing "
                        "what was measured\n");
        status = EXIT_CANCELLED;
    } else if (rc) {
        fprintf(stderr, "sizeup sweep: %s\n", err);
        status = EXIT_RUNTIME;
    }
    if (write_files(c, &c->s, werr) != 0) {
        fprintf(stderr, "sizeup sweep: writing results: %s\n", werr);
        if (!status)
            status = EXIT_RUNTIME;
    }
    return status;
}

/* On stdout the answer, the table and where the files are: those this sweep wrote (no
 * values.yaml without a recommendation, no report.html when it was left out for size). */
static void summarize(const struct sweep_cli *c)
{
    char path[4200], err[ERR_LEN] = "";
    const char *name;
    struct sweep_answer *ans = calloc(1, sizeof(*ans));

    if (!ans) {
        fprintf(stderr, "sizeup sweep: the answer: out of memory\n");
        return;
    }
    /* The answer first, then the evidence: one document, composed as the files' was. */
    sweep_doc(c, &c->s, ans);
    if (output_answer(stdout, &ans->doc, OUTPUT_ANSWER_TEXT, err) != 0)
        fprintf(stderr, "sizeup sweep: the answer: %s\n", err);
    print_table(&ans->doc);
    free(ans);
    printf("\n  files: %s/", c->out);
    for (size_t i = 0, shown = 0; (name = output_name(i)) != NULL; i++) {
        snprintf(path, sizeof(path), "%s/%s", c->out, name);
        if (access(path, F_OK) == 0)
            printf("%s%s", shown++ ? "  " : "", name);
    }
    printf("\n  app logs: %s/logs/\n", c->out);
}

static void sweep_cli_free(struct sweep_cli *c)
{
    if (c->pl.ops)
        c->pl.ops->free(c->pl.self);
    if (c->ran)
        sweep_free(&c->s);
    profile_free(&c->profile_buf);
}

static int exec_sweep(int argc, char **argv)
{
    struct sweep_cli c; /* about 12 KiB: the variant list is the bulk of it */
    int status = parse_flags(&c, argc, argv);

    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    status = load_inputs(&c);
    if (!status)
        status = start_platform(&c);
    if (!status) {
        announce(&c);
        status = run_variants(&c);
        summarize(&c);
    }
    sweep_cli_free(&c);
    return status;
}

const struct cmd cmd_sweep = {
    .name = "sweep",
    .summary = "sweep worker x CPU x memory variants of an app on this machine and write the "
               "sizing advice",
    .synopsis = "[FLAGS] -- COMMAND [ARGS...]",
    .intro = "Runs COMMAND once per variant on this machine, inside a cgroup limited to the\n"
             "variant's CPU and memory (as a kubelet limits a container), with WORKERS (or\n"
             "--workers-env) and PORT in its environment and $WORKERS / $PORT in its arguments\n"
             "expanded; loads it; writes its outputs (results.md, results.json, values.yaml,\n"
             "auto-sizing.yaml, report.html and, when they apply, hpa.yaml, keda.yaml,\n"
             "pdb.yaml and deployment-patch.yaml) into --out and prints the answer first.\n"
             "Flags override the profile as for loadtest.\n",
    .flags = flags,
    .epilog =
        "example:\n"
        "  sizeup sweep --configs \"1@0.5/256Mi 1@1/256Mi 2@1/512Mi 2@2/512Mi\" --port 8080 \\\n"
        "      -- gunicorn -w '$WORKERS' -b 127.0.0.1:8080 app:app\n"
        "\n"
        "Exit status: 0 done (also when no variant holds the load: results.md says which came\n"
        "closest, and no values.yaml is written), 1 could not run, 2 bad flags, 130 cancelled\n"
        "(files hold what ran).\n",
    .opts = CLI_OPERANDS,
    .exec = exec_sweep,
};
