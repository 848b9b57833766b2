/* The profile's load sections: requests: (with their headers and bodies, under HTTP's rules)
 * and stages:. Read through the loader's shared YAML readers (profile_int.h). */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "profile/profile_int.h"

/* Limits on what one profile may ask for. They are far above any sane profile and exist so
 * that a hostile or broken file never reaches the HTTP layer with something it cannot frame. */
#define MAX_HEADERS    64
#define MAX_NAME_LEN   128
#define MAX_METHOD_LEN 32
#define MAX_PATH_LEN   8192
#define MAX_HNAME_LEN  256
#define MAX_HVALUE_LEN 8192
#define MAX_WEIGHT     1000000

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

/* ---- the sections ------------------------------------------------------------------------ */

void profile__request_free(struct profile_request *r)
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
        yaml_node_t *k = profile__node(c, pr->key), *v = profile__node(c, pr->value);
        const char *kt = k ? profile__text_cstr(k) : NULL;
        if (!k || !v || !kt)
            return profile__fail(c, k, prefix, "expected a header name, got %s",
                                 k ? GOT(k) : "nothing");
        profile__show(kt, strlen(kt), shown, sizeof(shown));
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
        const char *vt = profile__text(v);
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

/* A parser, long on purpose: one request's keys (rq_keys) each read and checked in turn,
 * every error naming the key's path in the profile. */
int profile__load_request(struct profile__ctx *c, const yaml_node_t *item, const char *prefix,
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
        rc = profile__get_string(c, v[RQ_METHOD], FIELD(RQ_METHOD), MAX_METHOD_LEN,
                                 "an HTTP method", &r->method);
        if (rc)
            return rc;
        if (!is_token(r->method))
            return profile__fail(c, v[RQ_METHOD], path, "not a valid HTTP method, got %s",
                                 GOT(v[RQ_METHOD]));
    } else if (!(r->method = strdup("GET"))) {
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    }

    if (v[RQ_PATH]) {
        rc = profile__get_string(c, v[RQ_PATH], FIELD(RQ_PATH), MAX_PATH_LEN,
                                 "a path starting with '/'", &r->path);
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
        rc = profile__get_string(c, v[RQ_NAME], FIELD(RQ_NAME), MAX_NAME_LEN, "a name", &r->name);
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

    if (v[RQ_HEADERS] && !profile__is_null(v[RQ_HEADERS])) {
        if (v[RQ_HEADERS]->type != YAML_MAPPING_NODE)
            return profile__fail(
                c, v[RQ_HEADERS], FIELD(RQ_HEADERS),
                "expected a mapping such as { Authorization: \"Bearer x\" }, got %s",
                GOT(v[RQ_HEADERS]));
        rc = load_headers(c, v[RQ_HEADERS], FIELD(RQ_HEADERS), r);
        if (rc)
            return rc;
    }

    if (v[RQ_BODY] && !profile__is_null(v[RQ_BODY])) {
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

int profile__load_requests(struct profile__ctx *c, const yaml_node_t *seq, struct profile *p)
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
        yaml_node_t *item = profile__node(c, seq->data.sequence.items.start[done]);
        if (!item) {
            rc = profile__fail(c, seq, "requests", "malformed list");
            goto out;
        }
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "requests[%zu]", done);
        rc = profile__load_request(c, item, prefix, &rs[done]);
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
        profile__request_free(&p->requests[i]);
    free(p->requests);
    p->requests = rs;
    p->nrequests = n;
    rs = NULL;
out:
    if (rs) {
        for (size_t i = 0; i < done; i++)
            profile__request_free(&rs[i]);
        free(rs);
    }
    return rc;
}

enum { ST_DURATION, ST_USERS, ST_RATE, ST_N };
static const char *const st_keys[ST_N] = {"duration", "users", "rate"};

/* A parser, long on purpose: each stage's keys (st_keys) read and checked in turn, every error
 * naming the stage and key. */
int profile__load_stages(struct profile__ctx *c, const yaml_node_t *seq, struct profile *p)
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
        yaml_node_t *item = profile__node(c, seq->data.sequence.items.start[i]), *v[ST_N];
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
