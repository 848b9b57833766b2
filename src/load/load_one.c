/* load__run_one (load_int.h): one target's load, a stream run (streams.c) when the profile has
 * streams, else a request load (load_requests.c). Below both load_run (load.c) and the spread's
 * share threads (spread.c), so neither calls back into the other. */

#include "load/load_int.h"
#include "load/streams.h"

int load__run_one(const struct load_opts *o, struct load_result *out, char *err)
{
    if (o->profile && o->profile->streams)
        return streams_run(o, out, err);
    return load__requests_run(o, out, err);
}
