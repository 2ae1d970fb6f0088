/*
 * speed.h - the throughput model drake's growth rule reasons with, and the
 * one `drake sim` runs its jobs at (so the simulator measures the policy by
 * the very arithmetic the policy believes).
 *
 * A PS job with w workers of g GPUs each, over n nodes (PS included), trains
 * at
 *
 *   T(w, n) = w / (1 + scaling_loss * (w - 1))                  (Amdahl-like)
 *           / (1 + locality_penalty * max(0, n - n_min(w)))     (network)
 *
 * where n_min(w) = ceil(w * g / node_gpus) is the fewest nodes that can hold
 * w workers (node_gpus: the largest node's GPUs). Every change of a running
 * job's worker count stops it while workers join or leave: for its own cost
 * of a change (struct drake_change_cost) where it has one, else for
 * rescale_pause seconds.
 *
 * Pure arithmetic, no allocation.
 */
#ifndef DRAKE_GANG_SPEED_H
#define DRAKE_GANG_SPEED_H

#include "gang/cluster.h"

struct drake_speed {
	double scaling_loss;
	double locality_penalty;
	double rescale_pause; /* seconds */
	int node_gpus;        /* largest node's GPUs; drake_speed_node_gpus() */
};

/*
 * What one change of a job's worker count costs that job, in seconds it
 * trains nothing (a trainer that restarts every worker on any membership
 * change pays more than one whose PS takes workers in and out). Losing and
 * gaining workers may cost differently. A value of 0 or less (unset, as a
 * zeroed struct has it) is the model's rescale_pause, so a caller that sets
 * none sees no change.
 */
struct drake_change_cost {
	double shrink; /* seconds stopped when it loses workers */
	double grow;   /* seconds stopped when it gains workers */
};

/* The pause one change costs: own when positive, else m->rescale_pause. */
double drake_speed_pause(const struct drake_speed *m, double own);

/* scaling_loss 0.05, locality_penalty 0.15, rescale_pause 10 s, 8 GPUs. */
void drake_speed_defaults(struct drake_speed *m);

/* T(w, n) above; 0 for w <= 0. */
double drake_speed_rate(const struct drake_speed *m, int w, int gpus_per_worker, int nodes);

/* n_min(w): the fewest nodes that hold w workers of g GPUs (at least 1). */
int drake_speed_min_nodes(const struct drake_speed *m, int w, int gpus_per_worker);

/*
 * A running job's expected remaining time at now, admitted at `admitted`,
 * with progress p (its fraction of work done, < 0 unknown): from p when
 * known, age * (1 - p) / p (0 once p >= 1); else its age since admission
 * (for the heavy-tailed run times of training jobs, a job that has run for
 * t is expected to run about t more). The growth rule (gang/scale.h) and
 * the migration rules (migrate/migrate.h) weigh a speed change by it.
 */
double drake_speed_remaining(double admitted, double progress, double now);

/* The largest schedulable node's GPUs in c (at least 1). */
int drake_speed_node_gpus(const struct drake_cluster *c);

#endif
