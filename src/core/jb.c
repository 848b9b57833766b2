#include "core/jb.h"

#include <errno.h>

cJSON *jb_new(struct jb *b)
{
    cJSON *o = b->failed ? NULL : cJSON_CreateObject();
    if (!o)
        b->failed = true;
    return o;
}

/* Adds item under key (or appends it, key NULL); deletes item when that fails. */
static cJSON *add(struct jb *b, cJSON *parent, const char *key, cJSON *item)
{
    bool ok;

    if (b->failed || !parent || !item) {
        b->failed = true;
        cJSON_Delete(item);
        return NULL;
    }
    ok = key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
    if (!ok) {
        b->failed = true;
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

/* The item an Add would make, or NULL when a failure is already recorded (nothing allocated). */
#define JB_MAKE(b, expr) ((b)->failed ? NULL : (expr))

cJSON *jb_obj(struct jb *b, cJSON *parent, const char *key)
{
    return add(b, parent, key, JB_MAKE(b, cJSON_CreateObject()));
}

cJSON *jb_arr(struct jb *b, cJSON *parent, const char *key)
{
    return add(b, parent, key, JB_MAKE(b, cJSON_CreateArray()));
}

void jb_str(struct jb *b, cJSON *parent, const char *key, const char *s)
{
    if (s)
        add(b, parent, key, JB_MAKE(b, cJSON_CreateString(s)));
}

void jb_num(struct jb *b, cJSON *parent, const char *key, double v)
{
    add(b, parent, key, JB_MAKE(b, cJSON_CreateNumber(v)));
}

void jb_bool(struct jb *b, cJSON *parent, const char *key, bool v)
{
    add(b, parent, key, JB_MAKE(b, cJSON_CreateBool(v)));
}

void jb_null(struct jb *b, cJSON *parent, const char *key)
{
    add(b, parent, key, JB_MAKE(b, cJSON_CreateNull()));
}

void jb_put(struct jb *b, cJSON *parent, const char *key, cJSON *item)
{
    add(b, parent, key, item);
}

void jb_push_str(struct jb *b, cJSON *arr, const char *s)
{
    add(b, arr, NULL, s ? JB_MAKE(b, cJSON_CreateString(s)) : NULL);
}

bool jb_attach(cJSON *parent, const char *key, cJSON *item)
{
    struct jb b = JB_INIT;
    return add(&b, parent, key, item) != NULL;
}

void jb_fail(struct jb *b)
{
    b->failed = true;
}

int jb_done(struct jb *b, cJSON **root, const char *what, char *err)
{
    if (!b->failed && *root)
        return 0;
    cJSON_Delete(*root);
    *root = NULL;
    return err_set(err, -ENOMEM, "out of memory building %s", what);
}
