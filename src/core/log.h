#ifndef SIZEUP_CORE_LOG_H
#define SIZEUP_CORE_LOG_H

/* Structured logging: one line per event on stderr,
 *   ts=2026-11-29T19:50:00.123Z level=info event=sweep.start deployment=web variants=6
 * Callers pass an event name and key=value fields. A line is scrubbed of bearer tokens and
 * Authorization header values before it is written, as a second line of defence: callers must
 * never pass credentials in the first place. */

#include <stdarg.h>

enum log_level { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_OFF };

/* Sets the least severe level written (default LOG_INFO). Call once at start-up. */
void log_set_level(enum log_level level);

/* Parses "debug", "info", "warn", "error" or "off". Returns 0, or -EINVAL. */
int log_parse_level(const char *s, enum log_level *out /* OUT */);

/* Returns non-zero when a message at level would be written. */
int log_enabled(enum log_level level);

/* Writes one line: event is a dotted name, fmt formats the key=value fields (may be NULL). */
void log_write(enum log_level level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Replaces credentials in line (NUL-terminated, edited in place): the value after "Bearer ",
 * "Authorization:" and "token=" becomes "[redacted]" when it fits, else is blanked. */
void log_scrub(char *line);

#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)  log_write(LOG_INFO, __VA_ARGS__)
#define log_warn(...)  log_write(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)

#endif
