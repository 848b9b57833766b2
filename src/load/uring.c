#include "load/uring.h"

#include <errno.h>
#include <linux/io_uring.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_setup(unsigned entries, struct io_uring_params *p)
{
    return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int sys_enter(int fd, unsigned submit, unsigned min_complete, unsigned flags)
{
    return (int)syscall(__NR_io_uring_enter, fd, submit, min_complete, flags, NULL, 0);
}

int uring_init(struct uring *u, unsigned entries)
{
    struct io_uring_params p;
    int rc = 0;

    memset(u, 0, sizeof(*u));
    u->fd = -1;
    memset(&p, 0, sizeof(p));
    /* One thread submits and reaps (the load thread): tell the kernel, where it knows how. */
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN;
    int fd = sys_setup(entries, &p);
    if (fd < 0 && errno == EINVAL) {
        memset(&p, 0, sizeof(p));
        fd = sys_setup(entries, &p);
    }
    if (fd < 0)
        return -errno;
    u->fd = fd;
    u->entries = p.sq_entries;
    if (!(p.features & IORING_FEAT_SINGLE_MMAP) || !(p.features & IORING_FEAT_NODROP)) {
        rc = -ENOTSUP;
        goto out;
    }
    u->sq_map_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    u->cq_map_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    if (u->cq_map_len > u->sq_map_len)
        u->sq_map_len = u->cq_map_len;
    u->sq_map = mmap(NULL, u->sq_map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                     IORING_OFF_SQ_RING);
    if (u->sq_map == MAP_FAILED) {
        u->sq_map = NULL;
        rc = -errno;
        goto out;
    }
    u->cq_map = u->sq_map; /* IORING_FEAT_SINGLE_MMAP */
    u->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
    u->sqes = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                   IORING_OFF_SQES);
    if (u->sqes == MAP_FAILED) {
        u->sqes = NULL;
        rc = -errno;
        goto out;
    }
    char *sq = u->sq_map, *cq = u->cq_map;
    u->sq_head = (unsigned *)(sq + p.sq_off.head);
    u->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    u->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p.sq_off.array);
    u->cq_head = (unsigned *)(cq + p.cq_off.head);
    u->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    u->cqes = cq + p.cq_off.cqes;
    /* The SQ array maps slot i to SQE i once and for all. */
    for (unsigned i = 0; i < p.sq_entries; i++)
        u->sq_array[i] = i;
out:
    if (rc)
        uring_free(u);
    return rc;
}

void uring_free(struct uring *u)
{
    if (!u)
        return;
    if (u->sqes)
        munmap(u->sqes, u->sqes_len);
    if (u->sq_map)
        munmap(u->sq_map, u->sq_map_len);
    if (u->fd >= 0)
        close(u->fd);
    memset(u, 0, sizeof(*u));
    u->fd = -1;
}

unsigned uring_space(const struct uring *u)
{
    return u->entries - u->queued;
}

static struct io_uring_sqe *next_sqe(struct uring *u)
{
    unsigned tail = *u->sq_tail + u->queued;
    struct io_uring_sqe *sqe = (struct io_uring_sqe *)u->sqes + (tail & *u->sq_mask);
    memset(sqe, 0, sizeof(*sqe));
    u->queued++;
    return sqe;
}

void uring_prep_send(struct uring *u, int fd, const void *buf, size_t len, uint64_t user_data)
{
    struct io_uring_sqe *sqe = next_sqe(u);
    sqe->opcode = IORING_OP_SEND;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)buf;
    sqe->len = (uint32_t)len;
    sqe->msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL;
    sqe->user_data = user_data;
}

void uring_prep_recv(struct uring *u, int fd, void *buf, size_t len, uint64_t user_data)
{
    struct io_uring_sqe *sqe = next_sqe(u);
    sqe->opcode = IORING_OP_RECV;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)buf;
    sqe->len = (uint32_t)len;
    sqe->msg_flags = MSG_DONTWAIT;
    sqe->user_data = user_data;
}

int uring_submit_wait(struct uring *u)
{
    unsigned n = u->queued, submitted = 0;
    if (n == 0)
        return 0;
    /* Publish the SQEs before the tail that makes them visible. */
    __atomic_store_n(u->sq_tail, *u->sq_tail + n, __ATOMIC_RELEASE);
    u->queued = 0;
    for (;;) {
        /* The caller reaps every completion of a batch before the next, so all ready
         * completions belong to this one. */
        unsigned ready = __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE) - *u->cq_head;
        if (submitted == n && ready >= n)
            return (int)ready;
        int r = sys_enter(u->fd, n - submitted, ready < n ? n - ready : 0, IORING_ENTER_GETEVENTS);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        submitted += (unsigned)r;
    }
}

int uring_next(struct uring *u, uint64_t *user_data, int32_t *res)
{
    unsigned head = *u->cq_head;
    if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
        return 0;
    const struct io_uring_cqe *cqe = (const struct io_uring_cqe *)u->cqes + (head & *u->cq_mask);
    *user_data = cqe->user_data;
    *res = cqe->res;
    __atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
    return 1;
}
