/* load_run: the load generator's entry. Several targets are one load spread over them
 * (spread.c), whose share threads each run one target's load; one target is that load directly
 * (load__run_one in load_one.c: a stream run or a request load). The calls run down only:
 * load.c -> spread.c -> load_one.c -> streams.c -> load_requests.c; nothing calls back into
 * load_run. */

#include "load/load.h"

#include "load/load_int.h"
#include "load/spread.h"

int load_run(const struct load_opts *o, struct load_result *out, char *err)
{
    if (o->nurls > 1)
        return load_run_spread(o, o->urls, o->nurls, out, err);
    return load__run_one(o, out, err);
}
