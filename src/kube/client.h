#ifndef SIZEUP_KUBE_CLIENT_H
#define SIZEUP_KUBE_CLIENT_H

/* sizeup's hand-written Kubernetes client: configuration (kubeconfig or in-cluster), one
 * libcurl easy handle per client, JSON verbs on a resource path, decoded `Status` errors,
 * retries (429 Retry-After, 5xx backoff, 401 token re-read), and list+watch ("informer").
 *
 * Threads: a kube_config_t is shared by every thread (its token is guarded by a mutex); a
 * kube_client_t belongs to one thread at a time. The informer (kube_informer_run) BLOCKS: run
 * it on its own thread with its own client. Every blocking call returns about a second after
 * the client's stop callback says stop (curl's progress callback and backoff sleeps poll it),
 * and no non-watch call blocks longer than max_attempts request timeouts plus backoff.
 *
 * Ownership: cJSON trees passed in are borrowed; cJSON trees returned through OUT params are
 * owned by the caller (free with cJSON_Delete). Strings returned by accessors are borrowed
 * from the object they came from and live as long as it does.
 *
 * Security: the bearer token is never logged, never put in err, never passed to curl's verbose
 * output (CURLOPT_VERBOSE stays off); it travels only in the Authorization header. */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Response body caps: a body over its cap is an error (-EFBIG), never a crash. */
#define KUBE_BODY_MAX_LIST        (16u << 20) /* list responses (one page) */
#define KUBE_BODY_MAX             (4u << 20)  /* every other response */
#define KUBE_WATCH_LINE_MAX       (4u << 20)  /* one watch event (etcd caps objects at 1.5 MiB) */
#define KUBE_TOKEN_MAX            (16u << 10)
#define KUBE_KUBECONFIG_MAX       (4u << 20) /* one kubeconfig, and a merged list in total */
#define KUBE_KUBECONFIG_FILES_MAX 16         /* files in $KUBECONFIG */

/* Error codes beyond plain errno meanings. Every verb returns 0 or one of:
 *   -ENOENT 404 NotFound             -EEXIST 409 AlreadyExists      KUBE_ECONFLICT 409 Conflict
 *   KUBE_EGONE 410 Gone / Expired    -EINVAL 400/422 Invalid         -EACCES 401 (after re-read)
 *   -EPERM 403 Forbidden             -EBUSY 429 after retries       -EIO 5xx after retries
 *   -ETIMEDOUT timeout               -ECONNREFUSED/-EHOSTUNREACH     -EPROTO TLS/HTTP failure
 *   -EFBIG body over cap             -EBADMSG undecodable JSON       -ECANCELED stop requested
 *   -ENOMEM                          -ENOTSUP (exec/auth-provider kubeconfig users)
 * err then reads e.g. "PUT apps/v1 deployments default/web: 409 Conflict: the object has been
 * modified; please apply your changes to the latest version". */
#define KUBE_ECONFLICT (-ESTALE)
#define KUBE_EGONE     (-ETIME)

/* ---- configuration ------------------------------------------------------------------------ */

typedef struct kube_config kube_config_t;

struct kube_config_opts {
    /* Kubeconfig path (--kubeconfig). NULL: every file in $KUBECONFIG merged as kubectl merges
     * them (the first file to set current-context, or to name a context, cluster or user,
     * wins; missing files are skipped), then in-cluster when KUBERNETES_SERVICE_HOST is set,
     * then ~/.kube/config. */
    const char *kubeconfig;
    /* kubectl's order instead: ~/.kube/config before in-cluster (for the kubectl plugin). */
    int in_cluster_last;
    const char *context; /* NULL: current-context */
    /* Service-account directory for in-cluster config. NULL: the standard
     * /var/run/secrets/kubernetes.io/serviceaccount (tests point it elsewhere). */
    const char *sa_dir;
    /* Seconds between token file re-reads (service-account token or kubeconfig tokenFile).
     * 0: 60 s. A 401 always triggers an immediate re-read. */
    int token_reload_s;
};

/* Loads configuration as described in opts (may be NULL for all defaults). On success *out is
 * an owned config, free with kube_config_free(). Unsupported users (exec, auth-provider) fail
 * with -ENOTSUP and a message saying so. Never puts credentials in err. */
SIZEUP_MUST_USE int kube_config_load(const struct kube_config_opts *opts,
                                     kube_config_t **out /* OUT */, char *err);

/* Parses kubeconfig YAML from memory (len bytes, at most KUBE_KUBECONFIG_MAX). Relative file
 * paths in it resolve against base_dir (NULL: the current directory); context NULL selects
 * current-context; token_reload_s as in kube_config_opts. Borrows its inputs. *out is owned. */
SIZEUP_MUST_USE int kube_config_parse(const char *yaml, size_t len, const char *base_dir,
                                      const char *context, int token_reload_s,
                                      kube_config_t **out /* OUT */, char *err);

/* One kubeconfig text of a merged list; every field borrowed. */
struct kube_config_text {
    const char *text;
    size_t len;
    const char *base_dir; /* relative paths in this text resolve here; NULL: the current dir */
    const char *name;     /* the file's path for messages; may be NULL */
};

/* Parses texts[0..n) (n at most KUBE_KUBECONFIG_FILES_MAX, KUBE_KUBECONFIG_MAX bytes in all)
 * merged as kubectl merges $KUBECONFIG: the first text to set current-context sets it, the
 * first to name a context, cluster or user provides it, each with its own base_dir. context
 * NULL: the merged current-context. *out is owned. */
SIZEUP_MUST_USE int kube_config_parse_merged(const struct kube_config_text *texts, size_t n,
                                             const char *context, int token_reload_s,
                                             kube_config_t **out /* OUT */, char *err);

/* Builds an in-cluster config from host, port and the service-account directory (sa_dir NULL:
 * the standard one). Reads token, ca.crt and namespace (namespace optional: "default"). */
SIZEUP_MUST_USE int kube_config_in_cluster(const char *host, const char *port, const char *sa_dir,
                                           int token_reload_s, kube_config_t **out /* OUT */,
                                           char *err);

void kube_config_free(kube_config_t *cfg);

/* Borrowed strings, valid until kube_config_free. */
const char *kube_config_server(const kube_config_t *cfg);    /* "https://host:port" */
const char *kube_config_namespace(const kube_config_t *cfg); /* context's, or "default" */

/* Re-reads the token file when force is set or token_reload_s has passed since the last read
 * (no-op for static tokens). A failed read or an empty file keeps the old token, logs the
 * error (never the value) and returns the negative error; 0 when the token is current.
 * *changed (may be NULL) is set when a different token was loaded. Thread-safe. */
SIZEUP_MUST_USE int kube_config_reload_token(kube_config_t *cfg, int force, int *changed /* OUT */,
                                             char *err);

/* Never runs cfg's exec credential plugin interactively, terminal or not (the operator: it
 * must not stop on a prompt); interactiveMode Always is then an error. */
void kube_config_exec_no_terminal(kube_config_t *cfg);

/* Copies the current token into buf (len bytes). Returns 0, -ENOENT when the config has no
 * token (client certificates only), -ENOSPC when buf is too small. Thread-safe. For the
 * request path and tests; never log the result. */
SIZEUP_MUST_USE int kube_config_token(kube_config_t *cfg, char *buf, size_t len);

/* ---- client and raw requests -------------------------------------------------------------- */

typedef struct kube_client kube_client_t;

/* Initialises libcurl (whose global init is not thread-safe). Call once from main before any
 * thread creates a client; tests and single-threaded tools may skip it. Returns 0 or -EIO. */
SIZEUP_MUST_USE int kube_global_init(char *err);

/* Returns non-zero when the caller wants in-flight and future calls to stop (-ECANCELED). */
typedef int (*kube_stop_fn)(void *ctx);

/* Called once per HTTP exchange (every attempt, retries included) on the client's thread:
 * verb "GET"/"LIST"/"WATCH"/"POST"/"PUT"/"PATCH"/"DELETE", code the HTTP status or 0 when no
 * response arrived. For Prometheus counters by code; must not call back into the client. */
typedef void (*kube_request_fn)(void *ctx, const char *verb, long code, double seconds);

struct kube_client_opts {
    long connect_timeout_ms;    /* 0: 5000 */
    long request_timeout_ms;    /* 0: 30000; applies to each non-watch request */
    int max_attempts;           /* 0: 5; attempts per call on 429, 5xx and transport errors */
    unsigned backoff_base_ms;   /* 0: 200; first 5xx backoff, doubling, with jitter */
    unsigned backoff_max_ms;    /* 0: 10000 */
    unsigned retry_after_max_s; /* 0: 30; a longer Retry-After is clamped to this */
    kube_stop_fn stop;          /* may be NULL */
    void *stop_ctx;
    kube_request_fn on_request; /* may be NULL */
    void *on_request_ctx;
    const char *user_agent; /* NULL: "sizeup" */
};

/* Creates a client bound to cfg (borrowed: cfg must outlive the client). opts may be NULL.
 * *out is owned, free with kube_client_free(). */
SIZEUP_MUST_USE int kube_client_new(kube_config_t *cfg, const struct kube_client_opts *opts,
                                    kube_client_t **out /* OUT */, char *err);
void kube_client_free(kube_client_t *c);

/* The decoded form of an API `Status` (or of an HTTP error without one). */
struct kube_status {
    long code;          /* HTTP status, or Status.code */
    char reason[64];    /* e.g. "Conflict", "NotFound", "Expired"; "" when absent */
    char message[192];  /* Status.message, truncated; "" when absent */
    long retry_after_s; /* the response's Retry-After in seconds; -1 when absent */
};

/* The status of the last failed exchange on this client (code 0 when none). Borrowed. */
const struct kube_status *kube_client_last_status(const kube_client_t *c);

/* Decodes a response body (len bytes, borrowed) that may be a Status object into out; when the
 * body is not a Status, out holds http_code and the standard reason phrase. Returns the
 * negative error code for http_code (table above), or 0 for a 2xx code. Never fails hard. */
SIZEUP_MUST_USE int kube_status_decode(const char *body, size_t len, long http_code,
                                       struct kube_status *out);

/* Maps an HTTP code (and Status.reason, may be NULL) to the negative error above. */
int kube_code_to_errno(long http_code, const char *reason);

/* One request with retries, for paths the verbs below do not cover (discovery, metrics):
 * method "GET"/"POST"/..., path starting with "/", body NULL or JSON text with content_type
 * (NULL: application/json), cap the body cap (0: KUBE_BODY_MAX). *out (may be NULL) receives the
 * parsed JSON body of a 2xx response (owned; NULL when the body is empty). */
SIZEUP_MUST_USE int kube_request(kube_client_t *c, const char *method, const char *path,
                                 const char *body, const char *content_type, size_t cap,
                                 cJSON **out /* OUT */, char *err);

/* ---- resources and verbs ------------------------------------------------------------------ */

/* A resource type: group "" is the core group (/api/v1), otherwise /apis/<group>/<version>. */
struct kube_resource {
    const char *group;
    const char *version;
    const char *plural;
    int namespaced;
};

extern const struct kube_resource KUBE_DEPLOYMENTS; /* apps/v1 deployments */
extern const struct kube_resource KUBE_PODS;        /* v1 pods */
extern const struct kube_resource KUBE_CONFIGMAPS;  /* v1 configmaps */
extern const struct kube_resource KUBE_SERVICES;    /* v1 services */
extern const struct kube_resource KUBE_EVENTS;      /* events.k8s.io/v1 events */
extern const struct kube_resource KUBE_LEASES;      /* coordination.k8s.io/v1 leases */
extern const struct kube_resource KUBE_POD_METRICS; /* metrics.k8s.io/v1beta1 pods */

/* Writes the URL path of res in namespace ns (NULL or "": all namespaces / cluster-scoped) and
 * name (may be NULL) into buf. Names and namespaces are checked to be DNS-1123-ish (no '/',
 * '?', '%', whitespace). Returns 0, -EINVAL or -ENOSPC. */
SIZEUP_MUST_USE int kube_path(const struct kube_resource *res, const char *ns, const char *name,
                              char *buf, size_t len);

/* GET one object. *out owned. */
SIZEUP_MUST_USE int kube_get(kube_client_t *c, const struct kube_resource *res, const char *ns,
                             const char *name, cJSON **out /* OUT */, char *err);

struct kube_list_opts {
    const char *label_selector; /* may be NULL */
    const char *field_selector; /* may be NULL */
    int limit;                  /* page size; 0: no limit parameter */
    const char *continue_token; /* from the previous page's metadata.continue; NULL first */
};

/* GET one page of a list (body cap KUBE_BODY_MAX_LIST). *out owned: the List object, whose
 * metadata.resourceVersion and metadata.continue the caller reads. opts may be NULL. */
SIZEUP_MUST_USE int kube_list(kube_client_t *c, const struct kube_resource *res, const char *ns,
                              const struct kube_list_opts *opts, cJSON **out /* OUT */, char *err);

/* POST obj (borrowed). -EEXIST when it exists. *out (may be NULL) receives the created object. */
SIZEUP_MUST_USE int kube_create(kube_client_t *c, const struct kube_resource *res, const char *ns,
                                const cJSON *obj, cJSON **out /* OUT */, char *err);

/* PUT obj (borrowed) to its name. obj should carry metadata.resourceVersion: a stale one fails
 * with KUBE_ECONFLICT. *out (may be NULL) receives the stored object. */
SIZEUP_MUST_USE int kube_update(kube_client_t *c, const struct kube_resource *res, const char *ns,
                                const char *name, const cJSON *obj, cJSON **out /* OUT */,
                                char *err);

/* DELETE. propagation NULL (server default), "Background", "Foreground" or "Orphan".
 * -ENOENT when already gone (callers deleting idempotently treat it as success). */
SIZEUP_MUST_USE int kube_delete(kube_client_t *c, const struct kube_resource *res, const char *ns,
                                const char *name, const char *propagation, char *err);

enum kube_patch_type {
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json: merges lists by key */
    KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386): replaces lists */
    KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
};

/* PATCH with patch (JSON text, borrowed). *out (may be NULL) receives the patched object. */
SIZEUP_MUST_USE int kube_patch(kube_client_t *c, const struct kube_resource *res, const char *ns,
                               const char *name, enum kube_patch_type type, const char *patch,
                               cJSON **out /* OUT */, char *err);

/* Read-modify-write step: edits obj (a fresh copy from the server, owned by the helper) in
 * place. Returns 0 to write it, KUBE_MUTATE_SKIP to write nothing (already as wanted), or a
 * negative error to abort (returned by kube_update_retry, err filled by the callback). */
#define KUBE_MUTATE_SKIP 1
typedef int (*kube_mutate_fn)(void *ctx, cJSON *obj, char *err);

/* GET, mutate, PUT; on KUBE_ECONFLICT re-reads and tries again, at most max_attempts times
 * (0: 5). Returns KUBE_ECONFLICT when the budget is spent. *out (may be NULL) receives the
 * stored object (or the unchanged one on KUBE_MUTATE_SKIP). */
SIZEUP_MUST_USE int kube_update_retry(kube_client_t *c, const struct kube_resource *res,
                                      const char *ns, const char *name, int max_attempts,
                                      kube_mutate_fn fn, void *ctx, cJSON **out /* OUT */,
                                      char *err);

/* ---- watch and informer ------------------------------------------------------------------- */

enum kube_event_type {
    KUBE_EV_ADDED,
    KUBE_EV_MODIFIED,
    KUBE_EV_DELETED,
    KUBE_EV_BOOKMARK,   /* object carries only metadata.resourceVersion; informer swallows it */
    KUBE_EV_ERROR,      /* object is a Status; 410 is handled by the informer (re-list) */
    KUBE_EV_LIST_BEGIN, /* informer: a (re-)list starts; items follow as KUBE_EV_ADDED with
                           from_list set; object NULL */
    KUBE_EV_LIST_END,   /* informer: the list is complete; objects not seen since LIST_BEGIN
                           are gone (callers holding state drop them); object NULL */
    KUBE_EV_RESTART,    /* informer: the watch is reconnecting (for metrics); object NULL */
};

struct kube_event {
    enum kube_event_type type;
    const cJSON *object;          /* borrowed for the duration of the callback; may be NULL */
    const char *resource_version; /* object's metadata.resourceVersion, or NULL */
    int from_list;                /* set on KUBE_EV_ADDED delivered by a list */
};

/* Receives one event. Copy what you keep: the object is freed when the callback returns.
 * Return 0 to go on, a positive value to stop the informer (kube_informer_run returns it). */
typedef int (*kube_event_fn)(void *ctx, const struct kube_event *ev);

/* Parses one watch line (len bytes, borrowed, no trailing newline needed) into ev; *root
 * receives the owned tree that ev->object points into (cJSON_Delete it after use). An ERROR
 * event carrying code 410 returns KUBE_EGONE (with *root set). -EBADMSG on malformed lines. */
SIZEUP_MUST_USE int kube_event_parse(const char *line, size_t len, cJSON **root /* OUT */,
                                     struct kube_event *ev /* OUT */, char *err);

/* Incremental newline splitter for watch bodies: bytes arrive in arbitrary chunks, complete
 * lines go to the callback, the tail is kept. A line longer than max is an error. */
struct kube_lines {
    char *buf;  /* owned */
    size_t len; /* bytes of the incomplete tail */
    size_t cap;
    size_t max; /* longest accepted line */
};

/* Called for each complete line (without '\n'; a trailing '\r' is removed; empty lines are
 * skipped). line is borrowed for the call. Non-zero return stops feeding and is returned. */
typedef int (*kube_line_fn)(void *ctx, const char *line, size_t len);

/* Initialises l (max 0: KUBE_WATCH_LINE_MAX). Allocates lazily; cannot fail. */
SIZEUP_MUST_USE int kube_lines_init(struct kube_lines *l, size_t max);
/* Feeds n bytes. Returns 0, the callback's non-zero value, -EMSGSIZE for an over-long line
 * (the splitter is then unusable until kube_lines_reset) or -ENOMEM. */
SIZEUP_MUST_USE int kube_lines_feed(struct kube_lines *l, const char *data, size_t n,
                                    kube_line_fn fn, void *ctx);
/* Drops the tail (after a reconnect). */
void kube_lines_reset(struct kube_lines *l);
void kube_lines_free(struct kube_lines *l);

struct kube_informer_opts {
    const struct kube_resource *res;
    const char *ns;             /* NULL or "": all namespaces */
    const char *label_selector; /* may be NULL */
    const char *field_selector; /* may be NULL */
    int list_limit;             /* page size of the list; 0: 250 */
    int watch_timeout_s;        /* server-side timeoutSeconds per watch; 0: 300 */
    unsigned backoff_base_ms;   /* 0: 500 */
    unsigned backoff_max_ms;    /* 0: 30000 */
    kube_event_fn on_event;
    void *ctx;
};

/* List, then watch from the list's resourceVersion with allowWatchBookmarks, forever:
 * a closed watch resumes from the last resourceVersion seen; 410 Gone (HTTP or ERROR event)
 * re-lists; errors and watches that close in under a second back off with jitter. Blocks
 * until the client's stop callback fires (returns -ECANCELED) or on_event returns non-zero
 * (returns that value). Run it on a dedicated thread with a dedicated client. Only the event
 * being delivered is held in memory. */
SIZEUP_MUST_USE int kube_informer_run(kube_client_t *c, const struct kube_informer_opts *opts,
                                      char *err);

/* One watch request from resource_version (borrowed) for at most timeout_s seconds, events to
 * fn. *last_rv (rv_len bytes) is updated with every event's resourceVersion. Returns 0 when
 * the server ended the watch, KUBE_EGONE on 410, fn's non-zero value, or another error. */
SIZEUP_MUST_USE int kube_watch_once(kube_client_t *c, const struct kube_informer_opts *opts,
                                    const char *resource_version, int timeout_s,
                                    char *last_rv /* OUT */, size_t rv_len, char *err);

/* ---- backoff ------------------------------------------------------------------------------ */

/* Exponential backoff with jitter: attempt n waits a uniform random time in
 * [d/2, d] where d = min(base * 2^n, max). Plain state, no allocation. */
struct kube_backoff {
    unsigned base_ms;
    unsigned max_ms;
    unsigned attempt;
    uint64_t rng;
};

SIZEUP_MUST_USE int kube_backoff_init(struct kube_backoff *b, unsigned base_ms, unsigned max_ms,
                                      uint64_t seed);
/* Returns the next delay in ms and advances. */
unsigned kube_backoff_next(struct kube_backoff *b);
void kube_backoff_reset(struct kube_backoff *b);

/* Sleeps ms milliseconds in slices, returning -ECANCELED early when the client's stop callback
 * fires (c may be NULL: plain sleep). */
int kube_sleep_ms(kube_client_t *c, unsigned ms);

#endif
