#ifndef SIZEUP_CORE_TEXT_H
#define SIZEUP_CORE_TEXT_H

/* Sentences built piece by piece into fixed buffers (findings, derivations, the sizing's why). */

#include <stdbool.h>
#include <stddef.h>

/* Appends the formatted text to buf (len bytes), keeping it NUL-terminated; what does not fit is
 * cut, and a cut leaves buf full (text_full), so that no cut passes unseen: the sentence's owner
 * checks its buffers once when it is done (the advisor's: advisor__check_text) and fails with an
 * error, as a bounded buffer must. A buffer already full is left as it is. */
__attribute__((format(printf, 3, 4))) void text_catf(char *buf, size_t len, const char *fmt, ...);

/* Whether buf (len bytes) is full: its text reaches the last byte before the NUL, which is what
 * a cut by text_catf or snprintf leaves. A text that fits to the last byte counts as cut too:
 * one byte of room is the price of telling them apart without a flag. */
bool text_full(const char *buf, size_t len);

#endif
