#ifndef SIZEUP_KUBE_EXEC_CRED_H
#define SIZEUP_KUBE_EXEC_CRED_H

/* Exec credential plugins (a kubeconfig user's `exec:`), as kubectl runs them: the plugin is a
 * command that prints a client.authentication.k8s.io ExecCredential (v1 or v1beta1) whose
 * status holds a bearer token or a client certificate and key, and when they expire. It gets
 * KUBERNETES_EXEC_INFO (the ExecCredential spec: interactive, and the cluster when the
 * kubeconfig asks for provideClusterInfo). Its stdin and stderr are the user's only when it
 * runs interactively; otherwise stdin is /dev/null and stderr is discarded, so nothing a
 * plugin prints can reach a log. The run is bounded in time and in output. */

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define KUBE_EXEC_OUTPUT_MAX  (1u << 20) /* the plugin's stdout */
#define KUBE_EXEC_ARGS_MAX    64
#define KUBE_EXEC_ENV_MAX     64
#define KUBE_EXEC_TIMEOUT_MS  60000 /* default; SIZEUP_EXEC_TIMEOUT (seconds) overrides */
#define KUBE_EXEC_API_V1      "client.authentication.k8s.io/v1"
#define KUBE_EXEC_API_V1BETA1 "client.authentication.k8s.io/v1beta1"

enum kube_exec_interactive {
    KUBE_EXEC_NEVER,
    KUBE_EXEC_IF_AVAILABLE,
    KUBE_EXEC_ALWAYS,
};

struct kube_exec_env {
    char *name;  /* owned */
    char *value; /* owned */
};

/* A kubeconfig user's exec section. Every pointer is owned; free with kube_exec_free. */
struct kube_exec {
    char *api_version;
    char *command; /* as written, or resolved against the kubeconfig's directory */
    char *args[KUBE_EXEC_ARGS_MAX];
    size_t nargs;
    struct kube_exec_env env[KUBE_EXEC_ENV_MAX];
    size_t nenv;
    char *install_hint; /* NULL when none */
    bool provide_cluster_info;
    enum kube_exec_interactive interactive;
    char *cluster_json; /* spec.cluster for KUBERNETES_EXEC_INFO when provide_cluster_info */
    long timeout_ms;    /* 0: KUBE_EXEC_TIMEOUT_MS or SIZEUP_EXEC_TIMEOUT */
};

/* What a plugin returned. Every pointer owned; clear with kube_exec_cred_clear (it wipes). */
struct kube_exec_cred {
    char *token; /* NULL when the plugin returned a certificate instead */
    unsigned char *cert;
    size_t cert_len;
    unsigned char *key;
    size_t key_len;
    time_t expiry; /* wall-clock seconds; 0: never expires */
};

/* Frees what ex owns and zeroes it; NULL is a no-op. */
void kube_exec_free(struct kube_exec *ex);

/* Wipes and frees what c owns and zeroes it; NULL is a no-op. */
void kube_exec_cred_clear(struct kube_exec_cred *c);

/* "Never", "IfAvailable", "Always" into *out. -EINVAL for anything else. */
int kube_exec_interactive_parse(const char *s, enum kube_exec_interactive *out /* OUT */);

/* Parses a plugin's stdout (len bytes, borrowed) as an ExecCredential of api_version into
 * *out (owned fields; cleared first). Returns 0 or -EBADMSG with why in err; the message never
 * holds the output itself. */
int kube_exec_parse(const char *json, size_t len, const char *api_version,
                    struct kube_exec_cred *out /* OUT */, char *err);

/* The KUBERNETES_EXEC_INFO value for ex: an owned JSON string (free with free()), NULL on
 * allocation failure. */
char *kube_exec_info(const struct kube_exec *ex, bool interactive);

/* Runs ex's plugin and parses what it prints into *out. have_tty: whether stdin is a
 * terminal the plugin may use. Errors name the plugin and end with its installHint; a plugin
 * that outlives the timeout is killed (with its process group) and returns -ETIME. */
int kube_exec_run(const struct kube_exec *ex, bool have_tty, struct kube_exec_cred *out /* OUT */,
                  char *err);

#endif
