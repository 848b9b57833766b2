/* Exponential backoff with jitter (the sleep that waits it out, polling the client's stop
 * callback, is the client's: kube_sleep_ms in client.c). */

#include "kube/kube_int.h"

/* splitmix64: a tiny, well-mixed generator; jitter needs spread, not secrecy. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int kube_backoff_init(struct kube_backoff *b, unsigned base_ms, unsigned max_ms, uint64_t seed)
{
    b->base_ms = base_ms ? base_ms : 1;
    b->max_ms = max_ms >= b->base_ms ? max_ms : b->base_ms;
    b->attempt = 0;
    b->rng = seed;
    return 0;
}

unsigned kube_backoff_next(struct kube_backoff *b)
{
    unsigned long long d = b->base_ms;
    for (unsigned i = 0; i < b->attempt && d < b->max_ms; i++)
        d *= 2;
    if (d > b->max_ms)
        d = b->max_ms;
    if (b->attempt < 64)
        b->attempt++;
    /* Uniform in [d/2, d]: never zero (no hot loop), and two clients that failed together
     * spread out. */
    unsigned long long half = d / 2 ? d / 2 : 1;
    unsigned long long span = d - half + 1;
    return (unsigned)(half + next_rand(&b->rng) % span);
}

void kube_backoff_reset(struct kube_backoff *b)
{
    b->attempt = 0;
}
