/* sizeup: dispatches to one command of the table in src/cli. */

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef SIZEUP_VERSION
#define SIZEUP_VERSION "0.1.0"
#endif

static const struct cmd *const commands[] = {&cmd_loadtest, &cmd_sweep, &cmd_rule, &cmd_operator,
                                             &cmd_compare};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    fprintf(f,
            "sizeup %s: measures how many workers, how much CPU and memory a pod needs.\n\n"
            "usage: sizeup COMMAND [FLAGS]\n\ncommands:\n",
            SIZEUP_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "  %-10s %s\n  %-10s %s\n\nRun 'sizeup help COMMAND' for a command's flags.\n",
            "help", "show this text or a command's usage", "version", "print the version");
}

static const struct cmd *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    /* Installed (or linked) as kubectl-sizeup, the binary is kubectl's plugin. */
    const char *base = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    base = base ? base + 1 : (argc > 0 && argv[0] ? argv[0] : "");
    if (strcmp(base, KUBECTL_PLUGIN_NAME) == 0)
        return kubectl_plugin_main(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc > 2) {
            const struct cmd *c = find(argv[2]);
            if (!c) {
                fprintf(stderr, "sizeup: unknown command '%s'\n", argv[2]);
                return EXIT_USAGE;
            }
            cli_usage(c, stdout);
            return EXIT_OK;
        }
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0) {
        printf("sizeup %s\n", SIZEUP_VERSION);
        return EXIT_OK;
    }
    const struct cmd *c = find(name);
    if (!c) {
        fprintf(stderr, "sizeup: unknown command '%s'\n\n", name);
        usage(stderr);
        return EXIT_USAGE;
    }
    return c->exec(argc - 1, argv + 1);
}
