/* Unit tests for src/kube/platform*.c that need no API server: parsing the CPU quantities of
 * metrics.k8s.io, and the clone's names and label values within Kubernetes' limits. The platform
 * itself is tested against the fake API server by tests/kube/test_kube_platform.c
 * (tests/integration/kube_platform.sh). */

#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* ---- the clone's names -------------------------------------------------------------------- */

/* A Kubernetes label value: at most 63 characters, alphanumeric at both ends. */
static bool label_value_ok(const char *v)
{
    size_t n = strlen(v);
    if (n > KUBE_LABEL_VALUE_MAX)
        return false;
    if (n == 0)
        return true;
    if (!isalnum((unsigned char)v[0]) || !isalnum((unsigned char)v[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)v[i]) && !strchr("-_.", v[i]))
            return false;
    return true;
}

/* A Deployment name (RFC 1123 subdomain): dot-separated parts of lowercase alphanumerics and
 * '-', each starting and ending alphanumeric. */
static bool object_name_ok(const char *v)
{
    size_t n = strlen(v);
    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = v[i], prev = i ? v[i - 1] : '.', next = i + 1 < n ? v[i + 1] : '.';
        if (c == '.' && (prev == '.' || prev == '-' || next == '.' || next == '-'))
            return false;
        if (c == '-' && (prev == '.' || next == '.'))
            return false;
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-' || c == '.'))
            return false;
    }
    return true;
}

static void check_names(const char *name, char clone[KUBE_LABEL_VALUE_MAX + 1],
                        char label[KUBE_LABEL_VALUE_MAX + 1])
{
    char again[KUBE_LABEL_VALUE_MAX + 1];
    kube_platform_clone_name(name, clone);
    kube_platform_clone_label(name, label);
    if (!label_value_ok(clone) || !object_name_ok(clone))
        fail_msg("clone name '%s' of '%s' is not a valid name and label value", clone, name);
    if (!label_value_ok(label))
        fail_msg("label '%s' of '%s' is not a valid label value", label, name);
    size_t n = strlen(clone);
    assert_true(n > 7 && strcmp(clone + n - 7, "-sizeup") == 0);
    kube_platform_clone_name(name, again); /* deterministic */
    assert_string_equal(again, clone);
    kube_platform_clone_label(name, again);
    assert_string_equal(again, label);
}

static void test_clone_names(void **state)
{
    (void)state;
    char name[254], other[254], clone[64], label[64], clone2[64], label2[64];

    /* Short names are used as they are. */
    check_names("web", clone, label);
    assert_string_equal(clone, "web-sizeup");
    assert_string_equal(label, "web");
    memset(name, 'a', 56);
    name[56] = '\0';
    check_names(name, clone, label); /* "-sizeup" makes exactly 63 */
    assert_int_equal(strlen(clone), 63);
    assert_int_equal(strncmp(clone, name, 56), 0);
    assert_string_equal(label, name);

    /* 57 characters: the clone's name is shortened, the label (57) is not. */
    memset(name, 'a', 57);
    name[57] = '\0';
    check_names(name, clone, label);
    assert_true(strlen(clone) <= 63);
    assert_string_equal(label, name);
    /* 63 and 64: the label is the name, then shortened. */
    memset(name, 'b', 64);
    name[63] = '\0';
    check_names(name, clone, label);
    assert_string_equal(label, name);
    name[63] = 'b';
    name[64] = '\0';
    check_names(name, clone, label);
    assert_true(strlen(label) <= 63);
    assert_int_equal(strncmp(label, name, 40), 0); /* still readable: the name's start */

    /* The longest Deployment name, and another that differs only in its last character: their
     * names and labels must not collide. */
    memset(name, 'c', 253);
    name[253] = '\0';
    memcpy(other, name, sizeof(other));
    other[252] = 'd';
    check_names(name, clone, label);
    check_names(other, clone2, label2);
    assert_string_not_equal(clone, clone2);
    assert_string_not_equal(label, label2);
    /* ... nor two that differ only in a character the cut drops. */
    other[252] = 'c';
    other[100] = 'x';
    check_names(other, clone2, label2);
    assert_string_not_equal(clone, clone2);
    assert_string_not_equal(label, label2);

    /* A cut that would end on '.' or '-' backs up to an alphanumeric character. */
    snprintf(
        name, sizeof(name), "%.38s.%.100s", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    check_names(name, clone, label);
    snprintf(
        name, sizeof(name), "%.45s-%.100s", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
        "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    check_names(name, clone, label);
    snprintf(name, sizeof(name), "%s",
             "a.b.c-d.e-f.g.h-i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.0.1.2.3.4-"
             "5.6.7.8.9-a.b.c.d.e.f.g.h");
    check_names(name, clone, label);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cores),
        cmocka_unit_test(test_clone_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
