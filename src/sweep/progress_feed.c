#include "sweep/progress_feed.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "core/clock.h"

struct hist_point {
    double t; /* seconds since the sweep began */
    double rps, p95_ms;
    uint64_t errors; /* failed requests in the current phase so far */
};

struct slot {
    bool used;
    char name[PROGRESS_NAME_MAX];
    double t0; /* monotonic seconds at open */
    struct sweep_progress p;
    char variant[VARIANT_LABEL_LEN];
    char step_what[16];
    struct hist_point hist[PROGRESS_HISTORY]; /* a ring */
    size_t nhist, head;
    double last_hist_t;
};

struct progress_feed {
    pthread_mutex_t mu;
    uint64_t seq; /* bumped by every update: the server sends only what changed */
    struct slot slots[PROGRESS_MAX_SWEEPS];
};

int progress_feed_new(progress_feed_t **out)
{
    struct progress_feed *f = calloc(1, sizeof(*f));
    *out = NULL;
    if (!f)
        return -ENOMEM;
    pthread_mutex_init(&f->mu, NULL);
    *out = f;
    return 0;
}

void progress_feed_free(progress_feed_t *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->mu);
    free(f);
}

int progress_feed_open(progress_feed_t *f, const char *name)
{
    int slot = -ENOSPC;
    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < PROGRESS_MAX_SWEEPS; i++) {
        struct slot *s = &f->slots[i];
        if (s->used)
            continue;
        memset(s, 0, sizeof(*s));
        s->used = true;
        snprintf(s->name, sizeof(s->name), "%s", name ? name : "");
        s->t0 = clock_mono_s();
        s->last_hist_t = -1;
        f->seq++;
        slot = i;
        break;
    }
    pthread_mutex_unlock(&f->mu);
    return slot;
}

void progress_feed_update(progress_feed_t *f, int slot, const struct sweep_progress *p)
{
    if (!f || slot < 0 || slot >= PROGRESS_MAX_SWEEPS)
        return;
    double now = clock_mono_s();
    pthread_mutex_lock(&f->mu);
    struct slot *s = &f->slots[slot];
    s->p = *p;
    /* The pointers of a progress snapshot live only for the call: keep copies. */
    snprintf(s->variant, sizeof(s->variant), "%s", p->variant ? p->variant->label : "");
    snprintf(s->step_what, sizeof(s->step_what), "%s", p->step_what ? p->step_what : "");
    s->p.variant = NULL;
    s->p.step_what = NULL;
    double t = now - s->t0;
    bool loading = p->phase == SWEEP_PHASE_WARMUP || p->phase == SWEEP_PHASE_MEASURE;
    if (loading && t - s->last_hist_t >= 1.0) {
        struct hist_point *h = &s->hist[(s->head + s->nhist) % PROGRESS_HISTORY];
        if (s->nhist == PROGRESS_HISTORY)
            s->head = (s->head + 1) % PROGRESS_HISTORY;
        else
            s->nhist++;
        h->t = t;
        h->rps = p->rps;
        h->p95_ms = (double)p->p95_us / 1e3;
        h->errors = p->failed;
        s->last_hist_t = t;
    }
    f->seq++;
    pthread_mutex_unlock(&f->mu);
}

void progress_feed_close(progress_feed_t *f, int slot)
{
    if (!f || slot < 0 || slot >= PROGRESS_MAX_SWEEPS)
        return;
    pthread_mutex_lock(&f->mu);
    f->slots[slot].used = false;
    f->seq++;
    pthread_mutex_unlock(&f->mu);
}

static double r3(double v)
{
    return isfinite(v) ? round(v * 1000) / 1000 : 0;
}

static bool slot_json(cJSON *arr, const struct slot *s, double now)
{
    const struct sweep_progress *p = &s->p;
    cJSON *o = cJSON_CreateObject(), *h;
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return false;
    }
    double er = p->requests ? (double)p->failed / (double)p->requests : 0;
    bool ok = cJSON_AddStringToObject(o, "name", s->name) &&
              cJSON_AddStringToObject(o, "phase", sweep_phase_name(p->phase)) &&
              cJSON_AddStringToObject(o, "variant", s->variant) &&
              cJSON_AddNumberToObject(o, "index", (double)p->index + (p->n ? 1 : 0)) &&
              cJSON_AddNumberToObject(o, "n", (double)p->n) &&
              cJSON_AddNumberToObject(o, "step", p->step) &&
              cJSON_AddStringToObject(o, "step_what", s->step_what) &&
              cJSON_AddNumberToObject(o, "offered_rps", r3(p->offered_rps)) &&
              cJSON_AddNumberToObject(o, "rps", r3(p->rps)) &&
              cJSON_AddNumberToObject(o, "p95_ms", r3((double)p->p95_us / 1e3)) &&
              cJSON_AddNumberToObject(o, "requests", (double)p->requests) &&
              cJSON_AddNumberToObject(o, "errors", (double)p->failed) &&
              cJSON_AddNumberToObject(o, "error_rate", r3(er * 1e3) / 1e3) &&
              cJSON_AddNumberToObject(o, "streams", (double)p->streams_open) &&
              cJSON_AddNumberToObject(o, "elapsed_s", r3(now - s->t0)) &&
              cJSON_AddNumberToObject(o, "eta_s", r3(p->eta_s)) &&
              (h = cJSON_AddArrayToObject(o, "history"));
    for (size_t i = 0; ok && i < s->nhist; i++) {
        const struct hist_point *hp = &s->hist[(s->head + i) % PROGRESS_HISTORY];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(h, e);
        if (!ok) {
            cJSON_Delete(e);
            break;
        }
        ok = cJSON_AddNumberToObject(e, "t", r3(hp->t)) &&
             cJSON_AddNumberToObject(e, "rps", r3(hp->rps)) &&
             cJSON_AddNumberToObject(e, "p95_ms", r3(hp->p95_ms)) &&
             cJSON_AddNumberToObject(e, "errors", (double)hp->errors);
    }
    return ok;
}

int progress_feed_json(progress_feed_t *f, char **out, size_t *len)
{
    /* Copied under the lock, rendered outside it: a sweep waits for a memcpy at most. */
    struct slot *copy = malloc(sizeof(f->slots));
    cJSON *root = NULL, *arr;
    uint64_t seq;
    int rc = -ENOMEM;

    *out = NULL;
    *len = 0;
    if (!copy)
        return -ENOMEM;
    pthread_mutex_lock(&f->mu);
    memcpy(copy, f->slots, sizeof(f->slots));
    seq = f->seq;
    pthread_mutex_unlock(&f->mu);

    double now = clock_mono_s();
    root = cJSON_CreateObject();
    if (!root || !(arr = cJSON_AddArrayToObject(root, "sweeps")) ||
        !cJSON_AddNumberToObject(root, "seq", (double)seq))
        goto out;
    for (int i = 0; i < PROGRESS_MAX_SWEEPS; i++)
        if (copy[i].used && !slot_json(arr, &copy[i], now))
            goto out;
    *out = cJSON_PrintUnformatted(root);
    if (*out) {
        *len = strlen(*out);
        rc = 0;
    }
out:
    cJSON_Delete(root);
    free(copy);
    return rc;
}
