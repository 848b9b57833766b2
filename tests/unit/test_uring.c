/* Tests for src/load/uring.c: batched non-blocking sends and receives complete within the one
 * submission, an empty socket answers -EAGAIN instead of blocking, and errors come back as
 * negative errno values. Skips (passes) where the kernel forbids io_uring: the engine then
 * falls back to plain system calls, which the integration tests cover. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "load/uring.h"

static int setup_ring(struct uring *u)
{
    int rc = uring_init(u, 8);
    if (rc == -ENOSYS || rc == -EPERM || rc == -EACCES) {
        print_message("io_uring unavailable here (%d): nothing to test\n", rc);
        return 0;
    }
    assert_int_equal(rc, 0);
    return 1;
}

static void test_send_recv_batch(void **state)
{
    (void)state;
    struct uring u;
    int a[2], b[2];
    char ra[16], rb[16];
    uint64_t ud;
    int32_t res;
    int seen = 0;

    if (!setup_ring(&u))
        return;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
    assert_int_equal(uring_space(&u), 8);
    uring_prep_send(&u, a[0], "hello", 5, 1);
    uring_prep_send(&u, b[0], "world!", 6, 2);
    assert_int_equal(uring_space(&u), 6);
    assert_int_equal(uring_submit_wait(&u), 2);
    while (uring_next(&u, &ud, &res)) {
        assert_true(ud == 1 || ud == 2);
        assert_int_equal(res, ud == 1 ? 5 : 6);
        seen++;
    }
    assert_int_equal(seen, 2);

    /* Both receives complete during the submit; the third finds nothing and says so. */
    int c[2];
    char rc_buf[4];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, c), 0);
    uring_prep_recv(&u, a[1], ra, sizeof(ra), 10);
    uring_prep_recv(&u, b[1], rb, sizeof(rb), 11);
    uring_prep_recv(&u, c[1], rc_buf, sizeof(rc_buf), 12);
    assert_int_equal(uring_submit_wait(&u), 3);
    seen = 0;
    while (uring_next(&u, &ud, &res)) {
        if (ud == 10) {
            assert_int_equal(res, 5);
            assert_memory_equal(ra, "hello", 5);
        } else if (ud == 11) {
            assert_int_equal(res, 6);
            assert_memory_equal(rb, "world!", 6);
        } else {
            assert_int_equal(ud, 12);
            assert_int_equal(res, -EAGAIN);
        }
        seen++;
    }
    assert_int_equal(seen, 3);
    assert_int_equal(uring_next(&u, &ud, &res), 0);

    /* A closed peer: receive gives 0 (EOF), send gives -EPIPE (and no SIGPIPE). */
    close(a[0]);
    close(b[1]);
    uring_prep_recv(&u, a[1], ra, sizeof(ra), 20);
    uring_prep_send(&u, b[0], "x", 1, 21);
    assert_int_equal(uring_submit_wait(&u), 2);
    while (uring_next(&u, &ud, &res))
        assert_int_equal(res, ud == 20 ? 0 : -EPIPE);

    /* Many batches: the rings wrap around. */
    for (int round = 0; round < 100; round++) {
        uring_prep_send(&u, c[0], "abc", 3, 30);
        assert_int_equal(uring_submit_wait(&u), 1);
        assert_int_equal(uring_next(&u, &ud, &res), 1);
        assert_int_equal(res, 3);
        uring_prep_recv(&u, c[1], rc_buf, 3, 31);
        assert_int_equal(uring_submit_wait(&u), 1);
        assert_int_equal(uring_next(&u, &ud, &res), 1);
        assert_int_equal(res, 3);
        assert_memory_equal(rc_buf, "abc", 3);
    }
    close(a[1]);
    close(b[0]);
    close(c[0]);
    close(c[1]);
    uring_free(&u);
    uring_free(&u); /* no-op on a freed ring */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_recv_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
