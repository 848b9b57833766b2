#ifndef SIZEUP_TESTS_UNIT_SWEEP_FIXTURE_H
#define SIZEUP_TESTS_UNIT_SWEEP_FIXTURE_H

/* A measured sweep row for output tests (test_output.c, test_alloc_fail.c): a real load result
 * whose latencies spread over lat_us/2 .. lat_us*1.5, recorded in the total and round-robin in
 * every request name, at rps for 10 s, with usage figures that follow the CPU limit; a the
 * advisor row made of it (fixture_row). Include after cmocka.h. */

#include <stdint.h>

#include "core/err.h"
#include "load/hist.h"
#include "load/result.h"
#include "sweep/runner.h"
#include "sweep/variant.h"
#include "advise/advisor.h"
#include "fixtures.h"

static void sweep_fixture_row(struct sweep_row *r, struct advisor_row *a, const char *spec,
                              double rps, uint64_t lat_us, const struct profile *p)
{
    char err[ERR_LEN];

    assert_int_equal(variant_parse(spec, &r->variant, err), 0);
    r->state = SWEEP_ROW_MEASURED;
    r->have_load = true;
    assert_int_equal(load_result_init(&r->load, p), 0);
    r->load.duration_s = 10;
    uint64_t n = (uint64_t)(rps * 10);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t us = lat_us / 2 + (k % 100) * lat_us / 100;
        struct load_stats *by = &r->load.by_name[k % r->load.nnames];
        hist_record(&r->load.total.latency, us);
        hist_record(&by->latency, us);
        by->requests++;
        by->responses++;
        by->status[200]++;
    }
    r->load.total.requests = r->load.total.responses = n;
    r->load.total.status[200] = n;
    r->load.tool_cpu_s = 1.0;
    r->load.threads = 2;
    r->load.users = 50;
    r->have_usage = true;
    r->usage.window_s = 10;
    r->usage.cpu_s = 10 * (double)r->variant.cpu_millicores / 1000.0 * 0.9;
    r->usage.peak_memory_bytes = (70LL << 20) * r->variant.workers;
    r->gen_cores = 0.1;

    fixture_row(a, spec, load_stats_throughput(&r->load.total, r->load.duration_s),
                hist_percentile(&r->load.total.latency, 50),
                hist_percentile(&r->load.total.latency, 95),
                hist_percentile(&r->load.total.latency, 99), n);
    a->cpu_cores_used = r->usage.cpu_s / r->usage.window_s;
    a->peak_memory_bytes = r->usage.peak_memory_bytes;
    a->gen_cores = r->gen_cores;
}

#endif
