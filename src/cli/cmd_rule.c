/* Placeholder entry until the command lands; it says so and exits with the usage status. */

#include <stdio.h>

#include "cli/cli.h"

static int exec_rule(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "sizeup rule: not available in this build yet\n");
    return EXIT_USAGE;
}

const struct cmd cmd_rule = {"rule", "(not available yet)", "usage: sizeup rule\n", exec_rule};
