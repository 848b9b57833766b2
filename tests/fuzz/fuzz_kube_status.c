/* libFuzzer target: decoding API responses: Status objects for every HTTP code class, and the
 * object helpers (Deployment rollout, Pod status, metadata, Lease) on arbitrary JSON. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/objects.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long codes[] = {0, 200, 401, 404, 409, 410, 429, 500, 503};
    struct kube_status st;
    const char *body = (const char *)data;

    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        int rc = kube_status_decode(body, size, codes[i], &st);
        if (rc > 0 || !memchr(st.reason, '\0', sizeof(st.reason)) ||
            !memchr(st.message, '\0', sizeof(st.message)))
            abort();
        /* Messages go into one-line logs: no control characters survive. */
        for (const char *p = st.message; *p; p++)
            if ((unsigned char)*p < 0x20)
                abort();
        if (codes[i] >= 400 && rc == 0)
            abort();
    }

    cJSON *obj = cJSON_ParseWithLength(body, size);
    if (!obj)
        return 0;
    struct kube_meta m;
    struct kube_pod_info pi;
    struct kube_lease ls;
    struct kube_deploy_status ds;
    enum kube_rollout r;
    char msg[ERR_LEN];
    /* Any input is refused or read, never a crash: the results themselves do not matter. */
    int results = kube_meta_read(obj, &m);
    results |= kube_pod_info_read(obj, NULL, &pi);
    results |= kube_pod_info_read(obj, "app", &pi);
    results |= kube_lease_read(obj, &ls);
    results |= kube_deploy_status_read(obj, &ds);
    (void)results;
    if (kube_deploy_rollout(obj, &r, msg) != 0)
        abort();
    if (r == KUBE_ROLLOUT_DONE && (ds.updated < ds.replicas || ds.available < ds.updated ||
                                   ds.observed_generation < ds.generation))
        abort();
    cJSON *c = kube_deploy_container(obj, NULL);
    if (c) {
        int port = kube_container_port(c);
        if (port < 0 || port > 65535)
            abort();
        kube_container_env(c, "WORKERS");
    }
    kube_annotation(obj, "sizeup.dev/sweep");
    kube_path_get(obj, "spec.template.spec");
    cJSON_Delete(obj);
    return 0;
}
