/*
 * dist.h - the shapes tasks come in, and the typical ones fragmentation is
 * measured against (Weng et al., ATC'23: the task shapes covering 95 % of
 * tasks, each weighted by its popularity).
 *
 * A shape is a task's whole request: CPU, memory, GPUs, share and allowed
 * models. struct place_dist counts shapes as they are observed, one task
 * at a time (count > 0) or taken back (count < 0), so a long-running
 * caller can learn the workload from the pods it sees: the simulator feeds
 * it the task list, the extender the pods of its informer cache. From the
 * counts, place_typical_build() takes the most popular shapes until they
 * cover the asked share of tasks; popularity ties go by shape order, so the
 * set is the same whatever order the tasks were seen in.
 *
 * Ownership: a place_dist owns its shape array (place_dist_release frees
 * it); a place_typical is a flat struct, copied or rebuilt at will.
 */
#ifndef DRAKE_PLACE_DIST_H
#define DRAKE_PLACE_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "place/place.h"

#define PLACE_DIST_MAX_SHAPES 4096 /* distinct shapes counted; more go to untracked */
#define PLACE_TYPICAL_MAX     256  /* shapes the measure sums over */
#define PLACE_COVERAGE_PCT    95   /* the study's share of tasks the typical shapes cover */
#define PLACE_DIST_MAX_TOTAL  (INT64_C(1) << 31) /* tasks counted at once: keeps sums in int64 */

struct place_shape {
	struct place_task t;
	int64_t count;
};

struct place_dist {
	struct place_shape *s; /* sorted by shape */
	size_t n, cap;
	int64_t total;     /* tasks counted, net of those taken back */
	int64_t untracked; /* of which in shapes beyond PLACE_DIST_MAX_SHAPES */
	uint64_t changes;  /* bumped by every observation: rebuild the typical set when it moves */
};

/* Shapes sharing a GPU request (GPUs, share, models): the measure tests the
 * GPUs once per group, then each shape's CPU and memory. */
struct place_group {
	int32_t num_gpu, gpu_milli;
	uint64_t models;
	int32_t first, n; /* shapes s[first .. first + n) */
	int64_t weight;   /* sum of their counts */
};

struct place_typical {
	size_t n;
	struct place_shape s[PLACE_TYPICAL_MAX]; /* in group order */
	int64_t total;                           /* sum of counts: popularity = count / total */
	size_t n_groups;
	struct place_group g[PLACE_TYPICAL_MAX];
	/* Popularity-weighted means over the typical shapes that use GPUs: CPU
	 * milli-cores and milli-GPU per task (both 0 when none does). Their
	 * ratio is the CPU a milli-GPU of work brings along (place/score.h). */
	int64_t gpu_task_cpu, gpu_task_gpu;
};

void place_dist_init(struct place_dist *d);
void place_dist_release(struct place_dist *d);

/* Counts count more tasks of t's shape (count < 0 takes them back; a count
 * never goes below zero). A shape beyond PLACE_DIST_MAX_SHAPES is counted
 * as untracked. More than PLACE_DIST_MAX_TOTAL tasks at once is
 * DRAKE_ELIMIT, out of memory DRAKE_ENOMEM, both with the counts unchanged. */
drake_err place_dist_observe(struct place_dist *d, const struct place_task *t,
                             int64_t count) DRAKE_MUST_CHECK;

/* The most popular shapes until they cover coverage_pct (1..100) of the
 * tasks counted, at most PLACE_TYPICAL_MAX; empty when nothing is counted. */
void place_typical_build(const struct place_dist *d, int coverage_pct, struct place_typical *out);

#endif
