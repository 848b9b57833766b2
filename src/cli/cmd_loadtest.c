/* Placeholder entry until the command lands; it says so and exits with the usage status. */

#include <stdio.h>

#include "cli/cli.h"

static int exec_loadtest(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "sizeup loadtest: not available in this build yet\n");
    return EXIT_USAGE;
}

const struct cmd cmd_loadtest = {"loadtest", "(not available yet)", "usage: sizeup loadtest\n",
                                 exec_loadtest};
