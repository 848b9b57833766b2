#ifndef SIZEUP_TESTS_KUBE_FAKELIB_H
#define SIZEUP_TESTS_KUBE_FAKELIB_H

/* Helpers of the programs that drive src/kube against a running fake API server
 * (tests/fakeapi): tests/kube/test_kube_fake.c, tests/kube/test_kube_platform.c and the
 * reliability driver tests/kube/kube_faults.c. They read the fake's state directory, build
 * clients for it, call its /fake/ control endpoints and run an informer on a thread of its own
 * that counts what it sees. Every function that can fail returns 0 or a negative errno with a
 * message in err; the callers decide whether that is an assertion or an exit. */

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cJSON.h>

#include "core/err.h"
#include "kube/client.h"

/* One running fake, from its state directory. */
struct fk {
    char dir[512];
    char server[128]; /* https://127.0.0.1:PORT */
};

/* Fills *f from the directory in the environment variable `var` (FAKEAPI_DIR ...): a missing
 * variable or a fake that is not ready is an error, never a reason to skip. */
int fk_open(struct fk *f /* OUT */, const char *var, char *err);

/* Reads DIR/NAME into buf (len bytes), trailing blanks and newlines removed. */
int fk_slurp(const char *dir, const char *name, char *buf, size_t len, char *err);

/* A client for server `srv` trusting `ca`, with a static token or else a token file; o may be
 * NULL. Returns an owned client (kube_client_free) and *cfg (kube_config_free), or NULL. */
kube_client_t *fk_client(const char *srv, const char *ca, const char *token, const char *token_file,
                         const struct kube_client_opts *o, kube_config_t **cfg /* OUT */,
                         char *err);

/* A client with the fake's admin token; o may be NULL. As fk_client. */
kube_client_t *fk_admin(const struct fk *f, const struct kube_client_opts *o,
                        kube_config_t **cfg /* OUT */, char *err);

/* One call to the fake's control endpoints (never faulted, never in its request log); body may
 * be NULL. Returns 0 with *out owned (cJSON_Delete; out may be NULL). */
int fk_control(const struct fk *f, const char *method, const char *path, const char *body,
               cJSON **out /* OUT */, char *err);

/* Adds a fault rule (JSON); removes every rule. */
int fk_fault(const struct fk *f, const char *rule, char *err);
int fk_faults_clear(const struct fk *f, char *err);

/* The request log's entries after sequence number `since`, as an owned array, or NULL. */
cJSON *fk_log_since(const struct fk *f, long since, char *err);

/* The highest sequence number in the request log (0 when empty), or -1 on error. */
long fk_log_last_seq(const struct fk *f, char *err);

/* Waits up to ms milliseconds for *v to reach want. Returns whether it did. */
int fk_wait_for(atomic_int *v, int want, int ms);

/* ---- an informer on its own thread, counting what it sees -------------------------------- */

#define FK_INF_NAMES 256

struct fk_inf {
    kube_client_t *c;
    kube_config_t *cfg;
    pthread_t th;
    atomic_int stop;
    atomic_int lists, list_ends, restarts, listed, added, modified, deleted;
    pthread_mutex_t mu;
    char names[FK_INF_NAMES][32]; /* names seen as watch ADDED events, in order */
    int nnames;
    struct kube_informer_opts opts;
    int rc; /* kube_informer_run's return, once stopped */
    char err[ERR_LEN];
};

/* Starts kube_informer_run(opts) with an admin client of its own, on a thread of its own, as
 * the operator runs it; opts' on_event and ctx are replaced by the counting ones. */
int fk_inf_start(struct fk_inf *s, const struct fk *f, const struct kube_informer_opts *opts,
                 char *err);

/* Stops the informer, joins its thread and frees its client. */
void fk_inf_stop(struct fk_inf *s);

/* A clean-up whose object may already be gone: its result is looked at and let go. */
#define CLEANUP(call)                                                                              \
    do {                                                                                           \
        int cleanup_rc_ = (call);                                                                  \
        (void)cleanup_rc_;                                                                         \
    } while (0)

#endif
