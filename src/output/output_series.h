#ifndef SIZEUP_OUTPUT_OUTPUT_SERIES_H
#define SIZEUP_OUTPUT_OUTPUT_SERIES_H

#include "core/err.h"

/* report.html's section of numbers over time: each variant's series (its measured window, or
 * its capacity search's steps in order) drawn with the load layer's charts. */

#include <stdio.h>

#include "output/output.h"

/* Writes the section for every row of d->sweep that has a series; nothing without a sweep.
 * Returns 0 or -EIO. Borrows d. */
SIZEUP_MUST_USE int output_html_series(FILE *f, const struct output_doc *d, char *err);

#endif
