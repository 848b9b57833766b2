#ifndef SIZEUP_OPERATOR_ADMIN_H
#define SIZEUP_OPERATOR_ADMIN_H

/* The operator's admin server: /healthz, /readyz and Prometheus /metrics over HTTP, and the
 * live-progress page `/` with its WebSocket `/progress` (operator/progress.h), served by
 * libwebsockets on its own thread. The admin thread only reads struct metrics and the progress
 * feed; it never touches the operator's other state. `sizeup sweep --progress-addr` runs the
 * same server with the progress page alone. */

#include <stddef.h>

#include "core/err.h"
#include "operator/metrics.h"
#include "operator/progress.h"

#define ADMIN_DEFAULT_ADDR ":8081"
#define ADMIN_STALE_MS     60000 /* /healthz fails when the watch loop has not turned for this */

typedef struct admin admin_t;

/* Splits "HOST:PORT", ":PORT" or "[V6]:PORT" into host (NUL-terminated, "" for every address)
 * and port (0..65535, 0 = any free port). Returns 0 or -EINVAL. Borrows addr. */
int admin_parse_addr(const char *addr, char *host /* OUT */, size_t hostlen, int *port /* OUT */,
                     char *err);

/* Binds addr and starts serving on a new thread: /healthz, /readyz and /metrics from m, and the
 * progress page and feed from ps; either may be NULL (its paths then answer 404). Both are
 * borrowed and must outlive the server. Returns 0 with *out an owned handle (admin_stop frees
 * it), or a negative errno with err. */
int admin_start(const char *addr, struct metrics *m, progress_srv_t *ps, admin_t **out /* OUT */,
                char *err);

/* The port actually bound (useful with port 0). */
int admin_port(const admin_t *a);

/* Stops serving, joins the thread and frees a. admin_stop(NULL) is a no-op. */
void admin_stop(admin_t *a);

#endif
