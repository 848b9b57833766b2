#ifndef SIZEUP_OPERATOR_ANNOTATIONS_H
#define SIZEUP_OPERATOR_ANNOTATIONS_H

/* The `sizeup.dev/...` annotations of a Deployment, parsed into a sweep request (DESIGN.md,
 * "Operator"). Every bad value gives a reason that names the annotation, the value (quoted,
 * truncated and made printable) and what was expected, ready for `sizeup.dev/status:
 * failed: <reason>` and a Warning Event. Parsing reads nothing but its input. */

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "profile/profile.h"
#include "output/output.h"
#include "sweep/variant.h"

#define ANNOT_PREFIX "sizeup.dev/"

/* The annotations the operator itself writes or keeps on a Deployment. */
#define ANNOT_SWEEP  "sizeup.dev/sweep"
#define ANNOT_STATUS "sizeup.dev/status"
/* The sweep value the operator last handled: a sweep value equal to it was already run, so a
 * restarted operator does not run it again. */
#define ANNOT_LAST_SWEEP "sizeup.dev/last-sweep"

/* Sweeping again after an image change (src/operator/resweep.c). */
#define ANNOT_RESWEEP          "sizeup.dev/resweep"
#define ANNOT_RESWEEP_INTERVAL "sizeup.dev/resweep-min-interval"
#define ANNOT_RESWEEP_ON       "on-image-change"
#define ANNOT_RESWEEP_DEFAULT  "6h"
#define ANNOT_RESWEEP_MIN_S    1
#define ANNOT_RESWEEP_MAX_S    (366LL * 24 * 3600)

/* Caps on values taken from the API: anything longer is a bad value, not a truncation. */
#define ANNOT_MAX_VALUE      4096 /* configs, target */
#define ANNOT_MAX_SWEEP      253  /* the sweep request id (e.g. a date) */
#define ANNOT_MAX_NAME       253  /* Kubernetes object names (DNS-1123 subdomain) */
#define ANNOT_MAX_ENVNAME    256
#define ANNOT_MAX_GENERATORS 100 /* load-generator pods of one sweep */

#define ANNOT_DEFAULT_CONFIGS     VARIANT_DEFAULT_LIST
#define ANNOT_DEFAULT_WORKERS_ENV "WORKERS"
/* target-load: a number of req/s, users or streams up to this. */
#define ANNOT_MAX_TARGET 1e9

/* clone: sweep a temporary copy; in-place: roll the Deployment itself; resize: change CPU and
 * memory of one of its pods through the pods/resize subresource (a rollout when it cannot). */
enum annot_mode { ANNOT_MODE_CLONE = 0, ANNOT_MODE_IN_PLACE, ANNOT_MODE_RESIZE };

enum annot_target { ANNOT_TARGET_POD = 0, ANNOT_TARGET_URL };

/* One annotation as the API gave it; both strings borrowed. */
struct annot_kv {
    const char *key;
    const char *value;
};

/* A parsed sweep request. Every string is owned (free with annot_request_free) and set:
 * defaults are filled in, except container (NULL = the first container), port (0 = the
 * container's first containerPort), profile (NULL = the built-in default profile) and
 * target_url (NULL unless target is ANNOT_TARGET_URL). */
struct annot_request {
    char *sweep;       /* the request id: a new value requests another sweep */
    char *configs;     /* the variant list, validated, as the user wrote it */
    size_t nvariants;  /* how many variants configs names */
    char *workers_env; /* env var that carries the worker count */
    char *container;
    int port;
    char *profile; /* ConfigMap name, key profile.yaml */
    enum annot_mode mode;
    enum annot_target target;
    char *target_url;
    struct output_paths values_paths; /* where values.yaml puts each value (defaults filled) */
    double target_rps;                /* target-load "5000rps"; 0 when absent */
    double target_users;              /* target-load "10000users"; 0 when absent */
    double target_streams;            /* target-load "20000streams"; 0 when absent */
    bool resize_off; /* sizeup.dev/resize: off: never resize in place (clone mode) */
    int resweep;     /* sizeup.dev/resweep: on-image-change */
    long long resweep_interval_s;
    unsigned generators; /* load-generator pods (an Indexed Job); 0 when not annotated */
    /* sizeup.dev/scale-out: N (0-PROFILE_MAX_SCALE_OUT, 0 and 1 off) or "off"; applied over the
     * profile's scale_out: as --scale-out is. In the cluster a scale-out is asked for, never a
     * default: scale_out_set false leaves it off. */
    bool scale_out_set;
    unsigned scale_out;
};

/* Parses the annotations kv[0..n) (any keys; only sizeup.dev/ ones are read) into *req.
 * Returns 0, -ENOENT when there is no non-empty sizeup.dev/sweep (no sweep requested; err
 * says so), -EINVAL with the reason in err for a bad value, or -ENOMEM. On failure *req is
 * left zeroed. warn (ERR_LEN, may be NULL) receives a note about unknown sizeup.dev/ keys
 * (most likely typos), which do not fail the request; it is "" when there is nothing to say. */
SIZEUP_MUST_USE int annot_parse(const struct annot_kv *kv, size_t n,
                                struct annot_request *req /* OUT */, char *warn, char *err);

/* Frees what req owns and zeroes it; a zeroed request is a no-op. */
void annot_request_free(struct annot_request *req);

/* Returns "clone", "in-place" or "resize". */
const char *annot_mode_name(enum annot_mode mode);

/* Returns non-zero when key is one the operator reads or writes (sizeup.dev/ plus a known
 * name): the operator keeps only these per Deployment. */
int annot_key_relevant(const char *key);

/* Parses the re-sweep annotations: mode (NULL or "off": off; "on-image-change": on) and
 * interval (NULL: ANNOT_RESWEEP_DEFAULT; a duration from 1s to 366 days). Fills *on and
 * *interval_s. Returns 0 or -EINVAL with a reason naming the annotation. Borrows its inputs. */
SIZEUP_MUST_USE int annot_parse_resweep(const char *mode, const char *interval, int *on /* OUT */,
                                        long long *interval_s /* OUT */, char *err);

/* Checks a variant list "workers@cpu/memory ..." with the sweep layer's parser and counts its
 * variants; the reason ("configs: bad variant '2@x/1Gi': ...") names the bad token. Borrows s. */
SIZEUP_MUST_USE int annot_check_configs(const char *s, size_t *nvariants /* OUT */, char *err);

/* Whether real users share what a sweep of req loads: a URL target (a Service or ingress), or
 * in-place and resize modes (the Deployment's own pods). The one place the operator decides it. */
bool annot_shared_target(const struct annot_request *req);

/* The load ceiling rule: a capacity search against a URL target (a Service or ingress that real
 * users share) or in in-place mode (the Deployment real users reach) must not search upwards
 * without a ceiling, so it needs the profile's search.max_rps. Returns 0, or -EINVAL with a
 * reason that says what to set. Borrows both arguments. */
SIZEUP_MUST_USE int annot_check_load_ceiling(const struct annot_request *req,
                                             const struct profile_search *search, char *err);

#endif
