/* load_run: the load generator's entry. A profile with streams is a stream run (streams.c),
 * which runs its producers as a request load; any other is a request load (load_requests.c).
 * Both are below this file: nothing in src/load calls back into load_run. */

#include "load/load.h"

#include "load/load_int.h"
#include "load/spread.h"
#include "load/streams.h"

int load_run(const struct load_opts *o, struct load_result *out, char *err)
{
    if (o->nurls > 1)
        return load_run_spread(o, o->urls, o->nurls, out, err);
    if (o->profile && o->profile->streams)
        return streams_run(o, out, err);
    return load__requests_run(o, out, err);
}
