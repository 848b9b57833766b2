/* The profile loader's YAML plumbing: the pre-scan that bounds what libyaml may build, syntax
 * errors, and the field readers every section uses (declared in profile_int.h), so that all
 * errors read "source:line: field.path: problem". */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/quantity.h"
#include "profile/profile_int.h"

/* Limits on the shape of one profile, checked before libyaml builds the document. They are far
 * above any sane profile and exist so that a hostile or broken file costs bounded memory. */
#define MAX_DEPTH 32    /* nesting of lists and mappings */
#define MAX_NODES 50000 /* the largest valid profile has about 36000 */

/* ---- errors ---------------------------------------------------------------------------- */

int profile__line_of(const yaml_node_t *n)
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
        return err_set(c->err, -EINVAL, "%s:%d: %s: %s", c->source, profile__line_of(n), path, msg);
    return err_set(c->err, -EINVAL, "%s:%d: %s", c->source, profile__line_of(n), msg);
}

/* A short, printable rendering of untrusted text for an error message: control characters and
 * quotes become '?', and long values are cut with "...". */
void profile__show(const char *s, size_t len, char *out, size_t outlen)
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

bool profile__is_null(const yaml_node_t *n)
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
    if (profile__is_null(n))
        return "nothing";
    char shown[48];
    profile__show((const char *)n->data.scalar.value, n->data.scalar.length, shown, sizeof(shown));
    snprintf(buf, len, "'%s'", shown);
    return buf;
}

/* ---- scalar readers ---------------------------------------------------------------------- */

yaml_node_t *profile__node(struct profile__ctx *c, int idx)
{
    return yaml_document_get_node(c->doc, idx);
}

/* The scalar's text, or NULL when n is not a non-null scalar. */
const char *profile__text(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || profile__is_null(n))
        return NULL;
    return (const char *)n->data.scalar.value;
}

/* Text with no embedded NUL (libyaml allows "\0" in double-quoted scalars). */
const char *profile__text_cstr(const yaml_node_t *n)
{
    const char *t = profile__text(n);
    if (t && strlen(t) != n->data.scalar.length)
        return NULL;
    return t;
}

int profile__get_uint(struct profile__ctx *c, const yaml_node_t *n, const char *path, uint64_t min,
                      uint64_t max, uint64_t *out)
{
    char gotbuf[64];
    const char *t = profile__text_cstr(n);
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
    const char *t = profile__text_cstr(n);
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
    const char *t = profile__text_cstr(n);
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
    const char *t = profile__text_cstr(n);
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
        yaml_node_t *k = profile__node(c, pr->key), *v = profile__node(c, pr->value);
        const char *kt = k ? profile__text_cstr(k) : NULL;
        if (!k || !v || !kt)
            return profile__fail(c, k, prefix, "expected a field name, got %s",
                                 k ? GOT(k) : "nothing");
        size_t i = 0;
        while (i < nkeys && strcmp(kt, keys[i]))
            i++;
        char shown[48];
        profile__show(kt, strlen(kt), shown, sizeof(shown));
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
            return profile__fail(c, k, path, "given twice (first on line %d)",
                                 profile__line_of(vals[i]));
        vals[i] = v;
    }
    return 0;
}

/* An optional section's opening: absent when null, else a mapping whose keys are all known. */
int profile__section(struct profile__ctx *c, const yaml_node_t *map, const char *path,
                     const char *example, const char *const *keys, size_t nkeys, yaml_node_t **vals)
{
    char gotbuf[64];

    if (profile__is_null(map))
        return 1;
    if (!profile__is_mapping(map))
        return profile__fail(c, map, path, "expected a mapping such as %s, got %s", example,
                             GOT(map));
    return profile__fields(c, map, path, keys, nkeys, vals);
}

/* Null (an empty "key:") counts as absent for optional sections. */
bool profile__is_mapping(const yaml_node_t *n)
{
    return n && n->type == YAML_MAPPING_NODE;
}

int profile__get_text(struct profile__ctx *c, const yaml_node_t *n, const char *path, size_t maxlen,
                      const char *what, const char **out)
{
    char gotbuf[64];
    const char *t = profile__text_cstr(n);
    if (!t || !*t)
        return profile__fail(c, n, path, "expected %s, got %s", what, GOT(n));
    if (strlen(t) > maxlen)
        return profile__fail(c, n, path, "longer than %zu bytes", maxlen);
    *out = t;
    return 0;
}

int profile__get_string(struct profile__ctx *c, const yaml_node_t *n, const char *path,
                        size_t maxlen, const char *what, char **out)
{
    const char *t;
    int rc = profile__get_text(c, n, path, maxlen, what, &t);
    if (rc)
        return rc;
    *out = strdup(t);
    if (!*out)
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    return 0;
}

/* ---- YAML plumbing ----------------------------------------------------------------------- */

static int line_at_offset(const char *buf, size_t len, size_t off)
{
    int line = 1;
    for (size_t i = 0; i < off && i < len; i++)
        line += buf[i] == '\n';
    return line;
}

int profile__syntax_error(struct profile__ctx *c, const yaml_parser_t *ps, const char *buf,
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
int profile__prescan(struct profile__ctx *c, const char *buf, size_t len)
{
    yaml_parser_t ps;
    yaml_event_t ev;
    int rc = 0, docs = 0, depth = 0, nodes = 0;

    if (!yaml_parser_initialize(&ps))
        return err_set(c->err, -ENOMEM, "%s: out of memory", c->source);
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, len);
    for (;;) {
        if (!yaml_parser_parse(&ps, &ev)) {
            rc = profile__syntax_error(c, &ps, buf, len);
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
