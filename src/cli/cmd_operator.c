/* `sizeup operator`: the in-cluster daemon (src/operator). Parses flags, installs the signal
 * handlers that request a clean shutdown, and runs the operator until then. */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/log.h"
#include "operator/admin.h"
#include "operator/operator.h"

#define USAGE                                                                                      \
    "usage: sizeup operator [--kubeconfig FILE] [--namespace NS]... [--admin-addr ADDR]\n"         \
    "                       [--max-concurrent N] [--leader-elect] [--lease-name NAME]\n"           \
    "                       [--lease-namespace NS] [--log-level LEVEL]\n"                          \
    "\n"                                                                                           \
    "Watches Deployments and sweeps each one whose sizeup.dev/sweep annotation takes a new\n"      \
    "value; results go to the ConfigMap <deployment>-sizing, progress to sizeup.dev/status.\n"     \
    "\n"                                                                                           \
    "  --kubeconfig FILE      kubeconfig to use (default: $KUBECONFIG, in-cluster, "               \
    "~/.kube/config)\n"                                                                            \
    "  --namespace NS         watch only NS; repeat or comma-separate (default: every "            \
    "namespace)\n"                                                                                 \
    "  --admin-addr ADDR      /healthz /readyz /metrics on ADDR (default :8081; 'off': none)\n"    \
    "  --max-concurrent N     sweeps at once (default 1)\n"                                        \
    "  --leader-elect         act only while holding the Lease (for several replicas)\n"           \
    "  --lease-name NAME      the Lease's name (default sizeup-operator)\n"                        \
    "  --lease-namespace NS   the Lease's namespace (default: the kubeconfig's)\n"                 \
    "  --log-level LEVEL      debug, info, warn, error (default info)\n"

/* The only mutable global besides read-only configuration (house rule 10). */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Splits a comma list into the namespace table (names borrowed from a copy the caller frees). */
static int add_namespaces(char *list, const char **ns, size_t *n, char *err)
{
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        if (!*tok)
            continue;
        if (strlen(tok) > 63 || strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(tok))
            return err_set(err, -EINVAL, "--namespace: '%.64s' is not a namespace name", tok);
        if (*n == OPERATOR_MAX_NAMESPACES)
            return err_set(err, -EINVAL, "--namespace: more than %d namespaces",
                           OPERATOR_MAX_NAMESPACES);
        ns[(*n)++] = tok;
    }
    return 0;
}

static int exec_operator(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"namespace", required_argument, NULL, 'n'},
        {"admin-addr", required_argument, NULL, 'a'},
        {"max-concurrent", required_argument, NULL, 'c'},
        {"leader-elect", no_argument, NULL, 'L'},
        {"lease-name", required_argument, NULL, 'l'},
        {"lease-namespace", required_argument, NULL, 's'},
        {"log-level", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct operator_opts o = {0};
    const char *ns[OPERATOR_MAX_NAMESPACES];
    char *copies[OPERATOR_MAX_NAMESPACES];
    size_t ncopies = 0;
    char err[ERR_LEN] = "";
    int opt, status = EXIT_OK;
    struct sigaction sa;

    o.max_concurrent = 1;
    o.namespaces = ns;
    o.admin_addr = ADMIN_DEFAULT_ADDR;
    o.stop = &stop_requested;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            o.kubeconfig = optarg;
            break;
        case 'n': {
            if (ncopies == OPERATOR_MAX_NAMESPACES) {
                err_set(err, -EINVAL, "--namespace: too many");
                goto usage;
            }
            char *c = strdup(optarg);
            if (!c) {
                fprintf(stderr, "sizeup operator: out of memory\n");
                status = EXIT_RUNTIME;
                goto out;
            }
            copies[ncopies++] = c;
            if (add_namespaces(c, ns, &o.nnamespaces, err))
                goto usage;
            break;
        }
        case 'a':
            o.admin_addr = optarg;
            break;
        case 'c': {
            char *end = NULL;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || !end || *end || v < 1 || v > 64) {
                err_set(err, -EINVAL, "--max-concurrent: '%.32s' is not a number from 1 to 64",
                        optarg);
                goto usage;
            }
            o.max_concurrent = (int)v;
            break;
        }
        case 'L':
            o.leader_elect = 1;
            break;
        case 'l':
            o.lease_name = optarg;
            break;
        case 's':
            o.lease_namespace = optarg;
            break;
        case 'v': {
            enum log_level lvl;
            if (log_parse_level(optarg, &lvl)) {
                err_set(err, -EINVAL, "--log-level: '%.32s' is not debug, info, warn or error",
                        optarg);
                goto usage;
            }
            log_set_level(lvl);
            break;
        }
        case 'h':
            fputs(USAGE, stdout);
            goto out;
        default:
            err_set(err, -EINVAL, "unknown or incomplete flag '%s'", argv[optind - 1]);
            goto usage;
        }
    }
    if (optind < argc) {
        err_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
        goto usage;
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (operator_run(&o, err) != 0) {
        fprintf(stderr, "sizeup operator: %s\n", err);
        status = EXIT_RUNTIME;
    }
    goto out;
usage:
    fprintf(stderr, "sizeup operator: %s\n\n%s", err, USAGE);
    status = EXIT_USAGE;
out:
    for (size_t i = 0; i < ncopies; i++)
        free(copies[i]);
    return status;
}

const struct cmd cmd_operator = {"operator", "watch annotated Deployments and sweep them", USAGE,
                                 exec_operator};
