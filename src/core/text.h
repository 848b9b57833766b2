#ifndef SIZEUP_CORE_TEXT_H
#define SIZEUP_CORE_TEXT_H

/* Sentences built piece by piece into fixed buffers (findings, derivations, the sizing's why). */

#include <stddef.h>

/* Appends the formatted text to buf (len bytes), keeping it NUL-terminated; what does not fit is
 * cut. A buffer already full is left as it is. */
__attribute__((format(printf, 3, 4))) void text_catf(char *buf, size_t len, const char *fmt, ...);

#endif
