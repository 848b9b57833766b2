/* The advisor's helpers every finding goes through (advisor_int.h): a finding, a list of
 * variants inside one, and the check that no sentence was cut. Below the advisor's files that
 * call them (advisor.c, advisor_findings.c, advisor_streams.c, packing.c, advise.c,
 * availability.c), so that none of them calls back into another's entry file. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor_int.h"
#include "core/log.h"

/* Appends a formatted finding. ADVISOR_MAX_FINDINGS leaves room for every kind at once; should
 * the list still be full, the finding is logged (never dropped unsaid) and the first ones, the
 * important ones, stay. A finding too long for its buffer is counted in a->findings_cut, which
 * advisor__check_text turns into the answer's error. */
__attribute__((format(printf, 2, 3))) void advisor__finding(struct advice *a, const char *fmt, ...)
{
    va_list ap;
    char *f;
    int len;

    if (a->nfindings >= ADVISOR_MAX_FINDINGS) {
        char dropped[ADVISOR_TEXT_LEN];
        va_start(ap, fmt);
        vsnprintf(dropped, sizeof(dropped), fmt, ap);
        va_end(ap);
        log_warn("advisor.finding_dropped", "max=%d text=\"%.200s\"", ADVISOR_MAX_FINDINGS,
                 dropped);
        return;
    }
    f = a->findings[a->nfindings];
    va_start(ap, fmt);
    len = vsnprintf(f, ADVISOR_TEXT_LEN, fmt, ap);
    va_end(ap);
    if (len >= ADVISOR_TEXT_LEN) {
        memcpy(f + ADVISOR_TEXT_LEN - 4, "...", 4);
        a->findings_cut++;
    }
    a->nfindings++;
}

void advisor__list_add(struct advisor_list *l, const char *fmt, ...)
{
    char item[ADVISOR_TEXT_LEN];
    va_list ap;

    va_start(ap, fmt);
    int len = vsnprintf(item, sizeof(item), fmt, ap);
    va_end(ap);
    size_t used = strlen(l->text), sep = l->named ? strlen(l->sep) : 0;
    if (l->more || len < 0 || len >= (int)sizeof(item) ||
        used + sep + (size_t)len + ADVISOR_LIST_TAIL >= sizeof(l->text)) {
        l->more++;
        return;
    }
    snprintf(l->text + used, sizeof(l->text) - used, "%s%s", l->named ? l->sep : "", item);
    l->named++;
}

const char *advisor__list_end(struct advisor_list *l)
{
    size_t used = strlen(l->text);

    /* ADVISOR_LIST_TAIL was kept free for this. */
    if (l->more)
        snprintf(l->text + used, sizeof(l->text) - used, "%sand %u more (each in the table)",
                 l->named ? l->sep : "", l->more);
    return l->text;
}

/* The name of the first of a's sentences that is full (text_full: cut, or at the edge), or
 * NULL. */
static const char *first_full(const struct advice *a)
{
    const struct sizing *s = &a->sizing;
    const struct {
        const char *name, *text;
        size_t len;
    } texts[] = {
#define TEXT(name, field) {name, field, sizeof(field)}
        TEXT("why", a->why),
        TEXT("requests note", a->requests_note),
        TEXT("cores-per-worker derivation", a->cores_per_worker.text),
        TEXT("memory-per-worker derivation", a->memory_per_worker.text),
        TEXT("max-workers derivation", a->max_workers.text),
        TEXT("availability plan", a->availability.text),
        TEXT("sizing's why", s->why),
        TEXT("replicas note", s->replicas_note),
        TEXT("linear-count reason", s->curve_skipped),
        TEXT("dearer-than-runner-up sentence", s->dearer),
        TEXT("scale-out assumption", s->assumption),
        TEXT("sizing's requests note", s->requests_note),
        TEXT("memory-per-stream note", s->memory_note),
        TEXT("curve's why", s->curve.why),
        TEXT("autoscaler note", s->hpa.note),
        TEXT("scale-up lag note", s->hpa.lag_note),
#undef TEXT
    };

    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        if (text_full(texts[i].text, texts[i].len))
            return texts[i].name;
    return NULL;
}

int advisor__check_text(const struct advice *a, char *err)
{
    const char *name = first_full(a);

    if (a->findings_cut)
        return err_set(err, -ENOSPC,
                       "%u finding%s did not fit %d bytes: the answer would have been cut",
                       a->findings_cut, a->findings_cut == 1 ? "" : "s", ADVISOR_TEXT_LEN);
    if (name)
        return err_set(err, -ENOSPC,
                       "the %s did not fit its buffer: the answer would have been cut", name);
    return 0;
}
