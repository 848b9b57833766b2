/* The flag layer of every command: getopt_long driven by the command's table, the handlers the
 * rows use, and the usage text rendered from the same table. */

#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"

#define USAGE_WIDTH 100 /* the usage text wraps at this column */
#define FLAG_COL    24  /* help text starts at this column */
#define OPT_BASE    256 /* getopt_long's val for row i is OPT_BASE + i: above every char */

/* ---- handlers ------------------------------------------------------------------------------ */

int cli_set_string(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    if (f->min >= 1 && !*val)
        return err_set(err, -EINVAL, "--%s: the value is empty", f->name);
    *(const char **)dst = val;
    return 0;
}

int cli_set_switch(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    (void)f, (void)val, (void)err;
    *(int *)dst = 1;
    return 0;
}

/* A whole number in [f->min, f->max]; a sign, a fraction or trailing text is refused. */
static int parse_whole(const struct cli_flag *f, const char *val, uint64_t *out, char *err)
{
    char *end = NULL;
    if (*val < '0' || *val > '9')
        return err_set(err, -EINVAL, "--%s: '%.64s' is not a whole number", f->name, val);
    errno = 0;
    unsigned long long x = strtoull(val, &end, 10);
    if (errno || *end)
        return err_set(err, -EINVAL, "--%s: '%.64s' is not a whole number", f->name, val);
    if ((double)x < f->min || (double)x > f->max)
        return err_set(err, -EINVAL, "--%s: '%.64s' is not from %.0f to %.0f", f->name, val, f->min,
                       f->max);
    *out = x;
    return 0;
}

int cli_set_uint(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    uint64_t x;
    int rc = parse_whole(f, val, &x, err);
    if (rc == 0)
        *(unsigned *)dst = (unsigned)x;
    return rc;
}

int cli_set_u64(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    return parse_whole(f, val, (uint64_t *)dst, err);
}

/* A number in (f->min, f->max]: the numeric flags (rates) are never zero. */
int cli_set_number(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(val, &end);
    if (errno || end == val || *end || !isfinite(x))
        return err_set(err, -EINVAL, "--%s: '%.64s' is not a number", f->name, val);
    if (!(x > f->min) || x > f->max)
        return err_set(err, -EINVAL, "--%s: '%.64s' must be above %g and at most %g", f->name, val,
                       f->min, f->max);
    *(double *)dst = x;
    return 0;
}

/* A duration ("20s", "1m30s", "0") in microseconds, in [f->min, f->max]. */
int cli_set_duration(const struct cli_flag *f, const char *val, void *dst, char *err)
{
    char sub[ERR_LEN] = "", b[QTY_LEN];
    int64_t us;
    if (qty_parse_duration(val, &us, sub) != 0)
        return err_set(err, -EINVAL, "--%s: %s", f->name, sub);
    if ((double)us < f->min)
        return err_set(err, -EINVAL, "--%s: '%.64s' must be longer than 0", f->name, val);
    if ((double)us > f->max)
        return err_set(err, -EINVAL, "--%s: '%.64s' is longer than %s", f->name, val,
                       qty_format_duration((int64_t)f->max, b));
    *(int64_t *)dst = us;
    return 0;
}

/* ---- signals ------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

volatile sig_atomic_t *cli_trap_signals(struct cli_signals *saved, int once)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = once ? SA_RESETHAND : 0;
    stop_flag = 0;
    sigaction(SIGINT, &sa, &saved->old_int);
    sigaction(SIGTERM, &sa, &saved->old_term);
    return &stop_flag;
}

void cli_restore_signals(const struct cli_signals *saved)
{
    sigaction(SIGINT, &saved->old_int, NULL);
    sigaction(SIGTERM, &saved->old_term, NULL);
}

/* ---- usage --------------------------------------------------------------------------------- */

/* The one-letter form of row r of c, or 0. */
static char short_of(const struct cmd *c, const struct cli_flag *r)
{
    for (const struct cli_short *s = c->shorts; s && s->letter; s++)
        if (strcmp(s->flag, r->name) == 0)
            return s->letter;
    return 0;
}

/* The row of c whose one-letter form is letter, or NULL. */
static const struct cli_flag *row_of_short(const struct cmd *c, int letter, size_t *index)
{
    for (size_t i = 0; c->flags[i].name; i++) {
        if (short_of(c, &c->flags[i]) == letter) {
            *index = i;
            return &c->flags[i];
        }
    }
    return NULL;
}

/* Writes text to f, wrapped at USAGE_WIDTH, continuation lines indented by `indent`; `col` is
 * the column the first word starts at. */
static void put_wrapped(FILE *f, const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (col > indent && col + 1 + (int)w > USAGE_WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)w, p);
        col += (int)w;
        p += w;
        p += strspn(p, " ");
    }
    fputc('\n', f);
}

void cli_usage(const struct cmd *c, FILE *f)
{
    char left[64], help[512];

    fprintf(f, "usage: %s %s %s\n\n%s\n", c->prog ? c->prog : "sizeup", c->name, c->synopsis,
            c->intro);
    for (const struct cli_flag *r = c->flags; r->name; r++) {
        char sh[8] = "", letter = short_of(c, r);
        if (letter)
            snprintf(sh, sizeof(sh), "-%c, ", letter);
        snprintf(left, sizeof(left), "  %s--%s%s%s", sh, r->name, r->arg ? " " : "",
                 r->arg ? r->arg : "");
        if (!r->def)
            snprintf(help, sizeof(help), "%s", r->help);
        else if (strcmp(r->def, CLI_REQUIRED) == 0)
            snprintf(help, sizeof(help), "%s (required)", r->help);
        else
            snprintf(help, sizeof(help), "%s (default: %s)", r->help, r->def);
        if ((int)strlen(left) + 1 >= FLAG_COL) {
            fprintf(f, "%s\n%*s", left, FLAG_COL, "");
        } else {
            fprintf(f, "%-*s", FLAG_COL, left);
        }
        put_wrapped(f, help, FLAG_COL, FLAG_COL);
    }
    if (c->epilog)
        fprintf(f, "\n%s", c->epilog);
}

int cli_usage_error(const struct cmd *c, const char *msg)
{
    fprintf(stderr, "%s %s: %s\n\n", c->prog ? c->prog : "sizeup", c->name, msg);
    cli_usage(c, stderr);
    return EXIT_USAGE;
}

/* ---- parsing ------------------------------------------------------------------------------- */

/* Why getopt_long refused argv[optind - 1], in words. */
static int refused(const struct cmd *c, int argc, char **argv, char *err)
{
    const char *arg = optind - 1 < argc ? argv[optind - 1] : "";
    if (optopt >= OPT_BASE) {
        const struct cli_flag *r = &c->flags[optopt - OPT_BASE];
        if (r->arg)
            return err_set(err, -EINVAL, "--%s needs a value (%s)", r->name, r->arg);
        return err_set(err, -EINVAL, "--%s takes no value", r->name);
    }
    size_t i = 0;
    const struct cli_flag *r = optopt > 0 ? row_of_short(c, optopt, &i) : NULL;
    if (r && r->arg)
        return err_set(err, -EINVAL, "-%c needs a value (%s)", optopt, r->arg);
    return err_set(err, -EINVAL, "unknown flag '%.64s'", arg);
}

int cli_parse(const struct cmd *c, int argc, char **argv, void *args, int *first_operand)
{
    struct option longopts[CLI_MAX_FLAGS + 2];
    char err[ERR_LEN] = "", shortopts[2 * CLI_MAX_FLAGS + 4]; /* a letter and ':' per row */
    size_t n = 0, k = 0;
    int opt;

    for (; c->flags[n].name; n++) {
        /* A table longer than CLI_MAX_FLAGS is a bug in the table, not input. */
        if (n == CLI_MAX_FLAGS)
            abort();
        longopts[n] =
            (struct option){c->flags[n].name, c->flags[n].arg ? required_argument : no_argument,
                            NULL, OPT_BASE + (int)n};
    }
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n] = (struct option){NULL, 0, NULL, 0};

    /* 0, not 1: glibc then also forgets the ordering mode and the position inside a word of a
     * previous parse ("+" or not), so that any number of parses in one process agree. */
    optind = 0;
    opterr = 0;
    /* "+": stop at the first operand, so an operand's own flags are never ours. */
    if ((c->opts & CLI_OPERANDS) && !(c->opts & CLI_PERMUTE))
        shortopts[k++] = '+';
    shortopts[k++] = 'h';
    for (const struct cli_short *sh = c->shorts; sh && sh->letter; sh++) {
        size_t i = 0;
        const struct cli_flag *r = row_of_short(c, sh->letter, &i);
        /* A letter for a row this command does not have: the table is shared. */
        if (!r)
            continue;
        shortopts[k++] = sh->letter;
        if (r->arg)
            shortopts[k++] = ':';
    }
    shortopts[k] = '\0';
    while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (opt == 'h') {
            cli_usage(c, stdout);
            return CLI_HELP;
        }
        if (opt < OPT_BASE && opt != '?' && opt != ':') {
            /* A one-letter form: the row it names. */
            size_t i = 0;
            if (row_of_short(c, opt, &i))
                opt = OPT_BASE + (int)i;
        }
        if (opt < OPT_BASE) {
            refused(c, argc, argv, err);
            return cli_usage_error(c, err);
        }
        const struct cli_flag *r = &c->flags[opt - OPT_BASE];
        if (r->set(r, optarg, (char *)args + r->off, err) != 0)
            return cli_usage_error(c, err);
    }
    if (optind < argc && !(c->opts & (CLI_OPERANDS | CLI_PERMUTE))) {
        err_set(err, -EINVAL, "unexpected argument '%.64s'", argv[optind]);
        return cli_usage_error(c, err);
    }
    *first_operand = optind;
    return 0;
}
