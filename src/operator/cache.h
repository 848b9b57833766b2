#ifndef SIZEUP_OPERATOR_CACHE_H
#define SIZEUP_OPERATOR_CACHE_H

/* What the operator remembers about Deployments between watch events, and the decision each
 * event asks for. Only Deployments carrying a sizeup.dev/ annotation that matters are kept,
 * each as one small allocation (namespace, name, uid, the sweep value, the last handled value,
 * whether a sweep is marked running): an idle operator over 10,000 unannotated Deployments
 * holds nothing per Deployment. Not thread-safe: the operator guards it with its own mutex.
 *
 * The decision, for a Deployment with sweep S, last handled L and status T:
 *   S set, S != L, no sweep of ours running          -> START
 *   S set, S == L, T "running ...", none of ours      -> RECOVER (an operator died mid-sweep)
 *   S removed or the Deployment deleted, ours running -> CANCEL
 *   anything else                                     -> NONE
 * A sweep this process finished is never recovered from a late event that still says
 * "running", and a new S seen while a sweep runs is remembered and started after it. */

#include <stddef.h>

#include "core/err.h"

enum cache_action { CACHE_NONE = 0, CACHE_START, CACHE_RECOVER, CACHE_CANCEL };

/* One observation of a Deployment; every string borrowed, any annotation may be NULL. */
struct cache_obs {
    const char *ns;
    const char *name;
    const char *uid;
    const char *sweep;  /* sizeup.dev/sweep */
    const char *last;   /* sizeup.dev/last-sweep */
    const char *status; /* sizeup.dev/status */
};

typedef struct cache cache_t;

/* Returns 0 with *out an owned, empty cache (free with cache_free), or -ENOMEM. */
int cache_new(cache_t **out /* OUT */);
void cache_free(cache_t *c);

/* Records obs. When act is set and the answer is START or RECOVER, the Deployment is marked
 * busy (one sweep at a time) until cache_job_done. When act is clear (not the leader) the
 * observation is only recorded and NONE returned. -ENOMEM is reported as NONE with *rc set. */
enum cache_action cache_observe(cache_t *c, const struct cache_obs *obs, int act,
                                int *rc /* OUT, may be NULL */);

/* The Deployment ns/name is gone. Returns CACHE_CANCEL when a sweep of ours runs on it. */
enum cache_action cache_delete(cache_t *c, const char *ns, const char *name);

/* A sweep on ns/name ended; handled (borrowed, may be NULL) is the sweep value it handled.
 * Returns START when a newer sweep value arrived meanwhile (the Deployment stays busy: start
 * it), else NONE. */
enum cache_action cache_job_done(cache_t *c, const char *ns, const char *name, const char *handled);

/* A (re-)list of namespace ns (NULL: every namespace) begins / ended: entries of ns not
 * observed in between are dropped (their Deployments are gone), except busy ones, whose sweeps
 * find that out themselves. */
void cache_list_begin(cache_t *c, const char *ns);
void cache_list_end(cache_t *c, const char *ns);

/* Calls fn for every entry that needs START or RECOVER now (after becoming the leader), marking
 * them busy. fn borrows ns, name and uid for the call. */
typedef void (*cache_action_fn)(void *ctx, enum cache_action a, const char *ns, const char *name,
                                const char *uid);
void cache_scan(cache_t *c, cache_action_fn fn, void *ctx);

/* Forgets every busy mark (after losing the lease: our sweeps were cancelled). */
void cache_clear_busy(cache_t *c);

/* Deployments held; whether ns/name is busy. */
size_t cache_count(const cache_t *c);
int cache_busy(const cache_t *c, const char *ns, const char *name);

/* Bytes the cache holds (entries and table), for tests of the idle budget. */
size_t cache_bytes(const cache_t *c);

#endif
