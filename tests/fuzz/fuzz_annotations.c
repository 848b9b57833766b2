/* libFuzzer target: the sizeup.dev/ annotation parser on arbitrary annotation sets. The input is
 * lines "name=value" (name without the sizeup.dev/ prefix; a line starting with '!' is taken as
 * a full key). Whatever parses must satisfy the request's invariants; whatever fails must give
 * a one-line reason. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "operator/annotations.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXKV 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct annot_kv kv[MAXKV];
    char *keys[MAXKV] = {0};
    size_t n = 0;
    char *buf, err[ERR_LEN], warn[ERR_LEN];
    struct annot_request r;

    if (size > 16384)
        return 0;
    buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *p = buf;
    while (p && *p && n < MAXKV) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        char *eq = strchr(p, '=');
        if (eq) {
            *eq = '\0';
            size_t kl = strlen(p) + sizeof(ANNOT_PREFIX);
            keys[n] = malloc(kl);
            if (!keys[n])
                break;
            if (p[0] == '!')
                memcpy(keys[n], p + 1, strlen(p));
            else {
                memcpy(keys[n], ANNOT_PREFIX, sizeof(ANNOT_PREFIX) - 1);
                memcpy(keys[n] + sizeof(ANNOT_PREFIX) - 1, p, strlen(p) + 1);
            }
            kv[n].key = keys[n];
            kv[n].value = eq + 1;
            n++;
        }
        p = nl ? nl + 1 : NULL;
    }
    err[0] = '\0';
    int rc = annot_parse(kv, n, &r, warn, err);
    if (rc == 0) {
        if (!r.sweep || !*r.sweep || !r.configs || r.nvariants < 1 || !r.workers_env ||
            !*r.workers_env || !r.values_paths.workers[0] || !r.values_paths.resources[0] ||
            !r.values_paths.replicas[0] || !r.values_paths.autoscaling[0])
            abort();
        /* At most one target, and a usable one. */
        if (r.target_rps < 0 || r.target_users < 0 || (r.target_rps > 0 && r.target_users > 0) ||
            r.target_rps > ANNOT_MAX_TARGET || r.target_users > ANNOT_MAX_TARGET)
            abort();
        if (r.port < 0 || r.port > 65535)
            abort();
        if ((r.target == ANNOT_TARGET_URL) != (r.target_url != NULL))
            abort();
        if (strchr(warn, '\n'))
            abort();
        annot_request_free(&r);
    } else {
        if (!err[0] || strchr(err, '\n') || r.sweep || r.configs)
            abort();
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i]);
    free(buf);
    return 0;
}
