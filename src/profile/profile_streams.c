/* The profile's stream sections (docs/streams.md): streams: (what to hold open) and
 * producers: (the commands that fan out to them). Read through the loader's shared YAML
 * readers, so errors read like every other profile error: "file:line: field.path: problem". */

#include "profile/profile_streams.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profile/profile_int.h"
#include "profile/url.h"

#define MAX_STREAM_RATE 1000000.0 /* commands/s: far above what fans out to any stream count */

void profile_streams_free(struct profile_streams *s)
{
    if (!s)
        return;
    free(s->url);
    free(s->subscribe);
    profile__request_free(&s->request);
    free(s->match);
    free(s);
}

const char *profile_stream_proto_name(enum profile_stream_proto p)
{
    return p == PROFILE_STREAM_SSE ? "sse" : "ws";
}

/* The scalar's text when n is a plain or quoted scalar, else NULL. */
static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* An absolute URL's scheme must fit the protocol; its host and port must parse like the
 * target's (the query string is kept for the stream's request, so it is cut off here). */
static int check_url(struct profile__ctx *c, const yaml_node_t *n, struct profile_streams *s)
{
    char err[ERR_LEN], tmp[PROFILE_STREAM_URL_MAX + 8];
    const char *u = s->url;
    bool ws = has_prefix(u, "ws://") || has_prefix(u, "wss://");
    bool http = has_prefix(u, "http://") || has_prefix(u, "https://");

    for (const char *p = u; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f)
            return profile__fail(c, n, "streams.url",
                                 "spaces and control characters must be percent-encoded (%%20)");
    if (u[0] == '/')
        return 0;
    if (!ws && !http)
        return profile__fail(c, n, "streams.url",
                             "expected ws://, wss://, http://, https:// or a path starting "
                             "with '/', got '%.64s'",
                             u);
    if (ws && s->protocol == PROFILE_STREAM_SSE)
        return profile__fail(c, n, "streams.url",
                             "a ws:// URL with protocol: sse; give an http:// URL or a path");
    if (http && s->protocol == PROFILE_STREAM_WS)
        return profile__fail(c, n, "streams.url",
                             "an http:// URL with protocol: ws; give a ws:// URL, a path, or "
                             "protocol: sse");
    /* url_parse knows http(s); ws(s) is the same authority syntax. */
    snprintf(tmp, sizeof(tmp), "%s%s", ws ? "http" : "", ws ? u + 2 : u);
    tmp[strcspn(tmp, "?")] = '\0';
    struct url parsed;
    if (url_parse(tmp, &parsed, err) != 0)
        return profile__fail(c, n, "streams.url", "%s", err);
    return 0;
}

enum { SM_URL, SM_PROTOCOL, SM_COUNT, SM_RAMP, SM_SUBSCRIBE, SM_N };
static const char *const sm_keys[SM_N] = {"url", "protocol", "count", "ramp", "subscribe"};

static int load_streams(struct profile__ctx *c, const yaml_node_t *map, struct profile_streams *s)
{
    char gotbuf[64];
    yaml_node_t *v[SM_N];
    uint64_t u;
    int rc;

    if (!profile__is_mapping(map))
        return profile__fail(c, map, "streams",
                             "expected a mapping such as { url: /live, count: 2000, ramp: 10s }, "
                             "got %s",
                             GOT(map));
    if ((rc = profile__fields(c, map, "streams", sm_keys, SM_N, v)))
        return rc;
    if (!v[SM_URL])
        return profile__fail(c, map, "streams", "missing 'url' (a ws:// URL or a path)");
    if (!v[SM_COUNT])
        return profile__fail(c, map, "streams", "missing 'count' (how many streams to hold open)");
    if (v[SM_PROTOCOL]) {
        const char *t = scalar(v[SM_PROTOCOL]);
        if (t && !strcmp(t, "ws"))
            s->protocol = PROFILE_STREAM_WS;
        else if (t && !strcmp(t, "sse"))
            s->protocol = PROFILE_STREAM_SSE;
        else
            return profile__fail(c, v[SM_PROTOCOL], "streams.protocol",
                                 "expected ws or sse, got %s", GOT(v[SM_PROTOCOL]));
    } else if (scalar(v[SM_URL]) && (has_prefix(scalar(v[SM_URL]), "http://") ||
                                     has_prefix(scalar(v[SM_URL]), "https://"))) {
        /* An http URL can only be an event stream; saying so twice is not required. */
        s->protocol = PROFILE_STREAM_SSE;
    }
    if ((rc = profile__get_string(c, v[SM_URL], "streams.url", PROFILE_STREAM_URL_MAX,
                                  "a ws:// URL or a path starting with '/'", &s->url)) ||
        (rc = check_url(c, v[SM_URL], s)))
        return rc;
    if ((rc = profile__get_uint(c, v[SM_COUNT], "streams.count", 1, PROFILE_STREAMS_MAX, &u)))
        return rc;
    s->count = (unsigned)u;
    s->ramp_us = (int64_t)s->count * PROFILE_RAMP_PER_1000_US / 1000;
    if (s->ramp_us < PROFILE_RAMP_MIN_US)
        s->ramp_us = PROFILE_RAMP_MIN_US;
    if (v[SM_RAMP] &&
        (rc = profile__get_duration(c, v[SM_RAMP], "streams.ramp", true, MAX_RUN_US, &s->ramp_us)))
        return rc;
    if (v[SM_SUBSCRIBE]) {
        const yaml_node_t *n = v[SM_SUBSCRIBE];
        if (n->type != YAML_SCALAR_NODE)
            return profile__fail(c, n, "streams.subscribe",
                                 "expected a string (quote JSON: subscribe: '{\"board\":1}'), "
                                 "got %s",
                                 GOT(n));
        if (s->protocol != PROFILE_STREAM_WS)
            return profile__fail(c, n, "streams.subscribe",
                                 "only a WebSocket takes a first message; an event stream "
                                 "subscribes by its URL");
        if (n->data.scalar.length > PROFILE_SUBSCRIBE_MAX)
            return profile__fail(c, n, "streams.subscribe", "longer than %d bytes",
                                 PROFILE_SUBSCRIBE_MAX);
        s->subscribe_len = n->data.scalar.length;
        s->subscribe = malloc(s->subscribe_len + 1);
        if (!s->subscribe)
            return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
        memcpy(s->subscribe, n->data.scalar.value, s->subscribe_len);
        s->subscribe[s->subscribe_len] = '\0';
    }
    return 0;
}

/* A JSON member name that needs no escaping: what a frame's field is matched against. */
static bool match_name_ok(const char *m)
{
    size_t n = strlen(m);
    if (n == 0 || n > PROFILE_MATCH_MAX)
        return false;
    for (; *m; m++) {
        unsigned char ch = (unsigned char)*m;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

enum { PR_COUNT, PR_RATE, PR_REQUEST, PR_MATCH, PR_FANOUT, PR_N };
static const char *const pr_keys[PR_N] = {"count", "rate", "request", "match", "fanout"};

static int load_producers(struct profile__ctx *c, const yaml_node_t *map, struct profile *p,
                          struct profile_streams *s)
{
    char gotbuf[64];
    yaml_node_t *v[PR_N];
    uint64_t u;
    int rc;

    if (!profile__is_mapping(map))
        return profile__fail(c, map, "producers",
                             "expected a mapping such as { count: 50, rate: 200, request: "
                             "{ method: POST, path: /api/cmd } }, got %s",
                             GOT(map));
    if ((rc = profile__fields(c, map, "producers", pr_keys, PR_N, v)))
        return rc;
    if (!v[PR_RATE])
        return profile__fail(c, map, "producers", "missing 'rate' (commands/s among them)");
    if (!v[PR_REQUEST])
        return profile__fail(c, map, "producers",
                             "missing 'request' (the command, e.g. { method: POST, path: /cmd })");
    s->producers = 1;
    if (v[PR_COUNT]) {
        if ((rc = profile__get_uint(c, v[PR_COUNT], "producers.count", 1, PROFILE_PRODUCERS_MAX,
                                    &u)))
            return rc;
        s->producers = (unsigned)u;
    }
    if ((rc = profile__get_number(c, v[PR_RATE], "producers.rate", false, MAX_STREAM_RATE,
                                  &s->rate)))
        return rc;
    if ((rc = profile__load_request(c, v[PR_REQUEST], "producers.request", &s->request)))
        return rc;
    for (size_t i = 0; i < p->nrequests; i++)
        if (!strcmp(p->requests[i].name, s->request.name))
            return profile__fail(c, v[PR_REQUEST], "producers.request",
                                 "'%s' is already the name of requests[%zu]; give the command a "
                                 "'name'",
                                 s->request.name, i);
    if (!(s->match = strdup("seq")))
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    if (v[PR_MATCH]) {
        free(s->match);
        s->match = NULL;
        if ((rc = profile__get_string(c, v[PR_MATCH], "producers.match", PROFILE_MATCH_MAX,
                                      "a JSON field name such as seq", &s->match)))
            return rc;
        if (!match_name_ok(s->match))
            return profile__fail(c, v[PR_MATCH], "producers.match",
                                 "expected a JSON field name (letters, digits, '_' and '-'), "
                                 "got %s",
                                 GOT(v[PR_MATCH]));
    }
    s->fanout_all = true;
    if (v[PR_FANOUT]) {
        const char *t = scalar(v[PR_FANOUT]);
        if (t && !strcmp(t, "all"))
            s->fanout_all = true;
        else if (t && !strcmp(t, "none"))
            s->fanout_all = false;
        else
            return profile__fail(c, v[PR_FANOUT], "producers.fanout",
                                 "expected all or none, got %s", GOT(v[PR_FANOUT]));
    }
    return 0;
}

int profile__load_streams(struct profile__ctx *c, const yaml_node_t *streams,
                          const yaml_node_t *producers, bool load_given, struct profile *p)
{
    struct profile_streams *s;
    int rc;

    if (!streams && !producers)
        return 0;
    if (!streams)
        return profile__fail(c, producers, "producers",
                             "producers send commands to streams: add a 'streams:' section");
    s = calloc(1, sizeof(*s));
    if (!s)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    s->load_given = load_given;
    rc = load_streams(c, streams, s);
    if (!rc && producers)
        rc = load_producers(c, producers, p, s);
    if (rc) {
        profile_streams_free(s);
        return rc;
    }
    profile_streams_free(p->streams);
    p->streams = s;
    return 0;
}
