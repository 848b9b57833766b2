/* libFuzzer target: what an exec credential plugin prints (the ExecCredential parser, for both
 * API versions). Whatever parses must hold a header-safe token or
 * a PEM certificate with its key; whatever fails must leave nothing allocated and a one-line
 * error. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "kube/exec_cred.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *json, size_t size, const char *api)
{
    struct kube_exec_cred c;
    char err[ERR_LEN];

    int rc = kube_exec_parse(json, size, api, &c, err);
    if (rc != 0) {
        if (rc > 0 || c.token || c.cert || c.key || !memchr(err, '\0', sizeof(err)))
            abort();
        for (const char *p = err; *p; p++)
            if ((unsigned char)*p < 0x20)
                abort();
        return;
    }
    if (!c.token && !(c.cert && c.key))
        abort();
    if (!c.cert != !c.key)
        abort();
    if (c.token) {
        if (!c.token[0])
            abort();
        for (const char *p = c.token; *p; p++)
            if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                abort();
    }
    if (c.cert && (c.cert_len < 10 || memcmp(c.cert, "-----BEGIN", 10) != 0))
        abort();
    kube_exec_cred_clear(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check((const char *)data, size, KUBE_EXEC_API_V1);
    check((const char *)data, size, KUBE_EXEC_API_V1BETA1);

    return 0;
}
