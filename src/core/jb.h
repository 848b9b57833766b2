#ifndef SIZEUP_CORE_JB_H
#define SIZEUP_CORE_JB_H

/* A cJSON builder that cannot lose a field quietly. cJSON's Add and Create calls return NULL
 * when an allocation fails, and an unchecked one leaves a document with a field missing. Every
 * jb_ call instead records the first failure in its struct jb (and does nothing once one is
 * recorded); the caller builds the whole document, then asks jb_done, which deletes it and
 * returns -ENOMEM when anything failed. So a document is either whole or not at all.
 *
 * The calls take the builder first and never return an error themselves: the one check is
 * jb_done's (house rule 5 holds for the document, not for each field). A NULL parent counts as
 * a failure (it is what a failed jb_obj/jb_arr returned). */

#include <stdbool.h>

#include <cJSON.h>

#include "core/err.h"

struct jb {
    bool failed; /* an allocation failed (or a NULL parent/item was given) */
};

#define JB_INIT                                                                                    \
    {                                                                                              \
        false                                                                                      \
    }

/* A new empty object (cJSON_CreateObject), owned by the caller; NULL (and failed) when out of
 * memory. */
cJSON *jb_new(struct jb *b);

/* parent[key] = {} or [] (key NULL: appended to the array parent); returns the new child,
 * borrowed from parent, or NULL (failed). */
cJSON *jb_obj(struct jb *b, cJSON *parent, const char *key);
cJSON *jb_arr(struct jb *b, cJSON *parent, const char *key);

/* parent[key] = s, a number, a boolean, null (key NULL: appended to the array parent). A NULL s
 * adds nothing (as cJSON did): a field that is simply absent, not a failure. */
void jb_str(struct jb *b, cJSON *parent, const char *key, const char *s);
void jb_num(struct jb *b, cJSON *parent, const char *key, double v);
void jb_bool(struct jb *b, cJSON *parent, const char *key, bool v);
void jb_null(struct jb *b, cJSON *parent, const char *key);

/* parent[key] = item (an object) or, key NULL, item appended (an array). Takes ownership of
 * item, which is deleted when it cannot be added; a NULL item is a failure. */
void jb_put(struct jb *b, cJSON *parent, const char *key, cJSON *item);

/* Appends the string s (NULL: a failure) to the array arr. */
void jb_push_str(struct jb *b, cJSON *arr, const char *s);

/* Without a builder: adds item (owned) under key of parent, or, key NULL, appends it to the
 * array parent; when it cannot (item or parent NULL, no memory for the key) deletes item and
 * returns false. For code that checks each call itself: cJSON_AddItemToObject keeps the item
 * when it fails, a leak in a `!cJSON_AddItemToObject(o, k, make())` chain. */
bool jb_attach(cJSON *parent, const char *key, cJSON *item);

/* Records a failure found outside the builder (a helper that returned NULL). */
void jb_fail(struct jb *b);

/* The end of a build: 0 with *root kept, or, when anything failed, *root deleted and NULL and
 * -ENOMEM with "out of memory building <what>" in err (may be NULL). */
SIZEUP_MUST_USE int jb_done(struct jb *b, cJSON **root, const char *what, char *err);

#endif
