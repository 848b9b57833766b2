/* operator__new_client (operator_int.h): the operator's API clients, each request counted in
 * its metrics. The main loop (operator.c: the Lease, the re-sweeps) and the informers
 * (operator_queue.c) both make them; this file is below both and calls neither. */

#include "kube/client.h"
#include "operator/metrics.h"
#include "operator/operator_int.h"

static void on_api_request(void *ctx, const char *verb, long code, double seconds)
{
    struct op *op = ctx;
    (void)verb;
    (void)seconds;
    metrics_api_request(&op->m, (int)code);
}

int operator__new_client(struct op *op, kube_stop_fn stop, long request_timeout_ms, int attempts,
                         kube_client_t **out, char *err)
{
    struct kube_client_opts co = {0};
    co.request_timeout_ms = request_timeout_ms;
    co.max_attempts = attempts;
    co.stop = stop;
    co.stop_ctx = op;
    co.on_request = on_api_request;
    co.on_request_ctx = op;
    co.user_agent = "sizeup-operator";
    return kube_client_new(op->cfg, &co, out, err);
}
