/* libFuzzer target: the kubeconfig parser (libyaml document, context/cluster/user lookup,
 * base64 data, token checks) on arbitrary bytes. Whatever parses must have an http(s) server
 * and a token without control characters or spaces. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kube_config_t *cfg = NULL;
    char err[ERR_LEN], tok[KUBE_TOKEN_MAX];

    /* Relative file references resolve into a directory that does not exist. */
    if (kube_config_parse((const char *)data, size, "/nonexistent-sizeup-fuzz", NULL, 0, &cfg,
                          err) != 0) {
        if (cfg || !memchr(err, '\0', sizeof(err)))
            abort();
        return 0;
    }
    const char *server = kube_config_server(cfg);
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        abort();
    if (!kube_config_namespace(cfg)[0])
        abort();
    if (kube_config_token(cfg, tok, sizeof(tok)) == 0) {
        if (!tok[0])
            abort();
        for (const char *p = tok; *p; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                abort();
    }
    kube_config_free(cfg);
    return 0;
}
