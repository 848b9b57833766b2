/* Cost by node packing (packing.h). */

#include "advise/packing.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advise/advisor.h"
#include "advise/advisor_int.h"
#include "advise/sizing_int.h"
#include "core/fmt.h"
#include "core/quantity.h"
#include "core/text.h"
#include "profile/profile.h"

/* "%.*f" without trailing zeros (and without a trailing point). */
static void trimmed(double x, int digits, const char *unit, char buf[QTY_LEN])
{
    char num[QTY_LEN];
    snprintf(num, sizeof(num), "%.*f", digits, x);
    char *dot = strchr(num, '.');
    if (dot) {
        char *e = num + strlen(num) - 1;
        while (e > dot && *e == '0')
            *e-- = 0;
        if (e == dot)
            *e = 0;
    }
    snprintf(buf, QTY_LEN, "%s%s", num, unit);
}

const char *packing_format_memory(int64_t bytes, char buf[QTY_LEN])
{
    if (bytes == 0 || bytes % FMT_MIB == 0)
        return bytes == 0 ? (snprintf(buf, QTY_LEN, "0Mi"), buf) : qty_format_memory(bytes, buf);
    if (bytes >= FMT_GIB || -bytes >= FMT_GIB)
        trimmed((double)bytes / (double)FMT_GIB, 2, "Gi", buf);
    else
        trimmed((double)bytes / (double)FMT_MIB, 1, "Mi", buf);
    return buf;
}

struct packing_node packing_node_of(const struct profile_node_type *t)
{
    return (struct packing_node){t->name,           t->cpu_m,           t->memory,
                                 t->reserved_cpu_m, t->reserved_memory, t->price,
                                 t->not_in_cluster};
}

static const char *bind_name(enum packing_bind b)
{
    return b == PACKING_BIND_CPU ? "CPU" : b == PACKING_BIND_MEMORY ? "memory" : "none";
}

int packing_fit(int64_t req_cpu_m, int64_t req_memory, unsigned replicas,
                const struct packing_node *n, struct packing_fit *out, char *err)
{
    char a[QTY_LEN], b[QTY_LEN], c[QTY_LEN], d[QTY_LEN];
    const char *name = n && n->name ? n->name : "node";

    memset(out, 0, sizeof(*out));
    if (req_cpu_m <= 0 || req_memory <= 0)
        return err_set(err, -EINVAL, "packing: a pod must request CPU and memory (> 0)");
    if (replicas < 1)
        return err_set(err, -EINVAL, "packing: at least one replica");
    if (!n || n->cpu_m <= 0 || n->memory <= 0 || n->reserved_cpu_m < 0 || n->reserved_memory < 0 ||
        !(n->price >= 0))
        return err_set(err, -EINVAL,
                       "packing: node type %s: capacity > 0, reserved and price "
                       ">= 0",
                       name);
    int64_t alloc_cpu = n->cpu_m - n->reserved_cpu_m, alloc_mem = n->memory - n->reserved_memory;
    int64_t by_cpu = alloc_cpu > 0 ? alloc_cpu / req_cpu_m : 0;
    int64_t by_mem = alloc_mem > 0 ? alloc_mem / req_memory : 0;
    out->binding = by_cpu <= by_mem ? PACKING_BIND_CPU : PACKING_BIND_MEMORY;
    int64_t ppn = by_cpu <= by_mem ? by_cpu : by_mem;
    qty_format_cpu(alloc_cpu > 0 ? alloc_cpu : 0, a);
    packing_format_memory(alloc_mem > 0 ? alloc_mem : 0, b);
    qty_format_cpu(req_cpu_m, c);
    packing_format_memory(req_memory, d);
    if (ppn < 1) {
        snprintf(out->text, sizeof(out->text),
                 "a pod requesting %s CPU and %s fits no %s%s (%s CPU and %s allocatable): its %s "
                 "does not fit",
                 c, d, name, n->not_in_cluster ? " (not in this cluster)" : "", a, b,
                 bind_name(out->binding));
        return 0;
    }
    if (ppn > UINT32_MAX)
        ppn = UINT32_MAX;
    out->fits = true;
    out->pods_per_node = (unsigned)ppn;
    out->nodes = replicas / out->pods_per_node + (replicas % out->pods_per_node != 0);
    out->cost = out->nodes * n->price;
    out->stranded_cpu_m = alloc_cpu - ppn * req_cpu_m;
    out->stranded_memory = alloc_mem - ppn * req_memory;
    out->stranded_cpu_share = (double)out->stranded_cpu_m / (double)alloc_cpu;
    out->stranded_memory_share = (double)out->stranded_memory / (double)alloc_mem;
    char sc[QTY_LEN], sm[QTY_LEN];
    snprintf(out->text, sizeof(out->text),
             "%s%s: %s CPU and %s allocatable hold %u pod%s of %s CPU and %s (%s binds); %u "
             "replica%s %s %u node%s, %.4g; each full node strands %s CPU (%.0f%%) and %s "
             "(%.0f%%)",
             name, n->not_in_cluster ? " (not in this cluster)" : "", a, b, out->pods_per_node,
             out->pods_per_node == 1 ? "" : "s", c, d, bind_name(out->binding), replicas,
             replicas == 1 ? "" : "s", replicas == 1 ? "takes" : "take", out->nodes,
             out->nodes == 1 ? "" : "s", out->cost, qty_format_cpu(out->stranded_cpu_m, sc),
             out->stranded_cpu_share * 100, packing_format_memory(out->stranded_memory, sm),
             out->stranded_memory_share * 100);
    return 0;
}

/* a is a better pick than b: cheaper, then fewer nodes. */
static bool better(const struct packing_fit *a, const struct packing_fit *b)
{
    if (a->cost != b->cost)
        return a->cost < b->cost;
    return a->nodes < b->nodes;
}

int packing_best(const struct packing_candidate *shapes, size_t ns,
                 const struct packing_node *nodes, size_t nn, struct packing_choice *out, char *err)
{
    struct packing_fit f;

    memset(out, 0, sizeof(*out));
    out->best_shape = out->best_node = out->second_shape = out->second_node = -1;
    for (size_t s = 0; s < ns; s++) {
        for (size_t k = 0; k < nn; k++) {
            int rc = packing_fit(shapes[s].req_cpu_m, shapes[s].req_memory, shapes[s].replicas,
                                 &nodes[k], &f, err);
            if (rc)
                return rc;
            if (!f.fits)
                continue;
            if (out->best_shape < 0 || better(&f, &out->best)) {
                out->second = out->best;
                out->second_shape = out->best_shape;
                out->second_node = out->best_node;
                out->best = f;
                out->best_shape = (int)s;
                out->best_node = (int)k;
            } else if (out->second_shape < 0 || better(&f, &out->second)) {
                out->second = f;
                out->second_shape = (int)s;
                out->second_node = (int)k;
            }
        }
    }
    if (out->best_shape < 0) {
        snprintf(out->text, sizeof(out->text), "no shape fits any node type");
        return 0;
    }
    int w = snprintf(out->text, sizeof(out->text), "cheapest: %s on %s",
                     shapes[out->best_shape].shape ? shapes[out->best_shape].shape : "the shape",
                     out->best.text);
    if (out->second_shape >= 0 && w > 0 && (size_t)w < sizeof(out->text))
        snprintf(out->text + w, sizeof(out->text) - (size_t)w, "; runner-up: %s on %s",
                 shapes[out->second_shape].shape ? shapes[out->second_shape].shape : "the shape",
                 out->second.text);
    return 0;
}

void packing_apply(const struct profile_node_type *nodes, size_t nn, struct advice *a)
{
    struct packing_node pn[PROFILE_MAX_NODE_TYPES];
    struct packing_choice c;
    char err[ERR_LEN];

    if (nn == 0 || a->recommended < 0)
        return;
    if (nn > PROFILE_MAX_NODE_TYPES)
        nn = PROFILE_MAX_NODE_TYPES;
    for (size_t i = 0; i < nn; i++)
        pn[i] = packing_node_of(&nodes[i]);
    struct packing_candidate shape = {a->request_cpu_m, a->request_memory,
                                      a->replicas ? a->replicas : 1, "the recommendation"};
    if (packing_best(&shape, 1, pn, nn, &c, err) != 0) {
        advisor__finding(a, "packing: %s", err);
        return;
    }
    if (c.best_shape < 0) {
        char cb[QTY_LEN], mb[QTY_LEN];
        advisor__finding(a,
                         "packing: the recommendation's pods (requests %s CPU, %s) fit none of "
                         "the %zu node type%s",
                         qty_format_cpu(a->request_cpu_m, cb),
                         packing_format_memory(a->request_memory, mb), nn, nn == 1 ? "" : "s");
        return;
    }
    /* Two fits' sentences and their names may not fit the choice's: a cut one is a cut finding,
     * the answer's error (advisor__check_text). */
    if (text_full(c.text, sizeof(c.text)))
        a->findings_cut++;
    advisor__finding(a, "packing by requests: %s", c.text);
}

/* ---- step (2) of the sizing by packing (sizing_int.h) -------------------------------------
 */

static size_t node_count(const struct sizing_opts *o)
{
    return o->nnodes > PROFILE_MAX_NODE_TYPES ? PROFILE_MAX_NODE_TYPES : o->nnodes;
}

/* Is fit a (on its node type's price) a better node for one shape than b? With a target the
 * cheaper total, then fewer nodes; without, the cheaper pod slot (price / pods per node). */
static bool better_node(bool target, const struct packing_fit *a, double pa,
                        const struct packing_fit *b, double pb)
{
    if (target)
        return better(a, b);
    return pa / a->pods_per_node < pb / b->pods_per_node;
}

void sizing__pack_rows(const struct sizing_row *rows, const struct sizing_opts *o, struct sizing *s)
{
    size_t nn = node_count(o);
    bool target = s->target_rps > 0;
    char err[ERR_LEN];

    if (nn == 0 || s->streams)
        return;
    s->by_packing = true;
    for (size_t i = 0; i < s->n; i++) {
        struct sizing_variant *v = &s->rows[i];
        struct packing_fit f, best = {0};
        struct sizing_requests r;
        v->node = -1;
        if (!v->candidate)
            continue;
        const struct variant *var = rows[i].variant;
        sizing_requests(rows[i].cap->cpu_cores, 1.0, rows[i].cap->peak_memory_bytes,
                        var->cpu_millicores, var->memory_bytes, &r);
        v->req_cpu_m = r.cpu_m;
        v->req_memory = r.memory;
        for (size_t k = 0; k < nn; k++) {
            struct packing_node pn = packing_node_of(&o->nodes[k]);
            if (packing_fit(r.cpu_m, r.memory, v->replicas ? v->replicas : 1, &pn, &f, err) != 0 ||
                !f.fits)
                continue;
            if (v->node < 0 || better_node(target, &f, pn.price, &best, o->nodes[v->node].price)) {
                best = f;
                v->node = (int)k;
            }
        }
        if (v->node < 0) {
            v->candidate = false;
            v->fits_no_node = true;
            continue;
        }
        v->pods_per_node = best.pods_per_node;
        v->nodes = best.nodes;
        v->pod_cost = o->nodes[v->node].price / best.pods_per_node;
        v->total_cost = target ? best.cost : 0;
        v->rps_per_cost = v->pod_cost > 0 ? v->planned_rps / v->pod_cost : HUGE_VAL;
    }
}

/* The pair after (best row, its node) over every candidate row and node type: the cheapest
 * other total (target) or the cheapest other pod slot. *row < 0 when there is none. */
static void runner_up(const struct sizing_opts *o, const struct sizing *s, int *row, int *node,
                      struct packing_fit *out)
{
    size_t nn = node_count(o);
    bool target = s->target_rps > 0;
    char err[ERR_LEN];
    struct packing_fit f;

    memset(out, 0, sizeof(*out));
    *row = *node = -1;
    for (size_t i = 0; i < s->n; i++) {
        const struct sizing_variant *v = &s->rows[i];
        if (!v->candidate)
            continue;
        for (size_t k = 0; k < nn; k++) {
            if ((int)i == s->recommended && (int)k == v->node)
                continue;
            struct packing_node pn = packing_node_of(&o->nodes[k]);
            if (packing_fit(v->req_cpu_m, v->req_memory, v->replicas ? v->replicas : 1, &pn, &f,
                            err) != 0 ||
                !f.fits)
                continue;
            if (*row < 0 || better_node(target, &f, pn.price, out, o->nodes[*node].price)) {
                *out = f;
                *row = (int)i;
                *node = (int)k;
            }
        }
    }
}

void sizing__pack_why(const struct sizing_row *rows, const struct sizing_opts *o, struct sizing *s,
                      const char *target)
{
    const struct sizing_variant *v = &s->rows[s->recommended];
    const struct profile_node_type *t = &o->nodes[v->node];
    struct packing_node pn = packing_node_of(t);
    struct packing_fit f, r;
    char err[ERR_LEN], cb[QTY_LEN], mb[QTY_LEN], sc[QTY_LEN], sm[QTY_LEN];
    int rrow, rnode;

    if (packing_fit(v->req_cpu_m, v->req_memory, v->replicas ? v->replicas : 1, &pn, &f, err))
        memset(&f, 0, sizeof(f));
    qty_format_cpu(v->req_cpu_m, cb);
    packing_format_memory(v->req_memory, mb);
    qty_format_cpu(f.stranded_cpu_m, sc);
    packing_format_memory(f.stranded_memory, sm);
    const char *absent = t->not_in_cluster ? " (not in this cluster)" : "";
    if (s->by_target)
        snprintf(s->why, sizeof(s->why),
                 "the cheapest (shape, node type) pair for the target of %s: %u x %s (requests "
                 "%s CPU, %s) on %u x %s%s at %.4g = %.4g, %u pod%s per node (%s binds), each "
                 "full node stranding %s CPU (%.0f%%) and %s (%.0f%%)",
                 target, v->replicas, rows[s->recommended].variant->label, cb, mb, v->nodes,
                 t->name, absent, t->price, v->total_cost, v->pods_per_node,
                 v->pods_per_node == 1 ? "" : "s", bind_name(f.binding), sc,
                 f.stranded_cpu_share * 100, sm, f.stranded_memory_share * 100);
    else
        snprintf(s->why, sizeof(s->why),
                 "the most planned capacity per node price: %s (requests %s CPU, %s) packs %u "
                 "per %s%s (%s binds) at %.4g, %.0f planned %s per unit, each full node "
                 "stranding %s CPU (%.0f%%) and %s (%.0f%%)",
                 rows[s->recommended].variant->label, cb, mb, v->pods_per_node, t->name, absent,
                 bind_name(f.binding), t->price, v->rps_per_cost, "req/s", sc,
                 f.stranded_cpu_share * 100, sm, f.stranded_memory_share * 100);
    runner_up(o, s, &rrow, &rnode, &r);
    if (rrow >= 0 && s->by_target)
        text_catf(s->why, sizeof(s->why), "; runner-up: %u x %s on %u x %s%s = %.4g (%u per node)",
                  s->rows[rrow].replicas, rows[rrow].variant->label, r.nodes, o->nodes[rnode].name,
                  o->nodes[rnode].not_in_cluster ? " (not in this cluster)" : "", r.cost,
                  r.pods_per_node);
    else if (rrow >= 0)
        text_catf(s->why, sizeof(s->why), "; runner-up: %s at %u per %s%s (%.4g per pod)",
                  rows[rrow].variant->label, r.pods_per_node, o->nodes[rnode].name,
                  o->nodes[rnode].not_in_cluster ? " (not in this cluster)" : "",
                  o->nodes[rnode].price / r.pods_per_node);
    text_catf(s->why, sizeof(s->why), "; priced by node packing, so the cost: weights are unused");
}

void sizing__pack_none(const struct sizing_row *rows, const struct sizing_opts *o, struct sizing *s)
{
    char cb[QTY_LEN], mb[QTY_LEN];
    unsigned none = 0;

    for (size_t i = 0; i < s->n; i++) {
        const struct sizing_variant *v = &s->rows[i];
        if (!v->fits_no_node)
            continue;
        text_catf(s->why, sizeof(s->why), "%s%s (requests %s CPU, %s)",
                  none++ ? ", " : "; by packing, these shapes fit none of the node types: ",
                  rows[i].variant->label, qty_format_cpu(v->req_cpu_m, cb),
                  packing_format_memory(v->req_memory, mb));
    }
    (void)o;
}
