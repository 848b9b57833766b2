/* Unit tests for src/kube/platform.c that need no API server: parsing the CPU quantities of
 * metrics.k8s.io. The platform itself is tested against the fake API server by
 * tests/kube/test_kube_platform.c (tests/integration/kube_platform.sh). */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/platform.h"

static void test_parse_cores(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        double want;
    } ok[] = {{"2", 2},     {"250m", 0.25}, {"12345678n", 0.012345678}, {"1500u", 0.0015}, {"0", 0},
              {"1.5", 1.5}, {"1k", 1000}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        double v = -1;
        assert_int_equal(kube_parse_cores(ok[i].in, &v), 0);
        if (v < ok[i].want - 1e-12 || v > ok[i].want + 1e-12)
            fail_msg("%s: %g", ok[i].in, v);
    }
    static const char *const bad[] = {"", "m", "-1", "1Gi", "1 m", "nan", "inf", "2x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double v;
        if (kube_parse_cores(bad[i], &v) != -EINVAL)
            fail_msg("accepted '%s'", bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
