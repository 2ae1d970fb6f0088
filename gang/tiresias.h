/*
 * tiresias.h - Tiresias' discretized two-dimensional least-attained-service
 * order (2D-LAS, Gu et al., NSDI'19) for rigid gang jobs, as the Pollux
 * artifact re-implemented it for its "Tiresias + TunedJobs" baseline
 * (petuum/adaptdl, branch osdi21-artifact, simulator/tiresias.py).
 *
 * Attained service is GPUs x seconds run. Jobs sit in priority queues by
 * it: a job enters the top queue when first seen and moves down one queue
 * each time its service since it (re)entered the top queue passes that
 * queue's threshold (checked only while it runs). Queues are served top
 * first; inside a queue, in the order jobs joined it (a demoted or promoted
 * job joins at the end; ties by the caller's sequence, i.e. arrival). In
 * that order a job runs when its GPUs fit in what the jobs before it left
 * of the cluster's GPUs, else it waits, and later jobs that fit still run
 * (a skip, not a barrier). A running job that no longer fits in that order
 * is preempted: the caller stops it, and starts the jobs that now run.
 *
 * Starvation (PROMOTEKNOB): a job below the top queue that has waited,
 * since it first ran, at least knob x its run time since it last entered
 * the top queue goes back to the top queue, both counters reset. Knob 0
 * turns it off, which is what the artifact runs (_solve_starvation = 0).
 *
 * The fit is by GPU count over the whole cluster, as in the artifact: its
 * jobs take whole GPUs anywhere. drake_las_place() is the artifact's
 * placement: node with the most free GPUs first (ties: lowest index), as
 * many of the job's GPUs there as fit, until all are placed.
 *
 * Pure: no I/O, the clock is passed in, deterministic. The per-job state
 * is the caller's, kept with the job between decisions and updated here.
 */
#ifndef DRAKE_GANG_TIRESIAS_H
#define DRAKE_GANG_TIRESIAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DRAKE_LAS_MAX_QUEUES 8       /* thresholds + 1 */
#define DRAKE_LAS_MAX_JOBS   1000000 /* jobs in one decision */

struct drake_las_opts {
	int n_queues;                               /* 1..DRAKE_LAS_MAX_QUEUES */
	double threshold[DRAKE_LAS_MAX_QUEUES - 1]; /* GPU-seconds, ascending */
	double promote_knob;                        /* 0: no promotion */
};

/* The artifact's settings: two queues split at 16 GPU-hours, no promotion. */
void drake_las_defaults(struct drake_las_opts *o);

/* What the rule remembers of a job; zeroed before its first decision. */
struct drake_las_state {
	bool seen;
	int queue;                /* 0 is the top */
	double entered;           /* when it joined its queue */
	double last_check;        /* the previous decision that saw it */
	double executed;          /* seconds run since it last entered the top queue */
	double total_executed;    /* seconds run in all */
	double pending_since_run; /* seconds waited since it first ran (reset on promotion) */
};

struct drake_las_job {
	int64_t gpus;               /* what it runs on, rigid */
	bool running;               /* it held its GPUs since the previous decision */
	uint64_t seq;               /* arrival order: ties within a queue */
	struct drake_las_state *st; /* updated in place */
	bool run;                   /* out: it runs after this decision */
};

/*
 * One decision at `now` over n live jobs (finished jobs are simply left
 * out) on a cluster of total_gpus: brings each job's service and waiting up
 * to now, demotes and promotes, and sets every job's `run`. order (n
 * entries, may be NULL) receives the jobs' indexes in priority order: the
 * order in which the caller should start the jobs that now run.
 * DRAKE_EINVAL for a negative GPU count, a NULL state, options out of
 * range or a clock that goes back; DRAKE_ELIMIT for more than
 * DRAKE_LAS_MAX_JOBS jobs; DRAKE_ENOMEM. Nothing is changed on an error.
 */
drake_err drake_las_decide(struct drake_las_job *jobs, size_t n, int64_t total_gpus, double now,
                           const struct drake_las_opts *o, size_t *order) DRAKE_MUST_CHECK;

/*
 * A state for a job the rule has not kept (a controller that restarted or
 * changed leader): its queue from its attained service (GPU-seconds)
 * against the thresholds, entered at now, its run time service / gpus,
 * seen at now. Exact for the queue without promotion; its place inside the
 * queue (entered) is lost, so jobs rebuilt together keep arrival order.
 */
void drake_las_rebuild(struct drake_las_state *st, double service, int64_t gpus, double now,
                       const struct drake_las_opts *o);

/*
 * The artifact's placement of a job of `gpus` GPUs: free[i] is node i's
 * free GPUs (n nodes, decreased here as GPUs are taken); node[0..gpus) gets
 * each GPU's node, grouped by node. DRAKE_ESTATE when the free GPUs are
 * too few (nothing is changed then).
 */
drake_err drake_las_place(int64_t *free, size_t n, int64_t gpus, int *node) DRAKE_MUST_CHECK;

#endif
