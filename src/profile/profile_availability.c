/* The profile's availability: section: how many zones the app's pods spread over and how many
 * pods a node drain may take down at once. The replicas these add are decided in the advisor
 * (advise/availability.c); here only the two counts are read and bounded. */

#include <stdio.h>

#include "profile/profile_int.h"

enum { AV_ZONES, AV_DRAIN, AV_N };
static const char *const av_keys[AV_N] = {"zones", "drain"};

int profile__load_availability(struct profile__ctx *c, const yaml_node_t *map, struct profile *p)
{
    yaml_node_t *v[AV_N];
    struct profile_availability *av = &p->availability;
    uint64_t u;
    int rc;

    /* "availability:" with nothing after it is absent. */
    rc = profile__section(c, map, "availability", "{ zones: 3, drain: 1 }", av_keys, AV_N, v);
    if (rc)
        return rc < 0 ? rc : 0;
    av->given = true;
    av->zones = 1;
    av->drain = 1;
    if (v[AV_ZONES]) {
        rc = profile__get_uint(c, v[AV_ZONES], "availability.zones", 1, PROFILE_MAX_ZONES, &u);
        if (rc)
            return rc;
        av->zones = (unsigned)u;
    }
    if (v[AV_DRAIN]) {
        rc = profile__get_uint(c, v[AV_DRAIN], "availability.drain", 0, PROFILE_MAX_DRAIN, &u);
        if (rc)
            return rc;
        av->drain = (unsigned)u;
    }
    return 0;
}
