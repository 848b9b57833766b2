/* Placeholder entry until the command lands; it says so and exits with the usage status. */

#include <stdio.h>

#include "cli/cli.h"

static int exec_operator(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "sizeup operator: not available in this build yet\n");
    return EXIT_USAGE;
}

const struct cmd cmd_operator = {"operator", "(not available yet)", "usage: sizeup operator\n",
                                 exec_operator};
