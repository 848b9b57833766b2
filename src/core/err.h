#ifndef SIZEUP_CORE_ERR_H
#define SIZEUP_CORE_ERR_H

/* Error reporting shared by every layer: functions that can fail return 0 or a negative errno
 * value and, when the caller passes a buffer, describe the failure in it. */

#include <stddef.h>

#define ERR_LEN 256

/* On the prototype of a function that returns an error code: a caller that drops the result
 * fails to compile (-Werror). A cast to void does not silence it (gcc): log the error or
 * propagate it. */
#define SIZEUP_MUST_USE __attribute__((warn_unused_result))

/* Writes the formatted message into err (ERR_LEN bytes, may be NULL) and returns code, so a
 * failure path reads `return err_set(err, -EINVAL, "bad token '%s'", tok);`. */
int err_set(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes the message already in err with the formatted text and ": ". Returns code. */
int err_wrap(char *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Thread-safe strerror: writes the description of errnum (positive or negative) into buf and
 * returns buf. */
const char *err_str(int errnum, char *buf, size_t len);

#endif
