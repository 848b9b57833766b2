/* Tests for src/load/engine.c: a load run against a small keep-alive HTTP server in this process,
 * with the kernel refusing epoll interest changes. A connection whose interest epoll refused
 * must fail with a counted error and let its user go on; before, the refusal was dropped and
 * the connection waited for events that never came.
 *
 * The refusals come from this file's own epoll_ctl: a definition in the executable takes
 * precedence over the C library's, so the engine (linked from libsizeup.a) calls it. It passes
 * every call on to the kernel unless a test asked it to refuse. The server uses poll(), never
 * epoll, so only the engine's calls are affected. */

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "load/load.h"

/* ---- epoll_ctl with refusals on demand ------------------------------------------------------ */

enum refuse {
    REFUSE_NONE = 0,
    REFUSE_ALL_BUT_CONNECT, /* every call but the first registration of a connect in progress */
    REFUSE_EVERY_THIRD,     /* every third call */
};

static _Atomic int refuse_mode;
static _Atomic unsigned ctl_calls, ctl_refused;

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    unsigned n = atomic_fetch_add(&ctl_calls, 1) + 1;
    int refuse = 0;
    switch (atomic_load(&refuse_mode)) {
    case REFUSE_ALL_BUT_CONNECT:
        refuse = !(op == EPOLL_CTL_ADD && ev && (ev->events & EPOLLOUT));
        break;
    case REFUSE_EVERY_THIRD:
        refuse = n % 3 == 0;
        break;
    default:
        break;
    }
    if (refuse) {
        atomic_fetch_add(&ctl_refused, 1);
        errno = ENOMEM;
        return -1;
    }
    return (int)syscall(SYS_epoll_ctl, epfd, op, fd, ev);
}

/* ---- a keep-alive HTTP server on 127.0.0.1 --------------------------------------------------- */

#define SRV_MAX_CONNS 64

static const char response[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

struct server {
    int lfd;
    int port;
    pthread_t th;
    atomic_int stop;
    atomic_uint answered;
};

/* Answers every complete request head (the engine's requests have no body) on every connection
 * until stop; a closed connection is dropped. */
static void *server_main(void *arg)
{
    struct server *s = arg;
    struct pollfd pfd[SRV_MAX_CONNS + 1];
    char pending[SRV_MAX_CONNS + 1][4096];
    size_t plen[SRV_MAX_CONNS + 1];
    int n = 1;

    pfd[0].fd = s->lfd;
    pfd[0].events = POLLIN;
    while (!atomic_load(&s->stop)) {
        if (poll(pfd, (nfds_t)n, 50) <= 0)
            continue;
        if ((pfd[0].revents & POLLIN) && n <= SRV_MAX_CONNS) {
            int c = accept(s->lfd, NULL, NULL);
            if (c >= 0) {
                pfd[n].fd = c;
                pfd[n].events = POLLIN;
                pfd[n].revents = 0;
                plen[n] = 0;
                n++;
            }
        }
        for (int i = 1; i < n; i++) {
            if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(pfd[i].fd, pending[i] + plen[i], sizeof(pending[i]) - plen[i]);
            if (r <= 0) {
                close(pfd[i].fd);
                pfd[i] = pfd[n - 1];
                memcpy(pending[i], pending[n - 1], plen[n - 1]);
                plen[i] = plen[n - 1];
                n--;
                i--;
                continue;
            }
            plen[i] += (size_t)r;
            char *end;
            while ((end = memmem(pending[i], plen[i], "\r\n\r\n", 4)) != NULL) {
                size_t used = (size_t)(end - pending[i]) + 4;
                if (write(pfd[i].fd, response, sizeof(response) - 1) > 0)
                    atomic_fetch_add(&s->answered, 1);
                memmove(pending[i], pending[i] + used, plen[i] - used);
                plen[i] -= used;
            }
            if (plen[i] == sizeof(pending[i]))
                plen[i] = 0; /* not HTTP from the engine: forget it */
        }
    }
    for (int i = 1; i < n; i++)
        close(pfd[i].fd);
    return NULL;
}

static void server_start(struct server *s)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    int one = 1;

    memset(s, 0, sizeof(*s));
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->lfd >= 0);
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->lfd, 128), 0);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->th, NULL, server_main, s), 0);
}

static void server_stop(struct server *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->th, NULL);
    close(s->lfd);
}

/* ---- runs --------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A closed-loop run of 4 users for 1 s (no warm-up) against a fresh server, with a 30 s
 * request timeout, so a stalled connection cannot turn into a counted timeout inside the
 * window. */
static void run(enum refuse mode, struct load_result *r, double *wall_s)
{
    struct server srv;
    struct profile p;
    char url[64], err[ERR_LEN] = "";

    server_start(&srv);

    assert_int_equal(profile_init_default(&p), 0);
    p.users = 4;
    p.duration_us = 1000000;
    p.warmup_us = 0;
    p.timeout_us = 30000000;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv.port);
    struct load_opts o = {.url = url, .profile = &p, .threads = 1};
    atomic_store(&ctl_calls, 0);
    atomic_store(&ctl_refused, 0);
    atomic_store(&refuse_mode, mode);
    double t0 = now_s();
    int rc = load_run(&o, r, err);
    *wall_s = now_s() - t0;
    atomic_store(&refuse_mode, REFUSE_NONE);
    server_stop(&srv);
    if (rc)
        fail_msg("load_run: %s", err);
    profile_free(&p);
}

static void test_baseline(void **state)
{
    (void)state;
    struct load_result r;
    double wall;

    run(REFUSE_NONE, &r, &wall);
    assert_true(r.total.responses > 100);
    assert_int_equal(r.total.failed, 0);
    assert_int_equal(atomic_load(&ctl_refused), 0);
    assert_true(wall < 5);
    load_result_free(&r);
}

/* Every interest change refused: every connection fails at once with a counted error (class
 * "other", from ENOMEM), none waits for an event, none gets a response through an interest
 * that was never registered, and the run ends on time. */
static void test_refused_interest_fails_the_connection(void **state)
{
    (void)state;
    struct load_result r;
    double wall;

    run(REFUSE_ALL_BUT_CONNECT, &r, &wall);
    assert_true(atomic_load(&ctl_refused) > 0);
    assert_true(r.total.requests > 0);
    assert_int_equal(r.total.responses, 0);
    assert_int_equal(r.total.errors[LOAD_ERR_OTHER], r.total.requests);
    assert_int_equal(r.total.failed, r.total.requests);
    assert_int_equal(r.total.errors[LOAD_ERR_TIMEOUT], 0);
    assert_true(wall < 5);
    load_result_free(&r);
}

/* Some refusals: each costs its connection one counted error, and the users go on (responses
 * keep coming, nothing else fails, the run ends on time). */
static void test_refusals_cost_one_connection(void **state)
{
    (void)state;
    struct load_result r;
    double wall;

    run(REFUSE_EVERY_THIRD, &r, &wall);
    assert_true(atomic_load(&ctl_refused) > 0);
    assert_true(r.total.errors[LOAD_ERR_OTHER] > 0);
    assert_true(r.total.responses > 0);
    assert_int_equal(r.total.failed, r.total.errors[LOAD_ERR_OTHER]);
    assert_true(wall < 5);
    load_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baseline),
        cmocka_unit_test(test_refused_interest_fails_the_connection),
        cmocka_unit_test(test_refusals_cost_one_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
