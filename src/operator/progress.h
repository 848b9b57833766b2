#ifndef SIZEUP_OPERATOR_PROGRESS_H
#define SIZEUP_OPERATOR_PROGRESS_H

/* Live progress over libwebsockets: a small self-contained page at `/` and a read-only
 * WebSocket at `/progress` that pushes the progress feed (sweep/progress_feed.h) about once a
 * second. Served inside the operator's admin server (one more protocol in its table) or on its
 * own for `sizeup sweep --progress-addr`.
 *
 * Who may read it (progress_srv_opts): by default only connections that arrived on loopback
 * (127.0.0.1 or ::1, which in a pod only `kubectl port-forward` reaches); with `public`, any
 * address, but then every request off loopback needs `Authorization: Bearer <token>` that the
 * auth callback accepts (the operator: TokenReview and SubjectAccessReview). Bounded per client:
 * one message queued at a time behind a PROGRESS_SNDBUF kernel buffer, a client that has not
 * taken a message for PROGRESS_SLOW_S is dropped, at most PROGRESS_MAX_CLIENTS at once. Nothing a
 * client sends is read but the close. */

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "sweep/progress_feed.h"

#define PROGRESS_PATH        "/progress"
#define PROGRESS_PROTOCOL    "sizeup-progress"
#define PROGRESS_PERIOD_MS   1000
#define PROGRESS_SLOW_S      5
#define PROGRESS_MAX_CLIENTS 16
#define PROGRESS_SNDBUF      8192 /* a client's kernel send buffer, bytes */

struct lws;
struct lws_protocols;

/* Checks a bearer token (borrowed, never logged). Returns 0 when it may read the feed, -EACCES
 * when it may not (err says why, for the log), another negative errno when it could not tell. */
typedef int (*progress_auth_fn)(void *ud, const char *token, char *err);

struct progress_srv_opts {
    progress_feed_t *feed; /* borrowed; must outlive the server */
    bool loopback_only;    /* refuse connections that did not arrive on loopback ... */
    bool public_;          /* ... unless this is set: then they need a token auth accepts */
    progress_auth_fn auth; /* required with public_ */
    void *auth_ud;
};

typedef struct progress_srv progress_srv_t;

/* A server's state for its protocols (not yet listening). Returns 0, -EINVAL (public_ without
 * auth) or -ENOMEM. Free with progress_srv_free after the lws context that used it. */
int progress_srv_new(const struct progress_srv_opts *o, progress_srv_t **out /* OUT */, char *err);
void progress_srv_free(progress_srv_t *ps);

/* The WebSocket protocol's table entry, for a context's protocol list (its user is ps). */
void progress_srv_protocol(progress_srv_t *ps, struct lws_protocols *out /* OUT */);

/* For an HTTP callback: when path is the page's ("/"), decides access and fills *code, *ctype
 * and *body (static or owned as *owned says; free() it) and returns 1; otherwise returns 0. */
int progress_srv_http(progress_srv_t *ps, struct lws *wsi, const char *path, int *code,
                      const char **ctype, const char **body, size_t *len, int *owned);

#endif
