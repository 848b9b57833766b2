/* Where the Kubernetes configuration comes from: --kubeconfig, the files of $KUBECONFIG merged
 * as kubectl merges them, in-cluster, ~/.kube/config (in the operator's order or kubectl's). */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kube_int.h"

/* The directory of path into dir (len bytes): "" for a bare file name. */
static void dir_of(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
}

/* Reads the files paths[0..n) and parses them merged. A missing file is skipped when
 * skip_missing is set (kubectl ignores $KUBECONFIG entries that do not exist). */
static int load_kubeconfig_files(const char *const *paths, size_t n, int skip_missing,
                                 const char *context, int reload_s, kube_config_t **out, char *err)
{
    struct kube_config_text t[KUBE_KUBECONFIG_FILES_MAX];
    char dirs[KUBE_KUBECONFIG_FILES_MAX][PATH_MAX];
    size_t k = 0;
    int rc = 0;

    memset(t, 0, sizeof(t));
    for (size_t i = 0; i < n && k < KUBE_KUBECONFIG_FILES_MAX; i++) {
        char *text = NULL;
        size_t len = 0;
        if (skip_missing && access(paths[i], F_OK) != 0)
            continue;
        rc = kube__read_file(paths[i], KUBE_KUBECONFIG_MAX, &text, &len, err);
        if (rc) {
            err_wrap(err, rc, "kubeconfig");
            goto out;
        }
        dir_of(paths[i], dirs[k], sizeof(dirs[k]));
        t[k] = (struct kube_config_text){text, len, dirs[k][0] ? dirs[k] : NULL, paths[i]};
        k++;
    }
    if (k == 0) {
        rc = err_set(err, -ENOENT, "none of the kubeconfig files in $KUBECONFIG exists");
        goto out;
    }
    rc = kube_config_parse_merged(t, k, context, reload_s, out, err);
    if (rc && k == 1)
        err_wrap(err, rc, "kubeconfig %s", t[0].name);
    else if (rc)
        err_wrap(err, rc, "kubeconfig ($KUBECONFIG, %zu files merged)", k);
out:
    for (size_t i = 0; i < k; i++) {
        /* The files may hold inline credentials. */
        explicit_bzero((char *)t[i].text, t[i].len);
        free((char *)t[i].text);
    }
    return rc;
}

/* $KUBECONFIG split on ':' into paths (pointing into buf), empty entries left out. */
static int split_kubeconfig_env(const char *env, char *buf, size_t len, const char **paths,
                                size_t *n, char *err)
{
    char *save = NULL;
    if (strlen(env) >= len)
        return err_set(err, -ENAMETOOLONG, "$KUBECONFIG too long");
    snprintf(buf, len, "%s", env);
    *n = 0;
    for (char *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        if (*n == KUBE_KUBECONFIG_FILES_MAX)
            return err_set(err, -E2BIG, "$KUBECONFIG names more than %d files",
                           KUBE_KUBECONFIG_FILES_MAX);
        paths[(*n)++] = p;
    }
    return 0;
}

int kube_config_load(const struct kube_config_opts *opts, kube_config_t **out, char *err)
{
    static const struct kube_config_opts none = {0};
    char path[PATH_MAX], envbuf[KUBE_KUBECONFIG_FILES_MAX * 256];
    const char *paths[KUBE_KUBECONFIG_FILES_MAX];
    const char *env, *host;
    size_t n = 0;
    int rc;

    if (!opts)
        opts = &none;
    if (opts->kubeconfig && opts->kubeconfig[0])
        return load_kubeconfig_files(&opts->kubeconfig, 1, 0, opts->context, opts->token_reload_s,
                                     out, err);
    env = getenv("KUBECONFIG");
    if (env && env[0]) {
        /* Like kubectl: every file of the list, merged, the first to set a name winning. */
        rc = split_kubeconfig_env(env, envbuf, sizeof(envbuf), paths, &n, err);
        if (rc)
            return rc;
        if (n)
            return load_kubeconfig_files(paths, n, 1, opts->context, opts->token_reload_s, out,
                                         err);
    }
    host = getenv("KUBERNETES_SERVICE_HOST");
    if (host && host[0] && !opts->in_cluster_last)
        return kube_config_in_cluster(host, getenv("KUBERNETES_SERVICE_PORT"), opts->sa_dir,
                                      opts->token_reload_s, out, err);
    env = getenv("HOME");
    if (env && env[0]) {
        snprintf(path, sizeof(path), "%s/.kube/config", env);
        const char *p = path;
        if (access(path, R_OK) == 0)
            return load_kubeconfig_files(&p, 1, 0, opts->context, opts->token_reload_s, out, err);
    }
    if (host && host[0])
        return kube_config_in_cluster(host, getenv("KUBERNETES_SERVICE_PORT"), opts->sa_dir,
                                      opts->token_reload_s, out, err);
    return err_set(err, -ENOENT,
                   "no Kubernetes configuration: pass --kubeconfig, set $KUBECONFIG, or run in "
                   "a cluster");
}
