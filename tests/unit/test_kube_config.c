/* Tests for src/kube/config.c: kubeconfig parsing (table-driven, malformed input included),
 * in-cluster config, and the service-account token's rotation. */

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

#include "kube/client.h"
#include "kube/kube_int.h"

static char tmpdir[256];

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_kube_config.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    char sub[300];
    snprintf(sub, sizeof(sub), "%s/certs", tmpdir);
    mkdir(sub, 0700);
    write_file(tmpdir, "certs/ca.pem", "-----BEGIN CERTIFICATE-----\nCAFILE\n");
    write_file(tmpdir, "certs/client.pem", "CERTFILE");
    write_file(tmpdir, "certs/client.key", "KEYFILE");
    write_file(tmpdir, "token", "file-token-1\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[320];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#define HEAD                                                                                       \
    "apiVersion: v1\nkind: Config\ncurrent-context: dev\n"                                         \
    "contexts:\n- name: dev\n  context: {cluster: c1, user: u1, namespace: team-a}\n"              \
    "- name: other\n  context: {cluster: c2, user: u2}\n"                                          \
    "clusters:\n- name: c2\n  cluster: {server: 'https://10.0.0.9:6443/'}\n"

#define EXEC_V1  "client.authentication.k8s.io/v1"
#define EXEC_V1B "client.authentication.k8s.io/v1beta1"

struct ok_case {
    const char *name;
    const char *yaml;
    const char *context;
    const char *server;
    const char *ns;
    int insecure;
    const char *ca; /* expected CA bytes, NULL: none */
    const char *cert;
    const char *key;
    const char *token;
};

static void test_kubeconfig_ok(void **state)
{
    (void)state;
    static const struct ok_case cases[] = {
        {"inline data and token",
         HEAD "- name: c1\n  cluster:\n    server: https://127.0.0.1:6443\n"
              "    certificate-authority-data: aGVsbG8gQ0E=\n"
              "users:\n- name: u1\n  user:\n    token: abc.def-123\n"
              "    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n",
         NULL, "https://127.0.0.1:6443", "team-a", 0, "hello CA", "CERT", "KEY", "abc.def-123"},
        {"relative files resolve against the kubeconfig's directory",
         HEAD "- name: c1\n  cluster:\n    server: https://kube.example:443\n"
              "    certificate-authority: certs/ca.pem\n"
              "users:\n- name: u1\n  user:\n    client-certificate: certs/client.pem\n"
              "    client-key: certs/client.key\n    tokenFile: token\n",
         NULL, "https://kube.example:443", "team-a", 0, "-----BEGIN CERTIFICATE-----\nCAFILE\n",
         "CERTFILE", "KEYFILE", "file-token-1"},
        {"explicit context, trailing slash dropped, default namespace",
         HEAD "- name: c1\n  cluster: {server: 'https://x:1'}\n"
              "users:\n- name: u1\n  user: {}\n- name: u2\n  user: {token: t2}\n",
         "other", "https://10.0.0.9:6443", "default", 0, NULL, NULL, NULL, "t2"},
        {"insecure and base64 with newlines",
         HEAD "- name: c1\n  cluster:\n    server: https://127.0.0.2:8443\n"
              "    insecure-skip-tls-verify: true\n"
              "    certificate-authority-data: |\n      aGVsbG8g\n      Q0E=\n"
              "users:\n- name: u1\n  user: {token: tok}\n",
         NULL, "https://127.0.0.2:8443", "team-a", 1, "hello CA", NULL, NULL, "tok"},
        {"no user at all",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:8080'}}]\n",
         NULL, "http://127.0.0.1:8080", "default", 0, NULL, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct ok_case *c = &cases[i];
        kube_config_t *cfg = NULL;
        char err[ERR_LEN] = "", tok[256];
        int rc = kube_config_parse(c->yaml, strlen(c->yaml), tmpdir, c->context, 0, &cfg, err);
        if (rc)
            fail_msg("case '%s': rc %d: %s", c->name, rc, err);
        assert_string_equal(kube_config_server(cfg), c->server);
        assert_string_equal(kube_config_namespace(cfg), c->ns);
        assert_int_equal(cfg->insecure, c->insecure);
        if (c->ca) {
            assert_int_equal(cfg->ca_len, strlen(c->ca));
            assert_memory_equal(cfg->ca, c->ca, cfg->ca_len);
        } else {
            assert_null(cfg->ca);
        }
        if (c->cert) {
            assert_int_equal(cfg->cert_len, strlen(c->cert));
            assert_memory_equal(cfg->cert, c->cert, cfg->cert_len);
            assert_int_equal(cfg->key_len, strlen(c->key));
            assert_memory_equal(cfg->key, c->key, cfg->key_len);
        } else {
            assert_null(cfg->cert);
        }
        if (c->token) {
            assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
            assert_string_equal(tok, c->token);
        } else {
            assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), -ENOENT);
        }
        kube_config_free(cfg);
    }
}

struct bad_case {
    const char *name;
    const char *yaml;
    int rc;
    const char *msg_has;
};

#define ONE_CLUSTER                                                                                \
    "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"                  \
    "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"

static void test_kubeconfig_bad(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"not yaml", "{{{: [", -EINVAL, "not valid YAML"},
        {"a list", "- a\n- b\n", -EINVAL, "not a YAML mapping"},
        {"empty", "", -EINVAL, "not a YAML mapping"},
        {"no current-context", "clusters: []\n", -EINVAL, "no current-context"},
        {"missing context", "current-context: x\ncontexts: []\n", -EINVAL, "no context named 'x'"},
        {"missing cluster", "current-context: a\ncontexts: [{name: a, context: {cluster: nope}}]\n",
         -EINVAL, "no cluster named 'nope'"},
        {"no server",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {}}]\n",
         -EINVAL, "has no server"},
        {"server not a URL",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'ftp://x'}}]\n",
         -EINVAL, "not an http(s) URL"},
        {"server without a host",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://'}}]\n",
         -EINVAL, "names no host"},
        {"exec without apiVersion",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: aws}}}]\n", -ENOTSUP,
         "exec apiVersion '' is not supported"},
        {"exec v1alpha1",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: aws, apiVersion: "
                     "client.authentication.k8s.io/v1alpha1}}}]\n",
         -ENOTSUP, "v1alpha1' is not supported"},
        {"exec v1 without interactiveMode",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: aws, apiVersion: " EXEC_V1 "}}}]\n",
         -EINVAL, "interactiveMode is required"},
        {"exec bad interactiveMode",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: aws, apiVersion: " EXEC_V1
                     ", interactiveMode: Sometimes}}}]\n",
         -EINVAL, "'Sometimes' is not Never"},
        {"exec without command",
         ONE_CLUSTER "users: [{name: u, user: {exec: {apiVersion: " EXEC_V1B "}}}]\n", -EINVAL,
         "exec has no command"},
        {"exec not a mapping", ONE_CLUSTER "users: [{name: u, user: {exec: [a, b]}}]\n", -EINVAL,
         "exec is not a mapping"},
        {"exec args not a list",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: x, apiVersion: " EXEC_V1B
                     ", args: {a: b}}}}]\n",
         -EINVAL, "exec args is not a list"},
        {"exec arg not a string",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: x, apiVersion: " EXEC_V1B
                     ", args: [[1]]}}}]\n",
         -EINVAL, "an exec arg is not a string"},
        {"exec env without value",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: x, apiVersion: " EXEC_V1B
                     ", env: [{name: A}]}}}]\n",
         -EINVAL, "needs a name"},
        {"exec env name with =",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: x, apiVersion: " EXEC_V1B
                     ", env: [{name: 'A=B', value: c}]}}}]\n",
         -EINVAL, "needs a name"},
        {"exec provideClusterInfo not a bool",
         ONE_CLUSTER "users: [{name: u, user: {exec: {command: x, apiVersion: " EXEC_V1B
                     ", provideClusterInfo: perhaps}}}]\n",
         -EINVAL, "provideClusterInfo 'perhaps' is not a boolean"},
        {"proxy-url not a URL",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://h:1', proxy-url: 'ftp://p:1'}}]\n",
         -EINVAL, "proxy-url must be an http, https or socks5 URL"},
        {"proxy-url with a space",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://h:1', proxy-url: 'http://p:1/ x'}}]\n",
         -EINVAL, "proxy-url holds a control character"},
        {"tls-server-name for another host",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://10.1.2.3:6443', tls-server-name: "
         "api.example}}]\n",
         -ENOTSUP, "tls-server-name api.example, which sizeup cannot honour"},
        {"auth-provider", ONE_CLUSTER "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n",
         -ENOTSUP, "auth-provider"},
        {"basic auth", ONE_CLUSTER "users: [{name: u, user: {username: a, password: b}}]\n",
         -ENOTSUP, "basic authentication"},
        {"missing user", ONE_CLUSTER "users: []\n", -EINVAL, "no user named 'u'"},
        {"bad base64",
         ONE_CLUSTER "users: [{name: u, user: {client-certificate-data: '!!!', "
                     "client-key-data: S0VZ}}]\n",
         -EINVAL, "not valid base64"},
        {"truncated base64", ONE_CLUSTER "users: [{name: u, user: {client-key-data: 'QUJDR'}}]\n",
         -EINVAL, "not valid base64"},
        {"cert without key",
         ONE_CLUSTER "users: [{name: u, user: {client-certificate-data: QQ==}}]\n", -EINVAL,
         "without a key"},
        {"missing CA file",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://h:1', certificate-authority: nope.pem}}]"
         "\n",
         -ENOENT, "nope.pem"},
        {"missing token file",
         ONE_CLUSTER "users: [{name: u, user: {tokenFile: /nonexistent/t}}]\n", -ENOENT,
         "/nonexistent/t"},
        {"token with a newline inside",
         ONE_CLUSTER "users: [{name: u, user: {token: \"abc\\r\\nX-Evil: 1\"}}]\n", -EINVAL,
         "invalid token"},
        {"insecure not a bool",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://h:1', insecure-skip-tls-verify: "
         "maybe}}]\n",
         -EINVAL, "not a boolean"},
        {"contexts is a scalar", "current-context: a\ncontexts: 3\n", -EINVAL, "no context"},
        {"server with a space",
         "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
         "clusters: [{name: c, cluster: {server: 'https://h:1/ x'}}]\n",
         -EINVAL, "space"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct bad_case *c = &cases[i];
        kube_config_t *cfg = NULL;
        char err[ERR_LEN] = "";
        int rc = kube_config_parse(c->yaml, strlen(c->yaml), tmpdir, NULL, 0, &cfg, err);
        if (rc != c->rc)
            fail_msg("case '%s': rc %d, want %d (%s)", c->name, rc, c->rc, err);
        assert_null(cfg);
        if (!strstr(err, c->msg_has))
            fail_msg("case '%s': error '%s' lacks '%s'", c->name, err, c->msg_has);
    }
}

/* Credentials never leak into error text, even when the file is broken right after them. */
static void test_errors_hold_no_credentials(void **state)
{
    (void)state;
    static const char y[] = ONE_CLUSTER "users: [{name: u, user: {token: s3cr3t-t0ken, "
                                        "auth-provider: {name: x}}}]\n";
    kube_config_t *cfg = NULL;
    char err[ERR_LEN] = "";
    assert_int_equal(kube_config_parse(y, strlen(y), NULL, NULL, 0, &cfg, err), -ENOTSUP);
    assert_null(strstr(err, "s3cr3t"));
}

static void test_load_from_file_and_env(void **state)
{
    (void)state;
    char path[512], err[ERR_LEN] = "", tok[64];
    kube_config_t *cfg = NULL;
    snprintf(path, sizeof(path), "%s/kubeconfig", tmpdir);
    write_file(tmpdir, "kubeconfig",
               "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
               "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1', "
               "certificate-authority: certs/ca.pem}}]\n"
               "users: [{name: u, user: {tokenFile: token}}]\n");
    /* $KUBECONFIG is a list; a file that does not exist is skipped, as kubectl skips it. */
    char env[600];
    snprintf(env, sizeof(env), "%s:/nonexistent/second", path);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(NULL, &cfg, err), 0);
    assert_int_equal(cfg->ca_len, strlen("-----BEGIN CERTIFICATE-----\nCAFILE\n"));
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "file-token-1");
    kube_config_free(cfg);
    unsetenv("KUBECONFIG");

    struct kube_config_opts o = {.kubeconfig = "/nonexistent/kubeconfig"};
    cfg = NULL;
    assert_int_equal(kube_config_load(&o, &cfg, err), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/kubeconfig"));
    assert_null(cfg);
}

/* $KUBECONFIG's files merged as kubectl merges them: the first file to set current-context
 * decides it, the first to name a context, cluster or user provides it, and each file's
 * relative paths resolve from its own directory. --kubeconfig and the context override. */
static void test_kubeconfig_merged(void **state)
{
    (void)state;
    char a[512], b[512], sub[512], env[2048], err[ERR_LEN] = "", tok[64];
    kube_config_t *cfg = NULL;

    snprintf(sub, sizeof(sub), "%s/other", tmpdir);
    mkdir(sub, 0700);
    write_file(sub, "ca.pem", "-----BEGIN CERTIFICATE-----\nOTHERCA\n");
    snprintf(a, sizeof(a), "%s/a.yaml", tmpdir);
    snprintf(b, sizeof(b), "%s/other/b.yaml", tmpdir);
    /* a: the current context and its namespace, a user; no cluster. */
    write_file(tmpdir, "a.yaml",
               "current-context: mine\n"
               "contexts: [{name: mine, context: {cluster: shared, user: me, namespace: "
               "team-a}}]\n"
               "users: [{name: me, user: {token: token-from-a}}]\n");
    /* b: its own current-context (ignored: a set it first), the same context name (a's wins),
     * the cluster with a CA relative to b's directory, the same user name (a's wins). */
    write_file(sub, "b.yaml",
               "current-context: theirs\n"
               "contexts: [{name: mine, context: {cluster: nowhere, user: me}},\n"
               "           {name: theirs, context: {cluster: shared, user: me, namespace: "
               "team-b}}]\n"
               "clusters: [{name: shared, cluster: {server: 'https://127.0.0.2:6443', "
               "certificate-authority: ca.pem}}]\n"
               "users: [{name: me, user: {token: token-from-b}}]\n");
    snprintf(env, sizeof(env), "/nonexistent/x.yaml::%s:%s", a, b);
    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(NULL, &cfg, err), 0);
    assert_string_equal(kube_config_server(cfg), "https://127.0.0.2:6443");
    assert_string_equal(kube_config_namespace(cfg), "team-a");
    assert_int_equal(cfg->ca_len, strlen("-----BEGIN CERTIFICATE-----\nOTHERCA\n"));
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-from-a");
    kube_config_free(cfg);

    /* --context picks a context the second file defines. */
    struct kube_config_opts o = {.context = "theirs"};
    assert_int_equal(kube_config_load(&o, &cfg, err), 0);
    assert_string_equal(kube_config_namespace(cfg), "team-b");
    kube_config_free(cfg);

    /* --kubeconfig wins over $KUBECONFIG: b alone has no usable current context "mine"... it
     * has its own, "theirs". */
    o = (struct kube_config_opts){.kubeconfig = b};
    assert_int_equal(kube_config_load(&o, &cfg, err), 0);
    assert_string_equal(kube_config_namespace(cfg), "team-b");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-from-b");
    kube_config_free(cfg);

    /* a alone names a cluster no file of its own defines. */
    snprintf(env, sizeof(env), "%s", a);
    setenv("KUBECONFIG", env, 1);
    cfg = NULL;
    assert_int_equal(kube_config_load(NULL, &cfg, err), -EINVAL);
    assert_non_null(strstr(err, "no cluster named 'shared'"));
    assert_null(cfg);

    /* Every file missing: said so, not a crash or a silent fallback. */
    setenv("KUBECONFIG", "/nonexistent/1:/nonexistent/2", 1);
    assert_int_equal(kube_config_load(NULL, &cfg, err), -ENOENT);
    assert_non_null(strstr(err, "$KUBECONFIG"));
    unsetenv("KUBECONFIG");

    /* In the parser directly: more files than the cap are refused. */
    struct kube_config_text t[KUBE_KUBECONFIG_FILES_MAX + 1];
    for (size_t i = 0; i <= KUBE_KUBECONFIG_FILES_MAX; i++)
        t[i] = (struct kube_config_text){"{}", 2, NULL, NULL};
    assert_int_equal(kube_config_parse_merged(t, KUBE_KUBECONFIG_FILES_MAX + 1, NULL, 0, &cfg, err),
                     -E2BIG);
}

/* kubectl's order for the plugin: ~/.kube/config before the in-cluster configuration. */
static void test_kubectl_order(void **state)
{
    (void)state;
    char home[512], kube[600], err[ERR_LEN] = "";
    kube_config_t *cfg = NULL;
    const char *old_home = getenv("HOME");
    char saved[512];

    snprintf(saved, sizeof(saved), "%s", old_home ? old_home : "");
    snprintf(home, sizeof(home), "%s/home", tmpdir);
    mkdir(home, 0700);
    snprintf(kube, sizeof(kube), "%s/.kube", home);
    mkdir(kube, 0700);
    write_file(kube, "config",
               "current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
               "clusters: [{name: c, cluster: {server: 'https://127.0.0.3:1'}}]\n");
    setenv("HOME", home, 1);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.4", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    unsetenv("KUBECONFIG");
    struct kube_config_opts o = {.in_cluster_last = 1};
    assert_int_equal(kube_config_load(&o, &cfg, err), 0);
    assert_string_equal(kube_config_server(cfg), "https://127.0.0.3:1");
    kube_config_free(cfg);
    /* The operator's order: in-cluster first (it fails here: no service-account files). */
    o = (struct kube_config_opts){.sa_dir = "/nonexistent/sa"};
    cfg = NULL;
    assert_int_not_equal(kube_config_load(&o, &cfg, err), 0);
    assert_non_null(strstr(err, "in-cluster"));
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    setenv("HOME", saved, 1);
}

static void write_sa(const char *dir, const char *token)
{
    write_file(dir, "token", token);
}

static void test_in_cluster_and_token_rotation(void **state)
{
    (void)state;
    char sa[300], err[ERR_LEN] = "", tok[128];
    kube_config_t *cfg = NULL;
    int changed = -1;

    snprintf(sa, sizeof(sa), "%s/sa", tmpdir);
    mkdir(sa, 0700);
    write_sa(sa, "token-A\n");
    write_file(sa, "ca.crt", "CA");
    write_file(sa, "namespace", "sizeup-system\n");
    assert_int_equal(kube_config_in_cluster("10.96.0.1", "443", sa, 3600, &cfg, err), 0);
    assert_string_equal(kube_config_server(cfg), "https://10.96.0.1:443");
    assert_string_equal(kube_config_namespace(cfg), "sizeup-system");
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-A");

    /* Rewritten file: not re-read before the period, re-read at once when forced (a 401). */
    write_sa(sa, "token-B");
    assert_int_equal(kube_config_reload_token(cfg, 0, &changed, err), 0);
    assert_int_equal(changed, 0);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-A");
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, err), 0);
    assert_int_equal(changed, 1);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-B");

    /* An empty file keeps the old token and reports the error without any token value. */
    write_sa(sa, "");
    err[0] = '\0';
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, err), -ENODATA);
    assert_int_equal(changed, 0);
    assert_non_null(strstr(err, "empty"));
    assert_null(strstr(err, "token-B"));
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-B");

    /* A missing file: same. */
    char tp[400];
    snprintf(tp, sizeof(tp), "%s/token", sa);
    unlink(tp);
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, err), -ENOENT);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-B");

    /* A file that would inject a header line is refused. */
    write_sa(sa, "token-C\r\nX-Evil: yes");
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, err), -EINVAL);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-B");

    /* Recovery: a good token again. */
    write_sa(sa, "token-D\n");
    assert_int_equal(kube_config_reload_token(cfg, 1, &changed, err), 0);
    assert_int_equal(changed, 1);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-D");
    kube_config_free(cfg);

    /* Periodic re-read with a 1 s period. */
    cfg = NULL;
    assert_int_equal(kube_config_in_cluster("fd00::1", "6443", sa, 1, &cfg, err), 0);
    assert_string_equal(kube_config_server(cfg), "https://[fd00::1]:6443");
    write_sa(sa, "token-E");
    sleep(1);
    usleep(100000);
    assert_int_equal(kube_config_reload_token(cfg, 0, &changed, err), 0);
    assert_int_equal(changed, 1);
    assert_int_equal(kube_config_token(cfg, tok, sizeof(tok)), 0);
    assert_string_equal(tok, "token-E");
    kube_config_free(cfg);

    /* No token file at all: in-cluster config cannot start. */
    unlink(tp);
    cfg = NULL;
    assert_int_equal(kube_config_in_cluster("10.96.0.1", "443", sa, 0, &cfg, err), -ENOENT);
    assert_null(cfg);
    assert_int_equal(kube_config_in_cluster(NULL, "443", sa, 0, &cfg, err), -EINVAL);
}

static void test_b64(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        const char *out; /* NULL: invalid */
    } cases[] = {
        {"", ""},           {"QQ==", "A"}, {"QUI=", "AB"}, {"QUJD", "ABC"}, {"QUJDRA", "ABCD"},
        {"QU JD\n", "ABC"}, {"Q", NULL},   {"QQ=A", NULL}, {"@@@@", NULL},  {"QQ===", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *out = NULL;
        size_t n = 0;
        int rc = kube__b64_decode(cases[i].in, strlen(cases[i].in), &out, &n);
        if (!cases[i].out) {
            if (rc != -EINVAL)
                fail_msg("b64 '%s' accepted", cases[i].in);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(n, strlen(cases[i].out));
        assert_memory_equal(out, cases[i].out, n);
        free(out);
    }
}

/* An exec user's fields, proxy-url, and a tls-server-name that names the server's own host. */
static void test_kubeconfig_exec_fields(void **state)
{
    (void)state;
    static const char y[] =
        "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
        "clusters: [{name: c, cluster: {server: 'https://API.example:6443', proxy-url: "
        "'socks5://127.0.0.1:1080', tls-server-name: api.example, "
        "certificate-authority-data: QUJD}}]\n"
        "users: [{name: u, user: {exec: {apiVersion: " EXEC_V1B ", command: ./bin/plug, "
        "args: [get-token, --x], env: [{name: A, value: '1'}, {name: B, value: ''}], "
        "installHint: 'apt install plug', provideClusterInfo: true}}}]\n";
    kube_config_t *cfg = NULL;
    char err[ERR_LEN] = "";
    assert_int_equal(kube_config_parse(y, strlen(y), "/kc", NULL, 0, &cfg, err), 0);
    assert_string_equal(cfg->proxy, "socks5://127.0.0.1:1080");
    assert_non_null(cfg->exec);
    assert_string_equal(cfg->exec->command, "/kc/./bin/plug");
    assert_int_equal(cfg->exec->nargs, 2);
    assert_string_equal(cfg->exec->args[1], "--x");
    assert_int_equal(cfg->exec->nenv, 2);
    assert_string_equal(cfg->exec->env[1].name, "B");
    assert_string_equal(cfg->exec->env[1].value, "");
    assert_string_equal(cfg->exec->install_hint, "apt install plug");
    /* v1beta1's default. */
    assert_int_equal(cfg->exec->interactive, KUBE_EXEC_IF_AVAILABLE);
    assert_true(cfg->exec->provide_cluster_info);
    assert_non_null(strstr(cfg->exec->cluster_json, "\"server\":\"https://API.example:6443\""));
    assert_non_null(strstr(cfg->exec->cluster_json, "\"certificate-authority-data\":\"QUJD\""));
    assert_non_null(strstr(cfg->exec->cluster_json, "\"proxy-url\":\"socks5://127.0.0.1:1080\""));
    kube_config_free(cfg);

    /* A static token wins over the plugin, as in kubectl: the plugin is never run. */
    static const char both[] = ONE_CLUSTER "users: [{name: u, user: {token: abc, exec: "
                                           "{command: x}}}]\n";
    cfg = NULL;
    assert_int_equal(kube_config_parse(both, strlen(both), NULL, NULL, 0, &cfg, err), 0);
    assert_null(cfg->exec);
    kube_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_ok),
        cmocka_unit_test(test_kubeconfig_bad),
        cmocka_unit_test(test_kubeconfig_exec_fields),
        cmocka_unit_test(test_errors_hold_no_credentials),
        cmocka_unit_test(test_load_from_file_and_env),
        cmocka_unit_test(test_kubeconfig_merged),
        cmocka_unit_test(test_kubectl_order),
        cmocka_unit_test(test_in_cluster_and_token_rotation),
        cmocka_unit_test(test_b64),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
