/* `kubectl sizeup`: the same binary installed as kubectl-sizeup (kubectl runs a plugin named
 * kubectl-NAME for `kubectl NAME`, the convention krew uses). main.c dispatches here on argv[0]'s
 * basename. Four subcommands, each a command table like sizeup's own; the logic is in
 * src/operator/plugin.c.
 *
 * kubectl hands a plugin every argument after its name, so the kubeconfig, context and
 * namespace flags may come before the subcommand or after it: the subcommand is found first,
 * then one parse (flags anywhere) reads them all. */

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "cli/cli.h"
#include "kube/client.h"
#include "operator/plugin.h"

#ifndef SIZEUP_VERSION
#define SIZEUP_VERSION "0.1.0"
#endif

#define PROG           "kubectl sizeup"
#define EXIT_CANCELLED 130 /* 128 + SIGINT, as shells report it */
#define FOLLOW_EVERY_S 1   /* seconds between two looks at a followed sweep */
#define FOLLOW_ERRORS  30  /* consecutive failed looks before --wait gives up */

struct kargs {
    const char *kubeconfig, *context, *ns;
    int all_ns;
    const char *configs, *profile, *target_load, *output;
    int wait, open;
    struct {
        unsigned n;
        int given;
    } scale_out; /* --scale-out */
};

#define ARG(m) offsetof(struct kargs, m)

/* The rows kubectl's own flags have, shared by every subcommand. */
#define KUBECTL_FLAGS                                                                              \
    {"kubeconfig",                                                                                 \
     "FILE",                                                                                       \
     "$KUBECONFIG (merged), ~/.kube/config",                                                       \
     "kubeconfig to use",                                                                          \
     cli_set_string,                                                                               \
     ARG(kubeconfig),                                                                              \
     1,                                                                                            \
     0},                                                                                           \
        {"context",                                                                                \
         "NAME",                                                                                   \
         "the current context",                                                                    \
         "kubeconfig context to use",                                                              \
         cli_set_string,                                                                           \
         ARG(context),                                                                             \
         1,                                                                                        \
         0},                                                                                       \
    {                                                                                              \
        "namespace", "NS", "the context's", "the namespace", cli_set_string, ARG(ns), 1, 0         \
    }

static const struct cli_short shorts[] = {
    {'n', "namespace"}, {'A', "all-namespaces"}, {'o', "output"}, {0, NULL}};

/* --scale-out N: the count with the operator's range (0 and 1 mean off), and that it was given. */
static int set_scale_out(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    struct {
        unsigned n;
        int given;
    } *so = dst;
    int rc = cli_set_uint(f, val, &so->n, err);
    so->given = rc == 0;
    return rc;
}

static const struct cli_flag sweep_flags[] = {
    KUBECTL_FLAGS,
    {"configs", "LIST", "the annotation's, else the operator's default",
     "variants workers@cpu/memory, space-separated", cli_set_string, ARG(configs), 1, 0},
    {"profile", "FILE", "the annotation's, else built in",
     "load profile YAML, stored as ConfigMap NAME-sizeup-profile", cli_set_string, ARG(profile), 1,
     0},
    {"target-load", "LOAD", "the annotation's", "the load to hold: 5000rps, 10000users",
     cli_set_string, ARG(target_load), 1, 0},
    {"scale-out", "N", "the annotation's, else off",
     "after the shape search, measure one variant at 1..N replicas (0 or 1: off)", set_scale_out,
     ARG(scale_out), 0, PROFILE_MAX_SCALE_OUT},
    {"wait", NULL, NULL, "follow the sweep until it ends; exit 0 done, 1 failed", cli_set_switch,
     ARG(wait), 0, 0},
    CLI_FLAGS_END,
};

static const struct cli_flag status_flags[] = {
    KUBECTL_FLAGS,
    {"all-namespaces", NULL, NULL, "every namespace", cli_set_switch, ARG(all_ns), 0, 0},
    CLI_FLAGS_END,
};

static const struct cli_flag results_flags[] = {
    KUBECTL_FLAGS,
    {"output", "FORMAT", "md", "md, json, values, hpa, pdb, patch, rule or html", cli_set_string,
     ARG(output), 1, 0},
    {"open", NULL, NULL, "write report.html to a temporary file and say where", cli_set_switch,
     ARG(open), 0, 0},
    CLI_FLAGS_END,
};

static const struct cli_flag cancel_flags[] = {
    KUBECTL_FLAGS,
    CLI_FLAGS_END,
};

/* The configuration, client and namespace of a, as kubectl would pick them. */
struct session {
    kube_config_t *cfg;
    kube_client_t *c;
    const char *ns;
};

static int session_open(const struct cmd *cmd, const struct kargs *a, struct session *s)
{
    struct kube_config_opts co = {0};
    struct kube_client_opts ko = {0};
    char err[ERR_LEN] = "";

    memset(s, 0, sizeof(*s));
    co.kubeconfig = a->kubeconfig;
    co.context = a->context;
    co.in_cluster_last = 1;
    ko.user_agent = "kubectl-sizeup";
    ko.max_attempts = 3;
    if (kube_config_load(&co, &s->cfg, err) != 0 || kube_client_new(s->cfg, &ko, &s->c, err)) {
        fprintf(stderr, "%s %s: %s\n", PROG, cmd->name, err);
        return EXIT_RUNTIME;
    }
    s->ns = a->ns ? a->ns : kube_config_namespace(s->cfg);
    return EXIT_OK;
}

static void session_close(struct session *s)
{
    kube_client_free(s->c);
    kube_config_free(s->cfg);
}

/* Parses argv for cmd and its one operand, a Deployment. */
static int parse_target(const struct cmd *cmd, int argc, char **argv, struct kargs *a,
                        char name[ANNOT_MAX_NAME + 1])
{
    char err[ERR_LEN] = "";
    int operand, rc = cli_parse(cmd, argc, argv, a, &operand);

    if (rc)
        return rc;
    if (operand >= argc)
        return cli_usage_error(cmd, "which Deployment? (deploy/NAME)");
    if (operand + 1 < argc) {
        snprintf(err, sizeof(err), "unexpected argument '%.64s'", argv[operand + 1]);
        return cli_usage_error(cmd, err);
    }
    if (plugin_parse_target(argv[operand], name, err) != 0)
        return cli_usage_error(cmd, err);
    return 0;
}

static int fail(const struct cmd *cmd, const char *err)
{
    fprintf(stderr, "%s %s: %s\n", PROG, cmd->name, err);
    return EXIT_RUNTIME;
}

/* ---- sweep --------------------------------------------------------------------------------- */

static int read_profile(const char *path, char **text)
{
    FILE *f = fopen(path, "r");
    size_t cap = PLUGIN_PROFILE_MAX + 1, n;
    char ebuf[128];

    *text = NULL;
    if (!f) {
        fprintf(stderr, "%s sweep: --profile: %s: %s\n", PROG, path,
                err_str(errno, ebuf, sizeof(ebuf)));
        return EXIT_USAGE;
    }
    *text = malloc(cap + 1);
    n = *text ? fread(*text, 1, cap, f) : 0;
    fclose(f);
    if (!*text || n >= cap) {
        fprintf(stderr, "%s sweep: --profile: %s: %s\n", PROG, path,
                *text ? "larger than 256 KiB" : "out of memory");
        return EXIT_USAGE;
    }
    (*text)[n] = '\0';
    return EXIT_OK;
}

/* Looks at the sweep every FOLLOW_EVERY_S until it ends or a signal stops the following. */
static int follow(struct session *s, const char *name, const char *sweep)
{
    struct plugin_follow st;
    struct cli_signals sigs;
    enum plugin_state state = PLUGIN_WAITING;
    char err[ERR_LEN] = "";
    int errors = 0, status = EXIT_RUNTIME;
    volatile sig_atomic_t *stop = cli_trap_signals(&sigs, 1);

    memset(&st, 0, sizeof(st));
    while (!*stop) {
        if (plugin_follow_step(s->c, s->ns, name, sweep, &st, stdout, &state, err) != 0) {
            if (++errors >= FOLLOW_ERRORS) {
                fprintf(stderr, "%s sweep: following stopped: %s\n", PROG, err);
                goto out;
            }
        } else {
            errors = 0;
        }
        if (state == PLUGIN_DONE || state == PLUGIN_FAILED) {
            status = state == PLUGIN_DONE ? EXIT_OK : EXIT_RUNTIME;
            if (state == PLUGIN_DONE)
                printf("results: kubectl sizeup results deploy/%s [-o "
                       "md|json|values|hpa|keda|pdb|patch]\n",
                       name);
            goto out;
        }
        clock_sleep_us(FOLLOW_EVERY_S * 1000000LL);
    }
    fprintf(stderr,
            "%s sweep: stopped following; the sweep goes on (kubectl sizeup cancel "
            "deploy/%s stops it)\n",
            PROG, name);
    status = EXIT_CANCELLED;
out:
    cli_restore_signals(&sigs);
    return status;
}

static int exec_sweep(int argc, char **argv)
{
    struct kargs a = {0};
    struct plugin_sweep_opts o = {0};
    struct session s = {0};
    char name[ANNOT_MAX_NAME + 1], sweep[ANNOT_MAX_SWEEP + 1], err[ERR_LEN] = "";
    char *profile = NULL;
    int status = parse_target(&kcmd_sweep, argc, argv, &a, name);

    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    if (a.profile && (status = read_profile(a.profile, &profile)) != EXIT_OK)
        goto out;
    if ((status = session_open(&kcmd_sweep, &a, &s)) != EXIT_OK)
        goto out;
    o.configs = a.configs;
    o.profile = profile;
    o.profile_src = a.profile;
    o.target_load = a.target_load;
    o.scale_out = a.scale_out.given ? (int)a.scale_out.n : -1;
    int rc = plugin_sweep(s.c, s.ns, name, &o, sweep, stdout, err);
    if (rc) {
        status = rc == -EINVAL ? (fprintf(stderr, "%s sweep: %s\n", PROG, err), EXIT_USAGE)
                               : fail(&kcmd_sweep, err);
        goto out;
    }
    status = a.wait ? follow(&s, name, sweep) : EXIT_OK;
out:
    session_close(&s);
    free(profile);
    return status;
}

const struct cmd kcmd_sweep = {
    .prog = PROG,
    .name = "sweep",
    .summary = "ask the operator to sweep a Deployment, and follow it with --wait",
    .synopsis = "deploy/NAME [FLAGS]",
    .intro = "Sets the sizeup.dev/ annotations of the Deployment (and a profile ConfigMap from a\n"
             "local file) so that the operator sweeps it; with --wait, prints the status and each\n"
             "variant's verdict as it lands, until the sweep ends.\n",
    .flags = sweep_flags,
    .epilog = "Exit status with --wait: 0 done, 1 failed or cancelled, 130 stopped following.\n",
    .opts = CLI_PERMUTE,
    .shorts = shorts,
    .exec = exec_sweep,
};

/* ---- status -------------------------------------------------------------------------------- */

static int exec_status(int argc, char **argv)
{
    struct kargs a = {0};
    struct session s = {0};
    char err[ERR_LEN] = "";
    int operand, status = cli_parse(&kcmd_status, argc, argv, &a, &operand);

    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    if (operand < argc)
        return cli_usage_error(&kcmd_status, "status takes no Deployment: it lists them all");
    if ((status = session_open(&kcmd_status, &a, &s)) == EXIT_OK &&
        plugin_status(s.c, a.all_ns ? NULL : s.ns, stdout, err) != 0)
        status = fail(&kcmd_status, err);
    session_close(&s);
    return status;
}

const struct cmd kcmd_status = {
    .prog = PROG,
    .name = "status",
    .summary = "every sizing request and its state, one line each",
    .synopsis = "[-A] [FLAGS]",
    .intro = "Lists the Deployments of the namespace (every namespace with -A) that carry a\n"
             "sizing request or its state: status, request, re-sweep setting.\n",
    .flags = status_flags,
    .opts = CLI_PERMUTE,
    .shorts = shorts,
    .exec = exec_status,
};

/* ---- results ------------------------------------------------------------------------------- */

/* Writes html into a new temporary file; its path into path. */
static int write_temp_html(const char *name, const char *html, char *path, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, len, "%s/sizeup-%.64s-XXXXXX.html", dir && *dir ? dir : "/tmp", name);
    int fd = mkstemps(path, 5);
    if (fd < 0)
        return -errno;
    size_t n = strlen(html), off = 0;
    while (off < n) {
        ssize_t w = write(fd, html + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno ? -errno : -EIO;
            close(fd);
            unlink(path);
            return e;
        }
        off += (size_t)w;
    }
    return close(fd) == 0 ? 0 : -errno;
}

static int exec_results(int argc, char **argv)
{
    struct kargs a = {0};
    struct session s = {0};
    char name[ANNOT_MAX_NAME + 1], err[ERR_LEN] = "", path[4096], ebuf[128];
    char *text = NULL;
    int status = parse_target(&kcmd_results, argc, argv, &a, name);

    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    const char *key = a.open ? "report.html" : plugin_output_key(a.output ? a.output : "md");
    if (!key) {
        snprintf(err, sizeof(err),
                 "-o: '%.32s' is not md, json, values, hpa, pdb, patch, rule or html", a.output);
        return cli_usage_error(&kcmd_results, err);
    }
    if ((status = session_open(&kcmd_results, &a, &s)) != EXIT_OK)
        goto out;
    if (plugin_results(s.c, s.ns, name, key, &text, err) != 0) {
        status = fail(&kcmd_results, err);
        goto out;
    }
    if (!a.open) {
        fputs(text, stdout);
        goto out;
    }
    int rc = write_temp_html(name, text, path, sizeof(path));
    if (rc) {
        snprintf(err, sizeof(err), "writing %s: %s", path, err_str(-rc, ebuf, sizeof(ebuf)));
        status = fail(&kcmd_results, err);
        goto out;
    }
    printf("report.html of deployment/%s written to %s\n", name, path);
out:
    free(text);
    session_close(&s);
    return status;
}

const struct cmd kcmd_results = {
    .prog = PROG,
    .name = "results",
    .summary = "print a sweep's results from its ConfigMap",
    .synopsis = "deploy/NAME [-o md|json|values|hpa|keda|pdb|patch] [--open] [FLAGS]",
    .intro = "Prints one output of the last sweep from the ConfigMap NAME-sizing: results.md,\n"
             "results.json, values.yaml, hpa.yaml, keda.yaml, pdb.yaml or\n"
             "deployment-patch.yaml.\n",
    .flags = results_flags,
    .opts = CLI_PERMUTE,
    .shorts = shorts,
    .exec = exec_results,
};

/* ---- cancel -------------------------------------------------------------------------------- */

static int exec_cancel(int argc, char **argv)
{
    struct kargs a = {0};
    struct session s = {0};
    char name[ANNOT_MAX_NAME + 1], err[ERR_LEN] = "";
    int status = parse_target(&kcmd_cancel, argc, argv, &a, name);

    if (status)
        return status == CLI_HELP ? EXIT_OK : status;
    if ((status = session_open(&kcmd_cancel, &a, &s)) == EXIT_OK &&
        plugin_cancel(s.c, s.ns, name, stdout, err) != 0)
        status = fail(&kcmd_cancel, err);
    session_close(&s);
    return status;
}

const struct cmd kcmd_cancel = {
    .prog = PROG,
    .name = "cancel",
    .summary = "withdraw a sweep request; the operator stops and restores",
    .synopsis = "deploy/NAME [FLAGS]",
    .intro = "Removes the sizeup.dev/sweep annotation: the operator stops the sweep, deletes its\n"
             "clone or puts the pod template back, and sets the status to failed: cancelled.\n",
    .flags = cancel_flags,
    .opts = CLI_PERMUTE,
    .shorts = shorts,
    .exec = exec_cancel,
};

/* ---- dispatch ------------------------------------------------------------------------------ */

static const struct cmd *const subs[] = {&kcmd_sweep, &kcmd_status, &kcmd_results, &kcmd_cancel};
#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static void plugin_usage(FILE *f)
{
    fprintf(f, "kubectl sizeup: ask the sizeup operator for sweeps and read their results.\n\n"
               "usage: kubectl sizeup COMMAND [FLAGS]\n\ncommands:\n");
    for (size_t i = 0; i < NSUBS; i++)
        fprintf(f, "  %-10s %s\n", subs[i]->name, subs[i]->summary);
    fprintf(f, "\nFlags as kubectl's, before or after the command: --kubeconfig FILE, --context "
               "NAME,\n-n/--namespace NS. Run 'kubectl sizeup help COMMAND' for a command's "
               "flags.\n");
}

static const struct cmd *find_sub(const char *name)
{
    for (size_t i = 0; i < NSUBS; i++)
        if (strcmp(subs[i]->name, name) == 0)
            return subs[i];
    return NULL;
}

/* Whether arg is a flag of the shared rows that takes its value in the next argument. */
static int takes_next(const char *arg)
{
    static const char *const with_value[] = {"--kubeconfig", "--context", "--namespace", "-n"};
    for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
        if (strcmp(arg, with_value[i]) == 0)
            return 1;
    return 0;
}

int kubectl_plugin_main(int argc, char **argv)
{
    char *args[256];
    int sub = 0;

    for (int i = 1; i < argc && !sub; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (argv[i][0] != '-')
            sub = i;
        else if (takes_next(argv[i]))
            i++;
    }
    if (!sub) {
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
                plugin_usage(stdout);
                return EXIT_OK;
            }
        plugin_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[sub], "help") == 0) {
        const struct cmd *c = sub + 1 < argc ? find_sub(argv[sub + 1]) : NULL;
        if (sub + 1 < argc && !c) {
            fprintf(stderr, "%s: unknown command '%s'\n", PROG, argv[sub + 1]);
            return EXIT_USAGE;
        }
        if (c)
            cli_usage(c, stdout);
        else
            plugin_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[sub], "version") == 0) {
        printf("kubectl sizeup (sizeup %s)\n", SIZEUP_VERSION);
        return EXIT_OK;
    }
    const struct cmd *c = find_sub(argv[sub]);
    if (!c) {
        fprintf(stderr, "%s: unknown command '%s'\n\n", PROG, argv[sub]);
        plugin_usage(stderr);
        return EXIT_USAGE;
    }
    if (argc > (int)(sizeof(args) / sizeof(args[0])) - 1) {
        fprintf(stderr, "%s: too many arguments\n", PROG);
        return EXIT_USAGE;
    }
    /* The subcommand first, then every other argument in its order: the flags before it
     * become flags of the subcommand. */
    int n = 0;
    args[n++] = argv[sub];
    for (int i = 1; i < argc; i++)
        if (i != sub)
            args[n++] = argv[i];
    args[n] = NULL;
    return c->exec(n, args);
}
