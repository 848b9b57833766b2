/* Advisor rows for the unit tests, built one way (test_advisor.c, test_resweep.c, test_output.c
 * and test_operator_job.c used to fill them field by field, each its own way). Include after
 * <cmocka.h>: a spec that does not parse fails the test. */
#ifndef SIZEUP_TESTS_UNIT_FIXTURES_H
#define SIZEUP_TESTS_UNIT_FIXTURES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "advise/advisor.h"
#include "core/err.h"
#include "sweep/variant.h"

/* Fills *r entirely: a measured row of the variant spec with throughput rps, the latencies
 * (microseconds) and the request count given; every usage figure unknown (-1), no error, no
 * flag, no failure, no capacity. Tests set any other field afterwards. */
static inline void fixture_row(struct advisor_row *r, const char *spec, double rps, uint64_t p50_us,
                               uint64_t p95_us, uint64_t p99_us, uint64_t requests)
{
    char err[ERR_LEN];

    memset(r, 0, sizeof(*r));
    assert_int_equal(variant_parse(spec, &r->variant, err), 0);
    r->measured = true;
    r->throughput_rps = rps;
    r->p50_us = p50_us;
    r->p95_us = p95_us;
    r->p99_us = p99_us;
    r->requests = requests;
    r->cpu_cores_used = -1;
    r->peak_memory_bytes = -1;
    r->gen_cores = -1;
    r->host_other_cores = -1;
}

/* fixture_row() for a row the runner could not measure: *r is the variant spec, not measured,
 * failed with kind fail and the note given (borrowed, copied). */
static inline void fixture_failed_row(struct advisor_row *r, const char *spec,
                                      enum platform_fail fail, const char *note)
{
    fixture_row(r, spec, 0, 0, 0, 0, 0);
    r->measured = false;
    r->fail = fail;
    snprintf(r->note, sizeof(r->note), "%s", note);
}

#endif
