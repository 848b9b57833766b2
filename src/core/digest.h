#ifndef SIZEUP_CORE_DIGEST_H
#define SIZEUP_CORE_DIGEST_H

/* SHA-256 as lowercase hex: what results.json records of a request's header values and body
 * (never the values: they can hold a token, and results.json lands in a ConfigMap), and how
 * the kube platform names the template it saved. */

#include <stddef.h>

#define DIGEST_HEX_LEN 65 /* 64 hex digits and the NUL */

/* Writes the SHA-256 of len bytes at data (borrowed) into out. Returns 0, or -ENOMEM when the
 * digest cannot be computed (OpenSSL could not allocate its context). */
int digest_sha256_hex(const void *data, size_t len, char out[DIGEST_HEX_LEN] /* OUT */);

#endif
