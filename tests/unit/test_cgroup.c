/* Tests for src/local/cgroup.c: finding sizeup's own cgroup in the layouts it meets (this
 * machine's v1 hybrid, co-mounted v1, pure v2, a container's namespaced mounts, none), the
 * kubelet's quota arithmetic, and, where this process may write cgroups, a real variant cgroup
 * made below our own, limited, entered, emptied and removed. */

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "local/cgroup.h"

static const char hybrid_mountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char hybrid_cgroup[] = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n"
                                    "2:cpuacct:/\n1:cpu:/\n0::/\n";

static void test_hybrid_v1(void **state)
{
    (void)state;
    struct cg_self s;
    /* The empty unified hierarchy offers no controllers: v1 it is. */
    cg_find_self(hybrid_mountinfo, hybrid_cgroup, "", &s);
    assert_int_equal(s.version, CG_V1);
    assert_string_equal(s.cpu, "/sys/fs/cgroup/cpu");
    assert_string_equal(s.cpuacct, "/sys/fs/cgroup/cpuacct");
    assert_string_equal(s.memory, "/sys/fs/cgroup/memory/process_api/abc");
}

static void test_comounted_v1(void **state)
{
    (void)state;
    static const char mi[] =
        "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw shared:7 - cgroup cgroup rw,cpu,cpuacct\n"
        "26 24 0:23 / /sys/fs/cgroup/memory rw shared:8 - cgroup cgroup rw,memory\n";
    static const char pc[] = "5:cpu,cpuacct:/user.slice\n4:memory:/user.slice/job\n";
    struct cg_self s;
    cg_find_self(mi, pc, NULL, &s);
    assert_int_equal(s.version, CG_V1);
    assert_string_equal(s.cpu, "/sys/fs/cgroup/cpu,cpuacct/user.slice");
    assert_string_equal(s.cpuacct, s.cpu);
    assert_string_equal(s.memory, "/sys/fs/cgroup/memory/user.slice/job");
}

static void test_pure_v2(void **state)
{
    (void)state;
    static const char mi[] = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 "
                             "rw,nsdelegate,memory_recursiveprot\n";
    static const char pc[] = "0::/user.slice/user-0.slice/session-3.scope\n";
    struct cg_self s;
    cg_find_self(mi, pc, "cpuset cpu io memory pids\n", &s);
    assert_int_equal(s.version, CG_V2);
    assert_string_equal(s.cpu, "/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope");
    assert_string_equal(s.memory, s.cpu);

    /* The same, but memory not delegated to us: nothing usable, and it says why. */
    cg_find_self(mi, pc, "cpu pids\n", &s);
    assert_int_equal(s.version, CG_NONE);
    assert_non_null(strstr(s.why, "cgroup v2"));
}

static void test_container_v2_root(void **state)
{
    (void)state;
    /* Inside a container with a cgroup namespace: our cgroup is the mount's root. */
    static const char mi[] = "700 690 0:30 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n";
    struct cg_self s;
    cg_find_self(mi, "0::/\n", "cpu memory\n", &s);
    assert_int_equal(s.version, CG_V2);
    assert_string_equal(s.cpu, "/sys/fs/cgroup");

    /* Without a namespace the mount root is the container's cgroup: stripped. */
    static const char mi1[] =
        "800 790 0:31 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"
        "801 790 0:32 /docker/abc /sys/fs/cgroup/cpu ro - cgroup cgroup rw,cpu\n"
        "802 790 0:33 /docker/abc /sys/fs/cgroup/cpuacct ro - cgroup cgroup rw,cpuacct\n";
    static const char pc1[] = "4:memory:/docker/abc\n3:cpuacct:/docker/abc\n2:cpu:/docker/abc/x\n";
    cg_find_self(mi1, pc1, NULL, &s);
    assert_int_equal(s.version, CG_V1);
    assert_string_equal(s.memory, "/sys/fs/cgroup/memory");
    assert_string_equal(s.cpu, "/sys/fs/cgroup/cpu/x");
}

static void test_none(void **state)
{
    (void)state;
    struct cg_self s;
    cg_find_self("31 23 0:28 / /sys rw - sysfs sysfs rw\n", "0::/\n", NULL, &s);
    assert_int_equal(s.version, CG_NONE);
    assert_true(strlen(s.why) > 0);
    /* A v1 memory hierarchy without our path in /proc/self/cgroup. */
    cg_find_self(hybrid_mountinfo, "1:cpu:/\n2:cpuacct:/\n", NULL, &s);
    assert_int_equal(s.version, CG_NONE);
    assert_non_null(strstr(s.why, "memory"));
}

static void test_quota(void **state)
{
    (void)state;
    assert_int_equal(cg_quota_us(500, 100000), 50000);
    assert_int_equal(cg_quota_us(2000, 100000), 200000);
    assert_int_equal(cg_quota_us(1250, 100000), 125000);
    assert_int_equal(cg_quota_us(5, 100000), 1000); /* the kernel's floor of 1 ms */
}

static long read_long(const char *dir, const char *file)
{
    char p[CG_PATH + 64], buf[64];
    snprintf(p, sizeof(p), "%s/%s", dir, file);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    long v = -1;
    if (fgets(buf, sizeof(buf), f))
        v = strtol(buf, NULL, 10);
    fclose(f);
    return v;
}

static void test_cpu_stat(void **state)
{
    (void)state;
    struct cg_throttle t;
    /* cgroup v2 (Linux 6.1), throttled time in microseconds. */
    static const char v2[] = "usage_usec 8123456\nuser_usec 6000000\nsystem_usec 2123456\n"
                             "core_sched.force_idle_usec 0\nnr_periods 1200\nnr_throttled 345\n"
                             "throttled_usec 17250000\nnr_bursts 0\nburst_usec 0\n";
    assert_int_equal(cg_parse_cpu_stat(v2, CG_V2, &t), 0);
    assert_int_equal(t.periods, 1200);
    assert_int_equal(t.throttled_periods, 345);
    assert_int_equal(t.throttled_ns, 17250000000ULL);
    /* cgroup v1, throttled time in nanoseconds. */
    static const char v1[] = "nr_periods 50\nnr_throttled 7\nthrottled_time 123456789\n";
    assert_int_equal(cg_parse_cpu_stat(v1, CG_V1, &t), 0);
    assert_int_equal(t.periods, 50);
    assert_int_equal(t.throttled_periods, 7);
    assert_int_equal(t.throttled_ns, 123456789);
    /* The unit follows the version: v1 text read as v2 lacks throttled_usec, and the reverse. */
    assert_int_equal(cg_parse_cpu_stat(v1, CG_V2, &t), -ENOENT);
    assert_int_equal(cg_parse_cpu_stat(v2, CG_V1, &t), -ENOENT);
    /* A key that merely starts like another is not it; no bandwidth control: -ENOENT. */
    static const char partial[] = "nr_periods_x 9\nnr_periods 3\nnr_throttled 0\nthrottled_time 0";
    assert_int_equal(cg_parse_cpu_stat(partial, CG_V1, &t), 0);
    assert_int_equal(t.periods, 3);
    assert_int_equal(cg_parse_cpu_stat("usage_usec 5\n", CG_V2, &t), -ENOENT);
    assert_int_equal(cg_parse_cpu_stat("", CG_V1, &t), -ENOENT);
}

static void test_real_cgroup(void **state)
{
    (void)state;
    struct cg_self self;
    struct cg_parent parent;
    struct cg g;
    char err[ERR_LEN] = "", name[64];
    struct stat st;

    cg_detect(&self);
    if (self.version == CG_NONE || geteuid() != 0) {
        print_message("skipping the real cgroup test: %s\n",
                      self.version == CG_NONE ? self.why : "not root");
        skip();
    }
    snprintf(name, sizeof(name), "sizeup-test-%d", (int)getpid());
    if (cg_prepare(&self, name, &parent, err) != 0) {
        print_message("skipping the real cgroup test: %s\n", err);
        skip();
    }
    /* Below our own cgroup, in every controller. */
    assert_int_equal(strncmp(parent.memory, self.memory, strlen(self.memory)), 0);
    assert_int_equal(strncmp(parent.cpu, self.cpu, strlen(self.cpu)), 0);
    /* The measurement's weight on the variants' parent and on sizeup itself (the generator), so
     * a niced neighbour in another session cannot take an equal share. */
    assert_true(parent.weighted);
    if (self.version == CG_V1) {
        assert_int_equal(read_long(parent.cpu, "cpu.shares"), 1024L * CG_WEIGHT_FACTOR);
        assert_int_equal(read_long(parent.gen_cpu, "cpu.shares"), 1024L * CG_WEIGHT_FACTOR);
        char mine[4096];
        FILE *f = fopen("/proc/self/cgroup", "r");
        assert_non_null(f);
        size_t got = fread(mine, 1, sizeof(mine) - 1, f);
        fclose(f);
        mine[got] = '\0';
        char want[128];
        snprintf(want, sizeof(want), "%s-gen\n", name);
        assert_non_null(strstr(mine, want)); /* sizeup moved into its weighted cgroup */
    } else {
        assert_int_equal(read_long(parent.cpu, "cpu.weight"), 100L * CG_WEIGHT_FACTOR);
        if (parent.self_leaf[0])
            assert_int_equal(read_long(parent.self_leaf, "cpu.weight"), 100L * CG_WEIGHT_FACTOR);
    }
    if (cg_create(&parent, "v1", 250, 64LL << 20, &g, err) != 0)
        fail_msg("cg_create: %s", err);
    if (g.version == CG_V1) {
        assert_int_equal(read_long(g.cpu, "cpu.cfs_period_us"), 100000);
        assert_int_equal(read_long(g.cpu, "cpu.cfs_quota_us"), 25000);
        assert_int_equal(read_long(g.memory, "memory.limit_in_bytes"), 64L << 20);
    }
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (cg_enter(&g, getpid()) != 0)
            _exit(3);
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    usleep(300000);
    pid_t pids[8];
    size_t n = 0;
    assert_int_equal(cg_pids(&g, pids, 8, &n, err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(pids[0], pid);
    uint64_t ns = 0;
    assert_int_equal(cg_cpu_ns(&g, &ns, err), 0);
    /* 0.3 s at a quarter of a core: well under 0.3 s of CPU, and some. */
    assert_true(ns > 10 * 1000 * 1000ULL);
    assert_true(ns < 200 * 1000 * 1000ULL);
    int64_t cur = -1;
    assert_int_equal(cg_mem_current(&g, &cur, err), 0);
    assert_true(cur >= 0);
    /* A quarter of a core, spinning for 0.3 s: throttled in most of its ~3 periods. */
    struct cg_throttle th;
    assert_int_equal(cg_cpu_throttle(&g, &th, err), 0);
    assert_true(th.periods >= 1);
    assert_true(th.throttled_periods >= 1);
    assert_true(th.throttled_ns > 0);
    uint64_t ooms = 99;
    assert_int_equal(cg_oom_kills(&g, &ooms, err), 0);
    assert_int_equal(ooms, 0);
    assert_int_equal(cg_signal_all(&g, SIGKILL, err), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(cg_destroy(&g, err), 0);
    assert_int_equal(stat(g.memory, &st), -1);
    assert_int_equal(cg_unprepare(&parent, err), 0);
    assert_int_equal(stat(parent.memory, &st), -1);
    assert_int_equal(stat(parent.cpu, &st), -1);
    if (self.version == CG_V1) {
        char gen[CG_PATH];
        snprintf(gen, sizeof(gen), "%s/%s-gen", self.cpu, name);
        assert_int_equal(stat(gen, &st), -1); /* sizeup back where it started, its cgroup gone */
    }
    /* Idempotent. */
    assert_int_equal(cg_destroy(&g, err), 0);
    assert_int_equal(cg_unprepare(&parent, err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hybrid_v1), cmocka_unit_test(test_comounted_v1),
        cmocka_unit_test(test_pure_v2),   cmocka_unit_test(test_container_v2_root),
        cmocka_unit_test(test_none),      cmocka_unit_test(test_quota),
        cmocka_unit_test(test_cpu_stat),  cmocka_unit_test(test_real_cgroup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
