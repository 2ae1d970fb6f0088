/*
 * elastic.h - drake's starvation shrink for running gangs.
 *
 * Starvation shrink: a job that has waited past the threshold may take
 * workers from running jobs, down to each one's min, never a PS and never
 * worker 0, never from a job that is ending or whose wave is still binding
 * (drake_running_job.binding), "lonely" workers (not on their PS's node, worker 0's without a PS)
 * first, then in the victim order chosen (newest admitted, oldest admitted, least progress, most
 * attained service, or most GPU-seconds expected left first), a job whose progress is slowing or
 * converged before any other (SpeCon: slow-growing jobs yield first). Nothing is taken unless the
 * whole starving job, PS included, then fits; and workers that turn out not to be needed are given
 * back before answering, so the fewest are removed.
 *
 * Jobs are passed in admission order: ties of the victim order (admission
 * times are whole seconds on a cluster; progress may be unknown, negative)
 * are broken by that order, reversed except for oldest-first. So with no
 * progress known, least-progress takes from the newest job first.
 *
 * Growth is gang/scale.h's (by modelled gain).
 *
 * Pure: reads the snapshot (a private clone is made and freed inside). The
 * op array and the plan returned belong to the caller: free(ops) and
 * drake_plan_release(plan).
 */
#ifndef DRAKE_GANG_ELASTIC_H
#define DRAKE_GANG_ELASTIC_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "gang/cluster.h"
#include "gang/planner.h"
#include "gang/speed.h"
#include "gang/speed_fit.h"

/* A running gang as the scaling rules see it. Worker slot 0 is worker 0. */
struct drake_running_job {
	const char *name;
	double admitted; /* admission time */
	double progress; /* fraction of work done, 0..1; negative when unknown */
	int min_workers;
	int max_workers;
	struct drake_res ps;
	struct drake_res worker;
	int n_ps;
	const int *ps_node;
	int n_workers;
	const int *worker_node;
	double last_scaled;   /* its latest change of size (admitted if none) */
	bool gave_to_waiting; /* shrunk for a job that still waits: not grown */
	bool slow;            /* its progress is slowing or converged: gives first, grows last */
	bool ending;          /* a member has ended (Succeeded): the rest of its room frees
	                         soon; it neither gives workers nor grows */
	double ending_since;  /* when the first member ended */
	double service;       /* attained service: GPU-seconds run so far, 0 unknown */
	/* rates it ran at, per size and spread (gang/speed_fit.h); may be NULL */
	const struct drake_speed_obs *obs;
	int n_obs;
	int want_workers; /* the workers its spec asks for; beyond them, workers are a loan
	                     of idle capacity (gang/scale.h); 0 unknown: none are */
	/* seconds of work left at its asked size, <= 0 unknown: only the
	 * simulator's oracle knows it (DRAKE_VICTIM_MOST_REMAINING) */
	double remaining;
	struct drake_change_cost cost; /* its own cost of a change; zero: rescale_pause */
	/* a member is placed and not yet bound: kube-scheduler's barrier holds
	 * its wave for the size it was admitted or grown to, so until every
	 * member is bound it neither gives workers nor grows (a removal would
	 * leave the wave short of its size, never bound) */
	bool binding;
};

/* Remove worker `slot` of job `job` (shrink), or add one worker of job
 * `job` on `node` (slot -1: DRAGON's ScaleUp). */
struct drake_scale_op {
	int job;
	int slot;
	int node;
};

enum drake_victim_order {
	DRAKE_VICTIM_NEWEST_FIRST,
	DRAKE_VICTIM_OLDEST_FIRST,
	DRAKE_VICTIM_LEAST_PROGRESS,
	DRAKE_VICTIM_MOST_SERVICE, /* most attained service first (least-attained-service order) */
	/* Most GPU-seconds expected left first: from progress p, its attained
	 * service times (1 - p) / p, p counted at least DRAKE_LEFT_MIN_PROGRESS;
	 * without progress, its attained service (most-service's key). */
	DRAKE_VICTIM_MOST_LEFT,
	/* The oracle bound's (`drake sim --policies oracle`), not parsed: most
	 * remaining work first (remaining times the GPUs it holds), jobs whose
	 * remaining work is unknown after them. */
	DRAKE_VICTIM_MOST_REMAINING,
};

/* The least progress most-left reads: a report under a tenth of the work
 * extrapolates from too little (1 % done would read 99 times the service
 * run so far), so such a job counts as a tenth done. The floors measured
 * are in BENCHMARKS.md ("Pollux's workloads in the simulator"). */
#define DRAKE_LEFT_MIN_PROGRESS 0.1

/* The GPUs running job r holds now, PS included. */
double drake_running_gpus(const struct drake_running_job *r);

/* The GPU-seconds job j is expected to need still, as most-left orders
 * victims (above). */
double drake_running_left(const struct drake_running_job *j);

struct drake_shrink_opts {
	enum drake_victim_order order;
	bool lonely_first;
};

/* Whether r's size is fixed for now: a member has ended (its room frees
 * by itself) or its wave is still binding. Such a job neither gives
 * workers (to a waiting job, or back because fewer run faster) nor
 * grows, under every rule that changes a running job's size. */
bool drake_running_fixed(const struct drake_running_job *r);

/* Parses "newest", "oldest", "least-progress", "most-service", "most-left". */
drake_err drake_victim_order_parse(const char *s, enum drake_victim_order *out) DRAKE_MUST_CHECK;
const char *drake_victim_order_name(enum drake_victim_order o);

/*
 * Finds the workers to remove so that `starving` fits. On DRAKE_OK, *ops
 * holds the removals (NULL and 0 when none are needed) and *plan the starving job's placement
 * on the cluster as it will be once they are applied. DRAKE_ESTATE when no
 * allowed set of removals makes it fit (nothing returned; why says so).
 */
drake_err drake_shrink_for(const struct drake_cluster *c, const struct drake_running_job *jobs,
                           size_t n, const struct drake_gang_req *starving,
                           const struct drake_shrink_opts *o, struct drake_scale_op **ops,
                           size_t *n_ops, struct drake_plan *plan, char *why,
                           size_t len) DRAKE_MUST_CHECK;

#endif
