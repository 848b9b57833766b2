/* Tests for src/profile/url.c: base URLs (table-driven, malformed ones included) and resolution. */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "profile/url.h"

struct ok_case {
    const char *in;
    int tls;
    const char *host;
    int is_ip;
    unsigned port;
    const char *authority;
    const char *base;
};

static void test_parse_ok(void **state)
{
    (void)state;
    static const struct ok_case cases[] = {
        {"http://127.0.0.1:8080", 0, "127.0.0.1", 1, 8080, "127.0.0.1:8080", ""},
        {"http://127.0.0.1:8080/", 0, "127.0.0.1", 1, 8080, "127.0.0.1:8080", ""},
        {"http://localhost", 0, "localhost", 0, 80, "localhost", ""},
        {"HTTPS://Example.com/api/v1/", 1, "Example.com", 0, 443, "Example.com", "/api/v1"},
        {"https://example.com:8443/x", 1, "example.com", 0, 8443, "example.com:8443", "/x"},
        {"http://[::1]:9000/base", 0, "::1", 1, 9000, "[::1]:9000", "/base"},
        {"https://[::1]", 1, "::1", 1, 443, "[::1]", ""},
        {"http://a-b.c_d:80//", 0, "a-b.c_d", 0, 80, "a-b.c_d", ""},
        {"http://h:65535", 0, "h", 0, 65535, "h:65535", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct url u;
        char err[ERR_LEN] = "";
        if (url_parse(cases[i].in, &u, err) != 0)
            fail_msg("'%s': %s", cases[i].in, err);
        assert_int_equal(u.tls, cases[i].tls);
        assert_string_equal(u.host, cases[i].host);
        assert_int_equal(u.host_is_ip, cases[i].is_ip);
        assert_int_equal(u.port, cases[i].port);
        assert_string_equal(u.authority, cases[i].authority);
        assert_string_equal(u.base_path, cases[i].base);
    }
}

static void test_parse_bad(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *msg_has;
    } cases[] = {
        {"", "empty"},
        {"ftp://h", "http:// or https://"},
        {"127.0.0.1:8080", "http:// or https://"},
        {"http://", "no host"},
        {"http://:80", "no host"},
        {"http://h:0", "port '0'"},
        {"http://h:65536", "port '65536'"},
        {"http://h:80x", "port '80x'"},
        {"http://h:", "empty port"},
        {"http://h:123456", "port '123456'"},
        {"http://user@h", "user info"},
        {"http://[::1", "without ']'"},
        {"http://[::1]x", "after ']'"},
        {"http://[zz]", "not an IPv6"},
        {"http://h/a?b=1", "query string"},
        {"http://h/#frag", "fragment"},
        {"http://h/a b", "control character or space"},
        {"http://h\x01/", "bad character"},
        {"http://h%20/", "bad character"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct url u;
        char err[ERR_LEN] = "";
        assert_int_equal(url_parse(cases[i].in, &u, err), -EINVAL);
        if (!strstr(err, cases[i].msg_has))
            fail_msg("'%s': error '%s' lacks '%s'", cases[i].in, err, cases[i].msg_has);
    }
}

static void test_too_long(void **state)
{
    (void)state;
    static char big[URL_MAX + 64];
    struct url u;
    char err[ERR_LEN] = "";
    memcpy(big, "http://h/", 9);
    memset(big + 9, 'a', sizeof(big) - 10);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(url_parse(big, &u, err), -EINVAL);
    assert_non_null(strstr(err, "longer"));
}

static void test_resolve(void **state)
{
    (void)state;
    struct url u;
    struct url_addr a;
    char err[ERR_LEN] = "";

    assert_int_equal(url_parse("http://127.0.0.1:8080", &u, err), 0);
    assert_int_equal(url_resolve(&u, &a, err), 0);
    assert_int_equal(a.family, AF_INET);
    struct sockaddr_in *in4 = (struct sockaddr_in *)&a.ss;
    assert_int_equal(ntohs(in4->sin_port), 8080);
    assert_int_equal(ntohl(in4->sin_addr.s_addr), 0x7f000001);

    assert_int_equal(url_parse("http://[::1]:9", &u, err), 0);
    assert_int_equal(url_resolve(&u, &a, err), 0);
    assert_int_equal(a.family, AF_INET6);
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a.ss;
    assert_int_equal(ntohs(in6->sin6_port), 9);
    assert_true(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));

    assert_int_equal(url_parse("http://localhost:1", &u, err), 0);
    assert_int_equal(url_resolve(&u, &a, err), 0);
    assert_true(a.family == AF_INET || a.family == AF_INET6);

    /* .invalid never resolves (RFC 6761). */
    assert_int_equal(url_parse("http://no-such-host.invalid", &u, err), 0);
    assert_int_equal(url_resolve(&u, &a, err), -EHOSTUNREACH);
    assert_non_null(strstr(err, "no-such-host.invalid"));
}

static void test_join(void **state)
{
    (void)state;
    struct url u;
    char out[64], err[ERR_LEN];
    assert_int_equal(url_parse("http://h/api/", &u, err), 0);
    assert_int_equal(url_join_path(&u, "/users?id=1", out, sizeof(out)), 15);
    assert_string_equal(out, "/api/users?id=1");
    assert_int_equal(url_join_path(&u, "/users", out, 5), -ENAMETOOLONG);
    assert_int_equal(url_join_path(&u, "/", out, sizeof(out)), 4);
    assert_string_equal(out, "/api");
    assert_int_equal(url_parse("http://h", &u, err), 0);
    assert_int_equal(url_join_path(&u, "/", out, sizeof(out)), 1);
    assert_string_equal(out, "/");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ok), cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_too_long), cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
