/* Placeholder entry until the command lands; it says so and exits with the usage status. */

#include <stdio.h>

#include "cli/cli.h"

static int exec_sweep(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "sizeup sweep: not available in this build yet\n");
    return EXIT_USAGE;
}

const struct cmd cmd_sweep = {"sweep", "(not available yet)", "usage: sizeup sweep\n", exec_sweep};
