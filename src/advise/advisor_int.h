#ifndef SIZEUP_ADVISE_ADVISOR_INTERNAL_H
#define SIZEUP_ADVISE_ADVISOR_INTERNAL_H

/* Shared by the advisor's files, and by nothing else: advisor.c (verdicts, recommendation,
 * values, the run), advisor_rule.c (the auto-sizing rule's fit), advisor_findings.c (the
 * findings), advisor_streams.c (the findings on streams), packing.c, availability.c and
 * advise.c (the answer composed). The functions below are defined in advisor_util.c, below all
 * of them, unless a comment names another file. */

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fmt.h"
#include "core/quantity.h"
#include "core/text.h"
#include "advise/advisor.h"

/* A fraction as the whole percentage a sentence names, PCT(ADVISOR_NOISE) = 5. Rounded, so a
 * band's edge is the number printed (0.85 * 100 is 85.00000000000001 in binary). */
#define PCT(fraction) round((fraction)*100.0)

/* Appends a formatted finding to a (dropped when the list is full, and logged; cut with "..."
 * when long, and counted in a->findings_cut). */
__attribute__((format(printf, 2, 3))) void advisor__finding(struct advice *a, const char *fmt, ...);

/* A list of variants inside one finding ("a did 10 req/s; b did 12 req/s; and 3 more"): items
 * are added while the list has room, the rest only counted, so a finding that lists every row of
 * a long sweep stays whole and says how many it does not name (each is in the table and
 * results.json). ADVISOR_LIST_LEN leaves the sentence around the list the other half of
 * ADVISOR_TEXT_LEN; ADVISOR_LIST_TAIL is kept for the count. Zero-initialize with a separator:
 * struct advisor_list l = {.sep = "; "}. */
#define ADVISOR_LIST_LEN  (ADVISOR_TEXT_LEN / 2)
#define ADVISOR_LIST_TAIL 48
struct advisor_list {
    const char *sep; /* between items: "; " or ", " */
    char text[ADVISOR_LIST_LEN];
    unsigned named, more;
};

/* Adds one formatted item to l, or counts it when it does not fit (then every later item is
 * counted too, so the named ones are the first). */
__attribute__((format(printf, 2, 3))) void advisor__list_add(struct advisor_list *l,
                                                             const char *fmt, ...);

/* l's text with the count of the items it has no room for ("; and 3 more (each in the table)");
 * returns l->text. */
const char *advisor__list_end(struct advisor_list *l);

/* Whether every sentence of a is whole: 0, or -ENOSPC naming the first finding or text buffer
 * that was cut (text_full) with err. Run once, when the answer is composed. */
SIZEUP_MUST_USE int advisor__check_text(const struct advice *a, char *err);

/* Appends the findings on a stream-capacity sweep (advisor_streams.c): the binding limit per
 * variant, the fan-out cost per extra stream, where delivery latency bends. */
void advisor__find_streams(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                           struct advice *a);

/* Fits a->rule's three constants and their derivations from rows[0..n) (advisor_rule.c). a->rows
 * and a->rule (the default rule) must be filled. */
void advisor__fit_rule(const struct advisor_row *rows, size_t n, struct advice *a);

/* Appends the findings for rows[0..n) to a (advisor_findings.c); a->rows and a->rule must be
 * filled. */
void advisor__find(const struct advisor_row *rows, size_t n, const struct advisor_opts *o,
                   struct advice *a);

static inline double cores_of(const struct advisor_row *r)
{
    return variant_cores(&r->variant);
}

static inline const char *cores_txt(const struct advisor_row *r, char buf[QTY_LEN])
{
    return qty_format_cores(r->variant.cpu_millicores, buf);
}

static inline const char *mem_txt(int64_t bytes, char buf[QTY_LEN])
{
    return qty_format_memory(bytes, buf);
}

/* A percentage change "-57%" / "+12%" from a to b. */
static inline double pct(double from, double to)
{
    return from > 0 ? (to / from - 1.0) * 100.0 : 0.0;
}

/* pct() as a sentence shows it (whole percent). Bands compare this figure, not the unrounded
 * one, so a word never contradicts the number printed beside it (-5.3% shows as -5%, which is
 * within a 5% band, and is classified so). */
static inline double shown_pct(double from, double to)
{
    return round(pct(from, to));
}

static inline bool usable(const struct advisor_row *rows, const struct advice *a, size_t i)
{
    return rows[i].measured && a->rows[i].capacity;
}

#endif
