#ifndef SIZEUP_PROFILE_PROFILE_OVERRIDE_H
#define SIZEUP_PROFILE_PROFILE_OVERRIDE_H

/* Command-line overrides of a load profile (--users, --rate, --duration, --warmup, --timeout),
 * with one meaning for every command that takes them: an override means what the same field
 * would mean in the profile's YAML, and is refused where the YAML would be refused (users with
 * rate, either with stages, duration with stages). Only the built-in default profile, which no
 * file chose, lets --rate replace its 50 users. */

#include <stdint.h>

#include "core/err.h"
#include "profile/profile.h"

struct profile_override {
    unsigned users;      /* 0: not given */
    double rate;         /* 0: not given */
    int64_t duration_us; /* -1: not given (and the two below) */
    int64_t warmup_us;
    int64_t timeout_us;
    double target_rps;     /* 0: not given; either target replaces the profile's whole target */
    double target_users;   /* 0: not given */
    double target_streams; /* 0: not given; open streams, for a profile with streams */
};

/* Nothing overridden. */
#define PROFILE_OVERRIDE_NONE                                                                      \
    {                                                                                              \
        0, 0, -1, -1, -1, 0, 0, 0                                                                  \
    }

/* Applies o over p, or changes nothing and returns -EINVAL with a message in err naming the
 * flag and what in the profile it conflicts with. Borrows both. */
SIZEUP_MUST_USE int profile_override_apply(const struct profile_override *o, struct profile *p,
                                           char *err);

#endif
