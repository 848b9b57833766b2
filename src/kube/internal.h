#ifndef SIZEUP_KUBE_INTERNAL_H
#define SIZEUP_KUBE_INTERNAL_H

/* Private to src/kube: the config's layout (the client reads the TLS material from it) and
 * helpers shared between the module's files. Prefix kube__ marks them internal. */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube/client.h"

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

    pthread_mutex_t mu;            /* guards token and token_read_at */
    char *token;                   /* NULL: no bearer token */
    struct timespec token_read_at; /* clock_mono_ts */
};

/* Reads at most cap bytes of path into an owned NUL-terminated buffer. -EFBIG over the cap. */
int kube__read_file(const char *path, size_t cap, char **out /* OUT */, size_t *len /* OUT */,
                    char *err);

/* Decodes base64 (whitespace ignored, padding optional) into an owned buffer. -EINVAL on bad
 * characters. */
int kube__b64_decode(const char *in, size_t len, unsigned char **out /* OUT */,
                     size_t *out_len /* OUT */);

/* Milliseconds on the monotonic clock: the kube layer's name for clock_mono_ms (core/clock.h). */
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

/* The client's options after defaults. */
const struct kube_client_opts *kube__opts(const kube_client_t *c);

/* Records st as the client's last failed status. */
void kube__set_last(kube_client_t *c, const struct kube_status *st);

/* A fresh random seed (time, pid and address mixed). */
uint64_t kube__seed(const void *p);

#endif
