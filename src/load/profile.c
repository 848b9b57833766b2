#include "load/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "core/quantity.h"
#include "load/profile_int.h"
#include "load/profile_streams.h"

/* Limits on what one profile may ask for. They are far above any sane profile and exist so
 * that a hostile or broken file costs bounded memory and never reaches the HTTP layer with
 * something it cannot frame. */
#define MAX_DEPTH        32    /* nesting of lists and mappings */
#define MAX_NODES        50000 /* the largest valid profile has about 36000 */
#define MAX_HEADERS      64
#define MAX_NAME_LEN     128
#define MAX_METHOD_LEN   32
#define MAX_PATH_LEN     8192
#define MAX_HNAME_LEN    256
#define MAX_HVALUE_LEN   8192
#define MAX_USERS        PROFILE_MAX_USERS
#define MAX_RATE         PROFILE_MAX_RATE
#define MAX_WEIGHT       1000000
#define MAX_PER_USER_RPS 1000000.0
#define MAX_TARGET       1e12

#define DEFAULT_SOURCE "built-in default"

/* ---- errors ---------------------------------------------------------------------------- */

static int line_of(const yaml_node_t *n)
{
    return n ? (int)n->start_mark.line + 1 : 1;
}

/* "source:line: path: message". Every failure of the loader goes through here so they all
 * read the same way. */
int profile__fail(struct profile__ctx *c, const yaml_node_t *n, const char *path, const char *fmt,
                  ...)
{
    char msg[ERR_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (path && *path)
        return err_set(c->err, -EINVAL, "%s:%d: %s: %s", c->source, line_of(n), path, msg);
    return err_set(c->err, -EINVAL, "%s:%d: %s", c->source, line_of(n), msg);
}

/* A short, printable rendering of untrusted text for an error message: control characters and
 * quotes become '?', and long values are cut with "...". */
static void show(const char *s, size_t len, char *out, size_t outlen)
{
    size_t o = 0, max = outlen - 4;
    for (size_t i = 0; i < len && o < max; i++) {
        unsigned char ch = (unsigned char)s[i];
        out[o++] = (ch < 0x20 || ch == 0x7f || ch == '\'') ? '?' : (char)ch;
    }
    if (o < len && o >= max) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

static bool is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)n->data.scalar.value;
    return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") || !strcmp(v, "NULL");
}

/* What a node is, for "got ...": the scalar quoted, or its kind. */
const char *profile__got(const yaml_node_t *n, char *buf, size_t len)
{
    if (n->type == YAML_MAPPING_NODE)
        return "a mapping";
    if (n->type == YAML_SEQUENCE_NODE)
        return "a list";
    if (is_null(n))
        return "nothing";
    char shown[48];
    show((const char *)n->data.scalar.value, n->data.scalar.length, shown, sizeof(shown));
    snprintf(buf, len, "'%s'", shown);
    return buf;
}

/* ---- scalar readers ---------------------------------------------------------------------- */

static yaml_node_t *node(struct profile__ctx *c, int idx)
{
    return yaml_document_get_node(c->doc, idx);
}

/* The scalar's text, or NULL when n is not a non-null scalar. */
static const char *text(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return NULL;
    return (const char *)n->data.scalar.value;
}

/* Text with no embedded NUL (libyaml allows "\0" in double-quoted scalars). */
static const char *text_cstr(const yaml_node_t *n)
{
    const char *t = text(n);
    if (t && strlen(t) != n->data.scalar.length)
        return NULL;
    return t;
}

int profile__get_uint(struct profile__ctx *c, const yaml_node_t *n, const char *path, uint64_t min,
                      uint64_t max, uint64_t *out)
{
    char gotbuf[64];
    const char *t = text_cstr(n);
    const char *what = min > 0 ? "a positive integer" : "a whole number >= 0";
    if (!t || !*t || strspn(t, "0123456789") != strlen(t))
        return profile__fail(c, n, path, "expected %s, got %s", what, GOT(n));
    /* 19 digits always fit in 64 bits; anything longer is over every cap anyway. */
    uint64_t v = strlen(t) > 19 ? UINT64_MAX : strtoull(t, NULL, 10);
    if (v < min)
        return profile__fail(c, n, path, "expected %s, got %s", what, GOT(n));
    if (v > max)
        return profile__fail(c, n, path, "%s is too large (at most %llu)", GOT(n),
                             (unsigned long long)max);
    *out = v;
    return 0;
}

/* A plain decimal number; no hex, inf or nan, which strtod would otherwise take. */
int profile__get_number(struct profile__ctx *c, const yaml_node_t *n, const char *path,
                        bool allow_zero, double max, double *out)
{
    char gotbuf[64];
    const char *t = text_cstr(n);
    const char *what = allow_zero ? "a number >= 0" : "a positive number";
    char *end = NULL;
    if (!t || !*t || strspn(t, "0123456789.eE+-") != strlen(t) || !strchr("0123456789.", t[0]))
        return profile__fail(c, n, path, "expected %s, got %s", what, GOT(n));
    errno = 0;
    double v = strtod(t, &end);
    if (*end || errno == ERANGE || !isfinite(v) || v < 0 || (!allow_zero && v == 0))
        return profile__fail(c, n, path, "expected %s, got %s", what, GOT(n));
    if (v > max)
        return profile__fail(c, n, path, "%s is too large (at most %g)", GOT(n), max);
    *out = v;
    return 0;
}

int profile__get_duration(struct profile__ctx *c, const yaml_node_t *n, const char *path,
                          bool allow_zero, int64_t max, int64_t *out)
{
    char gotbuf[64], qerr[ERR_LEN];
    const char *t = text_cstr(n);
    int64_t us;
    if (!t)
        return profile__fail(c, n, path, "expected a duration such as 250ms, 20s or 1m30s, got %s",
                             GOT(n));
    if (qty_parse_duration(t, &us, qerr) < 0)
        return profile__fail(c, n, path, "%s", qerr);
    if (!allow_zero && us == 0)
        return profile__fail(c, n, path, "must be longer than 0, got %s", GOT(n));
    if (us > max) {
        char b[QTY_LEN];
        return profile__fail(c, n, path, "%s is too long (at most %s)", GOT(n),
                             qty_format_duration(max, b));
    }
    *out = us;
    return 0;
}

int profile__get_percent(struct profile__ctx *c, const yaml_node_t *n, const char *path,
                         double *out)
{
    char gotbuf[64], qerr[ERR_LEN];
    const char *t = text_cstr(n);
    if (!t)
        return profile__fail(c, n, path, "expected a percentage such as 1%% or 0.5%%, got %s",
                             GOT(n));
    if (qty_parse_percent(t, out, qerr) < 0)
        return profile__fail(c, n, path, "%s", qerr);
    return 0;
}

/* ---- mappings ---------------------------------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[40];
    if (la >= 40 || lb >= 40)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* Sorts a mapping's pairs into slots by field name: vals[i] is the value node of keys[i], or
 * NULL when absent. Unknown, duplicate and non-scalar keys are errors, so a typo is reported
 * instead of silently doing nothing. prefix is the field path of the mapping ("" at the top). */
int profile__fields(struct profile__ctx *c, const yaml_node_t *map, const char *prefix,
                    const char *const *keys, size_t nkeys, yaml_node_t **vals)
{
    char path[128], gotbuf[64];

    for (size_t i = 0; i < nkeys; i++)
        vals[i] = NULL;
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
         pr++) {
        yaml_node_t *k = node(c, pr->key), *v = node(c, pr->value);
        const char *kt = k ? text_cstr(k) : NULL;
        if (!k || !v || !kt)
            return profile__fail(c, k, prefix, "expected a field name, got %s",
                                 k ? GOT(k) : "nothing");
        size_t i = 0;
        while (i < nkeys && strcmp(kt, keys[i]))
            i++;
        char shown[48];
        show(kt, strlen(kt), shown, sizeof(shown));
        snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", shown);
        if (i == nkeys) {
            size_t best = 0, bestd = 99;
            for (size_t j = 0; j < nkeys; j++) {
                size_t d = edit_distance(kt, keys[j]);
                if (d < bestd) {
                    bestd = d;
                    best = j;
                }
            }
            if (bestd <= 2)
                return profile__fail(c, k, path, "unknown field; did you mean '%s'?", keys[best]);
            char list[160] = "";
            size_t o = 0;
            for (size_t j = 0; j < nkeys && o < sizeof(list); j++)
                o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", j ? ", " : "", keys[j]);
            return profile__fail(c, k, path, "unknown field (expected one of: %s)", list);
        }
        if (vals[i])
            return profile__fail(c, k, path, "given twice (first on line %d)", line_of(vals[i]));
        vals[i] = v;
    }
    return 0;
}

/* Null (an empty "key:") counts as absent for optional sections. */
bool profile__is_mapping(const yaml_node_t *n)
{
    return n && n->type == YAML_MAPPING_NODE;
}

/* ---- strings with HTTP rules ------------------------------------------------------------- */

/* RFC 9110 token characters, for methods and header names. */
static bool is_token(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (!(ch > 0x20 && ch < 0x7f && !strchr("\"(),/:;<=>?@[\\]{}", ch)))
            return false;
    }
    return true;
}

static int get_string(struct profile__ctx *c, const yaml_node_t *n, const char *path, size_t maxlen,
                      const char *what, char **out)
{
    char gotbuf[64];
    const char *t = text_cstr(n);
    if (!t || !*t)
        return profile__fail(c, n, path, "expected %s, got %s", what, GOT(n));
    if (strlen(t) > maxlen)
        return profile__fail(c, n, path, "longer than %zu bytes", maxlen);
    *out = strdup(t);
    if (!*out)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    return 0;
}

/* ---- the sections ------------------------------------------------------------------------ */

static void request_free(struct profile_request *r)
{
    free(r->name);
    free(r->method);
    free(r->path);
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof(*r));
}

static int load_headers(struct profile__ctx *c, const yaml_node_t *map, const char *prefix,
                        struct profile_request *r)
{
    char path[192], gotbuf[64], shown[48];
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);

    if (n > MAX_HEADERS)
        return profile__fail(c, map, prefix, "more than %d headers", MAX_HEADERS);
    if (n == 0)
        return 0;
    r->headers = calloc(n, sizeof(*r->headers));
    if (!r->headers)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    for (size_t i = 0; i < n; i++) {
        yaml_node_pair_t *pr = &map->data.mapping.pairs.start[i];
        yaml_node_t *k = node(c, pr->key), *v = node(c, pr->value);
        const char *kt = k ? text_cstr(k) : NULL;
        if (!k || !v || !kt)
            return profile__fail(c, k, prefix, "expected a header name, got %s",
                                 k ? GOT(k) : "nothing");
        show(kt, strlen(kt), shown, sizeof(shown));
        snprintf(path, sizeof(path), "%s.%s", prefix, shown);
        if (strlen(kt) > MAX_HNAME_LEN || !is_token(kt))
            return profile__fail(
                c, k, path, "not a valid header name (letters, digits and !#$%%&'*+-.^_`|~ only)");
        /* The engine frames every request itself; a profile that set these could make the
         * target read a different request than the one we measure (request smuggling). */
        if (!strcasecmp(kt, "Content-Length") || !strcasecmp(kt, "Transfer-Encoding"))
            return profile__fail(c, k, path, "set by sizeup from the body; remove it");
        for (size_t j = 0; j < i; j++) {
            if (!strcasecmp(r->headers[j].name, kt))
                return profile__fail(c, k, path, "given twice");
        }
        const char *vt = text(v);
        if (!vt)
            return profile__fail(c, v, path, "expected a header value, got %s", GOT(v));
        if (v->data.scalar.length > MAX_HVALUE_LEN)
            return profile__fail(c, v, path, "value longer than %d bytes", MAX_HVALUE_LEN);
        for (size_t j = 0; j < v->data.scalar.length; j++) {
            unsigned char ch = (unsigned char)vt[j];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                return profile__fail(c, v, path, "value holds a control character (CR, LF or NUL)");
        }
        r->headers[i].name = strdup(kt);
        r->headers[i].value = strdup(vt);
        r->nheaders = i + 1;
        if (!r->headers[i].name || !r->headers[i].value)
            return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    }
    return 0;
}

enum { RQ_NAME, RQ_METHOD, RQ_PATH, RQ_WEIGHT, RQ_HEADERS, RQ_BODY, RQ_N };
static const char *const rq_keys[RQ_N] = {"name", "method", "path", "weight", "headers", "body"};

static int load_request(struct profile__ctx *c, const yaml_node_t *item, const char *prefix,
                        struct profile_request *r)
{
    char path[64], gotbuf[64];
    yaml_node_t *v[RQ_N];
    int rc;

    if (item->type != YAML_MAPPING_NODE)
        return profile__fail(
            c, item, prefix,
            "expected a mapping such as { name: home, path: /, weight: 1 }, got %s", GOT(item));
    rc = profile__fields(c, item, prefix, rq_keys, RQ_N, v);
    if (rc)
        return rc;

#define FIELD(i) (snprintf(path, sizeof(path), "%s.%s", prefix, rq_keys[i]), path)
    if (v[RQ_METHOD]) {
        rc = get_string(c, v[RQ_METHOD], FIELD(RQ_METHOD), MAX_METHOD_LEN, "an HTTP method",
                        &r->method);
        if (rc)
            return rc;
        if (!is_token(r->method))
            return profile__fail(c, v[RQ_METHOD], path, "not a valid HTTP method, got %s",
                                 GOT(v[RQ_METHOD]));
    } else if (!(r->method = strdup("GET"))) {
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    }

    if (v[RQ_PATH]) {
        rc = get_string(c, v[RQ_PATH], FIELD(RQ_PATH), MAX_PATH_LEN, "a path starting with '/'",
                        &r->path);
        if (rc)
            return rc;
        if (r->path[0] != '/')
            return profile__fail(c, v[RQ_PATH], path, "must start with '/', got %s",
                                 GOT(v[RQ_PATH]));
        for (const char *s = r->path; *s; s++) {
            unsigned char ch = (unsigned char)*s;
            if (ch <= 0x20 || ch == 0x7f)
                return profile__fail(
                    c, v[RQ_PATH], path,
                    "spaces and control characters must be percent-encoded (%%20)");
        }
    } else if (!(r->path = strdup("/"))) {
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    }

    if (v[RQ_NAME]) {
        rc = get_string(c, v[RQ_NAME], FIELD(RQ_NAME), MAX_NAME_LEN, "a name", &r->name);
        if (rc)
            return rc;
        for (const char *s = r->name; *s; s++) {
            unsigned char ch = (unsigned char)*s;
            if (ch < 0x20 || ch == 0x7f)
                return profile__fail(c, v[RQ_NAME], path, "holds a control character");
        }
    } else {
        size_t len = strlen(r->method) + 1 + strlen(r->path) + 1;
        if (len - 1 > MAX_NAME_LEN) {
            /* A long path makes a long default name; reports want a short one. */
            return profile__fail(c, item, prefix,
                                 "the path is long: give the request a short 'name'");
        }
        r->name = malloc(len);
        if (!r->name)
            return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
        snprintf(r->name, len, "%s %s", r->method, r->path);
    }

    r->weight = 1;
    if (v[RQ_WEIGHT]) {
        uint64_t w;
        rc = profile__get_uint(c, v[RQ_WEIGHT], FIELD(RQ_WEIGHT), 1, MAX_WEIGHT, &w);
        if (rc)
            return rc;
        r->weight = (unsigned)w;
    }

    if (v[RQ_HEADERS] && !is_null(v[RQ_HEADERS])) {
        if (v[RQ_HEADERS]->type != YAML_MAPPING_NODE)
            return profile__fail(
                c, v[RQ_HEADERS], FIELD(RQ_HEADERS),
                "expected a mapping such as { Authorization: \"Bearer x\" }, got %s",
                GOT(v[RQ_HEADERS]));
        rc = load_headers(c, v[RQ_HEADERS], FIELD(RQ_HEADERS), r);
        if (rc)
            return rc;
    }

    if (v[RQ_BODY] && !is_null(v[RQ_BODY])) {
        const yaml_node_t *b = v[RQ_BODY];
        if (b->type != YAML_SCALAR_NODE)
            return profile__fail(
                c, b, FIELD(RQ_BODY),
                "expected a string (quote JSON bodies: body: '{\"id\":1}'), got %s", GOT(b));
        r->body_len = b->data.scalar.length;
        r->body = malloc(r->body_len + 1);
        if (!r->body)
            return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
        memcpy(r->body, b->data.scalar.value, r->body_len);
        r->body[r->body_len] = '\0';
    }
#undef FIELD
    return 0;
}

static int load_requests(struct profile__ctx *c, const yaml_node_t *seq, struct profile *p)
{
    char gotbuf[64];
    if (seq->type != YAML_SEQUENCE_NODE)
        return profile__fail(c, seq, "requests", "expected a list of requests, got %s", GOT(seq));
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return profile__fail(c, seq, "requests", "the list is empty: give at least one request");
    if (n > PROFILE_MAX_REQUESTS)
        return profile__fail(c, seq, "requests", "%zu requests, at most %d allowed", n,
                             PROFILE_MAX_REQUESTS);

    struct profile_request *rs = calloc(n, sizeof(*rs));
    if (!rs)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    int rc = 0;
    size_t done = 0;
    for (; done < n; done++) {
        yaml_node_t *item = node(c, seq->data.sequence.items.start[done]);
        if (!item) {
            rc = profile__fail(c, seq, "requests", "malformed list");
            goto out;
        }
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "requests[%zu]", done);
        rc = load_request(c, item, prefix, &rs[done]);
        if (rc) {
            done++; /* the half-built request is freed with the others */
            goto out;
        }
        for (size_t j = 0; j < done; j++) {
            if (!strcmp(rs[j].name, rs[done].name)) {
                char path[48];
                snprintf(path, sizeof(path), "requests[%zu].name", done);
                rc = profile__fail(c, item, path,
                                   "'%s' is already the name of requests[%zu]; names must "
                                   "be unique",
                                   rs[done].name, j);
                done++;
                goto out;
            }
        }
    }
    for (size_t i = 0; i < p->nrequests; i++)
        request_free(&p->requests[i]);
    free(p->requests);
    p->requests = rs;
    p->nrequests = n;
    rs = NULL;
out:
    if (rs) {
        for (size_t i = 0; i < done; i++)
            request_free(&rs[i]);
        free(rs);
    }
    return rc;
}

int profile__load_request(struct profile__ctx *c, const yaml_node_t *item, const char *prefix,
                          struct profile_request *r)
{
    return load_request(c, item, prefix, r);
}

int profile__get_string(struct profile__ctx *c, const yaml_node_t *n, const char *path,
                        size_t maxlen, const char *what, char **out)
{
    return get_string(c, n, path, maxlen, what, out);
}

void profile__request_free(struct profile_request *r)
{
    request_free(r);
}

enum { ST_DURATION, ST_USERS, ST_RATE, ST_N };
static const char *const st_keys[ST_N] = {"duration", "users", "rate"};

static int load_stages(struct profile__ctx *c, const yaml_node_t *seq, struct profile *p)
{
    char gotbuf[64], prefix[32], path[48];
    if (seq->type != YAML_SEQUENCE_NODE)
        return profile__fail(c, seq, "stages",
                             "expected a list such as [{ duration: 30s, users: 200 }], "
                             "got %s",
                             GOT(seq));
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return profile__fail(c, seq, "stages", "the list is empty");
    if (n > PROFILE_MAX_STAGES)
        return profile__fail(c, seq, "stages", "%zu stages, at most %d allowed", n,
                             PROFILE_MAX_STAGES);
    struct profile_stage *st = calloc(n, sizeof(*st));
    if (!st)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);

    int rc = 0;
    int64_t total = 0;
    bool by_users = false;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = node(c, seq->data.sequence.items.start[i]), *v[ST_N];
        snprintf(prefix, sizeof(prefix), "stages[%zu]", i);
        if (!item || item->type != YAML_MAPPING_NODE) {
            rc = profile__fail(c, item ? item : seq, prefix,
                               "expected a mapping such as { duration: 30s, users: 200 }, got %s",
                               item ? GOT(item) : "nothing");
            goto out;
        }
        rc = profile__fields(c, item, prefix, st_keys, ST_N, v);
        if (rc)
            goto out;
        if (!v[ST_DURATION]) {
            rc = profile__fail(c, item, prefix, "missing 'duration'");
            goto out;
        }
        snprintf(path, sizeof(path), "%s.duration", prefix);
        rc = profile__get_duration(c, v[ST_DURATION], path, true, MAX_RUN_US, &st[i].duration_us);
        if (rc)
            goto out;
        total += st[i].duration_us;
        if (!v[ST_USERS] == !v[ST_RATE]) {
            rc = profile__fail(c, item, prefix,
                               "give exactly one of 'users' (closed loop) or 'rate' "
                               "(open loop)");
            goto out;
        }
        if (i == 0)
            by_users = v[ST_USERS] != NULL;
        else if (by_users != (v[ST_USERS] != NULL)) {
            rc = profile__fail(c, item, prefix, "every stage must set '%s' like stages[0]",
                               by_users ? "users" : "rate");
            goto out;
        }
        if (by_users) {
            uint64_t u;
            snprintf(path, sizeof(path), "%s.users", prefix);
            rc = profile__get_uint(c, v[ST_USERS], path, 0, MAX_USERS, &u);
            if (rc)
                goto out;
            st[i].users = (double)u;
            st[i].rate = -1;
        } else {
            snprintf(path, sizeof(path), "%s.rate", prefix);
            rc = profile__get_number(c, v[ST_RATE], path, true, MAX_RATE, &st[i].rate);
            if (rc)
                goto out;
            st[i].users = -1;
        }
    }
    if (total == 0) {
        rc = profile__fail(c, seq, "stages", "the stages last 0s in total");
        goto out;
    }
    p->stages = st;
    p->nstages = n;
    p->duration_us = total;
    p->users = 0;
    p->rate = 0;
    st = NULL;
out:
    free(st);
    return rc;
}

enum { TH_P95, TH_ERRORS, TH_N };
static const char *const th_keys[TH_N] = {"p95", "errors"};

static int load_threshold(struct profile__ctx *c, const yaml_node_t *map, const char *prefix,
                          int64_t *p95, double *errors)
{
    char gotbuf[64], path[48];
    yaml_node_t *v[TH_N];
    if (!profile__is_mapping(map))
        return profile__fail(c, map, prefix,
                             "expected a mapping such as { p95: 100ms, errors: 1%% }, "
                             "got %s",
                             GOT(map));
    int rc = profile__fields(c, map, prefix, th_keys, TH_N, v);
    if (!rc && v[TH_P95]) {
        snprintf(path, sizeof(path), "%s.p95", prefix);
        rc = profile__get_duration(c, v[TH_P95], path, false, MAX_TIMEOUT_US, p95);
    }
    if (!rc && v[TH_ERRORS]) {
        snprintf(path, sizeof(path), "%s.errors", prefix);
        rc = profile__get_percent(c, v[TH_ERRORS], path, errors);
    }
    return rc;
}

enum { TS_HEALTHY, TS_OVERLOADED, TS_N };
static const char *const ts_keys[TS_N] = {"healthy", "overloaded"};

static int load_thresholds(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[TS_N];
    struct profile_thresholds *t = &p->thresholds;
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "thresholds",
                             "expected a mapping with 'healthy' and/or "
                             "'overloaded', got %s",
                             GOT(map));
    int rc = profile__fields(c, map, "thresholds", ts_keys, TS_N, v);
    if (!rc && v[TS_HEALTHY])
        rc = load_threshold(c, v[TS_HEALTHY], "thresholds.healthy", &t->healthy_p95_us,
                            &t->healthy_errors);
    if (!rc && v[TS_OVERLOADED])
        rc = load_threshold(c, v[TS_OVERLOADED], "thresholds.overloaded", &t->overloaded_p95_us,
                            &t->overloaded_errors);
    if (rc)
        return rc;
    /* A healthy bound above the overloaded one would make a run both at once. */
    if (t->healthy_p95_us > t->overloaded_p95_us) {
        char a[QTY_LEN], b[QTY_LEN];
        return profile__fail(c, map, "thresholds", "healthy.p95 (%s) is above overloaded.p95 (%s)",
                             qty_format_duration(t->healthy_p95_us, a),
                             qty_format_duration(t->overloaded_p95_us, b));
    }
    if (t->healthy_errors > t->overloaded_errors)
        return profile__fail(c, map, "thresholds",
                             "healthy.errors (%g%%) is above overloaded.errors "
                             "(%g%%)",
                             t->healthy_errors * 100, t->overloaded_errors * 100);
    return 0;
}

enum { TG_USERS, TG_RPS, TG_N };
static const char *const tg_keys[TG_N] = {"users", "rps"};

static int load_target(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[TG_N];
    if (!profile__is_mapping(map))
        return profile__fail(c, map, "target", "expected { users: N } or { rps: N }, got %s",
                             GOT(map));
    int rc = profile__fields(c, map, "target", tg_keys, TG_N, v);
    if (rc)
        return rc;
    if (!v[TG_USERS] == !v[TG_RPS])
        return profile__fail(c, map, "target", "give exactly one of 'users' or 'rps'");
    if (v[TG_USERS])
        return profile__get_number(c, v[TG_USERS], "target.users", false, MAX_TARGET,
                                   &p->target_users);
    return profile__get_number(c, v[TG_RPS], "target.rps", false, MAX_TARGET, &p->target_rps);
}

enum {
    K_USERS,
    K_RATE,
    K_DURATION,
    K_WARMUP,
    K_TIMEOUT,
    K_PER_USER_RPS,
    K_THRESHOLDS,
    K_TARGET,
    K_STAGES,
    K_REQUESTS,
    K_SEARCH,
    K_SLO,
    K_COST,
    K_PLANNING,
    K_STREAMS,
    K_PRODUCERS,
    K_N
};
static const char *const top_keys[K_N] = {"users",   "rate",         "duration",   "warmup",
                                          "timeout", "per_user_rps", "thresholds", "target",
                                          "stages",  "requests",     "search",     "slo",
                                          "cost",    "planning",     "streams",    "producers"};

static int load_root(struct profile__ctx *c, const yaml_node_t *root, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[K_N];
    int rc;

    if (root->type != YAML_MAPPING_NODE)
        return profile__fail(c, root, NULL,
                             "expected a mapping of profile fields (users, duration, "
                             "requests ...), got %s",
                             GOT(root));
    rc = profile__fields(c, root, "", top_keys, K_N, v);
    if (rc)
        return rc;

    if (v[K_USERS] && v[K_RATE]) {
        const yaml_node_t *later =
            line_of(v[K_RATE]) >= line_of(v[K_USERS]) ? v[K_RATE] : v[K_USERS];
        return profile__fail(
            c, later, later == v[K_RATE] ? "rate" : "users",
            "users (closed loop) and rate (open loop) are mutually exclusive; give one");
    }
    if (v[K_STAGES] && (v[K_USERS] || v[K_RATE] || v[K_DURATION])) {
        int k = v[K_USERS] ? K_USERS : v[K_RATE] ? K_RATE : K_DURATION;
        return profile__fail(c, v[k], top_keys[k],
                             "not allowed with stages (the stages set the load "
                             "and, added up, the duration)");
    }
    if (v[K_USERS]) {
        uint64_t u;
        rc = profile__get_uint(c, v[K_USERS], "users", 1, MAX_USERS, &u);
        if (rc)
            return rc;
        p->users = (unsigned)u;
        p->rate = 0;
        p->given |= PROFILE_GIVEN_USERS;
    }
    if (v[K_RATE]) {
        rc = profile__get_number(c, v[K_RATE], "rate", false, MAX_RATE, &p->rate);
        if (rc)
            return rc;
        p->users = 0;
        p->given |= PROFILE_GIVEN_RATE;
    }
    if (v[K_DURATION] && (rc = profile__get_duration(c, v[K_DURATION], "duration", false,
                                                     MAX_RUN_US, &p->duration_us)))
        return rc;
    if (v[K_WARMUP] &&
        (rc = profile__get_duration(c, v[K_WARMUP], "warmup", true, MAX_RUN_US, &p->warmup_us)))
        return rc;
    if (v[K_TIMEOUT] && (rc = profile__get_duration(c, v[K_TIMEOUT], "timeout", false,
                                                    MAX_TIMEOUT_US, &p->timeout_us)))
        return rc;
    if (v[K_PER_USER_RPS] && (rc = profile__get_number(c, v[K_PER_USER_RPS], "per_user_rps", false,
                                                       MAX_PER_USER_RPS, &p->per_user_rps)))
        return rc;
    if (v[K_THRESHOLDS] && (rc = load_thresholds(c, v[K_THRESHOLDS], p)))
        return rc;
    if (v[K_TARGET] && (rc = load_target(c, v[K_TARGET], p)))
        return rc;
    if (v[K_STAGES] && (rc = load_stages(c, v[K_STAGES], p)))
        return rc;
    if (v[K_REQUESTS] && (rc = load_requests(c, v[K_REQUESTS], p)))
        return rc;
    if ((rc = profile__load_sizing(c, v[K_SEARCH], v[K_SLO], v[K_COST], v[K_PLANNING], p)))
        return rc;
    return profile__load_streams(c, v[K_STREAMS], v[K_PRODUCERS],
                                 v[K_USERS] || v[K_RATE] || v[K_STAGES] || v[K_REQUESTS], p);
}

/* ---- YAML plumbing ----------------------------------------------------------------------- */

static int line_at_offset(const char *buf, size_t len, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off && i < len; i++)
        line += buf[i] == '\n';
    return line;
}

static int syntax_error(struct profile__ctx *c, const yaml_parser_t *ps, const char *buf,
                        size_t len)
{
    int line;
    if (ps->error == YAML_MEMORY_ERROR)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    if (ps->error == YAML_READER_ERROR)
        line = line_at_offset(buf, len, ps->problem_offset);
    else
        line = (int)ps->problem_mark.line + 1;
    return err_set(c->err, -EINVAL, "%s:%d: YAML syntax: %s%s%s", c->source, line,
                   ps->problem ? ps->problem : "malformed", ps->context ? " " : "",
                   ps->context ? ps->context : "");
}

/* One pass over the events before building the document: rejects aliases, which would let a
 * small file expand into a huge one once copied (a "billion laughs"), a second document, which
 * the loader would otherwise silently ignore, and deep nesting: libyaml's scanner does work
 * proportional to the flow depth for every token, so a megabyte of '[' would take hours. A
 * profile needs five levels; the scan stops as soon as it passes MAX_DEPTH. */
static int prescan(struct profile__ctx *c, const char *buf, size_t len)
{
    yaml_parser_t ps;
    yaml_event_t ev;
    int rc = 0, docs = 0, depth = 0, nodes = 0;

    if (!yaml_parser_initialize(&ps))
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
    for (;;) {
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = syntax_error(c, &ps, buf, len);
            break;
        }
        yaml_event_type_t type = ev.type;
        int line = (int)ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT)
            break;
        if (type == YAML_ALIAS_EVENT) {
            rc = err_set(c->err, -EINVAL,
                         "%s:%d: YAML aliases (*name) are not supported; "
                         "write the value out",
                         c->source, line);
            break;
        }
        /* Bounds the document the loader builds next (a megabyte of "1," is half a million
         * nodes, about 90 MB in libyaml). */
        if ((type == YAML_SCALAR_EVENT || type == YAML_SEQUENCE_START_EVENT ||
             type == YAML_MAPPING_START_EVENT) &&
            ++nodes > MAX_NODES) {
            rc = err_set(c->err, -EINVAL, "%s:%d: more than %d values in one profile", c->source,
                         line, MAX_NODES);
            break;
        }
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > MAX_DEPTH) {
                rc = err_set(c->err, -EINVAL, "%s:%d: nested deeper than %d levels", c->source,
                             line, MAX_DEPTH);
                break;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        if (type == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            rc = err_set(c->err, -EINVAL,
                         "%s:%d: a profile is one YAML document; found a "
                         "second one",
                         c->source, line);
            break;
        }
    }
    yaml_parser_delete(&ps);
    return rc;
}

/* ---- public ------------------------------------------------------------------------------ */

void profile_free(struct profile *p)
{
    if (!p)
        return;
    free(p->source);
    for (size_t i = 0; i < p->nrequests; i++)
        request_free(&p->requests[i]);
    free(p->requests);
    free(p->stages);
    profile_streams_free(p->streams);
    memset(p, 0, sizeof(*p));
}

static int init_default(struct profile *p, const char *source)
{
    memset(p, 0, sizeof(*p));
    p->users = 50;
    p->duration_us = 20LL * 1000000;
    p->warmup_us = 5LL * 1000000;
    p->timeout_us = 5LL * 1000000;
    p->per_user_rps = 0.5;
    p->thresholds.healthy_p95_us = 100000;
    p->thresholds.healthy_errors = 0.01;
    p->thresholds.overloaded_p95_us = 500000;
    p->thresholds.overloaded_errors = 0.01;
    p->search.mode = PROFILE_SEARCH_CAPACITY;
    p->search.warmup_us = 2LL * 1000000;
    p->search.window_us = 5LL * 1000000;
    p->search.precision = 0.05;
    p->search.repeats = 3;
    p->search.max_steps = 8;
    p->search.budget_us = 20LL * 60 * 1000000;
    p->slo.p95_us = p->thresholds.healthy_p95_us;
    p->slo.errors = p->thresholds.healthy_errors;
    p->cost.cpu = 1.0;
    p->cost.memory_gib = 0.13;
    p->planning.buffer = 0.10;
    p->planning.growth = 0.30;
    p->source = strdup(source);
    p->requests = calloc(1, sizeof(*p->requests));
    if (!p->source || !p->requests)
        goto oom;
    p->nrequests = 1;
    p->requests[0].name = strdup("GET /");
    p->requests[0].method = strdup("GET");
    p->requests[0].path = strdup("/");
    p->requests[0].weight = 1;
    if (!p->requests[0].name || !p->requests[0].method || !p->requests[0].path)
        goto oom;
    return 0;
oom:
    profile_free(p);
    return -ENOMEM;
}

int profile_init_default(struct profile *p)
{
    return init_default(p, DEFAULT_SOURCE);
}

int profile_load_buffer(const char *buf, size_t len, const char *source, struct profile *p,
                        char *err)
{
    struct profile tmp;
    yaml_parser_t ps;
    yaml_document_t doc;
    bool have_parser = false, have_doc = false;
    struct profile__ctx c = {.doc = &doc, .source = source ? source : "profile", .err = err};
    int rc;

    memset(p, 0, sizeof(*p));
    memset(&tmp, 0, sizeof(tmp));
    if (len > PROFILE_MAX_BYTES)
        return err_set(err, -EFBIG, "%s: larger than %u bytes", c.source, PROFILE_MAX_BYTES);
    rc = init_default(&tmp, c.source);
    if (rc) {
        err_set(err, rc, "%s: out of memory", c.source);
        goto out;
    }
    rc = prescan(&c, buf, len);
    if (rc)
        goto out;

    if (!yaml_parser_initialize(&ps)) {
        rc = err_set(err, -ENOMEM, "%s: out of memory", c.source);
        goto out;
    }
    have_parser = true;
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&ps, &doc)) {
        rc = syntax_error(&c, &ps, buf, len);
        goto out;
    }
    have_doc = true;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    /* An empty file (or one with only comments) is the default profile. */
    if (root && !is_null(root)) {
        rc = load_root(&c, root, &tmp);
        if (rc)
            goto out;
    }
    *p = tmp;
    memset(&tmp, 0, sizeof(tmp));
out:
    if (have_doc)
        yaml_document_delete(&doc);
    if (have_parser)
        yaml_parser_delete(&ps);
    profile_free(&tmp);
    return rc;
}

int profile_load_file(const char *path, struct profile *p, char *err)
{
    char ebuf[128];
    char *buf = NULL;
    size_t len = 0;
    int fd, rc = 0;

    memset(p, 0, sizeof(*p));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, -errno, "%s: %s", path, err_str(errno, ebuf, sizeof(ebuf)));
    /* Read at most one byte past the cap so a file that is too large (or a pipe that never
     * ends) is detected without reading it all. */
    buf = malloc(PROFILE_MAX_BYTES + 1);
    if (!buf) {
        rc = err_set(err, -ENOMEM, "%s: out of memory", path);
        goto out;
    }
    while (len <= PROFILE_MAX_BYTES) {
        ssize_t n = read(fd, buf + len, PROFILE_MAX_BYTES + 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = err_set(err, -errno, "%s: %s", path, err_str(errno, ebuf, sizeof(ebuf)));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (len > PROFILE_MAX_BYTES) {
        rc = err_set(err, -EFBIG, "%s: larger than %u bytes", path, PROFILE_MAX_BYTES);
        goto out;
    }
    rc = profile_load_buffer(buf, len, path, p, err);
out:
    free(buf);
    close(fd);
    return rc;
}
