#include "operator/progress_auth.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>
#include <openssl/evp.h>

#include "core/clock.h"

#define CACHE_SLOTS   32
#define TOKEN_MAX     8192
#define PROGRESS_URL  "/progress"
#define TOKENREVIEWS  "/apis/authentication.k8s.io/v1/tokenreviews"
#define ACCESSREVIEWS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

struct cache_entry {
    unsigned char hash[32];
    int rc;
    int64_t until_ms; /* 0: empty */
    char why[128];
};

struct progress_auth {
    kube_config_t *cfg;
    kube_client_t *client; /* made on first use, on the thread that checks */
    struct cache_entry cache[CACHE_SLOTS];
    size_t next;
};

int progress_auth_new(kube_config_t *cfg, progress_auth_t **out, char *err)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return err_set(err, -ENOMEM, "out of memory");
    (*out)->cfg = cfg;
    return 0;
}

void progress_auth_free(progress_auth_t *a)
{
    if (!a)
        return;
    kube_client_free(a->client);
    explicit_bzero(a->cache, sizeof(a->cache));
    free(a);
}

/* TokenReview: the identity behind token, as a SubjectAccessReview spec's user fields. */
static int review_token(progress_auth_t *a, const char *token, cJSON *spec, char *err)
{
    cJSON *req = cJSON_CreateObject(), *rs, *resp = NULL;
    char *body = NULL;
    int rc = -ENOMEM;

    if (!req || !cJSON_AddStringToObject(req, "apiVersion", "authentication.k8s.io/v1") ||
        !cJSON_AddStringToObject(req, "kind", "TokenReview") ||
        !(rs = cJSON_AddObjectToObject(req, "spec")) ||
        !cJSON_AddStringToObject(rs, "token", token) || !(body = cJSON_PrintUnformatted(req))) {
        err_set(err, rc, "out of memory");
        goto out;
    }
    rc = kube_request(a->client, "POST", TOKENREVIEWS, body, NULL, 0, &resp, err);
    if (rc) {
        /* The API server's refusal is the operator's problem (its RBAC), not the reader's:
         * never cached, never a 401 or 403. */
        rc = err_wrap(err, -EIO, "TokenReview");
        goto out;
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(resp, "status");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(st, "user");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(user, "username");
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "authenticated")) ||
        !cJSON_IsString(name)) {
        rc = err_set(err, -EPERM, "token not authenticated");
        goto out;
    }
    rc = -ENOMEM;
    if (!cJSON_AddStringToObject(spec, "user", name->valuestring))
        goto out;
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(user, "uid");
    if (cJSON_IsString(uid) && !cJSON_AddStringToObject(spec, "uid", uid->valuestring))
        goto out;
    const char *const keys[] = {"groups", "extra"};
    for (size_t i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(user, keys[i]);
        cJSON *copy = v ? cJSON_Duplicate(v, 1) : NULL;
        if (v && (!copy || !cJSON_AddItemToObject(spec, keys[i], copy))) {
            cJSON_Delete(copy);
            goto out;
        }
    }
    rc = 0;
out:
    if (body) {
        explicit_bzero(body, strlen(body)); /* it held the token */
        free(body);
    }
    cJSON_Delete(req);
    cJSON_Delete(resp);
    return rc;
}

/* SubjectAccessReview: may the identity in spec `get` the non-resource URL /progress? */
static int review_access(progress_auth_t *a, cJSON *review, cJSON *spec, char *err)
{
    cJSON *nr, *resp = NULL;
    char *body = NULL;
    int rc = -ENOMEM;

    if (!cJSON_AddStringToObject(review, "apiVersion", "authorization.k8s.io/v1") ||
        !cJSON_AddStringToObject(review, "kind", "SubjectAccessReview") ||
        !(nr = cJSON_AddObjectToObject(spec, "nonResourceAttributes")) ||
        !cJSON_AddStringToObject(nr, "path", PROGRESS_URL) ||
        !cJSON_AddStringToObject(nr, "verb", "get") || !(body = cJSON_PrintUnformatted(review)))
        return err_set(err, rc, "out of memory");
    rc = kube_request(a->client, "POST", ACCESSREVIEWS, body, NULL, 0, &resp, err);
    free(body);
    if (rc)
        return err_wrap(err, -EIO, "SubjectAccessReview");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(resp, "status");
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(spec, "user");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(st, "allowed")))
        rc = 0;
    else
        rc = err_set(err, -EACCES, "user %.64s may not get %s", user->valuestring, PROGRESS_URL);
    cJSON_Delete(resp);
    return rc;
}

static struct cache_entry *cache_find(progress_auth_t *a, const unsigned char *h, int64_t now)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        if (a->cache[i].until_ms > now && memcmp(a->cache[i].hash, h, 32) == 0)
            return &a->cache[i];
    return NULL;
}

int progress_auth_check(void *ud, const char *token, char *err)
{
    progress_auth_t *a = ud;
    unsigned char h[32];
    unsigned int hl = 0;
    int64_t now = clock_mono_ms();
    int rc;

    size_t tl = strnlen(token, TOKEN_MAX + 1);
    if (tl == 0 || tl > TOKEN_MAX)
        return err_set(err, -EPERM, "token empty or too long");
    if (!EVP_Digest(token, tl, h, &hl, EVP_sha256(), NULL) || hl != 32)
        return err_set(err, -EIO, "cannot hash the token");
    struct cache_entry *c = cache_find(a, h, now);
    if (c) {
        if (c->rc)
            err_set(err, c->rc, "%s", c->why);
        return c->rc;
    }
    if (!a->client) {
        struct kube_client_opts co = {0};
        co.request_timeout_ms = PROGRESS_AUTH_TIMEOUT_MS;
        co.connect_timeout_ms = PROGRESS_AUTH_TIMEOUT_MS;
        co.max_attempts = 1;
        co.user_agent = "sizeup-operator";
        if ((rc = kube_client_new(a->cfg, &co, &a->client, err)))
            return rc;
    }
    cJSON *review = cJSON_CreateObject();
    cJSON *spec = review ? cJSON_AddObjectToObject(review, "spec") : NULL;
    if (!spec)
        rc = err_set(err, -ENOMEM, "out of memory");
    else if (!(rc = review_token(a, token, spec, err)))
        rc = review_access(a, review, spec, err);
    cJSON_Delete(review);
    /* Only answers are cached: a failed review (API server down) is asked again next time. */
    if (rc == 0 || rc == -EPERM || rc == -EACCES) {
        c = &a->cache[a->next++ % CACHE_SLOTS];
        memcpy(c->hash, h, 32);
        c->rc = rc;
        c->until_ms = now + 1000LL * (rc == 0 ? PROGRESS_AUTH_ALLOW_S : PROGRESS_AUTH_DENY_S);
        snprintf(c->why, sizeof(c->why), "%s", rc ? err : "");
    }
    return rc;
}
