#include "operator/cache.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct entry *next;
    uint32_t hash;
    unsigned busy : 1;    /* a sweep of ours runs (or is queued) on it */
    unsigned running : 1; /* its status annotation says "running ..." */
    unsigned seen : 1;    /* observed since the last list began */
    unsigned pending : 1; /* a new sweep value arrived while busy */
    char *sweep;          /* owned, NULL when absent */
    char *last;           /* owned, NULL when absent */
    char *handled;        /* owned: the sweep value this process last finished */
    size_t nslen, namelen;
    char key[]; /* "ns\0name\0uid\0" */
};

struct cache {
    struct entry **buckets;
    size_t nbuckets;
    size_t count;
};

static uint32_t hash2(const char *ns, const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static const char *e_name(const struct entry *e)
{
    return e->key + e->nslen + 1;
}

static const char *e_uid(const struct entry *e)
{
    return e->key + e->nslen + 1 + e->namelen + 1;
}

int cache_new(cache_t **out)
{
    struct cache *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    c->nbuckets = 64;
    c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
    if (!c->buckets) {
        free(c);
        return -ENOMEM;
    }
    *out = c;
    return 0;
}

static void entry_free(struct entry *e)
{
    free(e->sweep);
    free(e->last);
    free(e->handled);
    free(e);
}

void cache_free(cache_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct entry *e = c->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            entry_free(e);
        }
    }
    free(c->buckets);
    free(c);
}

static struct entry **find_slot(const cache_t *c, const char *ns, const char *name, uint32_t h)
{
    struct entry **pp = &c->buckets[h & (c->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        struct entry *e = *pp;
        if (e->hash == h && strcmp(e->key, ns) == 0 && strcmp(e_name(e), name) == 0)
            return pp;
    }
    return pp;
}

static void grow(cache_t *c)
{
    size_t nb = c->nbuckets * 2;
    struct entry **b = calloc(nb, sizeof(*b));
    if (!b)
        return; /* a fuller table is slower, not wrong */
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct entry *e = c->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = nb;
}

static int str_eq(const char *a, const char *b)
{
    if (!a || !*a)
        return !b || !*b;
    return b && strcmp(a, b) == 0;
}

/* Replaces *slot with a copy of v (NULL or "" clears it). */
static int set_str(char **slot, const char *v)
{
    if (str_eq(*slot, v))
        return 0;
    char *dup = NULL;
    if (v && *v && !(dup = strdup(v)))
        return -ENOMEM;
    free(*slot);
    *slot = dup;
    return 0;
}

static int is_running(const char *status)
{
    return status && strncmp(status, "running", 7) == 0;
}

/* The action an idle (not busy) entry calls for. */
static enum cache_action idle_action(const struct entry *e)
{
    if (!e->sweep)
        return e->running && e->last && !str_eq(e->last, e->handled) ? CACHE_RECOVER : CACHE_NONE;
    if (!str_eq(e->sweep, e->last))
        return str_eq(e->sweep, e->handled) ? CACHE_NONE : CACHE_START;
    if (e->running && !str_eq(e->sweep, e->handled))
        return CACHE_RECOVER;
    return CACHE_NONE;
}

static void unlink_entry(cache_t *c, struct entry **pp)
{
    struct entry *e = *pp;
    *pp = e->next;
    entry_free(e);
    c->count--;
}

enum cache_action cache_observe(cache_t *c, const struct cache_obs *obs, int act, int *rc)
{
    uint32_t h = hash2(obs->ns, obs->name);
    struct entry **pp = find_slot(c, obs->ns, obs->name, h);
    struct entry *e = *pp;
    int interesting =
        (obs->sweep && *obs->sweep) || (obs->last && *obs->last) || is_running(obs->status);

    if (rc)
        *rc = 0;
    if (!e) {
        if (!interesting)
            return CACHE_NONE;
        size_t nl = strlen(obs->ns), ml = strlen(obs->name), ul = strlen(obs->uid);
        e = calloc(1, sizeof(*e) + nl + ml + ul + 3);
        if (!e)
            goto nomem;
        e->hash = h;
        e->nslen = nl;
        e->namelen = ml;
        memcpy(e->key, obs->ns, nl + 1);
        memcpy(e->key + nl + 1, obs->name, ml + 1);
        memcpy(e->key + nl + 1 + ml + 1, obs->uid, ul + 1);
        *pp = e;
        c->count++;
        if (c->count > c->nbuckets * 2)
            grow(c);
        pp = find_slot(c, obs->ns, obs->name, h);
    } else if (strcmp(e_uid(e), obs->uid) != 0 && !e->busy) {
        /* Deleted and re-created under the same name: a new Deployment, nothing carried over. */
        unlink_entry(c, pp);
        return cache_observe(c, obs, act, rc);
    }
    e->seen = 1;
    e->running = is_running(obs->status) ? 1 : 0;
    if (set_str(&e->sweep, obs->sweep) || set_str(&e->last, obs->last))
        goto nomem;

    if (e->busy) {
        if (!e->sweep)
            return CACHE_CANCEL;
        if (e->handled == NULL || !str_eq(e->sweep, e->handled))
            e->pending = !str_eq(e->sweep, e->last) ? 1 : e->pending;
        return CACHE_NONE;
    }
    enum cache_action a = idle_action(e);
    if (a == CACHE_NONE && !interesting && !e->handled) {
        unlink_entry(c, pp);
        return CACHE_NONE;
    }
    if (!act)
        return CACHE_NONE;
    if (a == CACHE_START || a == CACHE_RECOVER) {
        e->busy = 1;
        e->pending = 0;
    }
    return a;
nomem:
    if (rc)
        *rc = -ENOMEM;
    return CACHE_NONE;
}

enum cache_action cache_delete(cache_t *c, const char *ns, const char *name)
{
    struct entry **pp = find_slot(c, ns, name, hash2(ns, name));
    if (!*pp)
        return CACHE_NONE;
    if ((*pp)->busy) {
        /* Kept until the sweep ends, so the same name re-created meanwhile waits its turn. */
        free((*pp)->sweep);
        (*pp)->sweep = NULL;
        (*pp)->pending = 0;
        return CACHE_CANCEL;
    }
    unlink_entry(c, pp);
    return CACHE_NONE;
}

enum cache_action cache_job_done(cache_t *c, const char *ns, const char *name, const char *handled)
{
    struct entry **pp = find_slot(c, ns, name, hash2(ns, name));
    struct entry *e = *pp;
    if (!e)
        return CACHE_NONE;
    if (handled && *handled && set_str(&e->handled, handled) == 0) {
        /* Our own last write set last-sweep to the handled value, whatever the cache has seen. */
        set_str(&e->last, handled);
    }
    e->running = 0;
    e->busy = 0;
    if (e->pending && e->sweep && !str_eq(e->sweep, e->handled)) {
        e->pending = 0;
        e->busy = 1;
        return CACHE_START;
    }
    e->pending = 0;
    if (!e->sweep && !e->last)
        unlink_entry(c, pp);
    return CACHE_NONE;
}

void cache_list_begin(cache_t *c, const char *ns)
{
    for (size_t i = 0; i < c->nbuckets; i++)
        for (struct entry *e = c->buckets[i]; e; e = e->next)
            if (!ns || !*ns || strcmp(e->key, ns) == 0)
                e->seen = 0;
}

void cache_list_end(cache_t *c, const char *ns)
{
    for (size_t i = 0; i < c->nbuckets; i++) {
        struct entry **pp = &c->buckets[i];
        while (*pp) {
            if (!(*pp)->seen && !(*pp)->busy && (!ns || !*ns || strcmp((*pp)->key, ns) == 0))
                unlink_entry(c, pp);
            else
                pp = &(*pp)->next;
        }
    }
}

void cache_scan(cache_t *c, cache_action_fn fn, void *ctx)
{
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (struct entry *e = c->buckets[i]; e; e = e->next) {
            if (e->busy)
                continue;
            enum cache_action a = idle_action(e);
            if (a != CACHE_START && a != CACHE_RECOVER)
                continue;
            e->busy = 1;
            e->pending = 0;
            fn(ctx, a, e->key, e_name(e), e_uid(e));
        }
    }
}

void cache_clear_busy(cache_t *c)
{
    for (size_t i = 0; i < c->nbuckets; i++)
        for (struct entry *e = c->buckets[i]; e; e = e->next)
            e->busy = e->pending = 0;
}

size_t cache_count(const cache_t *c)
{
    return c->count;
}

int cache_busy(const cache_t *c, const char *ns, const char *name)
{
    struct entry **pp = find_slot(c, ns, name, hash2(ns, name));
    return *pp && (*pp)->busy;
}

size_t cache_bytes(const cache_t *c)
{
    size_t n = sizeof(*c) + c->nbuckets * sizeof(*c->buckets);
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (struct entry *e = c->buckets[i]; e; e = e->next) {
            n += sizeof(*e) + e->nslen + e->namelen + strlen(e_uid(e)) + 3;
            n += e->sweep ? strlen(e->sweep) + 1 : 0;
            n += e->last ? strlen(e->last) + 1 : 0;
            n += e->handled ? strlen(e->handled) + 1 : 0;
        }
    }
    return n;
}
