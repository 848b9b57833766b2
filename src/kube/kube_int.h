#ifndef SIZEUP_KUBE_KUBE_INT_H
#define SIZEUP_KUBE_KUBE_INT_H

/* Private to src/kube: the config's layout (the client reads the TLS material from it) and
 * helpers shared between the module's files. Prefix kube__ marks them internal. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube/client.h"
#include "kube/exec_cred.h"

struct kube_config {
    char *server; /* "https://host:port[/prefix]", no trailing slash */
    char *ns;
    int insecure; /* insecure-skip-tls-verify */
    /* PEM material held in memory and handed to curl as blobs: files named by the kubeconfig
     * are read once at load, so a later request cannot be redirected to another file. */
    unsigned char *ca;
    size_t ca_len;
    unsigned char *cert;
    size_t cert_len;
    unsigned char *key;
    size_t key_len;
    char *token_file; /* re-read periodically; NULL for static or absent tokens */
    int token_reload_s;

    char *proxy; /* the cluster's proxy-url, NULL when none */

    pthread_mutex_t mu;            /* guards token, token_read_at, and cert/key/exec_* below */
    char *token;                   /* NULL: no bearer token */
    struct timespec token_read_at; /* clock_mono_ts */

    /* An exec credential plugin (NULL when the user has none): its credential replaces token,
     * or cert and key, each time it runs; it runs at the first request, after exec_expiry and
     * on a 401. exec_run_mu keeps two threads from running it at once. */
    struct kube_exec *exec;
    bool exec_have;     /* a credential from the plugin is in place */
    time_t exec_expiry; /* wall clock; 0: never */
    unsigned exec_runs; /* how often it ran, for the log line and tests */
    bool exec_no_tty;   /* kube_config_exec_no_terminal */
    pthread_mutex_t exec_run_mu;
};

/* Runs the exec plugin when its credential is missing, expired or force is set, and puts the
 * new one in place. 0 when a credential is current; *ran (may be NULL) set when the plugin
 * ran and succeeded. Errors name the plugin (never its output). */
int kube__exec_refresh(kube_config_t *cfg, int force, int *ran /* OUT */, char *err);

/* Reads at most cap bytes of path into an owned NUL-terminated buffer. -EFBIG over the cap. */
int kube__read_file(const char *path, size_t cap, char **out /* OUT */, size_t *len /* OUT */,
                    char *err);

/* Decodes base64 (whitespace ignored, padding optional) into an owned buffer. -EINVAL on bad
 * characters. */
int kube__b64_decode(const char *in, size_t len, unsigned char **out /* OUT */,
                     size_t *out_len /* OUT */);

/* Milliseconds on the monotonic clock: the kube layer's name for clock_mono_ms (core/clock.h),
 * defined in times.c, below every other file of src/kube. */
long long kube__now_ms(void);

/* Appends "&key=value" (value URL-escaped) to buf (len bytes). -ENOSPC when it does not fit. */
int kube__query_add(char *buf, size_t len, const char *key, const char *value);

/* The client's stop callback, evaluated (0 when none). */
int kube__stopped(kube_client_t *c);

/* One HTTP exchange's state. A 2xx body goes to sink when one is set (streaming watch), else
 * it is buffered up to cap; a non-2xx body is always buffered (capped) for Status decoding. */
struct kube__xfer {
    char *buf; /* owned, NUL-terminated when non-NULL */
    size_t len;
    size_t alloc;
    size_t cap;
    int too_big;
    long retry_after_s; /* -1 when absent */
    int (*sink)(void *ctx, const char *data, size_t n);
    void *sink_ctx;
    int sink_rc;
    kube_client_t *c;
};

/* Performs one exchange (no retries): method, path (with query, starting with "/"), body
 * (may be NULL) with content type ctype, timeout_ms total (0: none). *code receives the HTTP
 * status (0 when none arrived). Returns 0 when a response arrived (any status), the sink's
 * non-zero value, or a negative transport error (err filled). Counts the exchange. */
int kube__perform(kube_client_t *c, const char *method, const char *verb, const char *path,
                  const char *body, const char *ctype, struct kube__xfer *x, long timeout_ms,
                  long *code /* OUT */, char *err);

/* kube_request with the counter label verb ("LIST" for list GETs). */
int kube__request(kube_client_t *c, const char *method, const char *verb, const char *path,
                  const char *body, const char *ctype, size_t cap, cJSON **out /* OUT */,
                  char *err);

/* Frees x's buffer and zeroes it for reuse. */
void kube__xfer_clear(struct kube__xfer *x);

/* The config the client is bound to (borrowed). */
kube_config_t *kube__cfg(kube_client_t *c);

/* The client's options after defaults. */
const struct kube_client_opts *kube__opts(const kube_client_t *c);

/* Records st as the client's last failed status. */
void kube__set_last(kube_client_t *c, const struct kube_status *st);

/* A fresh random seed (time, pid and address mixed). */
uint64_t kube__seed(const void *p);

#endif
