/* The profile's scale_out: section: which replica counts of one variant a sweep measures after
 * the shape search, and which variant. The counts `max: N` expands to are decided here, once,
 * for the profile, the CLI flag and the operator's annotation alike. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "profile/profile_int.h"

int profile_scale_out_set_max(struct profile_scale_out *so, unsigned max, char *err)
{
    size_t n = 0;

    if (max > PROFILE_MAX_SCALE_OUT)
        return err_set(err, -EINVAL, "a scale-out measures 0 to %d replicas, not %u",
                       PROFILE_MAX_SCALE_OUT, max);
    so->given = true;
    so->ncounts = 0;
    if (max <= 1)
        return 0;
    for (unsigned r = 1; r <= max; r++) {
        /* Every count up to the dense limit; past it, doubling from it. */
        bool dense = max <= PROFILE_SCALE_OUT_MAX_MEASURED || r <= PROFILE_SCALE_OUT_DENSE;
        bool doubled = r > PROFILE_SCALE_OUT_DENSE && (r & (r - 1)) == 0;
        if (dense || doubled || r == max)
            so->counts[n++] = r;
    }
    so->ncounts = n;
    return 0;
}

enum { SO_MAX, SO_REPLICAS, SO_VARIANT, SO_N };
static const char *const so_keys[SO_N] = {"max", "replicas", "variant"};

/* replicas: [1, 2, 4]: sorted, unique, each 1..PROFILE_MAX_SCALE_OUT. 1 is added when absent:
 * the shape search always measures it. */
static int load_replicas(struct profile__ctx *c, const yaml_node_t *seq,
                         struct profile_scale_out *so)
{
    char gotbuf[64], path[48];
    unsigned prev = 0;
    size_t n;

    if (seq->type != YAML_SEQUENCE_NODE)
        return profile__fail(c, seq, "scale_out.replicas",
                             "expected a list of replica counts such as [1, 2, 3, 4], got %s",
                             GOT(seq));
    n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n == 0)
        return profile__fail(c, seq, "scale_out.replicas",
                             "empty (list the counts, or leave scale_out out)");
    if (n > PROFILE_MAX_SCALE_OUT)
        return profile__fail(c, seq, "scale_out.replicas", "%zu counts: at most %d", n,
                             PROFILE_MAX_SCALE_OUT);
    so->ncounts = 0;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = profile__node(c, seq->data.sequence.items.start[i]);
        uint64_t u;
        snprintf(path, sizeof(path), "scale_out.replicas[%zu]", i);
        int rc = profile__get_uint(c, item, path, 1, PROFILE_MAX_SCALE_OUT, &u);
        if (rc)
            return rc;
        if (u <= prev)
            return profile__fail(c, item, path,
                                 "%llu after %u: the counts must be sorted and unique",
                                 (unsigned long long)u, prev);
        if (i == 0 && u != 1)
            so->counts[so->ncounts++] = 1;
        if (so->ncounts == PROFILE_MAX_SCALE_OUT)
            return profile__fail(c, item, path, "at most %d counts with 1", PROFILE_MAX_SCALE_OUT);
        so->counts[so->ncounts++] = (unsigned)u;
        prev = (unsigned)u;
    }
    if (so->ncounts == 1)
        so->ncounts = 0; /* [1] alone: nothing to scale out to, off */
    return 0;
}

int profile__load_scale_out(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    char gotbuf[64];
    yaml_node_t *v[SO_N];
    struct profile_scale_out *so = &p->scale_out;
    int rc;

    if (!profile__is_mapping(map))
        return profile__fail(c, map, "scale_out",
                             "expected a mapping such as { max: 4 } or { replicas: [1, 2, 4] }, "
                             "got %s",
                             GOT(map));
    rc = profile__fields(c, map, "scale_out", so_keys, SO_N, v);
    if (rc)
        return rc;
    if (v[SO_MAX] && v[SO_REPLICAS]) {
        const yaml_node_t *later = profile__line_of(v[SO_REPLICAS]) >= profile__line_of(v[SO_MAX])
                                       ? v[SO_REPLICAS]
                                       : v[SO_MAX];
        return profile__fail(c, later, later == v[SO_MAX] ? "scale_out.max" : "scale_out.replicas",
                             "max and replicas are mutually exclusive; give one");
    }
    so->given = true;
    if (v[SO_MAX]) {
        uint64_t u;
        rc = profile__get_uint(c, v[SO_MAX], "scale_out.max", 0, PROFILE_MAX_SCALE_OUT, &u);
        if (rc)
            return rc;
        rc = profile_scale_out_set_max(so, (unsigned)u, c->err);
        if (rc)
            return rc;
    }
    if (v[SO_REPLICAS] && (rc = load_replicas(c, v[SO_REPLICAS], so)))
        return rc;
    if (v[SO_VARIANT]) {
        const char *t = profile__text_cstr(v[SO_VARIANT]);
        /* The sweep parses the spec and checks that it is one of its variants: the profile
         * does not know the list (the flags may set it). Here, one short printable token. */
        bool token = t && *t && strlen(t) < sizeof(so->variant);
        for (const char *q = t; token && *q; q++)
            token = *q > ' ' && *q < 0x7f;
        if (!token)
            return profile__fail(c, v[SO_VARIANT], "scale_out.variant",
                                 "expected a variant such as 2@1/512Mi, got %s",
                                 GOT(v[SO_VARIANT]));
        memcpy(so->variant, t, strlen(t) + 1);
    }
    return 0;
}
