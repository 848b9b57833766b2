#include "sweep/variant.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/fmt.h"
#include "core/quantity.h"

static const char expected[] = "expected workers@cpu/memory, e.g. 2@1/512Mi or 1@500m/512Mi";

void variant_fill_names(struct variant *v)
{
    char cpu[QTY_LEN], mem[QTY_LEN];

    qty_format_cores(v->cpu_millicores, cpu);
    qty_format_memory(v->memory_bytes, mem);
    snprintf(v->spec, sizeof(v->spec), "%u@%s/%s", v->workers, cpu, mem);
    /* The reference load test's labels show whole cores with one decimal ("4.0c"), so the column
     * reads evenly. */
    if (v->cpu_millicores % 1000 == 0)
        snprintf(cpu, sizeof(cpu), "%lld.0", (long long)(v->cpu_millicores / 1000));
    snprintf(v->label, sizeof(v->label), "%uw / %sc / %s", v->workers, cpu, mem);
}

int variant_parse(const char *token, struct variant *out, char *err)
{
    char buf[VARIANT_TOKEN_MAX + 1], qerr[ERR_LEN];
    size_t len;
    unsigned long workers = 0;
    int64_t cpu = 0, mem = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!token || !*token)
        return err_set(err, -EINVAL, "empty variant: %s", expected);
    len = strlen(token);
    if (len > VARIANT_TOKEN_MAX)
        return err_set(err, -EINVAL, "variant '%.20s...' is longer than %d characters: %s", token,
                       VARIANT_TOKEN_MAX, expected);
    memcpy(buf, token, len + 1);

    char *at = strchr(buf, '@');
    if (!at)
        return err_set(err, -EINVAL, "bad variant '%s': missing '@': %s", token, expected);
    char *slash = strchr(at + 1, '/');
    if (!slash)
        return err_set(err, -EINVAL, "bad variant '%s': missing '/' before the memory: %s", token,
                       expected);
    *at = '\0';
    *slash = '\0';
    if (at == buf)
        return err_set(err, -EINVAL, "bad variant '%s': missing worker count: %s", token, expected);
    /* Workers: plain decimal digits only, so "+2", " 2" and "0x2" are refused. */
    for (const char *p = buf; *p; p++) {
        if (*p < '0' || *p > '9')
            return err_set(err, -EINVAL,
                           "bad variant '%s': worker count '%s' is not a whole number: %s", token,
                           buf, expected);
        workers = workers * 10 + (unsigned long)(*p - '0');
        if (workers > VARIANT_WORKERS_MAX)
            return err_set(err, -ERANGE, "bad variant '%s': more than %d workers", token,
                           VARIANT_WORKERS_MAX);
    }
    if (workers == 0)
        return err_set(err, -EINVAL, "bad variant '%s': worker count must be at least 1", token);

    rc = qty_parse_cpu(at + 1, &cpu, qerr);
    if (rc)
        return err_set(err, rc, "bad variant '%s': %s", token, qerr);
    if (cpu <= 0)
        return err_set(err, -EINVAL, "bad variant '%s': CPU must be above zero", token);
    if (cpu > VARIANT_CPU_MAX_M)
        return err_set(err, -ERANGE, "bad variant '%s': more than 1024 cores", token);
    rc = qty_parse_memory(slash + 1, &mem, qerr);
    if (rc)
        return err_set(err, rc, "bad variant '%s': %s", token, qerr);
    if (mem <= 0)
        return err_set(err, -EINVAL, "bad variant '%s': memory must be above zero", token);
    if (mem > VARIANT_MEMORY_MAX)
        return err_set(err, -ERANGE, "bad variant '%s': more than 64Ti of memory", token);
    /* The smallest memory limit a kubelet accepts in practice is a few MiB; below 4 MiB a
     * process cannot even start, so such a token is a unit mistake ("512" meaning 512Mi). */
    if (mem < 4 * FMT_MIB)
        return err_set(err, -EINVAL,
                       "bad variant '%s': memory '%s' is below 4Mi (did you mean %sMi?)", token,
                       slash + 1, slash + 1);

    out->workers = (unsigned)workers;
    out->cpu_millicores = cpu;
    out->memory_bytes = mem;
    variant_fill_names(out);
    return 0;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int variant_parse_list(const char *s, struct variant_list *out, char *err)
{
    char tok[VARIANT_TOKEN_MAX + 2];
    size_t len;
    int rc = 0;

    out->n = 0;
    if (!s)
        return err_set(err, -EINVAL, "empty variant list: %s", expected);
    len = strnlen(s, VARIANT_LIST_MAX + 1);
    if (len > VARIANT_LIST_MAX)
        return err_set(err, -EINVAL, "variant list is longer than %d characters", VARIANT_LIST_MAX);
    const char *p = s;
    while (*p) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && !is_space(*p))
            p++;
        size_t tlen = (size_t)(p - start);
        if (tlen > VARIANT_TOKEN_MAX) {
            rc = err_set(err, -EINVAL, "variant '%.20s...' is longer than %d characters: %s", start,
                         VARIANT_TOKEN_MAX, expected);
            goto out;
        }
        if (out->n >= VARIANT_MAX) {
            rc = err_set(err, -E2BIG, "more than %d variants in the list", VARIANT_MAX);
            goto out;
        }
        memcpy(tok, start, tlen);
        tok[tlen] = '\0';
        struct variant *v = &out->items[out->n];
        rc = variant_parse(tok, v, err);
        if (rc)
            goto out;
        for (size_t i = 0; i < out->n; i++) {
            const struct variant *o = &out->items[i];
            if (o->workers == v->workers && o->cpu_millicores == v->cpu_millicores &&
                o->memory_bytes == v->memory_bytes) {
                rc = err_set(err, -EINVAL, "variant '%s' repeats '%s' (variant %zu)", tok, o->spec,
                             i + 1);
                goto out;
            }
        }
        out->n++;
    }
    if (out->n == 0)
        rc = err_set(err, -EINVAL, "empty variant list: %s", expected);
out:
    if (rc)
        out->n = 0;
    return rc;
}
