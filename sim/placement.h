/*
 * placement.h - the placement study behind `drake sim placement`: the
 * experiment of Weng et al., "Beware of Fragmentation" (USENIX ATC'23) on
 * place/'s pure scores.
 *
 * One run = one policy, one seed:
 *   1. the workload: the whole task list; tasks drawn from it at random,
 *      with replacement, are appended while the total GPU request stays
 *      within --arrive (130 %) of the cluster's GPUs (a list already above
 *      it loses tasks drawn at random until it is within), then the order
 *      is shuffled. It depends on the seed only, so every policy places the
 *      same tasks in the same order;
 *   2. the tasks are placed one at a time and never leave: each goes to a
 *      highest-scoring node that fits it, or fails and is skipped. Ties go
 *      to the first node in an order shuffled once per seed, as in the
 *      study, whose scheduler (a modified kube-scheduler) takes the first
 *      best node and names the nodes in a random order per seed; stock
 *      kube-scheduler draws among them at random instead (--ties random).
 *      The random policy draws a feasible node either way;
 *   3. after every task (placed or not): arrived = GPU requests seen so far
 *      over the cluster's GPUs; allocation = GPU capacity placed over the
 *      cluster's GPUs (a share counts its milli / 1000); fragmentation rate
 *      = the cluster's fragmentation (place/frag.h) over its idle GPU
 *      capacity. Each is averaged per whole percent of arrived (the steps
 *      whose arrived rounds to it), as the study's analysis does.
 *
 * The typical shapes are those of the task list (place/dist.h, 95 %), as
 * the study computes them for FGD, or (learn_window > 0) those the
 * production learner has seen as the tasks arrived, as drake's score runs
 * on the cluster. The restricted shapes' claim on each GPU model
 * (place_reserve_build) is built from the same shapes and the cluster's
 * GPUs per model.
 *
 * Ownership: the load functions fill caller structs whose arrays they
 * allocate; the matching _release frees them. placement_run allocates only
 * what it frees before returning.
 */
#ifndef DRAKE_SIM_PLACEMENT_H
#define DRAKE_SIM_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "place/dist.h"
#include "place/place.h"
#include "place/score.h"
#include "sim/trace.h"

#define PLACEMENT_MAX_PCT 200 /* the furthest arrived percent recorded */

/* A task list (Alibaba openb_pod_list layout): a header naming cpu_milli,
 * memory_mib, num_gpu, gpu_milli and optionally gpu_spec, in any order,
 * other columns ignored. Every row is checked; the first bad one fails the
 * load with file:line and the field. */
struct placement_tasks {
	struct place_task *t;
	size_t n;
};

/* The cluster: one node per node-list row, GPU models named in models. */
struct placement_cluster {
	struct place_node *nodes;
	size_t n;
	struct place_models models;
	int64_t gpu_milli;                    /* all GPUs, in milli */
	int64_t max_cpu_milli, max_gpu_milli; /* the largest node's */
};

struct placement_opts {
	double arrive;    /* GPU requests over cluster GPUs to build the workload to, 1.3 */
	int coverage_pct; /* typical shapes, 95 */
};

/* One run's curves, indexed by arrived percent 0..PLACEMENT_MAX_PCT; a
 * percent no step rounded to holds -1. */
struct placement_run {
	double alloc[PLACEMENT_MAX_PCT + 1];     /* allocated GPU capacity / cluster GPUs */
	double frag_rate[PLACEMENT_MAX_PCT + 1]; /* fragmentation / idle GPU capacity */
	size_t tasks, failed;
	int64_t failed_gpu_milli;
	size_t nodes_used;                 /* nodes running a task at the end */
	double final_arrived, final_alloc; /* after the last task */
};

drake_err placement_tasks_parse(const char *buf, size_t len, const char *file,
                                struct place_models *models, struct placement_tasks *out, char *msg,
                                size_t mlen) DRAKE_MUST_CHECK;
drake_err placement_tasks_load(const char *path, struct place_models *models,
                               struct placement_tasks *out, char *msg,
                               size_t mlen) DRAKE_MUST_CHECK;
void placement_tasks_release(struct placement_tasks *t);

/* Nodes from a node list (sim/trace.h); a node with more than
 * PLACE_MAX_GPUS GPUs or a model the table cannot hold is an error naming
 * its file:line. */
drake_err placement_cluster_build(const struct sim_nodes *rows, const char *file,
                                  struct placement_cluster *out, char *msg,
                                  size_t mlen) DRAKE_MUST_CHECK;
void placement_cluster_release(struct placement_cluster *c);

/* How a tie between best-scoring nodes is settled. */
enum placement_ties {
	PLACEMENT_TIES_ORDER,  /* the first in a node order shuffled once per seed: the study's */
	PLACEMENT_TIES_RANDOM, /* drawn at random per task: stock kube-scheduler's selectHost */
};

/* The seed's workload (step 1 above) into *out (n tasks; caller frees). */
drake_err placement_workload(const struct placement_tasks *tasks, int64_t cluster_gpu_milli,
                             double arrive, uint64_t seed, struct place_task **out,
                             size_t *n) DRAKE_MUST_CHECK;

/* Places the workload w with policy p (steps 2 and 3). ty: the typical
 * shapes the fragmentation rate is measured against, and those fgd and
 * drake score with when learn_window is 0; otherwise they score with the
 * shapes a place_learner of that window (place/learn.h) has seen so far,
 * each task counted before it is scored, as the prioritize verb does on
 * the cluster. seed orders the nodes and draws. */
drake_err placement_run(const struct placement_cluster *c, const struct place_typical *ty,
                        size_t learn_window, const struct place_task *w, size_t n,
                        enum place_policy p, uint64_t seed, enum placement_ties ties,
                        struct placement_run *out, char *msg, size_t mlen) DRAKE_MUST_CHECK;

#endif
