#ifndef SIZEUP_LOAD_URING_H
#define SIZEUP_LOAD_URING_H

/* A minimal io_uring used as a batched system-call executor: the engine queues the non-blocking
 * sends and receives of one event-loop pass and submits them with one io_uring_enter, instead
 * of one send() or read() each. Every operation carries MSG_DONTWAIT, so it completes during the
 * submission (data, or -EAGAIN) and the caller can wait for exactly as many completions as it
 * submitted. Raw system calls (no liburing): the handful used here do not need a library. */

#include <stddef.h>
#include <stdint.h>

struct uring {
    int fd; /* -1 when not set up */
    unsigned entries;
    unsigned queued; /* SQEs filled, not yet submitted */
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
    unsigned *cq_head, *cq_tail, *cq_mask;
    void *sqes; /* struct io_uring_sqe[entries] */
    void *cqes; /* struct io_uring_cqe[] */
    void *sq_map, *cq_map;
    size_t sq_map_len, cq_map_len, sqes_len;
};

/* Sets up a ring of `entries` submission slots. Returns 0, or a negative errno when the kernel
 * has no io_uring or forbids it (then the caller uses plain system calls). */
int uring_init(struct uring *u /* OUT */, unsigned entries);

/* Frees the ring; no-op on one that failed to set up. */
void uring_free(struct uring *u);

/* Room left for uring_prep_* before uring_submit_wait must run. */
unsigned uring_space(const struct uring *u);

/* Queues a non-blocking send / receive on fd. buf is borrowed until its completion is reaped. */
void uring_prep_send(struct uring *u, int fd, const void *buf, size_t len, uint64_t user_data);
void uring_prep_recv(struct uring *u, int fd, void *buf, size_t len, uint64_t user_data);

/* Submits what is queued and waits until that many completions are ready. Returns the number of
 * completions ready, or a negative errno. */
int uring_submit_wait(struct uring *u);

/* Takes the next ready completion: returns 1 and fills *user_data and *res (bytes or -errno),
 * or 0 when none is ready. */
int uring_next(struct uring *u, uint64_t *user_data /* OUT */, int32_t *res /* OUT */);

#endif
