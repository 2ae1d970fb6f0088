/*
 * optimus.h - Optimus' allocation (Peng et al., EuroSys'18) as the Pollux
 * artifact re-implemented it for its "Optimus + Oracle + TunedJobs"
 * baseline (petuum/adaptdl, branch osdi21-artifact, simulator/optimus.py):
 * GPUs go one at a time to the job whose remaining time falls most.
 *
 * Every job, in the caller's order, first gets one replica while GPUs
 * last (later jobs get none). Then, while GPUs are left and some job would
 * gain, the next GPU goes to the job with the largest gain, the first in
 * order on a tie: gain = (step(r) - step(r + 1)) x remaining iterations,
 * step(r) its seconds per iteration on r replicas (the oracle: measured,
 * not fitted), 0 once r reaches its maximum.
 *
 * Pure: arithmetic on the caller's tables, deterministic.
 */
#ifndef DRAKE_GANG_OPTIMUS_H
#define DRAKE_GANG_OPTIMUS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define DRAKE_OPTIMUS_MAX_JOBS 1000000

struct drake_optimus_job {
	int max_replicas;   /* >= 1 */
	double remaining;   /* iterations left, >= 0 */
	const double *step; /* step[r - 1]: seconds per iteration on r replicas, r <= max */
	int replicas;       /* out: 0 when the GPUs ran out before it */
};

/* Sets every job's replicas for a cluster of `gpus` GPUs. DRAKE_EINVAL for
 * a maximum below 1, no step table or a negative remaining; DRAKE_ELIMIT
 * for more than DRAKE_OPTIMUS_MAX_JOBS jobs. */
drake_err drake_optimus_allocate(struct drake_optimus_job *jobs, size_t n,
                                 int64_t gpus) DRAKE_MUST_CHECK;

#endif
