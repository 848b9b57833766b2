#ifndef SIZEUP_ADVISE_SIZING_INTERNAL_H
#define SIZEUP_ADVISE_SIZING_INTERNAL_H

/* Between the sizing's steps: sizing.c (the answer's order, steps 1 and 2, the requests),
 * sizing_curve.c (steps 3 to 5), autoscale.c (step 6), packing.c (step 2 by packing), and the
 * helpers below them all, sizing_util.c. */

#include <stdbool.h>
#include <stddef.h>

#include "advise/sizing.h"

/* Relative tolerance under which two costs or rates count as equal (floating-point noise). */
#define SIZING_EPS 1e-9

/* ---- sizing_util.c ---- */

/* a and b equal within SIZING_EPS, relative. */
bool sizing__same(double a, double b);

/* ceil() that does not turn 7.000000000001 (a product of rounded decimals) into 8; at least 1. */
unsigned sizing__ceil_count(double x);

/* The best and the runner-up candidate under `better`; -1 when absent. */
void sizing__rank(const struct sizing *s,
                  bool (*better)(const struct sizing_variant *, const struct sizing_variant *),
                  int *best /* OUT */, int *second /* OUT */);

/* The best and the runner-up candidate for the target (cheapest total, fewer replicas, more
 * room per pod); -1 when absent. */
void sizing__rank_target(const struct sizing *s, int *best /* OUT */, int *second /* OUT */);

/* The lowest rate CPU was measured at within the SLO; < 0 when none was. */
double sizing__cpu_lowest_rps(const struct capacity_result *cap);

/* ---- the steps ---- */

/* Steps (3) and (4): s->replicas from o->scale_out's curve when it measured the recommended
 * variant, with replicas_note, dearer and why; else the linear count and curve_skipped. Borrows
 * rows and o. */
void sizing__curve_step(const struct sizing_row *rows, const struct sizing_opts *o,
                        struct sizing *s);

/* Step (5): availability's plan (o->availability) for s->replicas, its extra pods added; past
 * where the curve ends, unreachable. hpa_max_without is step (6)'s maxReplicas for the count
 * before (sizing__hpa_max), kept for the autoscaler's margin. */
void sizing__availability_step(const struct sizing_opts *o, unsigned hpa_max_without,
                               struct sizing *s);

/* Step (6)'s maxReplicas for s as it stands (autoscale.c), 0 when step (6) would make no HPA;
 * s unchanged. */
unsigned sizing__hpa_max(const struct sizing_opts *o, const struct sizing *s);

/* Step (6)'s max from the curve (s->from_curve): the smallest N from s->replicas to where the
 * curve ends that holds the target x (1 + growth); where it ends when none does. */
unsigned sizing__curve_hpa_max(const struct sizing_opts *o, const struct sizing *s);

/* Where the curve ends, in words, into buf: "its peak N* = 3.2", "2 x the 4 replicas
 * measured", or the replicas measured and why it is read no further. Returns buf. */
const char *sizing__cap_words(const struct sizing_curve *c, char *buf /* OUT */, size_t len);

/* The capacity of N replicas on the scale-out's curve (s->from_curve): the measured
 * lower bound where N was measured, else the fitted curve; not yet x planned_fraction. */
double sizing__curve_rps(const struct sizing_opts *o, const struct sizing *s, unsigned n);

/* Step (6), the autoscaler (autoscale.c): s->hpa from the recommended row, on CPU when its CPU
 * tracks load, else on the request rate, with maxReplicas leaving room to scale. */
void sizing__autoscale(const struct sizing_row *rows, const struct sizing_opts *o,
                       struct sizing *s);

/* Step (2) by packing (packing.c): with o->nnodes > 0 in capacity mode, sets s->by_packing
 * and each row's requests, cheapest node type, pods per node, nodes, pod_cost and total_cost
 * (a shape that fits no node type is no candidate). Borrows rows and o. */
void sizing__pack_rows(const struct sizing_row *rows, const struct sizing_opts *o,
                       struct sizing *s);

/* The sentence of a packing recommendation into s->why: the cheapest (shape, node type) pair,
 * the runner-up pair and the stranded share; `target` is the target in words ("" without
 * one). */
void sizing__pack_why(const struct sizing_row *rows, const struct sizing_opts *o, struct sizing *s,
                      const char *target);

/* Why no row qualifies by packing: the shapes that fit no node type, appended to s->why. */
void sizing__pack_none(const struct sizing_row *rows, const struct sizing_opts *o,
                       struct sizing *s);

#endif
