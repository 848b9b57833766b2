#ifndef SIZEUP_SWEEP_PROGRESS_FEED_H
#define SIZEUP_SWEEP_PROGRESS_FEED_H

/* The live state of every running sweep, for the progress page and its WebSocket feed.
 *
 * Sweep runners write (one slot each, a few times a second, from their own threads); the
 * server reads a JSON snapshot about once a second from its thread. Both hold the feed's one
 * lock only to copy a slot: a reader cannot slow a sweep by more than that copy, and a sweep
 * never waits for a client. Each slot keeps the last PROGRESS_HISTORY seconds of its numbers,
 * so a page opened in the middle of a step draws that step so far. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "sweep/runner.h"

#define PROGRESS_MAX_SWEEPS 64 /* slots; a sweep past them runs without live progress */
#define PROGRESS_HISTORY    60 /* seconds of numbers kept per sweep */
#define PROGRESS_NAME_MAX   320

typedef struct progress_feed progress_feed_t;

/* A new, empty feed (free with progress_feed_free). Returns 0 or -ENOMEM. */
int progress_feed_new(progress_feed_t **out /* OUT */);

/* Frees f; NULL is a no-op. No sweep may still hold a slot. */
void progress_feed_free(progress_feed_t *f);

/* Takes a slot for the sweep called name ("namespace/deployment", or the local command's
 * label; copied). Returns the slot (>= 0), or -ENOSPC when every slot is taken. */
int progress_feed_open(progress_feed_t *f, const char *name);

/* Publishes p as slot's live state; one history point per second of wall time. Borrows p. */
void progress_feed_update(progress_feed_t *f, int slot, const struct sweep_progress *p);

/* Releases the slot (the sweep ended). */
void progress_feed_close(progress_feed_t *f, int slot);

/* The snapshot as JSON text, {"sweeps": [{name, phase, variant, index, n, step, step_what,
 * offered_rps, rps, p95_ms, requests, errors, error_rate, streams, elapsed_s, eta_s,
 * history: [{t, rps, p95_ms, errors}]}], "seq": N} (docs/operator.md). *out is owned (free()).
 * Returns 0 or -ENOMEM. */
int progress_feed_json(progress_feed_t *f, char **out /* OUT */, size_t *len /* OUT */);

#endif
