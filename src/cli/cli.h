#ifndef SIZEUP_CLI_CLI_H
#define SIZEUP_CLI_CLI_H

/* The command table: one file per command (src/cli/cmd_<name>.c), each defining one entry. */

/* Exit statuses shared by every command. */
#define EXIT_OK        0
#define EXIT_RUNTIME   1  /* the work could not be done (target unreachable at start, I/O error) */
#define EXIT_USAGE     2  /* bad flags or bad input files */
#define EXIT_THRESHOLD 99 /* the run completed but a threshold failed (k6's convention) */

struct cmd {
    const char *name;
    const char *summary; /* one line for `sizeup help` */
    const char *usage;   /* the full usage text, printed by `sizeup help NAME` and on bad flags */
    /* argv[0] is the command name; returns an exit status above. */
    int (*exec)(int argc, char **argv);
};

extern const struct cmd cmd_loadtest;
extern const struct cmd cmd_sweep;
extern const struct cmd cmd_rule;
extern const struct cmd cmd_operator;
extern const struct cmd cmd_compare;

#endif
