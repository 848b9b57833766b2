#include "sweep/load_source.h"

#include <errno.h>

static int in_process_run(void *self, const struct load_opts *o, struct load_result *out, char *err)
{
    (void)self;
    return load_run(o, out, err);
}

static unsigned in_process_generators(const void *self)
{
    (void)self;
    return 1;
}

static void in_process_free(void *self)
{
    (void)self;
}

static const struct load_source_ops in_process_ops = {
    .name = "in-process",
    .run = in_process_run,
    .generators = in_process_generators,
    .free = in_process_free,
};

const struct load_source load_source_in_process = {&in_process_ops, NULL};

int load_source_run(const struct load_source *src, const struct load_opts *o,
                    struct load_result *out, char *err)
{
    if (!src)
        src = &load_source_in_process;
    return src->ops->run(src->self, o, out, err);
}
