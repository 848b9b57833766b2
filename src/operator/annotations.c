#include "operator/annotations.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"
#include "output/output.h"
#include "sweep/variant.h"

#define PREFIX_LEN (sizeof(ANNOT_PREFIX) - 1)
#define SHOW_LEN   64 /* at most this much of a bad value is quoted back in a reason */

/* Every annotation the operator reads from users, in the order reasons list them. */
static const char *const user_keys[] = {
    "sweep",      "configs",     "workers-env", "container",    "port",    "profile",
    "mode",       "target",      "resize",      "values-paths", "resweep", "resweep-min-interval",
    "generators", "target-load", "scale-out"};
/* Annotations the operator (and its Kubernetes platform) writes: never a typo. */
static const char *const own_keys[] = {
    "status",         "last-sweep",  "original-template", "original-resources",
    "resweep-images", "resweep-last"};

#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

/* Copies at most SHOW_LEN bytes of v into out with anything unprintable as '?', so a reason
 * built from hostile input stays one printable line. */
static const char *show(const char *v, char out[SHOW_LEN + 4])
{
    size_t i = 0;
    for (; v[i] && i < SHOW_LEN; i++) {
        unsigned char c = (unsigned char)v[i];
        out[i] = (c < 0x20 || c >= 0x7f || c == '"') ? '?' : (char)c;
    }
    if (v[i]) {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = '\0';
    return out;
}

const char *annot_mode_name(enum annot_mode mode)
{
    return mode == ANNOT_MODE_IN_PLACE ? "in-place"
           : mode == ANNOT_MODE_RESIZE ? "resize"
                                       : "clone";
}

static int key_in(const char *name, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, keys[i]) == 0)
            return 1;
    return 0;
}

int annot_key_relevant(const char *key)
{
    if (!key || strncmp(key, ANNOT_PREFIX, PREFIX_LEN) != 0)
        return 0;
    return key_in(key + PREFIX_LEN, user_keys, NKEYS(user_keys)) ||
           key_in(key + PREFIX_LEN, own_keys, NKEYS(own_keys));
}

static int is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* A DNS-1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric. */
static int valid_label(const char *s, size_t len)
{
    if (len == 0 || len > 63 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-')
            return 0;
    return 1;
}

/* A DNS-1123 subdomain (ConfigMap names): labels joined by '.', at most 253 bytes. */
static int valid_subdomain(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > ANNOT_MAX_NAME)
        return 0;
    const char *p = s;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t l = dot ? (size_t)(dot - p) : strlen(p);
        if (!valid_label(p, l))
            return 0;
        if (!dot)
            return 1;
        p = dot + 1;
    }
}

/* An http(s) URL with a host: the scheme, then host[:port], then an optional path. Only its
 * shape is checked here; whether it answers is the sweep's business. */
static int check_url(const char *v, char *err)
{
    char q[SHOW_LEN + 4];
    const char *rest;

    if (strncmp(v, "http://", 7) == 0)
        rest = v + 7;
    else if (strncmp(v, "https://", 8) == 0)
        rest = v + 8;
    else
        return err_set(err, -EINVAL, "target: \"%s\" is neither 'pod' nor an http(s):// URL",
                       show(v, q));
    for (const char *p = v; *p; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return err_set(err, -EINVAL, "target: \"%s\" contains a space or an unprintable byte",
                           show(v, q));
    size_t hostlen = strcspn(rest, "/?#");
    const char *host = rest;
    if (memchr(host, '@', hostlen))
        return err_set(err, -EINVAL, "target: \"%s\": credentials in the URL are not allowed",
                       show(v, q));
    const char *colon = NULL;
    if (host[0] == '[') {
        const char *close = memchr(host, ']', hostlen);
        if (!close || close - host < 3)
            return err_set(err, -EINVAL, "target: \"%s\": bad IPv6 host", show(v, q));
        if ((size_t)(close - host) + 1 < hostlen) {
            if (close[1] != ':')
                return err_set(err, -EINVAL, "target: \"%s\": bad IPv6 host", show(v, q));
            colon = close + 1;
        }
    } else {
        colon = memchr(host, ':', hostlen);
        if ((colon ? (size_t)(colon - host) : hostlen) == 0)
            return err_set(err, -EINVAL, "target: \"%s\" has no host", show(v, q));
    }
    if (colon) {
        const char *pe = host + hostlen;
        long port = 0;
        if (colon + 1 == pe)
            return err_set(err, -EINVAL, "target: \"%s\" has an empty port", show(v, q));
        for (const char *p = colon + 1; p < pe; p++) {
            if (*p < '0' || *p > '9' || port > 65535)
                return err_set(err, -EINVAL, "target: \"%s\" has a bad port", show(v, q));
            port = port * 10 + (*p - '0');
        }
        if (port < 1 || port > 65535)
            return err_set(err, -EINVAL, "target: \"%s\": port out of range (1-65535)", show(v, q));
    }
    return 0;
}

/* A plain decimal of 1 to maxlen digits (no sign, no space) into *n; -1 for anything else. */
static int digits_value(const char *v, size_t maxlen, long *n)
{
    size_t len = strlen(v);

    *n = 0;
    if (len == 0 || len > maxlen)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        *n = *n * 10 + (v[i] - '0');
    }
    return 0;
}

static int parse_port(const char *v, int *port, char *err)
{
    char q[SHOW_LEN + 4];
    long n = 0;

    if (digits_value(v, 5, &n) != 0)
        goto bad;
    if (n < 1 || n > 65535)
        return err_set(err, -EINVAL, "port: %ld is out of range (1-65535)", n);
    *port = (int)n;
    return 0;
bad:
    return err_set(err, -EINVAL, "port: \"%s\" is not a port number (1-65535)", show(v, q));
}

int annot_check_configs(const char *s, size_t *nvariants, char *err)
{
    struct variant_list *vl = NULL;
    char sub[ERR_LEN] = "";
    int rc;

    if (strlen(s) > ANNOT_MAX_VALUE)
        return err_set(err, -EINVAL, "configs: longer than %d bytes", ANNOT_MAX_VALUE);
    /* The sweep layer's parser: the same grammar and messages as `sizeup sweep --configs`. */
    vl = malloc(sizeof(*vl));
    if (!vl)
        return err_set(err, -ENOMEM, "out of memory");
    rc = variant_parse_list(s, vl, sub);
    if (rc == -ENOMEM) {
        rc = err_set(err, rc, "out of memory");
    } else if (rc) {
        /* The message quotes the user's token: keep the reason one printable line. */
        for (char *p = sub; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f || *p == '"')
                *p = *p == '"' ? '\'' : '?';
        rc = err_set(err, -EINVAL, "configs: %s", sub);
    } else if (nvariants) {
        *nvariants = vl->n;
    }
    free(vl);
    return rc;
}

int annot_parse_resweep(const char *mode, const char *interval, int *on, long long *interval_s,
                        char *err)
{
    char q[SHOW_LEN + 4], sub[ERR_LEN] = "";
    int64_t us = 0;

    *on = 0;
    if (mode && strcmp(mode, ANNOT_RESWEEP_ON) == 0)
        *on = 1;
    else if (mode && strcmp(mode, "off") != 0)
        return err_set(err, -EINVAL, "resweep: \"%s\" is unknown (expected %s or off)",
                       show(mode, q), ANNOT_RESWEEP_ON);
    if (!interval)
        interval = ANNOT_RESWEEP_DEFAULT;
    if (qty_parse_duration(interval, &us, sub) != 0)
        return err_set(err, -EINVAL,
                       "resweep-min-interval: \"%s\" is not a duration (e.g. 6h, 30m)",
                       show(interval, q));
    if (us < ANNOT_RESWEEP_MIN_S * 1000000LL || us / 1000000LL > ANNOT_RESWEEP_MAX_S)
        return err_set(err, -EINVAL,
                       "resweep-min-interval: \"%s\" is out of range (1s to 366 days)",
                       show(interval, q));
    *interval_s = us / 1000000LL;
    return 0;
}

/* values-paths: the sweep layer's parser decides (the CLI's --values-paths reads the same
 * syntax); a value with an unprintable byte is refused first, so every reason stays one
 * printable line. */
static int parse_values_paths(const char *v, struct annot_request *req, char *err)
{
    char q[SHOW_LEN + 4], sub[ERR_LEN] = "";

    if (strlen(v) > 1024)
        return err_set(err, -EINVAL, "values-paths: longer than 1024 bytes");
    if (!*v)
        return err_set(err, -EINVAL,
                       "values-paths: empty (expected e.g. "
                       "workers=workers.count,resources=resources)");
    for (const char *c = v; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            return err_set(err, -EINVAL,
                           "values-paths: \"%s\": a path is dot-separated names of letters, "
                           "digits, '_' and '-'",
                           show(v, q));
    if (output_paths_parse(v, &req->values_paths, sub) != 0)
        return err_set(err, -EINVAL, "values-paths: %s", sub);
    return 0;
}

/* target-load: "5000rps", "10000users" or "20000streams" (a positive number, a unit). Whether a
 * target in streams suits the profile (one with streams:) is profile_override_apply's check. */
static int parse_target_load(const char *v, struct annot_request *req, char *err)
{
    char q[SHOW_LEN + 4], *end = NULL;
    double x;

    if (!(*v >= '0' && *v <= '9'))
        goto bad;
    x = strtod(v, &end);
    if (end == v || !(x > 0) || x > ANNOT_MAX_TARGET)
        goto bad;
    req->target_rps = req->target_users = req->target_streams = 0;
    if (strcmp(end, "rps") == 0) {
        req->target_rps = x;
        return 0;
    }
    if (strcmp(end, "users") == 0) {
        req->target_users = x;
        return 0;
    }
    if (strcmp(end, "streams") == 0) {
        req->target_streams = x;
        return 0;
    }
bad:
    return err_set(err, -EINVAL,
                   "target-load: \"%s\": expected a number above 0 and at most %g followed by "
                   "rps, users or streams, e.g. 5000rps, 10000users or 20000streams",
                   show(v, q), ANNOT_MAX_TARGET);
}

static int set_str(char **slot, const char *v, char *err)
{
    char *dup = strdup(v);
    if (!dup)
        return err_set(err, -ENOMEM, "out of memory");
    free(*slot);
    *slot = dup;
    return 0;
}

static int parse_generators(const char *v, unsigned *out, char *err)
{
    char q[SHOW_LEN + 4];
    long n = 0;

    if (digits_value(v, 3, &n) != 0 || n < 1 || n > ANNOT_MAX_GENERATORS)
        return err_set(err, -EINVAL,
                       "generators: \"%s\" is not a number of load-generator pods (1-%d)",
                       show(v, q), ANNOT_MAX_GENERATORS);
    *out = (unsigned)n;
    return 0;
}

/* "off" or a whole number 0..PROFILE_MAX_SCALE_OUT (0 and 1 mean off, as for --scale-out). */
static int parse_scale_out(const char *v, struct annot_request *req, char *err)
{
    char q[SHOW_LEN + 4];
    long n = 0;

    if (strcmp(v, "off") == 0)
        n = 0;
    else if (digits_value(v, 2, &n) != 0 || n > PROFILE_MAX_SCALE_OUT)
        return err_set(err, -EINVAL, "scale-out: \"%s\" is not a replica count (0-%d, or off)",
                       show(v, q), PROFILE_MAX_SCALE_OUT);
    req->scale_out_set = true;
    req->scale_out = (unsigned)n;
    return 0;
}

/* Applies one known annotation to req. A parser, long on purpose: one branch per annotation,
 * each value checked where it is read so its error names the annotation. */
static int apply_one(const char *name, const char *v, struct annot_request *req, char *err)
{
    char q[SHOW_LEN + 4];

    if (strcmp(name, "sweep") == 0) {
        if (strlen(v) > ANNOT_MAX_SWEEP)
            return err_set(err, -EINVAL, "sweep: longer than %d bytes", ANNOT_MAX_SWEEP);
        return set_str(&req->sweep, v, err);
    }
    if (strcmp(name, "configs") == 0) {
        int rc = annot_check_configs(v, &req->nvariants, err);
        return rc ? rc : set_str(&req->configs, v, err);
    }
    if (strcmp(name, "workers-env") == 0) {
        if (!*v)
            return err_set(err, -EINVAL, "workers-env: empty (expected an env var name)");
        if (!output_env_name_valid(v))
            return err_set(err, -EINVAL,
                           "workers-env: \"%s\" is not an env var name (letters, digits, '_', "
                           "'-', '.', not starting with a digit)",
                           show(v, q));
        return set_str(&req->workers_env, v, err);
    }
    if (strcmp(name, "container") == 0) {
        if (!valid_label(v, strlen(v)))
            return err_set(err, -EINVAL,
                           "container: \"%s\" is not a container name (lower-case letters, "
                           "digits and '-', at most 63)",
                           show(v, q));
        return set_str(&req->container, v, err);
    }
    if (strcmp(name, "port") == 0)
        return parse_port(v, &req->port, err);
    if (strcmp(name, "profile") == 0) {
        if (!valid_subdomain(v))
            return err_set(err, -EINVAL, "profile: \"%s\" is not a ConfigMap name", show(v, q));
        return set_str(&req->profile, v, err);
    }
    if (strcmp(name, "mode") == 0) {
        if (strcmp(v, "clone") == 0)
            req->mode = ANNOT_MODE_CLONE;
        else if (strcmp(v, "in-place") == 0)
            req->mode = ANNOT_MODE_IN_PLACE;
        else if (strcmp(v, "resize") == 0)
            req->mode = ANNOT_MODE_RESIZE;
        else
            return err_set(err, -EINVAL,
                           "mode: \"%s\" is unknown (expected clone, in-place or resize)",
                           show(v, q));
        return 0;
    }
    if (strcmp(name, "resize") == 0) {
        if (strcmp(v, "off") == 0)
            req->resize_off = true;
        else if (strcmp(v, "on") == 0)
            req->resize_off = false;
        else
            return err_set(err, -EINVAL, "resize: \"%s\" is unknown (expected on or off)",
                           show(v, q));
        /* The keys are applied in table order, mode first: the contradiction is seen here. */
        if (req->resize_off && req->mode == ANNOT_MODE_RESIZE)
            return err_set(err, -EINVAL, "resize: \"off\" contradicts mode: resize");
        return 0;
    }
    if (strcmp(name, "target") == 0) {
        if (strcmp(v, "pod") == 0) {
            req->target = ANNOT_TARGET_POD;
            free(req->target_url);
            req->target_url = NULL;
            return 0;
        }
        if (strlen(v) > ANNOT_MAX_VALUE)
            return err_set(err, -EINVAL, "target: longer than %d bytes", ANNOT_MAX_VALUE);
        int rc = check_url(v, err);
        if (rc)
            return rc;
        req->target = ANNOT_TARGET_URL;
        return set_str(&req->target_url, v, err);
    }
    if (strcmp(name, "values-paths") == 0)
        return parse_values_paths(v, req, err);
    if (strcmp(name, "target-load") == 0)
        return parse_target_load(v, req, err);
    if (strcmp(name, "resweep") == 0)
        return annot_parse_resweep(v, NULL, &req->resweep, &req->resweep_interval_s, err);
    if (strcmp(name, "resweep-min-interval") == 0) {
        int on = 0;
        return annot_parse_resweep(NULL, v, &on, &req->resweep_interval_s, err);
    }
    if (strcmp(name, "generators") == 0)
        return parse_generators(v, &req->generators, err);
    if (strcmp(name, "scale-out") == 0)
        return parse_scale_out(v, req, err);
    return 0;
}

int annot_parse(const struct annot_kv *kv, size_t n, struct annot_request *req, char *warn,
                char *err)
{
    int rc = 0;
    size_t nunknown = 0;
    char q[SHOW_LEN + 4];

    memset(req, 0, sizeof(*req));
    output_paths_default(&req->values_paths);
    if (warn)
        warn[0] = '\0';
    /* Keys are applied in the table's order, not the API's, so a request with several bad
     * values always reports the same one first. */
    for (size_t k = 0; k < NKEYS(user_keys); k++) {
        const char *v = NULL;
        for (size_t i = 0; i < n; i++) {
            if (kv[i].key && kv[i].value && strncmp(kv[i].key, ANNOT_PREFIX, PREFIX_LEN) == 0 &&
                strcmp(kv[i].key + PREFIX_LEN, user_keys[k]) == 0)
                v = kv[i].value;
        }
        if (!v) {
            if (k == 0) {
                rc = err_set(err, -ENOENT, "no %s annotation", ANNOT_SWEEP);
                goto out;
            }
            continue;
        }
        if (k == 0 && !*v) {
            rc = err_set(err, -ENOENT, "%s is empty", ANNOT_SWEEP);
            goto out;
        }
        rc = apply_one(user_keys[k], v, req, err);
        if (rc)
            goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (!kv[i].key || strncmp(kv[i].key, ANNOT_PREFIX, PREFIX_LEN) != 0 ||
            annot_key_relevant(kv[i].key))
            continue;
        if (warn && nunknown++ == 0)
            snprintf(warn, ERR_LEN,
                     "unknown annotation %s ignored (known: sweep, configs, "
                     "workers-env, container, port, profile, mode, target, resize, "
                     "values-paths, resweep, resweep-min-interval, generators, target-load, "
                     "scale-out)",
                     show(kv[i].key, q));
    }
    if (!req->configs) {
        rc = set_str(&req->configs, ANNOT_DEFAULT_CONFIGS, err);
        if (rc)
            goto out;
        rc = annot_check_configs(req->configs, &req->nvariants, err);
        if (rc)
            goto out;
    }
    if (!req->workers_env && (rc = set_str(&req->workers_env, ANNOT_DEFAULT_WORKERS_ENV, err)))
        goto out;
    if (!req->resweep_interval_s) {
        int on = 0;
        rc = annot_parse_resweep(NULL, NULL, &on, &req->resweep_interval_s, err);
        if (rc)
            goto out;
    }
out:
    if (rc)
        annot_request_free(req);
    return rc;
}

void annot_request_free(struct annot_request *req)
{
    if (!req)
        return;
    free(req->sweep);
    free(req->configs);
    free(req->workers_env);
    free(req->container);
    free(req->profile);
    free(req->target_url);
    memset(req, 0, sizeof(*req));
}

bool annot_shared_target(const struct annot_request *req)
{
    return req->mode == ANNOT_MODE_IN_PLACE || req->mode == ANNOT_MODE_RESIZE ||
           req->target == ANNOT_TARGET_URL;
}

int annot_check_load_ceiling(const struct annot_request *req, const struct profile_search *search,
                             char *err)
{
    char q[SHOW_LEN + 4], where[SHOW_LEN + 64];

    if (search->mode != PROFILE_SEARCH_CAPACITY || search->max_rps > 0 || !annot_shared_target(req))
        return 0;
    if (req->profile)
        snprintf(where, sizeof(where), "the profile (ConfigMap %s, key profile.yaml)",
                 show(req->profile, q));
    else
        snprintf(where, sizeof(where), "a profile (%sprofile)", ANNOT_PREFIX);
    /* Kept under ERR_LEN: it becomes the status annotation "failed: <reason>". */
    return err_set(err, -EINVAL,
                   "load ceiling: a capacity search %s reaches real users and needs a ceiling: "
                   "set search: { max_rps: N } in %s, or search: { mode: fixed }",
                   req->target == ANNOT_TARGET_URL  ? "against a target URL"
                   : req->mode == ANNOT_MODE_RESIZE ? "in resize mode (on a pod of the Deployment)"
                                                    : "in in-place mode",
                   where);
}
