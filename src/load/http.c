#include "load/http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profile/profile_streams.h"

enum {
    S_STATUS = 0, /* status line */
    S_HEADER,     /* header lines until the empty one */
    S_BODY_LEN,   /* Content-Length bytes */
    S_BODY_CLOSE, /* everything until the peer closes */
    S_CHUNK_SIZE, /* chunk-size line */
    S_CHUNK_DATA, /* chunk payload */
    S_CHUNK_CRLF, /* the CRLF after a chunk's payload */
    S_TRAILER,    /* trailer lines after the last chunk */
    S_DONE,
    S_ERROR
};

void http_parser_init(struct http_parser *p, int head_request)
{
    /* The carry buffer is left as is: line_len = 0 makes its content irrelevant, and not
     * clearing it keeps a per-request reset to a few stores. */
    p->max_header = HTTP_MAX_HEADER_BYTES;
    p->max_body = HTTP_MAX_BODY_BYTES;
    p->head_request = (uint8_t)(head_request != 0);
    p->keep_alive = 0;
    p->version_minor = 0;
    p->status = 0;
    p->body_bytes = 0;
    p->error = NULL;
    p->state = S_STATUS;
    p->chunked = 0;
    p->has_length = 0;
    p->line_len = 0;
    p->header_bytes = 0;
    p->remaining = 0;
    p->length = 0;
}

static int fail(struct http_parser *p, const char *why)
{
    p->state = S_ERROR;
    p->error = why;
    return HTTP_ERROR;
}

static int is_tchar(unsigned char c)
{
    /* RFC 9110 token characters. */
    if (c >= 'a' && c <= 'z')
        return 1;
    if (c >= 'A' && c <= 'Z')
        return 1;
    if (c >= '0' && c <= '9')
        return 1;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Case-insensitive: does [s, s+n) equal the lower-case literal lit? */
static int name_is(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* Does the comma-separated list [v, v+n) contain token tok (case-insensitive)? */
static int list_has(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok), i = 0;

    while (i < n) {
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        size_t s = i;
        while (i < n && v[i] != ',')
            i++;
        size_t e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && strncasecmp(v + s, tok, tl) == 0)
            return 1;
    }
    return 0;
}

/* Is tok the last element of the comma-separated list [v, v+n)? */
static int list_ends_with(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok);

    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    if (n < tl || strncasecmp(v + n - tl, tok, tl) != 0)
        return 0;
    n -= tl;
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    return n == 0 || v[n - 1] == ',';
}

static int on_status_line(struct http_parser *p, const char *l, size_t n)
{
    /* "HTTP/1.x SSS[ reason]" */
    if (n < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
        return fail(p, "bad status line");
    for (int i = 9; i < 12; i++)
        if (l[i] < '0' || l[i] > '9')
            return fail(p, "bad status code");
    if (n > 12 && l[12] != ' ')
        return fail(p, "bad status code");
    p->version_minor = (uint8_t)(l[7] - '0');
    p->status = (uint16_t)((l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0'));
    if (p->status < 100)
        return fail(p, "bad status code");
    p->keep_alive = p->version_minor == 1;
    p->state = S_HEADER;
    return HTTP_MORE;
}

static int on_header_line(struct http_parser *p, const char *l, size_t n, int trunc)
{
    const char *colon = memchr(l, ':', n);

    if (l[0] == ' ' || l[0] == '\t')
        return HTTP_MORE; /* obsolete line folding: a continuation of a header we ignore */
    if (!colon) {
        if (trunc)
            return HTTP_MORE; /* a name longer than the carry: not one we act on */
        return fail(p, "header line without ':'");
    }
    size_t nn = (size_t)(colon - l);
    if (nn == 0)
        return fail(p, "empty header name");
    for (size_t i = 0; i < nn; i++)
        if (!is_tchar((unsigned char)l[i]))
            return fail(p, "bad character in a header name");
    const char *v = colon + 1;
    size_t vn = n - nn - 1;
    while (vn > 0 && (*v == ' ' || *v == '\t'))
        v++, vn--;
    while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
        vn--;

    switch (nn) {
    case 10:
        if (name_is(l, nn, "connection")) {
            if (list_has(v, vn, "close"))
                p->keep_alive = 0;
            else if (list_has(v, vn, "keep-alive"))
                p->keep_alive = 1;
        }
        break;
    case 14:
        if (name_is(l, nn, "content-length")) {
            uint64_t len = 0;
            if (trunc || vn == 0 || vn > 19)
                return fail(p, "bad Content-Length");
            for (size_t i = 0; i < vn; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return fail(p, "bad Content-Length");
                len = len * 10 + (uint64_t)(v[i] - '0');
            }
            if (p->has_length && p->length != len)
                return fail(p, "conflicting Content-Length headers");
            p->has_length = 1;
            p->length = len;
        }
        break;
    case 17:
        if (name_is(l, nn, "transfer-encoding")) {
            if (trunc)
                return fail(p, "Transfer-Encoding too long");
            /* A response whose final coding is not chunked is delimited by the close. */
            p->chunked = (uint8_t)list_ends_with(v, vn, "chunked");
            if (!p->chunked)
                p->chunked = 2;
        }
        break;
    default:
        break;
    }
    return HTTP_MORE;
}

/* The empty line after the headers: decide how the body is framed. */
static int on_headers_end(struct http_parser *p)
{
    if (p->status < 200) {
        if (p->status == 101)
            return fail(p, "unexpected protocol switch (101)");
        /* Interim response (100 Continue, 103 Early Hints): the real one follows. */
        p->state = S_STATUS;
        p->chunked = 0;
        p->has_length = 0;
        p->length = 0;
        return HTTP_MORE;
    }
    if (p->head_request || p->status == 204 || p->status == 304) {
        p->state = S_DONE;
        return HTTP_DONE;
    }
    if (p->chunked == 1) {
        p->state = S_CHUNK_SIZE;
        return HTTP_MORE;
    }
    if (p->chunked == 2 || !p->has_length) {
        p->keep_alive = 0;
        p->state = S_BODY_CLOSE;
        return HTTP_MORE;
    }
    if (p->length > p->max_body)
        return fail(p, "body over the size cap");
    if (p->length == 0) {
        p->state = S_DONE;
        return HTTP_DONE;
    }
    p->remaining = p->length;
    p->state = S_BODY_LEN;
    return HTTP_MORE;
}

static int on_chunk_size(struct http_parser *p, const char *l, size_t n, int trunc)
{
    uint64_t size = 0;
    size_t i = 0;

    if (trunc)
        return fail(p, "chunk-size line too long");
    for (; i < n; i++) {
        char c = l[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            break;
        if (size > (p->max_body >> 4))
            return fail(p, "body over the size cap");
        size = (size << 4) | d;
    }
    if (i == 0)
        return fail(p, "bad chunk size");
    for (; i < n; i++) /* whitespace then optional extensions, ignored */
        if (l[i] == ';')
            break;
        else if (l[i] != ' ' && l[i] != '\t')
            return fail(p, "bad chunk size");
    if (size == 0) {
        p->state = S_TRAILER;
        return HTTP_MORE;
    }
    if (size > p->max_body - p->body_bytes)
        return fail(p, "body over the size cap");
    p->remaining = size;
    p->state = S_CHUNK_DATA;
    return HTTP_MORE;
}

/* Dispatches one complete line (without its CR LF). */
static int on_line(struct http_parser *p, const char *l, size_t n, int trunc)
{
    switch (p->state) {
    case S_STATUS:
        if (n == 0 && p->header_bytes <= 2)
            return HTTP_MORE; /* tolerate a stray CRLF before the status line */
        return on_status_line(p, l, n);
    case S_HEADER:
        if (n == 0)
            return on_headers_end(p);
        return on_header_line(p, l, n, trunc);
    case S_CHUNK_SIZE:
        return on_chunk_size(p, l, n, trunc);
    case S_CHUNK_CRLF:
        if (n != 0)
            return fail(p, "chunk not followed by CRLF");
        p->state = S_CHUNK_SIZE;
        return HTTP_MORE;
    case S_TRAILER:
        if (n == 0) {
            p->state = S_DONE;
            return HTTP_DONE;
        }
        return HTTP_MORE;
    default:
        return fail(p, "parser misuse");
    }
}

static int line_state(uint8_t s)
{
    return s == S_STATUS || s == S_HEADER || s == S_CHUNK_SIZE || s == S_CHUNK_CRLF ||
           s == S_TRAILER;
}

/* A parser, long on purpose: one byte-driven state machine over the response (status line,
 * headers, chunked or sized body, trailers); its states share the loop that feeds them. */
int http_parse(struct http_parser *p, const char *buf, size_t len, size_t *consumed)
{
    size_t pos = 0;
    int rc = HTTP_MORE;

    if (p->state == S_DONE || p->state == S_ERROR) {
        *consumed = 0;
        return p->state == S_DONE ? HTTP_DONE : HTTP_ERROR;
    }
    while (pos < len) {
        uint8_t st = p->state;
        if (st == S_BODY_LEN || st == S_CHUNK_DATA) {
            size_t avail = len - pos;
            size_t take = p->remaining < avail ? (size_t)p->remaining : avail;
            p->remaining -= take;
            p->body_bytes += take;
            pos += take;
            if (p->remaining == 0) {
                if (st == S_BODY_LEN) {
                    p->state = S_DONE;
                    rc = HTTP_DONE;
                    break;
                }
                p->state = S_CHUNK_CRLF;
            }
            continue;
        }
        if (st == S_BODY_CLOSE) {
            size_t take = len - pos;
            if (take > p->max_body - p->body_bytes) {
                rc = fail(p, "body over the size cap");
                break;
            }
            p->body_bytes += take;
            pos = len;
            break;
        }
        if (!line_state(st)) {
            rc = fail(p, "parser misuse");
            break;
        }

        /* Line mode. The fast path parses a line in place when it arrived whole; a line split
         * across reads keeps its first HTTP_CARRY bytes in the carry. Either way a line longer
         * than HTTP_CARRY is seen truncated to HTTP_CARRY bytes, so the outcome never depends
         * on where the reads were split. */
        const char *start = buf + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t seg = nl ? (size_t)(nl - start) + 1 : len - pos;
        size_t content = nl ? seg - 1 : seg;
        int counted = st == S_STATUS || st == S_HEADER || st == S_TRAILER;
        if (counted) {
            if (seg > p->max_header - p->header_bytes) {
                rc = fail(p, "headers over the size cap");
                break;
            }
            p->header_bytes += (uint32_t)seg;
        }
        pos += seg;
        const char *l = start;
        size_t full = content;
        if (!nl || p->line_len) {
            if (p->line_len < HTTP_CARRY) {
                size_t room = HTTP_CARRY - p->line_len;
                memcpy(p->carry + p->line_len, start, content < room ? content : room);
            }
            /* Bounded: counted lines by max_header, the others by the check below. */
            p->line_len += (uint32_t)(content < HTTP_CARRY + 1 ? content : HTTP_CARRY + 1);
            if (p->line_len > HTTP_CARRY + 1)
                p->line_len = HTTP_CARRY + 1;
            if (!nl) {
                if (!counted && p->line_len > HTTP_CARRY) {
                    rc = fail(p, "chunk line too long");
                    break;
                }
                break;
            }
            l = p->carry;
            full = p->line_len;
            p->line_len = 0;
        }
        int trunc = full > HTTP_CARRY;
        size_t n = trunc ? HTTP_CARRY : full;
        if (!trunc && n > 0 && l[n - 1] == '\r')
            n--;
        rc = on_line(p, l, n, trunc);
        if (rc != HTTP_MORE)
            break;
    }
    *consumed = pos;
    return rc;
}

int http_parse_eof(struct http_parser *p)
{
    if (p->state == S_BODY_CLOSE) {
        p->state = S_DONE;
        return HTTP_DONE;
    }
    if (p->state == S_DONE)
        return HTTP_DONE;
    return fail(p, "connection closed before the response ended");
}

/* ---- request serializer ---- */

static int has_bad_bytes(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\r' || s[i] == '\n' || s[i] == '\0')
            return 1;
    return 0;
}

static int header_set(const struct profile_request *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (r->headers[i].name && strcasecmp(r->headers[i].name, name) == 0)
            return 1;
    return 0;
}

/* Appends n bytes to b (capacity cap), failing when the request outgrows HTTP_MAX_REQUEST. */
struct sbuf {
    char *b;
    size_t len, cap;
};

static int sb_put(struct sbuf *s, const char *d, size_t n)
{
    if (n > HTTP_MAX_REQUEST - s->len)
        return -EINVAL;
    if (s->len + n > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n)
            cap *= 2;
        char *nb = realloc(s->b, cap);
        if (!nb)
            return -ENOMEM;
        s->b = nb;
        s->cap = cap;
    }
    memcpy(s->b + s->len, d, n);
    s->len += n;
    return 0;
}

static int sb_str(struct sbuf *s, const char *str)
{
    return sb_put(s, str, strlen(str));
}

static int render_fixed(const struct http_request *r, uint64_t seq, struct http_send *s,
                        const char **buf, size_t *len)
{
    (void)seq;
    (void)s;
    *buf = r->buf;
    *len = r->len;
    return 0;
}

static const char seq_mark[] = PROFILE_STREAM_SEQ;
#define SEQ_MARK_LEN (sizeof(seq_mark) - 1)

/* head + Content-Length + the body with each mark replaced by seq's digits. */
static int render_seq(const struct http_request *r, uint64_t seq, struct http_send *s,
                      const char **buf, size_t *len)
{
    char digits[24], cl[48];
    size_t nd = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, seq), marks = 0;
    for (const char *p = r->body;
         (p = memmem(p, r->body_len - (size_t)(p - r->body), seq_mark, SEQ_MARK_LEN));
         p += SEQ_MARK_LEN)
        marks++;
    size_t body = r->body_len - marks * SEQ_MARK_LEN + marks * nd;
    size_t ncl = (size_t)snprintf(cl, sizeof(cl), "Content-Length: %zu\r\n\r\n", body);
    size_t need = r->len + ncl + body;
    if (need > s->cap) {
        char *nb = realloc(s->buf, need);
        if (!nb)
            return -ENOMEM;
        s->buf = nb;
        s->cap = need;
    }
    char *o = s->buf;
    memcpy(o, r->buf, r->len);
    o += r->len;
    memcpy(o, cl, ncl);
    o += ncl;
    const char *p = r->body, *end = r->body + r->body_len;
    while (p < end) {
        const char *m = memmem(p, (size_t)(end - p), seq_mark, SEQ_MARK_LEN);
        size_t n = m ? (size_t)(m - p) : (size_t)(end - p);
        memcpy(o, p, n);
        o += n;
        if (!m)
            break;
        memcpy(o, digits, nd);
        o += nd;
        p = m + SEQ_MARK_LEN;
    }
    *buf = s->buf;
    *len = need;
    return 0;
}

int http_request_bytes(const struct http_request *r, uint64_t seq, struct http_send *s,
                       const char **buf, size_t *len)
{
    return r->render(r, seq, s, buf, len);
}

void http_send_free(struct http_send *s)
{
    if (!s)
        return;
    free(s->buf);
    memset(s, 0, sizeof(*s));
}

/* Checks r's method, path and headers (a request sizeup would send malformed is refused here,
 * not by the server), and joins the path to u's into full (len bytes). Returns 0 or -EINVAL. */
static int check_request(const struct url *u, const struct profile_request *r, const char *method,
                         const char *path, char *full, size_t len, char *err)
{
    if (!*method)
        return err_set(err, -EINVAL, "request '%s': empty method", r->name ? r->name : "?");
    for (const char *m = method; *m; m++)
        if (!is_tchar((unsigned char)*m))
            return err_set(err, -EINVAL, "request '%s': bad method '%.32s'",
                           r->name ? r->name : "?", method);
    if (path[0] != '/')
        return err_set(err, -EINVAL, "request '%s': path '%.64s' must start with '/'",
                       r->name ? r->name : "?", path);
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c <= 0x20 || (unsigned char)*c == 0x7f)
            return err_set(err, -EINVAL, "request '%s': space or control character in path",
                           r->name ? r->name : "?");
    if (url_join_path(u, path, full, len) < 0)
        return err_set(err, -EINVAL, "request '%s': path too long", r->name ? r->name : "?");
    for (size_t i = 0; i < r->nheaders; i++) {
        const char *hn = r->headers[i].name, *hv = r->headers[i].value;
        if (!hn || !*hn || !hv)
            return err_set(err, -EINVAL, "request '%s': empty header", r->name ? r->name : "?");
        for (const char *c = hn; *c; c++)
            if (!is_tchar((unsigned char)*c))
                return err_set(err, -EINVAL, "request '%s': bad header name '%.64s'",
                               r->name ? r->name : "?", hn);
        if (has_bad_bytes(hv, strlen(hv)))
            return err_set(err, -EINVAL, "request '%s': header '%.64s' has CR or LF in its value",
                           r->name ? r->name : "?", hn);
        if (strcasecmp(hn, "content-length") == 0 || strcasecmp(hn, "transfer-encoding") == 0)
            return err_set(err, -EINVAL,
                           "request '%s': header '%s' is computed by sizeup; remove it",
                           r->name ? r->name : "?", hn);
    }

    return 0;
}

/* Serializes r; a template (tmpl) keeps its head without the framing and its body apart. */
static int build(const struct url *u, const struct profile_request *r, int tmpl,
                 struct http_request *out, char *err)
{
    struct sbuf s = {NULL, 0, 0};
    const char *method = r->method ? r->method : "GET";
    const char *path = r->path ? r->path : "/";
    char full[URL_PATH_MAX * 2];
    char num[32];
    int rc = 0;

    memset(out, 0, sizeof(*out));
    rc = check_request(u, r, method, path, full, sizeof(full), err);
    if (rc)
        return rc;
    rc = sb_str(&s, method);
    rc = rc ? rc : sb_put(&s, " ", 1);
    rc = rc ? rc : sb_str(&s, full);
    rc = rc ? rc : sb_str(&s, " HTTP/1.1\r\n");
    if (!rc && !header_set(r, "host")) {
        rc = sb_str(&s, "Host: ");
        rc = rc ? rc : sb_str(&s, u->authority);
        rc = rc ? rc : sb_put(&s, "\r\n", 2);
    }
    if (!rc && !header_set(r, "user-agent"))
        rc = sb_str(&s, "User-Agent: " HTTP_USER_AGENT "\r\n");
    for (size_t i = 0; !rc && i < r->nheaders; i++) {
        rc = sb_str(&s, r->headers[i].name);
        rc = rc ? rc : sb_put(&s, ": ", 2);
        rc = rc ? rc : sb_str(&s, r->headers[i].value);
        rc = rc ? rc : sb_put(&s, "\r\n", 2);
    }
    int wants_length = r->body != NULL || strcmp(method, "POST") == 0 ||
                       strcmp(method, "PUT") == 0 || strcmp(method, "PATCH") == 0;
    if (tmpl) {
        /* The framing depends on the number's width: render_seq adds it at each send. */
        rc = rc ? rc : sb_put(&s, "", 1);
        if (!rc && r->body_len > HTTP_MAX_REQUEST - s.len)
            rc = -EINVAL;
        if (!rc && !(out->body = malloc(r->body_len + 1)))
            rc = -ENOMEM;
        if (!rc) {
            if (r->body_len)
                memcpy(out->body, r->body, r->body_len);
            out->body[r->body_len] = '\0';
            out->body_len = r->body_len;
        }
        goto framed;
    }
    if (!rc && wants_length) {
        snprintf(num, sizeof(num), "Content-Length: %zu\r\n", r->body ? r->body_len : 0);
        rc = sb_str(&s, num);
    }
    rc = rc ? rc : sb_put(&s, "\r\n", 2);
    if (!rc && r->body && r->body_len)
        rc = sb_put(&s, r->body, r->body_len);
    /* A NUL after the bytes (not counted in len) lets tests and logs treat it as a string. */
    rc = rc ? rc : sb_put(&s, "", 1);
framed:
    if (rc == -EINVAL)
        err_set(err, rc, "request '%s': larger than %u bytes", r->name ? r->name : "?",
                HTTP_MAX_REQUEST);
    else if (rc)
        err_set(err, rc, "out of memory");
    if (rc)
        goto out;
    out->buf = s.b;
    out->len = s.len - 1;
    out->head = strcmp(method, "HEAD") == 0;
    out->render = tmpl ? render_seq : render_fixed;
    s.b = NULL;
out:
    free(s.b);
    if (rc) {
        free(out->body);
        memset(out, 0, sizeof(*out));
    }
    return rc;
}

int http_request_build(const struct url *u, const struct profile_request *r,
                       struct http_request *out, char *err)
{
    int tmpl = r->body && memmem(r->body, r->body_len, seq_mark, SEQ_MARK_LEN) != NULL;
    return build(u, r, tmpl, out, err);
}

void http_request_free(struct http_request *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r->body);
    memset(r, 0, sizeof(*r));
}
