#ifndef SIZEUP_CORE_CLOCK_H
#define SIZEUP_CORE_CLOCK_H

/* The one monotonic clock and the one sleep of sizeup. Every duration, deadline, rate window
 * and timeout is measured on CLOCK_MONOTONIC, which no clock change (NTP, a person, a
 * suspended VM's resync) moves; wall time is only for the dates people read. No other file
 * reads the monotonic clock (scripts/check-structure.sh checks it).
 *
 * The readers and conversions are inline: the load engine reads the clock per request (on connect,
 * send and every response), and the call into another translation unit would cost on that hot path
 * what clock_gettime's vDSO saves. Each is a single vDSO read and integer arithmetic; none
 * can fail (CLOCK_MONOTONIC always exists on Linux). */

#include <stdint.h>
#include <time.h>

/* Nanoseconds on the monotonic clock (from an arbitrary start: compare, never print). */
static inline int64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The same in microseconds, milliseconds and (fractional) seconds. */
static inline int64_t clock_mono_us(void)
{
    return clock_mono_ns() / 1000;
}

static inline int64_t clock_mono_ms(void)
{
    return clock_mono_ns() / 1000000;
}

static inline double clock_mono_s(void)
{
    return (double)clock_mono_ns() / 1e9;
}

/* Nanoseconds of a monotonic timespec (clock_mono_ts's, or one built from clock_mono_ns). */
static inline int64_t clock_ts_ns(const struct timespec *ts)
{
    return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* The timespec of ns nanoseconds (ns >= 0). */
static inline struct timespec clock_ns_ts(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    return ts;
}

/* The monotonic time now as a timespec (a time zero that several runs share, load.h). */
static inline struct timespec clock_mono_ts(void)
{
    return clock_ns_ts(clock_mono_ns());
}

/* Sleeps us microseconds (nothing for us <= 0). Returns early when a signal handler runs, so
 * a loop around it sees its stop flag at once; callers loop on their own deadline. */
void clock_sleep_us(int64_t us);

#endif
