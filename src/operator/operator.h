#ifndef SIZEUP_OPERATOR_OPERATOR_H
#define SIZEUP_OPERATOR_OPERATOR_H

/* The operator daemon: list+watch Deployments, start a sweep for each new sizeup.dev/sweep value
 * (one at a time per Deployment, at most max_concurrent at once), recover sweeps an earlier
 * operator left running, elect a leader on a Lease, serve /healthz /readyz /metrics, and shut
 * down cleanly on a stop request.
 *
 * Threads: one informer per watched namespace (or one for all), max_concurrent workers, the
 * admin server, and the caller's thread, which runs the lease and the shutdown. */

#include <signal.h>
#include <stddef.h>

#include "core/err.h"

#define OPERATOR_MAX_NAMESPACES    64
#define OPERATOR_DEFAULT_LEASE     "sizeup-operator"
#define OPERATOR_LEASE_DURATION_S  15
#define OPERATOR_LEASE_RENEW_S     5
#define OPERATOR_SHUTDOWN_BUDGET_S 10 /* from the stop request to exit */

struct operator_opts {
    const char *kubeconfig;        /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
    const char *const *namespaces; /* borrowed; nnamespaces == 0: every namespace */
    size_t nnamespaces;
    const char *admin_addr; /* NULL: ":8081"; "" or "off": no admin server */
    int progress_public;    /* serve the progress page off loopback, to TokenReview'd readers */
    int max_concurrent;     /* sweeps at once, >= 1 */
    int leader_elect;       /* act only while holding the Lease */
    const char *lease_name; /* NULL: OPERATOR_DEFAULT_LEASE */
    const char *lease_namespace; /* NULL: the kubeconfig's / service account's namespace */
    const char *identity;        /* NULL: $POD_NAME, else hostname-pid */
    int lease_duration_s;        /* 0: OPERATOR_LEASE_DURATION_S */
    int list_limit;              /* page size of the Deployment list; 0: 100 */
    /* Set (by a signal handler) to request shutdown. Borrowed; must outlive the call. */
    volatile sig_atomic_t *stop;
};

/* Runs the operator until *opts->stop is set, then persists or restores running sweeps
 * within OPERATOR_SHUTDOWN_BUDGET_S, releases the lease and returns 0. Returns a negative
 * errno with err when it cannot start (configuration, admin address). Borrows opts. */
int operator_run(const struct operator_opts *opts, char *err);

#endif
