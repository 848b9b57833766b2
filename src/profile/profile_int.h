#ifndef SIZEUP_PROFILE_PROFILE_INT_H
#define SIZEUP_PROFILE_PROFILE_INT_H

#include "core/err.h"

/* The profile loader's YAML readers and sections, shared by its files (profile_yaml.c: the
 * readers and the pre-scan; profile.c: the root and the public API; profile_requests.c:
 * requests and stages; profile_sizing.c: search, slo, cost, planning; profile_streams.c:
 * streams, producers); not part of the load layer's interface. Every reader fails through
 * profile__fail, so all errors read "source:line: field.path: problem". */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "profile/profile.h"

#define MAX_RUN_US     PROFILE_MAX_RUN_US
#define MAX_TIMEOUT_US PROFILE_MAX_TIMEOUT_US
#define MAX_USERS      PROFILE_MAX_USERS
#define MAX_RATE       PROFILE_MAX_RATE

struct profile__ctx {
    yaml_document_t *doc;
    const char *source;
    char *err; /* ERR_LEN */
};

/* Formats "source:line: path: message" into c->err and returns -EINVAL. */
SIZEUP_MUST_USE int profile__fail(struct profile__ctx *c, const yaml_node_t *n, const char *path,
                                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The 1-based line a node starts on (1 for NULL), for errors. */
int profile__line_of(const yaml_node_t *n);

/* A short, printable rendering of untrusted text into out (outlen >= 8) for an error message:
 * control characters and quotes become '?', long values end in "...". */
void profile__show(const char *s, size_t len, char *out, size_t outlen);

/* A plain scalar that YAML reads as null: empty, "~" or "null". */
bool profile__is_null(const yaml_node_t *n);

/* The document's node idx (borrowed from c->doc), or NULL. */
yaml_node_t *profile__node(struct profile__ctx *c, int idx);

/* The scalar's text (borrowed), or NULL when n is not a non-null scalar; _cstr also NULL when
 * the text holds a NUL. */
const char *profile__text(const yaml_node_t *n);
const char *profile__text_cstr(const yaml_node_t *n);

/* What a node is, for "got ...": the scalar quoted, or its kind. Returns buf or a literal. */
const char *profile__got(const yaml_node_t *n, char *buf, size_t len);
#define GOT(n) profile__got((n), gotbuf, sizeof(gotbuf))

/* A mapping (a null "key:" counts as absent for optional sections). */
bool profile__is_mapping(const yaml_node_t *n);

/* Sorts a mapping's pairs into vals[] by keys[]; unknown, duplicate and non-scalar keys are
 * errors (with a "did you mean" for near misses). prefix is the mapping's field path. */
SIZEUP_MUST_USE int profile__fields(struct profile__ctx *c, const yaml_node_t *map,
                                    const char *prefix, const char *const *keys, size_t nkeys,
                                    yaml_node_t **vals /* OUT */);

/* Opens an optional section: 1 when it is absent (null: "key:" with nothing after it), 0 with
 * its fields sorted into vals[] as profile__fields does, or the error of a value that is not a
 * mapping ("expected a mapping such as EXAMPLE, got ...") or of a bad key. path is the
 * section's field path; example is plain text, not a format. */
SIZEUP_MUST_USE int profile__section(struct profile__ctx *c, const yaml_node_t *map,
                                     const char *path, const char *example, const char *const *keys,
                                     size_t nkeys, yaml_node_t **vals /* OUT */);

/* Scalar readers: each names path in its error. */
SIZEUP_MUST_USE int profile__get_uint(struct profile__ctx *c, const yaml_node_t *n,
                                      const char *path, uint64_t min, uint64_t max,
                                      uint64_t *out /* OUT */);
SIZEUP_MUST_USE int profile__get_number(struct profile__ctx *c, const yaml_node_t *n,
                                        const char *path, bool allow_zero, double max,
                                        double *out /* OUT */);
SIZEUP_MUST_USE int profile__get_duration(struct profile__ctx *c, const yaml_node_t *n,
                                          const char *path, bool allow_zero, int64_t max,
                                          int64_t *out /* OUT */);
/* "1%" or a fraction "0.01", at most 100%. */
SIZEUP_MUST_USE int profile__get_percent(struct profile__ctx *c, const yaml_node_t *n,
                                         const char *path, double *out /* OUT */);

/* Rejects before the document is built what would make it costly or ambiguous: aliases, a
 * second document, deep nesting, too many values. Borrows buf until the call returns. */
SIZEUP_MUST_USE int profile__prescan(struct profile__ctx *c, const char *buf, size_t len);

/* Formats the parser's error as "source:line: YAML syntax: ..." and returns it. */
SIZEUP_MUST_USE int profile__syntax_error(struct profile__ctx *c, const yaml_parser_t *ps,
                                          const char *buf, size_t len);

/* requests: and stages: into p (the lists are owned by p on success; p is unchanged on
 * failure). */
SIZEUP_MUST_USE int profile__load_requests(struct profile__ctx *c, const yaml_node_t *seq,
                                           struct profile *p);
SIZEUP_MUST_USE int profile__load_stages(struct profile__ctx *c, const yaml_node_t *seq,
                                         struct profile *p);

/* The sizing sections of the root mapping (each may be NULL: absent). slo follows the HEALTHY
 * thresholds already loaded into p where it is absent or leaves a field out, so call it after
 * the thresholds. */
SIZEUP_MUST_USE int profile__load_sizing(struct profile__ctx *c, const yaml_node_t *search,
                                         const yaml_node_t *slo, const yaml_node_t *cost,
                                         const yaml_node_t *planning, struct profile *p);

/* A non-empty string without NUL of at most maxlen bytes: *out points into the document. */
SIZEUP_MUST_USE int profile__get_text(struct profile__ctx *c, const yaml_node_t *n,
                                      const char *path, size_t maxlen, const char *what,
                                      const char **out /* OUT */);

/* The same, as an owned copy in *out. */
SIZEUP_MUST_USE int profile__get_string(struct profile__ctx *c, const yaml_node_t *n,
                                        const char *path, size_t maxlen, const char *what,
                                        char **out /* OUT */);

/* One request mapping { name, method, path, weight, headers, body } into r (left for
 * profile__request_free on failure); prefix names it in errors ("producers.request"). */
SIZEUP_MUST_USE int profile__load_request(struct profile__ctx *c, const yaml_node_t *item,
                                          const char *prefix, struct profile_request *r /* OUT */);
void profile__request_free(struct profile_request *r);

/* streams: and producers: (each may be NULL: absent) into p->streams. load_given: the root
 * also sets users, rate, stages or requests, which then run beside the streams. */
SIZEUP_MUST_USE int profile__load_streams(struct profile__ctx *c, const yaml_node_t *streams,
                                          const yaml_node_t *producers, bool load_given,
                                          struct profile *p);

/* scale_out: { max | replicas, variant } into p->scale_out (profile_scale_out.c). */
int profile__load_scale_out(struct profile__ctx *c, const yaml_node_t *map, struct profile *p);

/* nodes: [...] into p->nodes (profile_nodes.c). */
SIZEUP_MUST_USE int profile__load_nodes(struct profile__ctx *c, const yaml_node_t *seq,
                                        struct profile *p);

/* autoscaling: { metric, keda: { server_address, query } } into p->autoscaling, and
 * planning.ramp's percentage per minute into *out (profile_autoscaling.c). */
SIZEUP_MUST_USE int profile__load_autoscaling(struct profile__ctx *c, const yaml_node_t *map,
                                              struct profile *p);
SIZEUP_MUST_USE int profile__get_ramp(struct profile__ctx *c, const yaml_node_t *n,
                                      double *out /* OUT */);

/* availability: { zones, drain } into p->availability (profile_availability.c). */
SIZEUP_MUST_USE int profile__load_availability(struct profile__ctx *c, const yaml_node_t *map,
                                               struct profile *p);

#endif
