/* libFuzzer target: the base-URL parser on arbitrary strings. Whatever parses has a non-empty
 * host, a port, a base path without a trailing '/', and joins paths without overflowing. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[URL_MAX + 16], out[64];
    struct url u;

    if (size >= sizeof(s))
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (url_parse(s, &u, NULL) != 0)
        return 0;
    size_t bl = strlen(u.base_path);
    if (!u.host[0] || u.port == 0 || (bl && u.base_path[bl - 1] == '/'))
        abort();
    if (!u.authority[0] || strchr(u.authority, '\r') || strchr(u.authority, '\n'))
        abort();
    int n = url_join_path(&u, "/x", out, sizeof(out));
    if (n >= 0 && (size_t)n != strlen(out))
        abort();
    return 0;
}
