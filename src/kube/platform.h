#ifndef SIZEUP_KUBE_PLATFORM_H
#define SIZEUP_KUBE_PLATFORM_H

/* The Kubernetes platform behind the sweep runner's seam (src/sweep/platform.h): each variant
 * is one Deployment's pod template with the variant's worker-count env var and CPU / memory
 * limits (requests = limits while measuring), rolled out through the API.
 *
 * clone mode (default): `<name>-sizeup` is created from the original: pod labels replaced by
 *   sizeup.dev/clone-of=<name> and sizeup.dev/run=<run id> (so no existing Service selects it),
 *   the annotation sizeup.dev/clone-of=<name> in full (a name too long for a label value is
 *   shortened in the label and the clone's name, see kube_platform_clone_name),
 *   an ownerReference to the original (controller: false, blockOwnerDeletion: false, so it is
 *   garbage-collected with it), PersistentVolumeClaim volumes replaced by emptyDir, one
 *   replica. stop_variant scales it to zero; restore deletes it. The original is never written.
 * in-place mode: prepare saves the original spec.template (JSON) in the annotation
 *   sizeup.dev/original-template before the first patch (an existing one is kept: a resumed
 *   sweep must not save a patched template as the original); apply strategic-merge-patches the
 *   container's env and resources only; restore puts the saved template back exactly and drops
 *   the annotation. If someone edited the template during the sweep, restore does not overwrite
 *   the edit: it puts back only the fields sizeup changed and reports drift
 *   (kube_platform_drift).
 *
 * resize mode: like in-place (the template is saved in prepare, a step that cannot be resized is
 *   rolled out in place), but a step that changes only CPU and memory is applied to one running
 *   pod of the Deployment through the pods/resize subresource. Before the first resize the pod's
 *   own resources are saved in the annotation sizeup.dev/original-resources on the Deployment;
 *   restore (and crash recovery) resizes the pod back and drops it.
 * In clone mode the clone's pod is resized the same way for CPU/memory-only steps whenever the
 *   server serves pods/resize (unless resize_off); it is not scaled down between variants then.
 * A step is resized only when the pod runs the variant's worker count, is Ready, sets CPU and
 * memory requests and limits (so the resize can be undone), and keeps its QoS class; it falls
 * back to a rollout when it cannot, when the server refuses the resize (422, 403), or when the
 * kubelet reports PodResizePending / Infeasible. The step then waits until the pod shows no
 * pending or in-progress resize and its container status reports the variant's resources; a
 * resize that stays in progress with reason Error (e.g. a memory limit below the usage) is a
 * failure of that variant. applied_by says "resize" or "rollout".
 *
 * Rollout completion is judged as `kubectl rollout status` does; the target is the ready
 * variant pod's IP and port, or a configured URL. Usage comes from metrics.k8s.io when the
 * cluster serves it (a sample at each end of the window); otherwise CPU and memory are unknown
 * and the usage note says so. Restarts and OOMKilled come from the pod's status.
 *
 * Threads: every operation runs on the caller's thread with the borrowed client. */

#include <stdbool.h>
#include <stdint.h>

#include "core/err.h"
#include "kube/client.h"
#include "sweep/platform.h"

#define KUBE_ANN_ORIGINAL "sizeup.dev/original-template"
/* resize mode: {"pod","uid","container","resources"} of the pod resized in place, as found */
#define KUBE_ANN_RESOURCES "sizeup.dev/original-resources"
#define KUBE_ANN_VARIANT   "sizeup.dev/variant"  /* on the pod template: the variant it runs */
#define KUBE_LABEL_CLONE   "sizeup.dev/clone-of" /* the label value may be shortened ... */
#define KUBE_ANN_CLONE_OF  "sizeup.dev/clone-of" /* ... the annotation holds the name in full */
#define KUBE_LABEL_RUN     "sizeup.dev/run"

/* Kubernetes' limit on a label value, and on a DNS label such as a pod's host name. */
#define KUBE_LABEL_VALUE_MAX 63

enum kube_sweep_mode { KUBE_MODE_CLONE = 0, KUBE_MODE_IN_PLACE, KUBE_MODE_RESIZE };

struct kube_platform_config {
    kube_client_t *client;   /* borrowed; must outlive the platform */
    const char *ns;          /* the Deployment's namespace */
    const char *deployment;  /* its name */
    const char *container;   /* container to size; NULL or "": the first */
    const char *workers_env; /* NULL: "WORKERS" */
    unsigned port;           /* 0: the container's first containerPort */
    const char *target;      /* NULL or "pod": the ready pod's IP; else a URL used as is */
    enum kube_sweep_mode mode;
    bool resize_off;          /* clone mode: never resize the clone's pod in place */
    const char *run_id;       /* clone label value (DNS label); NULL: derived from the time */
    int64_t poll_interval_us; /* rollout polling; 0: 500 ms */
    int64_t stop_timeout_us;  /* stop_variant waits this long for the clone's pods; 0: 60 s */
};

/* Creates the platform into *out. Copies cfg's strings. Returns 0, -EINVAL (missing namespace
 * or deployment, a name that cannot be a path segment) or -ENOMEM. */
int kube_platform_new(const struct kube_platform_config *cfg, struct platform *out /* OUT */,
                      char *err);

/* After restore: true when the in-place template had been edited by someone else during the
 * sweep, so only sizeup's own fields were put back; msg (ERR_LEN, may be NULL) says what. */
bool kube_platform_drift(const struct platform *p, char *msg);

/* What kube_platform_recover found and undid. */
#define KUBE_RECOVER_CLONE_DELETED     1u
#define KUBE_RECOVER_TEMPLATE_RESTORED 2u
#define KUBE_RECOVER_POD_RESIZED       4u

/* Crash recovery, whatever the mode was: deletes `<name>-sizeup` when it is labelled as a clone
 * of name (never anything else); when the Deployment carries sizeup.dev/original-resources
 * resizes that pod back (when it still runs) and drops the annotation; when it carries
 * sizeup.dev/original-template puts that template back exactly and drops the annotation. *done (may
 * be NULL) receives the KUBE_RECOVER_* bits of what was undone (0: nothing was left over). A
 * missing Deployment is not an error. */
int kube_platform_recover(kube_client_t *c, const char *ns, const char *name,
                          unsigned *done /* OUT */, char *err);

/* The clone's name for Deployment `deployment` (a valid Deployment name, up to 253 characters)
 * into out: `<deployment>-sizeup` when that has at most KUBE_LABEL_VALUE_MAX characters; else
 * the name cut to fit, then "-", 16 hex digits of a hash of the whole name, "-sizeup". The same
 * name always gives the same clone name, and two long names sharing their first characters
 * still get different ones. */
void kube_platform_clone_name(const char *deployment, char out[KUBE_LABEL_VALUE_MAX + 1]);

/* The value of the clone's sizeup.dev/clone-of label: the name itself when it has at most
 * KUBE_LABEL_VALUE_MAX characters, else shortened with a hash suffix as above (no "-sizeup"). */
void kube_platform_clone_label(const char *deployment, char out[KUBE_LABEL_VALUE_MAX + 1]);

/* Parses a Kubernetes CPU quantity as metrics.k8s.io and nodes report it ("12345678n",
 * "250m", "1500u", "2") into cores. Returns 0 or -EINVAL. */
int kube_parse_cores(const char *s, double *cores /* OUT */);

#endif
