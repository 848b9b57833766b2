/* Tests for src/kube/exec_cred.c and the exec part of src/kube/config.c: the ExecCredential
 * parser (table-driven, malformed output included; its times are kube_time_parse's, tested in
 * test_kube_objects.c), KUBERNETES_EXEC_INFO, and
 * running plugin scripts (success, failure, a hang, bad JSON, interactiveMode Always, the
 * credential's cache until its expiry). */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/exec_cred.h"
#include "kube/kube_int.h"

#define V1  KUBE_EXEC_API_V1
#define V1B KUBE_EXEC_API_V1BETA1
#define PEM "-----BEGIN X-----\\nQUJD\\n-----END X-----\\n"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_kube_exec_cred.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[320];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes an executable script tmpdir/name; returns its path in a static buffer. */
static const char *script(const char *name, const char *body)
{
    static char path[512];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
    return path;
}

struct parse_case {
    const char *name;
    const char *api;
    const char *json;
    int rc;
    const char *msg_has; /* error text, or for rc 0 the token ("" for a certificate) */
    time_t expiry;
};

static void test_parse(void **state)
{
    (void)state;
    static const struct parse_case cases[] = {
        {"v1 token", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t0k\"}}",
         0, "t0k", 0},
        {"v1beta1 token with expiry", V1B,
         "{\"apiVersion\":\"" V1B "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"abc\","
         "\"expirationTimestamp\":\"2026-12-01T21:00:00Z\"}}",
         0, "abc", 1796158800},
        {"certificate and key", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{"
         "\"clientCertificateData\":\"" PEM "\",\"clientKeyData\":\"" PEM "\"}}",
         0, "", 0},
        {"spec and null fields are fine", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false},"
         "\"status\":{\"token\":\"x\",\"expirationTimestamp\":null,\"clientKeyData\":null}}",
         0, "x", 0},
        {"empty output", V1, "", -EBADMSG, "printed nothing", 0},
        {"not JSON", V1, "Please log in: ", -EBADMSG, "not a JSON object", 0},
        {"a JSON list", V1, "[1,2]", -EBADMSG, "not a JSON object", 0},
        {"truncated", V1, "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCred", -EBADMSG,
         "not a JSON object", 0},
        {"wrong kind", V1, "{\"apiVersion\":\"" V1 "\",\"kind\":\"Secret\",\"status\":{}}",
         -EBADMSG, "not an ExecCredential", 0},
        {"other apiVersion", V1,
         "{\"apiVersion\":\"" V1B "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"a\"}}",
         -EBADMSG, "returned apiVersion " V1B ", but the kubeconfig asks for " V1, 0},
        {"apiVersion with a control character", V1,
         "{\"apiVersion\":\"client.\\u0001v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":"
         "\"a\"}}",
         -EBADMSG, "returned apiVersion (unprintable)", 0},
        {"no status", V1, "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\"}", -EBADMSG,
         "returned no status", 0},
        {"empty status", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{}}", -EBADMSG,
         "neither a token nor", 0},
        {"token not a string", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":42}}",
         -EBADMSG, "not a string", 0},
        {"token with a newline", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":"
         "\"a\\r\\nX-Evil: 1\"}}",
         -EBADMSG, "not allowed in a token", 0},
        {"certificate without key", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{"
         "\"clientCertificateData\":\"" PEM "\"}}",
         -EBADMSG, "without a key", 0},
        {"certificate not PEM", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{"
         "\"clientCertificateData\":\"QUJD\",\"clientKeyData\":\"" PEM "\"}}",
         -EBADMSG, "not PEM", 0},
        {"bad expiry", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"a\","
         "\"expirationTimestamp\":\"tomorrow\"}}",
         -EBADMSG, "not an RFC 3339 time", 0},
        {"expiry a number", V1,
         "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"a\","
         "\"expirationTimestamp\":1}}",
         -EBADMSG, "not an RFC 3339 time", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct parse_case *c = &cases[i];
        struct kube_exec_cred cr;
        char err[ERR_LEN] = "";
        int rc = kube_exec_parse(c->json, strlen(c->json), c->api, &cr, err);
        if (rc != c->rc)
            fail_msg("case '%s': rc %d, want %d (%s)", c->name, rc, c->rc, err);
        if (rc == 0) {
            if (c->msg_has[0])
                assert_string_equal(cr.token, c->msg_has);
            else
                assert_true(cr.token == NULL && cr.cert && cr.key && cr.cert_len > 10);
            assert_int_equal((long long)cr.expiry, (long long)c->expiry);
        } else {
            if (!strstr(err, c->msg_has))
                fail_msg("case '%s': error '%s' lacks '%s'", c->name, err, c->msg_has);
            assert_null(cr.token);
            assert_null(cr.cert);
            /* The output never appears in the error. */
            assert_null(strstr(err, "X-Evil"));
            assert_null(strstr(err, "log in"));
        }
        kube_exec_cred_clear(&cr);
    }
}

static void exec_init(struct kube_exec *ex, const char *cmd, const char *api)
{
    memset(ex, 0, sizeof(*ex));
    ex->command = strdup(cmd);
    ex->api_version = strdup(api);
    ex->install_hint = strdup("see https://plug.example/install\nor ask");
    ex->interactive = KUBE_EXEC_IF_AVAILABLE;
    ex->timeout_ms = 5000;
}

static void test_info(void **state)
{
    (void)state;
    struct kube_exec ex;
    exec_init(&ex, "x", V1);
    char *s = kube_exec_info(&ex, false);
    assert_string_equal(s, "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                           "\",\"spec\":{\"interactive\":false}}");
    free(s);
    ex.provide_cluster_info = true;
    ex.cluster_json = strdup("{\"server\":\"https://h:1\"}");
    s = kube_exec_info(&ex, true);
    assert_string_equal(s, "{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                           "\",\"spec\":{\"interactive\":true,\"cluster\":{\"server\":"
                           "\"https://h:1\"}}}");
    free(s);
    kube_exec_free(&ex);
}

static void test_run(void **state)
{
    (void)state;
    struct kube_exec ex;
    struct kube_exec_cred cr;
    char err[ERR_LEN], path[600], buf[4096];

    /* The plugin gets its args, the kubeconfig's env and KUBERNETES_EXEC_INFO. */
    snprintf(path, sizeof(path), "%s/seen", tmpdir);
    char body[1200];
    snprintf(body, sizeof(body),
             "printf '%%s|%%s|%%s' \"$1\" \"$PLUG_ENV\" \"$KUBERNETES_EXEC_INFO\" > '%s'\n"
             "echo 'noise on stderr' >&2\n"
             "echo '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\","
             "\"status\":{\"token\":\"from-plugin\"}}'",
             path);
    exec_init(&ex, script("ok.sh", body), V1);
    ex.args[ex.nargs++] = strdup("get-token");
    ex.env[0].name = strdup("PLUG_ENV");
    ex.env[0].value = strdup("v=1");
    ex.nenv = 1;
    assert_int_equal(kube_exec_run(&ex, false, &cr, err), 0);
    assert_string_equal(cr.token, "from-plugin");
    kube_exec_cred_clear(&cr);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, "get-token|v=1|{\"kind\":\"ExecCredential\",\"apiVersion\":\"" V1
                             "\",\"spec\":{\"interactive\":false}}");
    kube_exec_free(&ex);

    /* Failure, bad JSON, a hang, a missing command: each names the plugin and its hint, on
     * one line, and never holds what the plugin printed. */
    static const struct {
        const char *name, *body;
        int rc;
        const char *msg_has;
    } bad[] = {
        {"fail.sh", "echo 'secret-ish output'; exit 3", -ECHILD, "exited with status 3"},
        {"badjson.sh", "echo 'secret-ish output'", -EBADMSG, "not a JSON object"},
        {"hang.sh", "sleep 30", -ETIME, "did not finish within"},
        {"killed.sh", "kill -9 $$", -ECHILD, "killed by signal 9"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        exec_init(&ex, script(bad[i].name, bad[i].body), V1);
        ex.timeout_ms = 700;
        long long t0 = kube__now_ms();
        int rc = kube_exec_run(&ex, false, &cr, err);
        if (rc != bad[i].rc || !strstr(err, bad[i].msg_has))
            fail_msg("%s: rc %d err '%s'", bad[i].name, rc, err);
        assert_true(kube__now_ms() - t0 < 3000);
        assert_non_null(strstr(err, bad[i].name));
        assert_non_null(strstr(err, "(install hint: see https://plug.example/install or ask)"));
        assert_null(strstr(err, "secret-ish"));
        assert_null(strchr(err, '\n'));
        assert_null(cr.token);
        kube_exec_free(&ex);
    }
    exec_init(&ex, "sizeup-no-such-plugin", V1);
    assert_true(kube_exec_run(&ex, false, &cr, err) < 0);
    assert_non_null(strstr(err, "exec plugin 'sizeup-no-such-plugin'"));
    kube_exec_free(&ex);

    /* interactiveMode Always without a terminal: refused before running anything. */
    exec_init(&ex, script("always.sh", "touch ran; exit 0"), V1);
    ex.interactive = KUBE_EXEC_ALWAYS;
    assert_int_equal(kube_exec_run(&ex, false, &cr, err), -ENOTTY);
    assert_non_null(strstr(err, "interactiveMode is Always, but there is no terminal"));
    kube_exec_free(&ex);
}

/* A kubeconfig whose user runs tmpdir/count.sh: it appends a line to tmpdir/runs each time and
 * prints a token valid for expires_in seconds. */
static kube_config_t *counting_config(long expires_in)
{
    char body[1024], y[2048];
    char exp[64];
    time_t t = time(NULL) + expires_in;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(exp, sizeof(exp), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(body, sizeof(body),
             "echo run >> '%s/runs'\n"
             "n=$(wc -l < '%s/runs')\n"
             "echo \"{\\\"apiVersion\\\":\\\"" V1B "\\\",\\\"kind\\\":\\\"ExecCredential\\\","
             "\\\"status\\\":{\\\"token\\\":\\\"tok-$n\\\","
             "\\\"expirationTimestamp\\\":\\\"%s\\\"}}\"",
             tmpdir, tmpdir, exp);
    script("count.sh", body);
    snprintf(y, sizeof(y),
             "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
             "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
             "users: [{name: u, user: {exec: {apiVersion: " V1B ", command: ./count.sh}}}]\n");
    char p[600];
    snprintf(p, sizeof(p), "%s/runs", tmpdir);
    unlink(p);
    kube_config_t *cfg = NULL;
    char err[ERR_LEN] = "";
    if (kube_config_parse(y, strlen(y), tmpdir, NULL, 0, &cfg, err) != 0)
        fail_msg("%s", err);
    return cfg;
}

/* Sets the parsed plugin's interactiveMode to Always. */
static void sed_interactive_always(kube_config_t *cfg)
{
    cfg->exec->interactive = KUBE_EXEC_ALWAYS;
}

static void test_cache_until_expiry(void **state)
{
    (void)state;
    char tok[256];
    int changed = 0;

    /* Valid for an hour: the plugin runs once, at the first use; force (a 401) runs it again. */
    kube_config_t *cfg = counting_config(3600);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), -ENOENT);
    for (int i = 0; i < 3; i++)
        assert_int_equal(kube_config_reload_token(cfg, 0, NULL, NULL), 0);
    assert_int_equal(cfg->exec_runs, 1);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "tok-1");
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, NULL), 0);
    assert_int_equal(changed, 1);
    assert_int_equal(cfg->exec_runs, 2);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "tok-2");
    kube_config_free(cfg);

    /* Already expired: every use runs it again. */
    cfg = counting_config(-10);
    for (int i = 0; i < 3; i++)
        assert_int_equal(kube_config_reload_token(cfg, 0, NULL, NULL), 0);
    assert_int_equal(cfg->exec_runs, 3);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "tok-3");
    kube_config_free(cfg);

    /* The operator's config never runs a plugin interactively: Always is refused even when a
     * terminal might be there. */
    cfg = counting_config(3600);
    sed_interactive_always(cfg);
    kube_config_exec_no_terminal(cfg);
    char err[ERR_LEN] = "";
    assert_int_equal(kube_config_reload_token(cfg, 0, NULL, err), -ENOTTY);
    assert_non_null(strstr(err, "interactiveMode is Always"));
    assert_int_equal(cfg->exec_runs, 0);
    kube_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_run),
        cmocka_unit_test(test_cache_until_expiry),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
