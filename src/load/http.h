#ifndef SIZEUP_LOAD_HTTP_H
#define SIZEUP_LOAD_HTTP_H

/* HTTP/1.1 for the load generator: an incremental response parser that never allocates and
 * never keeps the body, and a serializer that builds each request's bytes once, before a run.
 * The parser accepts HTTP/1.0 and 1.1, Content-Length, chunked bodies (with trailers), bodies
 * delimited by the connection closing, interim 1xx responses, and responses without a body
 * (HEAD, 204, 304). Headers over max_header bytes or a body over max_body bytes are errors. */

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "profile/profile.h"
#include "profile/url.h"

#define HTTP_MAX_HEADER_BYTES (64u * 1024u) /* status line + headers, and trailers */
#define HTTP_MAX_BODY_BYTES   (1ull << 30)  /* 1 GiB */
#define HTTP_CARRY            256           /* bytes of a split line kept between reads */
#define HTTP_MAX_REQUEST      (1u << 20)    /* a serialized request larger is rejected */
#define HTTP_USER_AGENT       "sizeup/0.1"

enum http_rc { HTTP_ERROR = -1, HTTP_MORE = 0, HTTP_DONE = 1 };

/* The parser for one response. Fields below "results" are valid once http_parse returned
 * HTTP_DONE; error is a static string once it returned HTTP_ERROR. */
struct http_parser {
    /* settings */
    uint32_t max_header;
    uint64_t max_body;
    uint8_t head_request; /* the request was HEAD: no body follows */
    /* results */
    uint8_t keep_alive; /* the connection may carry the next request */
    uint8_t version_minor;
    uint16_t status;
    uint64_t body_bytes; /* body bytes (chunk payload for chunked) */
    const char *error;
    /* state */
    uint8_t state;
    uint8_t chunked;
    uint8_t has_length;
    uint32_t line_len; /* bytes of the current split line so far (capped at HTTP_CARRY + 1) */
    uint32_t header_bytes;
    uint64_t remaining;
    uint64_t length;
    char carry[HTTP_CARRY];
};

/* Scratch space for the bytes of one send of a templated request: one per connection, grown
 * to the largest rendering and reused (owned; free with http_send_free). */
struct http_send {
    char *buf;
    size_t cap;
};

struct http_request;

/* The bytes of one send of r for command number seq: r's own buffer, or a rendering into s.
 * Returns 0 (*buf, *len set; valid until the next call with s) or -ENOMEM. */
typedef int (*http_render_fn)(const struct http_request *r, uint64_t seq, struct http_send *s,
                              const char **buf /* OUT */, size_t *len /* OUT */);

/* A request serialized once: the exact bytes to write for every send, or, for a template, the
 * head (request line and headers) and a body in which PROFILE_STREAM_SEQ ("{{seq}}") becomes
 * the command's number at each send. render picks which, so a sender never asks. */
struct http_request {
    char *buf; /* owned, free with http_request_free; NUL-terminated after len bytes */
    size_t len;
    int head; /* HEAD request: its response has no body */
    http_render_fn render;
    char *body; /* templates only: owned body with its placeholders */
    size_t body_len;
};

/* Prepares p for a new response with the default limits (HTTP_MAX_HEADER_BYTES,
 * HTTP_MAX_BODY_BYTES). head_request: the request was HEAD. */
void http_parser_init(struct http_parser *p, int head_request);

/* Feeds len bytes of the response (borrows buf for the call). Returns HTTP_MORE when every byte
 * was taken and more are needed, HTTP_DONE when the response is complete (*consumed says how
 * many bytes of buf it used; bytes after it belong to no request), or HTTP_ERROR (p->error says
 * why: malformed, or over a size cap). */
int http_parse(struct http_parser *p, const char *buf, size_t len, size_t *consumed /* OUT */);

/* Tells p the peer closed the connection. Returns HTTP_DONE when the body was delimited by
 * the close (no length, not chunked), else HTTP_ERROR (truncated response). */
int http_parse_eof(struct http_parser *p);

/* Serializes r against base URL u: request line with u's base path joined to r->path, Host
 * (unless r sets it), User-Agent (unless r sets it), r's headers, Content-Length when there is
 * a body or the method usually carries one, then the body. A body holding "{{seq}}" becomes a
 * template: at each send every "{{seq}}" is the request's number in the run (struct conn's
 * seq in engine.c), with that body's Content-Length. Rejects CR, LF or NUL in the method,
 * path, header names or values (header injection) and a Content-Length or Transfer-Encoding
 * header in r (sizeup computes the framing). Returns 0, -EINVAL or -ENOMEM; *out is owned. */
int http_request_build(const struct url *u, const struct profile_request *r,
                       struct http_request *out /* OUT */, char *err);

/* The bytes to write for one send of r with command number seq (see http_render_fn). */
int http_request_bytes(const struct http_request *r, uint64_t seq, struct http_send *s,
                       const char **buf /* OUT */, size_t *len /* OUT */);

/* Frees what r owns and zeroes it; no-op on a zeroed request. */
void http_request_free(struct http_request *r);

/* Frees s's buffer and zeroes it. */
void http_send_free(struct http_send *s);

#endif
