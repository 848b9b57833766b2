/* The names and labels the YAML outputs write unquoted-safe (output.h, output_int.h): a
 * Deployment, container and env var name, a label selector and its matchLabels. Below
 * output_patch.c and output_pdb.c, which both check and write them. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "output/output.h"
#include "output/output_int.h"

#define NAME_MAX_LEN 253

/* A DNS-1123 subdomain (a Deployment name) or label (a container name): lower-case letters,
 * digits, '-' and (subdomain only) '.'. */
static int valid_name(const char *s, int dots)
{
    size_t n = strlen(s);
    if (n == 0 || n > (dots ? NAME_MAX_LEN : 63))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (dots && c == '.')))
            return 0;
    }
    return 1;
}

int output_env_name_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 256 || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

const char *output_workload_container(const struct output_workload *w)
{
    return w->container && *w->container ? w->container : w->deployment;
}

const char *output_workload_env(const struct output_workload *w)
{
    return w->workers_env && *w->workers_env ? w->workers_env : "WORKERS";
}

int output_workload_check(const struct output_workload *w, char *err)
{
    if (w->selector && output_selector_check(w->selector, err) != 0)
        return -EINVAL;
    if (!w->deployment)
        return 0;
    if (!valid_name(w->deployment, 1))
        return err_set(err, -EINVAL,
                       "'%.64s' is not a Deployment name (lower-case letters, digits, '-', '.')",
                       w->deployment);
    if (!valid_name(output_workload_container(w), 0))
        return err_set(err, -EINVAL,
                       "'%.64s' is not a container name (lower-case letters, digits, '-')",
                       output_workload_container(w));
    if (!output_env_name_valid(output_workload_env(w)))
        return err_set(err, -EINVAL, "'%.64s' is not an env var name", output_workload_env(w));
    return 0;
}

#define LABEL_NAME_MAX   63
#define LABEL_PREFIX_MAX 253

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A label name or value: at most 63 of [A-Za-z0-9-_.], starting and ending alphanumeric (a
 * value may be empty). */
static bool label_part(const char *s, size_t n, bool empty_ok)
{
    if (n == 0)
        return empty_ok;
    if (n > LABEL_NAME_MAX || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

/* A key's prefix: a DNS-1123 subdomain. */
static bool dns_subdomain(const char *s, size_t n)
{
    if (n == 0 || n > LABEL_PREFIX_MAX || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return false;
    return true;
}

static bool label_key(const char *s, size_t n)
{
    const char *slash = memchr(s, '/', n);
    if (!slash)
        return label_part(s, n, false);
    size_t p = (size_t)(slash - s);
    return dns_subdomain(s, p) && label_part(slash + 1, n - p - 1, false);
}

int output_selector_check(const char *sel, char *err)
{
    const char *p = sel;
    unsigned count = 0;

    if (!sel || !*sel)
        return err_set(err, -EINVAL, "an empty selector (give KEY=VALUE)");
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        if (!eq || !label_key(p, (size_t)(eq - p)) ||
            !label_part(eq + 1, len - (size_t)(eq - p) - 1, true))
            return err_set(err, -EINVAL,
                           "'%.*s' is not a label KEY=VALUE (a key such as app or "
                           "app.kubernetes.io/name, a value of at most 63 letters, digits, '-', "
                           "'_' and '.')",
                           (int)(len > 80 ? 80 : len), p);
        if (++count > OUTPUT_SELECTOR_MAX_LABELS)
            return err_set(err, -EINVAL, "more than %d labels in the selector",
                           OUTPUT_SELECTOR_MAX_LABELS);
        p += len;
        if (*p == ',' && !*++p)
            return err_set(err, -EINVAL, "a selector ending in ','");
    }
    return 0;
}

/* The matchLabels of sel ("k=v,k2=v2", checked) at indent, one "key": "value" a line. */
void output_match_labels(FILE *f, const char *sel, int indent)
{
    for (const char *p = sel; *p;) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        fprintf(f, "%*s\"%.*s\": \"%.*s\"\n", indent, "", (int)(eq - p), p,
                (int)(len - (size_t)(eq - p) - 1), eq + 1);
        p += len;
        if (*p == ',')
            p++;
    }
}
