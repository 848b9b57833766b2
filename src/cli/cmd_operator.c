/* `sizeup operator`: the in-cluster daemon (src/operator). Parses flags, installs the signal
 * handlers that request a clean shutdown, and runs the operator until then. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/log.h"
#include "operator/admin.h"
#include "operator/operator.h"

struct op_args {
    struct operator_opts o;
    const char *ns[OPERATOR_MAX_NAMESPACES];
    char *copies[OPERATOR_MAX_NAMESPACES]; /* owned: the --namespace values ns points into */
    size_t ncopies;
};

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

/* --namespace, repeatable: each value is a comma list added to the table. */
static int set_namespace(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    struct op_args *a = dst;
    (void)f;
    if (a->ncopies == OPERATOR_MAX_NAMESPACES)
        return err_set(err, -EINVAL, "--namespace: more than %d namespaces",
                       OPERATOR_MAX_NAMESPACES);
    char *c = strdup(val);
    if (!c)
        return err_set(err, -ENOMEM, "out of memory");
    a->copies[a->ncopies++] = c;
    return add_namespaces(c, a->ns, &a->o.nnamespaces, err);
}

/* --log-level takes effect at once, so that the rest of the start-up logs at that level. */
static int set_log_level(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    enum log_level lvl;
    (void)f, (void)dst;
    if (log_parse_level(val, &lvl))
        return err_set(err, -EINVAL, "--log-level: '%.32s' is not debug, info, warn or error", val);
    log_set_level(lvl);
    return 0;
}

#define ARG(m) offsetof(struct op_args, m)

static const struct cli_flag flags[] = {
    {"kubeconfig", "FILE", "$KUBECONFIG, in-cluster, ~/.kube/config", "kubeconfig to use",
     cli_set_string, ARG(o.kubeconfig), 1, 0},
    {"namespace", "NS", "every namespace", "watch only NS; repeat or comma-separate", set_namespace,
     0, 0, 0},
    {"admin-addr", "ADDR", ADMIN_DEFAULT_ADDR,
     "/healthz /readyz /metrics on HOST:PORT, :PORT or [V6]:PORT; 'off': none", cli_set_string,
     ARG(o.admin_addr), 1, 0},
    {"progress-public", NULL, NULL,
     "serve the progress page / and feed /progress off loopback too, to bearer tokens that a "
     "TokenReview and a SubjectAccessReview (get /progress) accept",
     cli_set_switch, ARG(o.progress_public), 0, 0},
    {"max-concurrent", "N", "1", "sweeps at once", cli_set_uint, ARG(o.max_concurrent), 1, 64},
    {"leader-elect", NULL, NULL, "act only while holding the Lease (for several replicas)",
     cli_set_switch, ARG(o.leader_elect), 0, 0},
    {"lease-name", "NAME", "sizeup-operator", "the Lease's name", cli_set_string, ARG(o.lease_name),
     1, 0},
    {"lease-namespace", "NS", "the kubeconfig's namespace", "the Lease's namespace", cli_set_string,
     ARG(o.lease_namespace), 1, 0},
    {"log-level", "LEVEL", "info", "debug, info, warn or error", set_log_level, 0, 0, 0},
    CLI_FLAGS_END,
};

static int exec_operator(int argc, char **argv)
{
    struct op_args a;
    char err[ERR_LEN] = "";
    int operand, status;
    struct cli_signals sigs;

    memset(&a, 0, sizeof(a));
    a.o.max_concurrent = 1;
    a.o.namespaces = a.ns;
    a.o.admin_addr = ADMIN_DEFAULT_ADDR;
    status = cli_parse(&cmd_operator, argc, argv, &a, &operand);
    if (status) {
        status = status == CLI_HELP ? EXIT_OK : status;
        goto out;
    }
    /* The previous handlers are never put back: the process ends when operator_run returns. */
    a.o.stop = cli_trap_signals(&sigs, 0);
    signal(SIGPIPE, SIG_IGN);
    if (operator_run(&a.o, err) != 0) {
        fprintf(stderr, "sizeup operator: %s\n", err);
        status = EXIT_RUNTIME;
    }
out:
    for (size_t i = 0; i < a.ncopies; i++)
        free(a.copies[i]);
    return status;
}

const struct cmd cmd_operator = {
    .name = "operator",
    .summary = "watch annotated Deployments and sweep them",
    .synopsis = "[FLAGS]",
    .intro =
        "Watches Deployments and sweeps each one whose sizeup.dev/sweep annotation takes a new\n"
        "value; results go to the ConfigMap <deployment>-sizing, progress to "
        "sizeup.dev/status.\n",
    .flags = flags,
    .exec = exec_operator,
};
