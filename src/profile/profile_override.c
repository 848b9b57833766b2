#include "profile/profile_override.h"

#include <errno.h>

/* The flag of o that cannot apply to p, or NULL when all of them can. Mirrors the YAML's own
 * rules (load_root in profile.c): stages exclude users, rate and duration; users and rate
 * exclude each other. */
static const char *conflicting_flag(const struct profile_override *o, const struct profile *p)
{
    if (p->nstages > 0)
        return o->users > 0          ? "--users"
               : o->rate > 0         ? "--rate"
               : o->duration_us >= 0 ? "--duration"
                                     : NULL;
    if (o->users > 0 && (p->given & PROFILE_GIVEN_RATE))
        return "--users";
    if (o->rate > 0 && (p->given & PROFILE_GIVEN_USERS))
        return "--rate";
    return NULL;
}

int profile_override_apply(const struct profile_override *o, struct profile *p, char *err)
{
    const char *src = p->source ? p->source : "the profile";
    const char *flag = conflicting_flag(o, p);

    if (o->users > 0 && o->rate > 0)
        return err_set(err, -EINVAL, "give --users or --rate, not both");
    if ((o->target_rps > 0) + (o->target_users > 0) + (o->target_streams > 0) > 1)
        return err_set(err, -EINVAL,
                       "give one of --target-rps, --target-users or --target-streams");
    if (o->target_streams > 0 && !p->streams)
        return err_set(err, -EINVAL,
                       "--target-streams needs a profile with streams: (%s has none): give "
                       "--target-rps or --target-users",
                       src);
    if (flag && p->nstages > 0)
        return err_set(err, -EINVAL,
                       "%s conflicts with the stages in %s (the stages set the load and, added "
                       "up, the duration): remove the stages or the flag",
                       flag, src);
    if (flag && o->users > 0)
        return err_set(err, -EINVAL,
                       "--users conflicts with 'rate' (open loop) in %s: give --rate, or edit "
                       "the profile",
                       src);
    if (flag)
        return err_set(err, -EINVAL,
                       "--rate conflicts with 'users' (closed loop) in %s: give --users, or edit "
                       "the profile",
                       src);
    if (o->users > 0) {
        p->users = o->users;
        p->rate = 0;
    }
    if (o->rate > 0) {
        p->rate = o->rate;
        p->users = 0;
    }
    if (o->duration_us >= 0)
        p->duration_us = o->duration_us;
    if (o->warmup_us >= 0)
        p->warmup_us = o->warmup_us;
    if (o->timeout_us >= 0)
        p->timeout_us = o->timeout_us;
    /* A target given here replaces the profile's, in whichever unit the profile gave it. */
    if (o->target_rps > 0 || o->target_users > 0 || o->target_streams > 0) {
        p->target_rps = o->target_rps;
        p->target_users = o->target_users;
        p->target_streams = o->target_streams;
    }
    return 0;
}
