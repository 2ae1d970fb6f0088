/*
 * policy_round.h - the simulator's side of gang/round.h, shared by the
 * policies that decide through drake_round(): drake (policy_drake.c),
 * DRAGON's rules (policy_dragon.c) and Tiresias (policy_tiresias.c), as
 * `drake serve --policy drake|dragon|tiresias` does, and the oracle bound
 * (policy_oracle.c), which only the simulator can run. Nothing here
 * decides.
 *
 * The round's inputs are what the controller would read from its caches,
 * in the simulator's terms: a waiting job's members all wait behind their
 * gates; a running job's PS and workers are bound where the sim put them,
 * each worker at its own index (sim_job.worker_index: a shrink leaves a
 * gap, as the controller's deleted pod does), the rest of its max workers
 * wait gated, and its drake.dev/scale record lists its member indexes, the
 * time of its latest change of size and the job it last gave workers to.
 * Progress comes from the learning curves when they are on. Pacing is off:
 * the sim has no kube-scheduler queue to pace. The round's actions are
 * applied through the sim's: removals first (an admission's plan assumes
 * them), then admissions, then growth, which takes the lowest gated index
 * as the round's GROW names it. A PREEMPT stops the whole job
 * (sim_preempt: it keeps its progress and waits again), before the
 * removals. Under Tiresias every start, the first and each resume, costs
 * cfg->tiresias_restart without progress (sim_start charges a Pollux
 * job's itself).
 *
 * What the controller keeps between its rounds the caller keeps in a
 * struct sim_round_keep: DRAGON's action timer, the last 2D-LAS decision's
 * time and each job's 2D-LAS state (reconciler/observed.c keeps it per
 * job; here per sim job), passed in and taken back from the round's
 * status after every round.
 *
 * Ownership: sim_round_once() frees everything it allocates; keep->las is
 * the caller's.
 */
#ifndef DRAKE_SIM_POLICY_ROUND_H
#define DRAKE_SIM_POLICY_ROUND_H

#include "gang/round.h"
#include "sim/sim.h"

/* Seconds of work sim job id has left at the size its spec asks for (<= 0
 * unknown): what only the oracle knows (policy_oracle.c). */
typedef double (*sim_remaining_fn)(struct sim *s, int id);

/* What a policy keeps between rounds, as the controller does, and what
 * only the simulator can tell it. */
struct sim_round_keep {
	double dragon_last_action;   /* DRAGON's action timer */
	double las_decided;          /* tiresias: the last 2D-LAS decision's time, negative none */
	struct drake_las_state *las; /* tiresias: per sim job (sim_job_count), NULL: none kept */
	sim_remaining_fn remaining;  /* the oracle: each job's remaining_hint; NULL: unknown,
	                                as on a cluster */
};

/* One round on the sim's state with o, applied. *next: when the round
 * would decide differently (INFINITY: never). keep, when given, is passed
 * in (instead of o's dragon_last_action and las_decided, as each job's
 * las, and each job's remaining_hint from its remaining) and updated from
 * the round. Either may be NULL. */
drake_err sim_round_once(struct sim *s, const struct drake_round_opts *o, double *next,
                         struct sim_round_keep *keep) DRAKE_MUST_CHECK;

/* drake's decision (policy_drake.c): one round with the scale options
 * scale (its speed model the config's), the remaining work from remaining
 * (NULL: unknown), and a wake-up at the round's next time and at each
 * Pollux job's next report. */
drake_err sim_drake_decide(struct sim *s, const struct drake_scale_opts *scale,
                           sim_remaining_fn remaining) DRAKE_MUST_CHECK;

#endif
