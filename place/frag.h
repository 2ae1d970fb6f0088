/*
 * frag.h - GPU fragmentation of a node for a workload (Weng et al.,
 * "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
 * Fragmentation Gradient Descent", USENIX ATC'23), written from the
 * paper's description.
 *
 * For one typical shape m, the node's idle GPU capacity m cannot use:
 *   - all of it when m cannot go on the node at all: not enough CPU or
 *     memory, a GPU model m may not use, not enough GPUs with room for m's
 *     per-GPU request; a shape that asks for no GPU can use none of it;
 *   - otherwise the idle milli-GPU of the GPUs too full for m's per-GPU
 *     request (a whole-GPU shape cannot use a partly used GPU).
 * The node's fragmentation is the popularity-weighted sum over the typical
 * shapes. Kept in integers: place_frag returns sum(count_m x milli-GPU), so
 * it is exact and comparisons never hinge on rounding; divide by the
 * typical set's total for milli-GPU. A cluster's fragmentation is the sum
 * over its nodes; its fragmentation rate, that over its idle GPU capacity.
 */
#ifndef DRAKE_PLACE_FRAG_H
#define DRAKE_PLACE_FRAG_H

#include <stdint.h>

#include "place/dist.h"
#include "place/place.h"

/* sum over typical shapes of count x unusable idle milli-GPU; 0 for a node
 * with no idle GPU capacity or an empty typical set. */
int64_t place_frag(const struct place_node *n, const struct place_typical *ty);

/* The unusable idle milli-GPU of n for one shape (the rule above). */
int64_t place_frag_shape(const struct place_node *n, const struct place_task *m);

/*
 * Idle milli-GPU on n that its free CPU cannot bring work to: the idle GPU
 * capacity beyond what cpu_left feeds at the CPU the workload's GPU tasks
 * carry per milli-GPU (ty->gpu_task_cpu / ty->gpu_task_gpu). 0 when the
 * typical set has no GPU task. Unlike place_frag, which counts a shape only
 * once the node cannot take one more of it, this grows with every core
 * taken from a node whose GPUs still wait for work.
 */
int64_t place_stranded(const struct place_node *n, const struct place_typical *ty);

/* place_frag of n with t charged on gpus[] (from place_pick_gpus). */
int64_t place_frag_after(const struct place_node *n, const struct place_task *t, const int *gpus,
                         const struct place_typical *ty);

#endif
