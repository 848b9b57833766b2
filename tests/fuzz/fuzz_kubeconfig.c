/* libFuzzer target: the kubeconfig parser (libyaml document, context/cluster/user lookup,
 * base64 data, token checks) on arbitrary bytes, as one file and as the files of a merged
 * $KUBECONFIG (the input cut at its "\n---\n" separators). Whatever parses must have an
 * http(s) server and a token without control characters or spaces. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The parse of texts[0..n): what parses must hold together. */
static void check(const struct kube_config_text *texts, size_t n)
{
    kube_config_t *cfg = NULL;
    char err[ERR_LEN], tok[KUBE_TOKEN_MAX];

    if (kube_config_parse_merged(texts, n, NULL, 0, &cfg, err) != 0) {
        if (cfg || !memchr(err, '\0', sizeof(err)))
            abort();
        return;
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kube_config_text t[KUBE_KUBECONFIG_FILES_MAX];
    const char *p = (const char *)data, *end = p + size;
    size_t n = 0;

    /* Relative file references resolve into a directory that does not exist. */
    t[0] = (struct kube_config_text){p, size, "/nonexistent-sizeup-fuzz", NULL};
    check(t, 1);
    while (n < KUBE_KUBECONFIG_FILES_MAX) {
        const char *sep = memmem(p, (size_t)(end - p), "\n---\n", 5);
        size_t len = sep ? (size_t)(sep - p) : (size_t)(end - p);
        t[n++] = (struct kube_config_text){p, len, "/nonexistent-sizeup-fuzz", NULL};
        if (!sep)
            break;
        p = sep + 5;
    }
    if (n > 1)
        check(t, n);
    return 0;
}
