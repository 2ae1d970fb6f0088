/*
 * score.h - how good a node is for a task, under each placement policy of
 * the fragmentation study and under
 * drake's own, as one pure function of (node state, task, workload).
 *
 * Every score is higher-is-better, PLACE_NO_FIT when the task does not fit
 * (CPU, memory, GPUs or GPU model). Whoever places picks a highest-scoring
 * node; ties are the caller's (kube-scheduler draws among them at random;
 * the study's scheduler takes the first in a node order shuffled per run,
 * sim/placement.h). For a GPU share, *gpu gets the GPU to take; otherwise
 * -1 (whole GPUs: the lowest-numbered free ones, place_pick_gpus).
 *
 * The baselines are scored as the study's scheduler plugins score them:
 * integers 0..100, so close nodes tie and the tie rule decides:
 *   random      0 for every node;
 *   bestfit     100 x (1 - free CPU and GPU left after placing, each over
 *               the largest node's, weighted 0.5 / 0.5), rounded down;
 *   dotprod     100 x (1 - the mean of the normalised free x request
 *               products), rounded down: the smaller the product, the better;
 *   packing     a share that fits into partly used GPUs 50..100 (fuller
 *               GPUs higher), a task that must open free GPUs on a used node
 *               33..49, a node with every GPU free below 33;
 *   clustering  75..100 on nodes running only tasks of the same GPU
 *               request, 50..75 with others too, 25..50 idle nodes, 0..25
 *               nodes running only other requests; fuller nodes higher.
 * Tasks without GPUs score 0 under packing and clustering. Shares go to the
 * fullest GPU that holds them (best fit).
 *
 * fgd         100 x sigmoid(milli-GPU of fragmentation (place/frag.h) the
 *             placement removes / 1000), rounded down: FGD's gradient as the
 *             study scores it; a share takes the GPU scoring highest.
 *
 * drake (place_score_node): FGD's gradient, exact, plus the CPU-stranded
 * GPU capacity (place_stranded) the placement adds, plus the GPUs it takes
 * from a model that model-restricted tasks claim (place/reserve.h), all in
 * milli-GPU:
 *   points = -(growth of place_frag + growth of place_stranded
 *              + milli-GPU taken x reserve[node's model] / 1000)
 * in 1/PLACE_DRAKE_RESOLUTION milli-GPU, then best fit (less CPU and GPU
 * left) among equal points. Why the reserve: on a cluster of several GPU
 * models, a task that may run anywhere and takes a GPU of a model that
 * restricted tasks need leaves one of them without a place once that
 * model runs short, while a plentiful model's GPUs stay idle; the
 * fragmentation measure, node by node, does not see that the task had
 * somewhere else to go. Why the stranded term: FGD counts a shape only when the node can
 * no longer take one of it, so it sees no cost in cores taken from a node
 * whose GPUs still wait for work, until the node has too few left for any
 * GPU task and its GPUs are lost, and on a full cluster a node's CPU often
 * runs out before its GPUs do. Counting stranded capacity as it builds up
 * keeps CPU where GPUs need it, and the exact, tie-broken points do not
 * depend on which of several equal nodes the scheduler happens to draw,
 * as the study's bucketed FGD does (BENCHMARKS.md, ties drawn at random).
 */
#ifndef DRAKE_PLACE_SCORE_H
#define DRAKE_PLACE_SCORE_H

#include <stdint.h>

#include "place/dist.h"
#include "place/place.h"

#define PLACE_NO_FIT INT64_MIN

#define PLACE_DRAKE_RESOLUTION 1024    /* drake's points per milli-GPU */
#define PLACE_DRAKE_TIE_MAX    1048575 /* its best-fit tie-break: 0..2^20 - 1 */

enum place_policy {
	PLACE_RANDOM,
	PLACE_BESTFIT,
	PLACE_DOTPROD,
	PLACE_PACKING,
	PLACE_CLUSTERING,
	PLACE_FGD,
	PLACE_DRAKE,
	PLACE_NPOLICIES,
};

/* What scores read besides the node and the task. */
struct place_ctx {
	const struct place_typical *ty; /* fgd, drake: the workload's typical shapes */
	int64_t max_cpu_milli;          /* bestfit, dotprod, clustering: the largest node's */
	int64_t max_gpu_milli;
	const int32_t *reserve; /* drake: per model, place_reserve_build; NULL: none */
};

const char *place_policy_name(enum place_policy p);
/* The policy called name, or -1. */
int place_policy_parse(const char *name);

int64_t place_score(enum place_policy p, const struct place_node *n, const struct place_task *t,
                    const struct place_ctx *c, int *gpu);

/* The same with the node's current place_frag (frag_now) already known, as
 * a caller that keeps it per node does; frag_now < 0: compute it. */
int64_t place_score_cached(enum place_policy p, const struct place_node *n, int64_t frag_now,
                           const struct place_task *t, const struct place_ctx *c, int *gpu);

/*
 * drake's score, the one the extender's prioritize verb is to call: higher
 * is better, PLACE_NO_FIT when t does not fit n; *gpu as above. A pure
 * function of the node's state, the task and c (c->ty: the workload's
 * typical shapes, place/dist.h; c->max_*: the largest candidate node's;
 * c->reserve: place_reserve_build of c->ty and the GPUs per model).
 * Scores of different nodes for one task compare; place_normalize maps
 * them onto an extender's 0..max priorities.
 *
 * How an adapter drives it (what `drake sim placement` does per task):
 *   - one struct place_models for the cluster, a model named once per GPU
 *     model label a node carries; a pod's allowed models through
 *     place_models_mask;
 *   - per node, place_node_init from its allocatable CPU, memory, GPU
 *     count and model, then place_charge for every pod bound there (a
 *     share on the GPU its pod names, whole GPUs on any free ones);
 *   - one struct place_dist fed place_dist_observe(+1) as pods appear and
 *     (-1) as they go, and a struct place_typical rebuilt from it with
 *     place_typical_build(.., PLACE_COVERAGE_PCT, ..) when its changes
 *     counter has moved (a rebuild is a few thousand comparisons);
 *   - an int32_t reserve[PLACE_MAX_MODELS] from place_reserve_build of
 *     that typical set and place_model_capacity of the nodes (the
 *     cluster's, or the candidates', as place_priorities does);
 *   - for a pod, place_score_node on each candidate, then
 *     place_normalize(scores, n, 10, priorities); a share's *gpu from the
 *     chosen node is the GPU it should be bound to.
 */
int64_t place_score_node(const struct place_node *n, const struct place_task *t,
                         const struct place_ctx *c, int *gpu);

/*
 * Maps one task's scores onto 0..max for a scheduler extender's prioritize
 * answer (kube-scheduler's MaxExtenderPriority is 10): the best score gets
 * max and only it, PLACE_NO_FIT gets 0, the rest spread linearly between
 * the worst and the best over 0..max-1. out may be scores.
 */
void place_normalize(const int64_t *scores, size_t n, int64_t max, int64_t *out);

/*
 * One task's priorities over candidate nodes, as the extender's prioritize
 * verb answers them: place_score_node on each node (known[i] false: a node
 * the caller could not read, which scores as not fitting), with the largest
 * known candidate's CPU and GPU capacity as c->max_*, and the reserve built
 * from ty and the known candidates' GPUs per model, then place_normalize
 * onto 0..max. out has n entries.
 */
void place_priorities(const struct place_node *nodes, const bool *known, size_t n,
                      const struct place_task *t, const struct place_typical *ty, int64_t max,
                      int64_t *out);

#endif
