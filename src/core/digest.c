#include "core/digest.h"

#include <errno.h>
#include <stdio.h>

#include <openssl/evp.h>

int digest_sha256_hex(const void *data, size_t len, char out[DIGEST_HEX_LEN])
{
    unsigned char h[EVP_MAX_MD_SIZE];
    unsigned int hl = 0;

    out[0] = '\0';
    if (!EVP_Digest(data, len, h, &hl, EVP_sha256(), NULL) || hl != 32)
        return -ENOMEM;
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
    return 0;
}
