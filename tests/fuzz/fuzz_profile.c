/* libFuzzer target: the YAML profile loader on arbitrary bytes. It must never crash or leak,
 * and whatever it accepts must hold the invariants the load engine relies on. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct profile *p)
{
    if (p->nrequests < 1 || p->nrequests > PROFILE_MAX_REQUESTS || p->nstages > PROFILE_MAX_STAGES)
        abort();
    if (p->nstages == 0 && !p->users == !(p->rate > 0))
        abort(); /* exactly one of closed and open loop */
    if (p->duration_us <= 0 || p->timeout_us <= 0 || p->warmup_us < 0)
        abort();
    if (p->thresholds.healthy_p95_us > p->thresholds.overloaded_p95_us)
        abort();
    if (p->availability.given &&
        (p->availability.zones < 1 || p->availability.zones > PROFILE_MAX_ZONES ||
         p->availability.drain > PROFILE_MAX_DRAIN))
        abort();
    if (p->nnodes > PROFILE_MAX_NODE_TYPES)
        abort();
    for (size_t i = 0; i < p->nnodes; i++) {
        const struct profile_node_type *n = &p->nodes[i];
        if (!n->name[0] || n->cpu_m <= 0 || n->memory <= 0 || n->price < 0 ||
            n->reserved_cpu_m < 0 || n->reserved_cpu_m >= n->cpu_m || n->reserved_memory < 0 ||
            n->reserved_memory >= n->memory)
            abort();
    }
    for (size_t i = 0; i < p->nrequests; i++) {
        const struct profile_request *r = &p->requests[i];
        if (!r->name || !r->method || !r->path || r->path[0] != '/' || r->weight == 0)
            abort();
        if (strpbrk(r->path, " \r\n") || strpbrk(r->method, " \r\n/:"))
            abort();
        for (size_t h = 0; h < r->nheaders; h++) {
            if (strpbrk(r->headers[h].name, " \r\n:") || strpbrk(r->headers[h].value, "\r\n"))
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct profile p;
    char err[ERR_LEN];

    if (profile_load_buffer((const char *)data, size, "fuzz.yaml", &p, err) == 0)
        check(&p);
    else if (p.requests || p.source || p.stages)
        abort(); /* a failed load leaves the profile empty */
    profile_free(&p);
    return 0;
}
