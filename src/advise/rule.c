#include "advise/rule.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "core/fmt.h"

void rule_default(struct rule *r)
{
    r->cores_per_worker = 1.0;
    r->memory_per_worker_mib = 192.0;
    r->max_workers = 8;
}

int rule_check(const struct rule *r, char *err)
{
    if (!(r->cores_per_worker > 0) || r->cores_per_worker > 1024)
        return err_set(err, -EINVAL, "cores_per_worker must be above 0 and at most 1024");
    if (!(r->memory_per_worker_mib > 0) || r->memory_per_worker_mib > RULE_MAX_MIB_PER_WORKER)
        return err_set(err, -EINVAL, "memory_per_worker_mib must be above 0 and at most %d",
                       RULE_MAX_MIB_PER_WORKER);
    if (r->max_workers < 1 || r->max_workers > RULE_MAX_WORKERS)
        return err_set(err, -EINVAL, "max_workers must be between 1 and %d", RULE_MAX_WORKERS);
    return 0;
}

const char *rule_format(const struct rule *r, char buf[RULE_EXPRESSION_LEN])
{
    if (!r)
        snprintf(buf, RULE_EXPRESSION_LEN, "%s", RULE_EXPRESSION);
    else
        snprintf(buf, RULE_EXPRESSION_LEN,
                 "workers = max(1, min(round(cores / %g), floor(memory_mib / %g), %u))",
                 r->cores_per_worker, r->memory_per_worker_mib, r->max_workers);
    return buf;
}

unsigned rule_eval(const struct rule *r, int64_t cpu_millicores, int64_t memory_bytes)
{
    /* Cores and MiB are computed the way the sh snippet in docs/sweep.md computes them
     * (quota / period, bytes / 1048576, FMT_MIB), so both round the same way on the same input. */
    double cores = (double)cpu_millicores / 1000.0;
    double mib = (double)memory_bytes / (double)FMT_MIB;
    double by_cpu = round(cores / r->cores_per_worker);
    double by_mem = floor(mib / r->memory_per_worker_mib);
    double w = by_cpu < by_mem ? by_cpu : by_mem;

    if (w > (double)r->max_workers)
        w = (double)r->max_workers;
    if (w < 1)
        w = 1;
    return (unsigned)w;
}

/* Finds key in a YAML mapping node; returns the value node or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

static int scalar_number(yaml_node_t *n, const char *source, const char *key, double *out,
                         char *err)
{
    char *end;

    if (!n)
        return err_set(err, -EINVAL, "%s: constants.%s is missing", source, key);
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.length == 0 || n->data.scalar.length > 32)
        return err_set(err, -EINVAL, "%s:%zu: constants.%s must be a number", source,
                       n->start_mark.line + 1, key);
    errno = 0;
    *out = strtod((char *)n->data.scalar.value, &end);
    if (errno || *end || !isfinite(*out))
        return err_set(err, -EINVAL, "%s:%zu: constants.%s '%s' is not a number", source,
                       n->start_mark.line + 1, key, (char *)n->data.scalar.value);
    return 0;
}

int rule_load_buffer(const char *buf, size_t len, const char *source, struct rule *out, char *err)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    int have_doc = 0, rc = 0;
    double cpw, mpw, maxw;

    if (len > RULE_MAX_BYTES)
        return err_set(err, -EFBIG, "%s is larger than %u bytes", source, RULE_MAX_BYTES);
    if (!yaml_parser_initialize(&parser))
        return err_set(err, -ENOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = err_set(err, -EINVAL, "%s:%zu: %s", source, parser.problem_mark.line + 1,
                     parser.problem ? parser.problem : "invalid YAML");
        goto out;
    }
    have_doc = 1;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    yaml_node_t *consts = map_get(&doc, root, "constants");
    if (!consts || consts->type != YAML_MAPPING_NODE) {
        rc = err_set(err, -EINVAL, "%s: no 'constants' mapping (expected an auto-sizing.yaml)",
                     source);
        goto out;
    }
    rc = scalar_number(map_get(&doc, consts, "cores_per_worker"), source, "cores_per_worker", &cpw,
                       err);
    if (rc)
        goto out;
    rc = scalar_number(map_get(&doc, consts, "memory_per_worker_mib"), source,
                       "memory_per_worker_mib", &mpw, err);
    if (rc)
        goto out;
    rc = scalar_number(map_get(&doc, consts, "max_workers"), source, "max_workers", &maxw, err);
    if (rc)
        goto out;
    if (maxw != floor(maxw) || maxw < 1 || maxw > RULE_MAX_WORKERS) {
        rc = err_set(err, -EINVAL, "%s: constants.max_workers must be a whole number 1..%d", source,
                     RULE_MAX_WORKERS);
        goto out;
    }
    out->cores_per_worker = cpw;
    out->memory_per_worker_mib = mpw;
    out->max_workers = (unsigned)maxw;
    rc = rule_check(out, err);
    if (rc)
        err_wrap(err, rc, "%s", source);
out:
    if (have_doc)
        yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int rule_load_file(const char *path, struct rule *out, char *err)
{
    char ebuf[64];
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n;
    int rc = 0;

    if (!f)
        return err_set(err, -errno, "%s: %s", path, err_str(errno, ebuf, sizeof(ebuf)));
    buf = malloc(RULE_MAX_BYTES + 1);
    if (!buf) {
        rc = err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    n = fread(buf, 1, RULE_MAX_BYTES + 1, f);
    if (ferror(f)) {
        rc = err_set(err, -EIO, "%s: read error", path);
        goto out;
    }
    if (n > RULE_MAX_BYTES) {
        rc = err_set(err, -EFBIG, "%s is larger than %u bytes", path, RULE_MAX_BYTES);
        goto out;
    }
    rc = rule_load_buffer(buf, n, path, out, err);
out:
    free(buf);
    fclose(f);
    return rc;
}
