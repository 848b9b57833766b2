#ifndef SIZEUP_CLI_CLI_H
#define SIZEUP_CLI_CLI_H

/* The command table and the one flag layer every command parses with.
 *
 * Each command (src/cli/cmd_<name>.c) defines one `struct cmd`: its name, its usage prose and a
 * table of flags. A flag is one row: name, argument, default, help, handler, where the value
 * goes. The parser (getopt_long) and the usage text (`sizeup help NAME`) are both built from
 * that table, so adding a flag is adding a row, and the usage cannot forget one.
 * docs/reference.md documents the same rows; tests/integration/docs_flags.sh compares them. */

#include <stddef.h>
#include <stdio.h>
#include <signal.h>

#include "core/err.h"
#include "profile/profile.h"

/* Exit statuses shared by every command. */
#define EXIT_OK        0
#define EXIT_RUNTIME   1  /* the work could not be done (target unreachable at start, I/O error) */
#define EXIT_USAGE     2  /* bad flags or bad input files */
#define EXIT_THRESHOLD 99 /* the run completed but a threshold failed (k6's convention) */

#define CLI_MAX_FLAGS 64 /* rows in one command's table, shared rows included */

struct cli_flag;

/* Stores the flag's value `val` (NULL for a switch) into `dst` (the command's argument struct
 * plus the row's offset). Returns 0, or -EINVAL with a message that names the flag in err. */
typedef int (*cli_set_fn)(const struct cli_flag *f, const char *val, void *dst, char *err);

struct cli_flag {
    const char *name; /* without the leading "--" */
    const char *arg;  /* the value's name in the usage ("N", "FILE"); NULL: a switch */
    const char *def;  /* the default as the usage and docs/reference.md show it; NULL: none */
    const char *help; /* one line, no default in it */
    cli_set_fn set;
    size_t off;      /* where set() writes, from the start of the command's argument struct */
    double min, max; /* bounds for the numeric handlers; min 1 on cli_set_string: not empty */
};

/* A one-letter form of a row ("-n" for --namespace), as kubectl's flags have. */
struct cli_short {
    char letter;
    const char *flag; /* the row's name */
};

/* The handlers the rows use. Each writes the type named, at the row's offset. */
int cli_set_string(const struct cli_flag *f, const char *val, void *dst,
                   char *err); /* const char * */
int cli_set_switch(const struct cli_flag *f, const char *val, void *dst, char *err); /* int: 1 */
int cli_set_uint(const struct cli_flag *f, const char *val, void *dst, char *err);   /* unsigned */
int cli_set_u64(const struct cli_flag *f, const char *val, void *dst, char *err);    /* uint64_t */
int cli_set_number(const struct cli_flag *f, const char *val, void *dst, char *err); /* double */
int cli_set_duration(const struct cli_flag *f, const char *val, void *dst,
                     char *err); /* int64 us */

/* A row's `def` for a flag the command cannot run without; the usage prints "(required)". */
#define CLI_REQUIRED "required"

/* The end of a flag table. */
#define CLI_FLAGS_END                                                                              \
    {                                                                                              \
        NULL, NULL, NULL, NULL, NULL, 0, 0, 0                                                      \
    }

/* The rows every command that runs load shares: the profile overrides (one meaning everywhere,
 * applied by profile_override_apply) and the load threads. `member` is a struct
 * profile_override in the command's argument struct `type`, `threads` an unsigned. */
#define CLI_PROFILE_FLAGS(type, member)                                                            \
    {"users",                                                                                      \
     "N",                                                                                          \
     "the profile's",                                                                              \
     "closed loop: N concurrent users",                                                            \
     cli_set_uint,                                                                                 \
     offsetof(type, member.users),                                                                 \
     1,                                                                                            \
     PROFILE_MAX_USERS},                                                                           \
        {"rate",                                                                                   \
         "R",                                                                                      \
         "the profile's",                                                                          \
         "open loop: R requests/s on a fixed schedule",                                            \
         cli_set_number,                                                                           \
         offsetof(type, member.rate),                                                              \
         0,                                                                                        \
         PROFILE_MAX_RATE},                                                                        \
        {"duration",                                                                               \
         "D",                                                                                      \
         "the profile's",                                                                          \
         "measured window, e.g. 20s, 1m30s",                                                       \
         cli_set_duration,                                                                         \
         offsetof(type, member.duration_us),                                                       \
         1,                                                                                        \
         PROFILE_MAX_RUN_US},                                                                      \
        {"warmup",                                                                                 \
         "D",                                                                                      \
         "the profile's",                                                                          \
         "load applied before measuring, not recorded (0: none)",                                  \
         cli_set_duration,                                                                         \
         offsetof(type, member.warmup_us),                                                         \
         0,                                                                                        \
         PROFILE_MAX_RUN_US},                                                                      \
    {                                                                                              \
        "timeout", "D", "the profile's", "per-request timeout (0: none)", cli_set_duration,        \
            offsetof(type, member.timeout_us), 0, PROFILE_MAX_TIMEOUT_US                           \
    }

#define CLI_PROFILE_FILE_FLAG(type, member)                                                        \
    {                                                                                              \
        "profile", "FILE", "GET /, 50 users, 20s, 5s warm-up", "load profile (YAML)",              \
            cli_set_string, offsetof(type, member), 1, 0                                           \
    }

#define CLI_THREADS_FLAG(type, member)                                                             \
    {                                                                                              \
        "threads", "N", "one per CPU it may use", "load generator threads, one event loop each",   \
            cli_set_uint, offsetof(type, member), 1, 1024                                          \
    }

/* The command stops reading flags at its first operand (sweep's `-- COMMAND ARGS`), so the
 * operand's own flags are never taken for ours. Without it, an operand is a usage error. */
#define CLI_OPERANDS 1u
/* Operands allowed, and flags after them too (`results deploy/app -o json`), as kubectl parses. */
#define CLI_PERMUTE 2u

struct cmd {
    const char *name;
    const char *summary;          /* one line for `sizeup help` */
    const char *synopsis;         /* after "usage: sizeup NAME " */
    const char *intro;            /* what the command does, between the usage line and the flags */
    const struct cli_flag *flags; /* ends with CLI_FLAGS_END */
    const char *epilog;           /* after the flags: example, exit statuses; may be NULL */
    unsigned opts;                /* CLI_OPERANDS, CLI_PERMUTE */
    /* argv[0] is the command name; returns an exit status above. */
    int (*exec)(int argc, char **argv);
    const struct cli_short *shorts; /* one-letter forms, ending with {0, NULL}; may be NULL */
    const char *prog; /* what the usage line names before the command; NULL: "sizeup" */
};

/* Prints c's full usage to f: the synopsis, the intro, one line per flag with its default, the
 * epilog. */
void cli_usage(const struct cmd *c, FILE *f);

/* Parses argv (argv[0] is the command name) with getopt_long from c's table, calling each row's
 * handler with dst = args + row offset. Returns 0 and *first_operand (argc when there is none),
 * CLI_HELP after printing the usage for -h / --help, or EXIT_USAGE after printing the error and
 * the usage to stderr. */
#define CLI_HELP (-1)
int cli_parse(const struct cmd *c, int argc, char **argv, void *args, int *first_operand);

/* Prints "PROG NAME: MESSAGE" and the usage to stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cmd *c, const char *msg);

/* SIGINT and SIGTERM set the stop flag this returns (the one mutable global house rule 10
 * allows), for the run to poll; the previous handlers are kept in *saved. With `once`, the
 * second signal kills at once, as people expect when the first did not seem to work. */
struct cli_signals {
    struct sigaction old_int, old_term;
};
volatile sig_atomic_t *cli_trap_signals(struct cli_signals *saved /* OUT */, int once);

/* Puts back the handlers cli_trap_signals replaced. */
void cli_restore_signals(const struct cli_signals *saved);

extern const struct cmd cmd_loadtest;
extern const struct cmd cmd_sweep;
extern const struct cmd cmd_rule;
extern const struct cmd cmd_operator;
extern const struct cmd cmd_compare;

/* `kubectl sizeup` (cmd_kubectl.c): the binary run as kubectl-sizeup. argv[0] is the program;
 * returns an exit status. */
int kubectl_plugin_main(int argc, char **argv);
extern const struct cmd kcmd_sweep, kcmd_status, kcmd_results, kcmd_cancel;
#define KUBECTL_PLUGIN_NAME "kubectl-sizeup"

#endif
