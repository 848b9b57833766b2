/* The one sleep (clock.h); the clock's readers are inline in the header. */

#include "core/clock.h"

#include <time.h>

void clock_sleep_us(int64_t us)
{
    if (us <= 0)
        return;
    struct timespec ts = clock_ns_ts(us * 1000);
    /* Interrupted by a signal: return early (see clock.h); the remainder is not slept. */
    nanosleep(&ts, NULL);
}
