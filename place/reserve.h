/*
 * reserve.h - which GPU models the workload's model-restricted tasks need,
 * learnt from the typical shapes and the cluster's GPUs per model, so that
 * drake's score (place/score.h) keeps those models' GPUs for them.
 *
 * Why: the fragmentation measure (place/frag.h) asks, node by node,
 * whether the typical shapes can still use its idle GPUs; it does not ask
 * whether a task could have gone to a model nobody else needs. A task that
 * may run on any model and takes a GPU of a model some tasks are
 * restricted to takes it from them when that model runs short, and they
 * then fit nowhere, while the GPUs of a plentiful model stay idle (the
 * placement study's gpuspec task lists, BENCHMARKS.md).
 *
 * Pure and deterministic; plain arrays, nothing allocated.
 */
#ifndef DRAKE_PLACE_RESERVE_H
#define DRAKE_PLACE_RESERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "place/dist.h"
#include "place/place.h"

/*
 * How much of each GPU model the workload's model-restricted tasks claim,
 * learnt from the typical shapes (ty) and the GPU capacity per model
 * (cap[model], milli-GPU; cap_total: all GPUs, models named or not).
 * Each restricted group's GPU demand, as a share of the typical shapes'
 * GPU demand, is spread over the capacity of the models it allows; a
 * model's claim is the sum over the groups allowing it, as a share of its
 * capacity when the cluster is full at the workload's mix:
 *   claim(X) = sum over g allowing X of (D_g / D) x (cap_total / cap(M_g))
 * out[X] = claim(X) in milli (0..1000, 1000: restricted tasks alone would
 * take every GPU of X). A task that can use another model pays, per
 * milli-GPU it takes on a node of X, out[X] / 1000 milli-GPU (score.h).
 * All 0 when no typical shape restricts models.
 */
void place_reserve_build(const struct place_typical *ty, const int64_t cap[PLACE_MAX_MODELS],
                         int64_t cap_total, int32_t out[PLACE_MAX_MODELS]);

/* GPU capacity (milli) per model over the nodes with known[i] true
 * (known NULL: all), into cap[]; returns the total, models named or not. */
int64_t place_model_capacity(const struct place_node *nodes, const bool *known, size_t n,
                             int64_t cap[PLACE_MAX_MODELS]);

#endif
