/* Tests for src/load/cpus.c: the load generator's default thread count follows the CPU quota of
 * its own cgroup and the cgroups above it (v1 and v2 file contents), and its affinity. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "load/cpus.h"

static void test_parse(void **state)
{
    (void)state;
    assert_int_equal(load_cpus_quota_v2("max 100000\n"), 0);
    assert_int_equal(load_cpus_quota_v2("150000 100000\n"), 1500);
    assert_int_equal(load_cpus_quota_v2("50000 100000"), 500);
    assert_int_equal(load_cpus_quota_v2("400000 200000\n"), 2000);
    assert_int_equal(load_cpus_quota_v2("garbage"), 0);
    assert_int_equal(load_cpus_quota_v2("0 100000"), 0);
    assert_int_equal(load_cpus_quota_v2(NULL), 0);
    assert_int_equal(load_cpus_quota_v1("-1\n", "100000\n"), 0);
    assert_int_equal(load_cpus_quota_v1("250000\n", "100000\n"), 2500);
    assert_int_equal(load_cpus_quota_v1("25000", "100000"), 250);
    assert_int_equal(load_cpus_quota_v1("25000", "0"), 0);
    assert_int_equal(load_cpus_quota_v1("x", "100000"), 0);
}

static void test_from(void **state)
{
    (void)state;
    assert_int_equal(load_cpus_from(64, 1000), 1); /* a 1-CPU pod on a 64-core node */
    assert_int_equal(load_cpus_from(64, 1500), 2); /* a fraction rounds up */
    assert_int_equal(load_cpus_from(64, 250), 1);  /* never below one thread */
    assert_int_equal(load_cpus_from(2, 8000), 2);  /* affinity is tighter than the quota */
    assert_int_equal(load_cpus_from(12, 0), 12);   /* no quota */
    assert_int_equal(load_cpus_from(0, 0), 1);
}

static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_path(void **state)
{
    (void)state;
    char root[] = "/tmp/sizeup-cpus-XXXXXX", a[256], ab[256], abc[256];
    assert_non_null(mkdtemp(root));
    snprintf(a, sizeof(a), "%s/pod", root);
    snprintf(ab, sizeof(ab), "%s/pod/ctr", root);
    snprintf(abc, sizeof(abc), "%s/pod/ctr/leaf", root);
    assert_int_equal(mkdir(a, 0755), 0);
    assert_int_equal(mkdir(ab, 0755), 0);
    assert_int_equal(mkdir(abc, 0755), 0);

    /* v2: the pod's 2 CPUs bind a container whose own cpu.max says "max", and the process sits
     * in a leaf below it (as sizeup moves itself on v2). */
    put(root, "cpu.max", "max 100000\n");
    put(a, "cpu.max", "200000 100000\n");
    put(ab, "cpu.max", "max 100000\n");
    assert_int_equal(load_cpus_quota_path(root, "/pod/ctr/leaf", true), 2000);
    assert_int_equal(load_cpus_quota_path(root, "pod/ctr/leaf/", true), 2000);
    /* A tighter quota further down wins. */
    put(ab, "cpu.max", "50000 100000\n");
    assert_int_equal(load_cpus_quota_path(root, "/pod/ctr/leaf", true), 500);
    /* A path that does not exist here (a container seeing its own cgroup as the root). */
    assert_int_equal(load_cpus_quota_path(root, "/kubepods/burstable/xyz", true), 0);
    put(root, "cpu.max", "300000 100000\n");
    assert_int_equal(load_cpus_quota_path(root, "/kubepods/burstable/xyz", true), 3000);
    assert_int_equal(load_cpus_quota_path(root, "/", true), 3000);

    /* v1: cfs files. */
    put(root, "cpu.cfs_quota_us", "-1\n");
    put(root, "cpu.cfs_period_us", "100000\n");
    put(a, "cpu.cfs_quota_us", "150000\n");
    put(a, "cpu.cfs_period_us", "100000\n");
    assert_int_equal(load_cpus_quota_path(root, "/pod/ctr", false), 1500);
    assert_int_equal(load_cpus_quota_path(root, "/", false), 0);
    assert_int_equal(load_cpus_from(8, load_cpus_quota_path(root, "/pod/ctr", false)), 2);

    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void test_default(void **state)
{
    (void)state;
    /* This process: between one thread and the online cores. */
    unsigned n = load_cpus_default();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(n >= 1);
    assert_true(online <= 0 || n <= (unsigned)online);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_from),
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
