/* libFuzzer target: the advisor on arbitrary rows. Rows reach it from measurements and from a
 * resumed sweep's state.json, which a person can edit, so any figures within the ranges that
 * state.json's reader clamps to (finite, non-negative, -1 for unknown usage) must give a result
 * without undefined behaviour, with every text NUL-terminated, no "nan" or "inf" in a sentence,
 * and a recommendation (if any) that is a row showing the app's capacity.
 *
 * Input: one byte of options, then 16 bytes per row (at most VARIANT_MAX rows). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advisor.h"

#define ROW_BYTES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Variants of every shape the findings compare: sub-core, matched, oversubscribed, memory-only
 * and CPU-only pairs, and two specs of the same shape. */
static const char *const SPECS[] = {
    "1@0.5/512Mi", "1@1/512Mi", "2@1/1Gi", "2@2/1Gi",     "4@2/1Gi",     "4@4/2Gi",
    "1@1/256Mi",   "1@2/512Mi", "8@8/4Gi", "1@250m/64Mi", "3@1.5/768Mi", "2@2/2Gi",
    "16@4/1Gi",    "1@4/512Mi", "6@6/3Gi", "1@100m/16Mi",
};
#define NSPECS (sizeof(SPECS) / sizeof(SPECS[0]))

static uint16_t u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void check_text(const char *t)
{
    size_t len = strnlen(t, ADVISOR_TEXT_LEN);
    if (len >= ADVISOR_TEXT_LEN)
        abort();
    if (strstr(t, "nan") || strstr(t, "inf%") || strstr(t, "infx") || strstr(t, " inf "))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct advisor_row rows[VARIANT_MAX];
    static struct advice a;
    struct advisor_opts o;
    char err[ERR_LEN] = "";

    if (size < 1)
        return 0;
    size_t n = (size - 1) / ROW_BYTES;
    if (n > VARIANT_MAX)
        n = VARIANT_MAX;
    memset(&o, 0, sizeof(o));
    o.thresholds.healthy_p95_us = 100 * 1000;
    o.thresholds.healthy_errors = 0.01;
    o.thresholds.overloaded_p95_us = 500 * 1000;
    o.thresholds.overloaded_errors = 0.01;
    o.per_user_rps = 0.5;
    o.host_cores = (data[0] & 0x0f) * 0.5;
    o.target_rps = data[0] & 0x80 ? (double)((data[0] >> 4) & 0x07) * 700.0 : 0;
    o.limits_note = data[0] & 0x10 ? "no writable cgroup" : NULL;

    memset(rows, 0, sizeof(rows));
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = data + 1 + i * ROW_BYTES;
        struct advisor_row *r = &rows[i];
        if (variant_parse(SPECS[p[0] % NSPECS], &r->variant, NULL) != 0)
            abort();
        r->measured = p[1] & 1;
        r->fail = (enum platform_fail)((p[1] >> 1) % (PLATFORM_FAIL_CANCELLED + 1));
        if (!r->measured)
            memcpy(r->note, "killed", 7);
        r->flags = p[2] & SWEEP_FLAG_NOT_CAPACITY;
        /* Bit 7: tiny throughputs, where a division by one could overflow. */
        r->throughput_rps = u16(p + 3) * (p[1] & 0x80 ? 1e-300 : 0.5);
        r->p95_us = (uint64_t)u16(p + 5) * 1000;
        r->p50_us = r->p95_us / 2;
        r->p99_us = r->p95_us * 2;
        r->error_rate = p[7] / 255.0;
        r->cpu_cores_used = u16(p + 8) == 0xffff ? -1 : u16(p + 8) / 1000.0;
        r->peak_memory_bytes = u16(p + 10) == 0xffff ? -1 : (int64_t)u16(p + 10) << 20;
        r->requests = u16(p + 12);
        r->gen_cores = p[14] == 0xff ? -1 : p[14] / 100.0;
        r->host_other_cores = p[15] == 0xff ? -1 : p[15] / 100.0;
    }
    if (advisor_run(rows, n, &o, &a, err) != 0)
        abort();
    if (a.nfindings > ADVISOR_MAX_FINDINGS)
        abort();
    for (size_t i = 0; i < a.nfindings; i++)
        check_text(a.findings[i]);
    check_text(a.why);
    check_text(a.requests_note);
    check_text(a.cores_per_worker.text);
    check_text(a.memory_per_worker.text);
    check_text(a.max_workers.text);
    if (a.recommended >= (int)n || a.recommended < -1)
        abort();
    if (a.recommended >= 0 && (!rows[a.recommended].measured || !a.rows[a.recommended].capacity))
        abort();
    if (rule_check(&a.rule, err) != 0)
        abort();
    return 0;
}
