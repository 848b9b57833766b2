#ifndef SIZEUP_TESTS_UNIT_STUB_PLATFORM_H
#define SIZEUP_TESTS_UNIT_STUB_PLATFORM_H

/* The stub platform of the sweep runner's unit tests (test_runner.c, test_load_source.c): every
 * variant is applied and ready at once and serves at http://127.0.0.1:9, limits are enforced,
 * and each measured window's usage comes from the test (usage_end) or, without one, is 1 s at
 * 0.1 cores and a 1 MiB peak with the host's other work unknown. Use it as
 * `struct platform pl = {&stub_platform_ops, &sp}` with sp a struct stub_platform. */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/fmt.h"
#include "sweep/platform.h"

struct stub_platform {
    int64_t host_millicores; /* facts: the host's CPU */
    int64_t usage_window_us; /* facts: the platform's first guess at its usage window; 0: none */
    /* Fills one measured window's usage (out is zeroed first); NULL: the default window. */
    void (*usage_end)(void *ud, struct platform_usage *out);
    void *ud;
};

static int stub_platform_facts(void *self, struct platform_facts *out, char *err)
{
    const struct stub_platform *sp = self;
    (void)err;
    memset(out, 0, sizeof(*out));
    out->host_millicores = sp->host_millicores;
    out->limits_enforced = true;
    out->usage_window_us = sp->usage_window_us;
    return 0;
}
static int stub_platform_ok(void *self, char *err)
{
    (void)self, (void)err;
    return 0;
}
static int stub_platform_apply(void *self, const struct variant *v, struct platform_failure *f,
                               char *err)
{
    (void)self, (void)v, (void)f, (void)err;
    return 0;
}
static int stub_platform_wait(void *self, int64_t t, volatile sig_atomic_t *stop,
                              struct platform_failure *f, char *err)
{
    (void)self, (void)t, (void)stop, (void)f, (void)err;
    return 0;
}
static int stub_platform_url(void *self, char *buf, size_t len, char *err)
{
    (void)self, (void)err;
    snprintf(buf, len, "http://127.0.0.1:9");
    return 0;
}
static int stub_platform_usage_end(void *self, struct platform_usage *out, char *err)
{
    struct stub_platform *sp = self;
    (void)err;
    memset(out, 0, sizeof(*out));
    if (sp->usage_end) {
        sp->usage_end(sp->ud, out);
        return 0;
    }
    out->window_s = 1;
    out->cpu_s = 0.1;
    out->peak_memory_bytes = FMT_MIB;
    out->host_other_cores = -1;
    return 0;
}
static void stub_platform_free(void *self)
{
    (void)self;
}
static const struct platform_ops stub_platform_ops = {
    .name = "stub",
    .facts = stub_platform_facts,
    .prepare = stub_platform_ok,
    .apply = stub_platform_apply,
    .wait_ready = stub_platform_wait,
    .target_url = stub_platform_url,
    .usage_begin = stub_platform_ok,
    .usage_end = stub_platform_usage_end,
    .stop_variant = stub_platform_ok,
    .restore = stub_platform_ok,
    .free = stub_platform_free,
};

#endif
